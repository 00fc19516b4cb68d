"""The op builder of the random MIR graphs (random_graphs.py): values with a float64
reference and error bounds.

`generate(seed)` builds one function `@main` in rlx_mir from a few random
motifs (elementwise chains with broadcasting, casts and selects; matmuls with
bias / activation / residual epilogues and norm prologues; SwiGLU and packed
GLU slices; shared-input Q/K/V matmuls; RoPE and per-head norms;
`rlx_mir.attention` with GQA, causal / sliding-window / boolean / additive
masks and Sq != Sk; the primitive attention chain that attention recognition
should fold; softmax, norms, residual norms, reductions, gathers, reshapes,
transposes, slices, concats, broadcasts, and `fused_matmul` written
directly). Every op is evaluated while it is built, in float64 NumPy from
the op definitions (docs/reference/MIR.md, DESIGN §3), so the generator
knows the values it works on: it keeps them where f32 is well conditioned
(positive operands for log/sqrt/rsqrt/reciprocal/div/pow, bounded arguments
for exp/sin/cos, magnitudes below ~1e3) and never emits an op whose result
would be ill-defined.

Next to the reference value, every value carries a first-order bound of the
absolute error an f32 evaluation may have (running error analysis with the
unit roundoff u = 2^-24: each op adds its own rounding, c·u·|result|, and
propagates its operands' bounds through its derivative; a matmul adds
(K+2)·u·(|A|·|B|), a softmax (n+6)·u·p, ...). The checker uses that bound as
the per-element atol: it is what "the magnitudes involved" are, element by
element (a - b with cancellation gets u·(|a| + |b|), not u·|a - b|), and it
is never normalized by the largest output.

The generator only writes IR the verifier accepts; scripts/difftest.py and
test_differential.py check that with rlx-opt first.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - the venv has it
    ml_dtypes = None

U32 = 2.0 ** -24
U64 = 2.0 ** -53
# unit roundoff per float type (bf16/f16 values only appear inside short excursions)
UNIT = {"f32": U32, "f64": U64, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
FLOATS = ("f32", "f64", "bf16", "f16")
NP_LOW = {"bf16": "bfloat16", "f16": "float16"}
LOW_NP = {"bf16": ml_dtypes.bfloat16 if ml_dtypes else None, "f16": np.float16}

_ERF = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _ERF(np.asarray(x, np.float64))


def sigmoid(x):
    x = np.asarray(x, np.float64)
    return np.where(x >= 0, 1.0 / (1.0 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1.0 + np.exp(-np.abs(x))))


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * sigmoid(x)


ACT = {"relu": lambda x: np.maximum(x, 0.0), "gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu,
       "sigmoid": sigmoid, "tanh": np.tanh}
# |f'(x)| bounds of the activations (used for error propagation).
ACT_SLOPE = {"relu": 1.0, "gelu": 1.13, "gelu_tanh": 1.13, "silu": 1.1, "sigmoid": 0.25, "tanh": 1.0}
GLU_ACTS = ("silu", "gelu", "gelu_tanh", "relu", "sigmoid")  # what the fused_matmul verifier accepts with glu


def f32(x):
    return np.asarray(x, np.float32)


def fmt_float(v: float) -> str:
    """An f32 value as MLIR text that parses back to the same f32."""
    v = float(np.float32(v))
    if math.isinf(v):
        return "0xFF800000" if v < 0 else "0x7F800000"
    return f"{v:.9e}"


def fmt_attr(v: float) -> str:
    """A float attribute (f64) as MLIR text."""
    return f"{float(v):.17e}"


def ttype(shape, dt, dyn=None) -> str:
    dims = ["?" if dyn and dyn[i] else str(d) for i, d in enumerate(shape)]
    return "tensor<" + "".join(f"{d}x" for d in dims) + dt + ">"


def bcast_dyn(*vals):
    """Result dim names of a numpy broadcast, with the compiler's static rule
    (broadcastShapes: a static dim > 1 wins over a dynamic one, two dynamic stay dynamic)."""
    rank = max(v.rank for v in vals)
    out = []
    for i in range(rank):
        size, name = 1, ""
        for v in vals:
            j = i - (rank - v.rank)
            if j < 0:
                continue
            d, n = v.shape[j], v.dyn[j]
            if not n and d == 1:
                continue
            if not name and size == 1:
                size, name = d, n
            elif n and name:
                pass
            elif n and not name:
                pass  # static > 1 wins
            elif not n and name:
                size, name = d, ""
        out.append(name)
    return tuple(out)


@dataclass(eq=False)
class Val:
    name: str
    shape: tuple
    dt: str
    ref: np.ndarray            # float64 (floats), int64 (ints) or bool (i1)
    err: np.ndarray | None     # absolute error bound per element (floats), None if exact ints/bools
    inf: bool = False          # may hold -inf (masked scores)
    uses: int = 0
    is_arg: bool = False
    dyn: tuple = ()            # per dim: the symbolic name of a dynamic dim, "" when static

    def __post_init__(self):
        if len(self.dyn) != len(self.shape):
            self.dyn = ("",) * len(self.shape)

    @property
    def type(self) -> str:
        return ttype(self.shape, self.dt, self.dyn)

    @property
    def static(self) -> bool:
        return not any(self.dyn)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mag(self) -> float:
        r = self.ref[np.isfinite(self.ref)] if self.dt in FLOATS else self.ref
        return float(np.abs(r).max()) if r.size else 0.0


@dataclass
class Arg:
    val: Val
    role: str          # "input" or "param"
    value: np.ndarray  # what the test feeds (f32 / int / bool)


@dataclass
class Case:
    seed: int
    text: str
    inputs: dict                 # arg name -> np.ndarray
    results: list                # list of Val (ref, err) in result order
    motifs: list = field(default_factory=list)
    tags: set = field(default_factory=set)  # structures that trigger known compiler bugs (test_differential)


class GenError(Exception):
    """A motif could not be built with the values at hand (it is skipped)."""


def _abs(x):
    return np.abs(np.asarray(x, np.float64))


def _safe(e):
    e = np.nan_to_num(np.asarray(e, np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    return e


class Builder:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.args: list[Arg] = []
        self.lines: list[str] = []
        self.pool: list[Val] = []
        self.vals: list[Val] = []
        self.n = 0
        self.motifs: list[str] = []
        self.dyn_sizes: dict[str, int] = {}   # symbolic dim name -> its size in this graph
        self.dynamic = False                   # may create symbolic (dynamic) dims
        self.big = False                       # larger sizes (BLAS path, row tiles, long rows)
        self.extra_outputs: list[Val] = []
        self.tags: set[str] = set()

    # ---- basics ---------------------------------------------------------
    def r(self, lo, hi):
        """Integer in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def chance(self, p):
        return bool(self.rng.random() < p)

    def choice(self, seq, p=None):
        i = self.rng.choice(len(seq), p=p)
        return seq[i]

    def fresh(self, prefix="v"):
        self.n += 1
        return f"%{prefix}{self.n}"

    def val(self, shape, dt, ref, err=None, inf=False, prefix="v", dyn=None):
        v = Val(self.fresh(prefix), tuple(int(d) for d in shape), dt, ref, err, inf, dyn=tuple(dyn or ()))
        if dt in FLOATS:
            v.ref = np.asarray(ref, np.float64).reshape(v.shape)
            v.err = _safe(np.broadcast_to(err if err is not None else 0.0, v.shape)).copy()
            assert not np.isnan(v.ref).any(), "generator produced NaN"
        self.vals.append(v)
        return v

    def use(self, *vals):
        for v in vals:
            if v is not None:
                v.uses += 1

    def emit(self, line):
        self.lines.append("  " + line)

    def add_pool(self, *vals):
        for v in vals:
            if v.dt == "f32" and not v.inf and v.rank >= 1 and v.mag < 2e3 and self.well_conditioned(v):
                self.pool.append(v)

    @staticmethod
    def well_conditioned(v):
        if v.err is None:
            return True
        rel = v.err / (np.abs(v.ref) + 1e-3 * (v.mag + 1e-30))
        return float(np.median(rel)) < 1e-4 and float(rel.max()) < 1e-2

    def pick(self, pred=lambda v: True):
        c = [v for v in self.pool if pred(v)]
        return self.choice(c) if c else None

    # ---- arguments and constants ----------------------------------------
    def arg(self, shape, dt="f32", role=None, dist="normal", scale=1.0, lo=None, hi=None, p=0.5, dyn=None):
        shape = tuple(int(d) for d in shape)
        # (parameters with symbolic dims are rare: weights are static in practice)
        role = role or ("param" if self.chance(0.03 if dyn and any(dyn) else 0.3) else "input")
        rng = self.rng
        if dt in FLOATS:
            if dist == "normal":
                value = rng.standard_normal(shape) * scale
            elif dist == "uniform":
                value = rng.uniform(lo, hi, shape)
            else:
                raise ValueError(dist)
            value = value.astype(np.float32 if dt == "f32" else np.float64)
            ref = value.astype(np.float64)
        elif dt == "i1":
            value = rng.random(shape) < p
            ref = value.copy()
        else:
            value = rng.integers(lo, hi + 1, shape).astype(np.int32 if dt == "i32" else np.int64)
            ref = value.astype(np.int64)
        v = self.val(shape, dt, ref, np.zeros(shape) if dt in FLOATS else None, prefix="a", dyn=dyn)
        for n, d in zip(v.dyn, shape):
            assert not n or self.dyn_sizes.get(n, d) == d, (n, d)
            if n:
                self.dyn_sizes[n] = d
        v.is_arg = True
        self.args.append(Arg(v, role, value))
        return v

    def weight(self, shape, role=None, scale=None):
        scale = scale if scale is not None else 1.0 / math.sqrt(shape[-1] if len(shape) > 1 else 4)
        return self.arg(shape, role=role or ("param" if self.chance(0.6) else "input"), scale=scale)

    def const(self, value, dt="f32", shape=None):
        """A constant: splat when `value` is a scalar (with `shape`, default rank 0)."""
        if np.isscalar(value):
            shape = tuple(shape or ())
            if dt in FLOATS:
                if dt == "f32":
                    v32 = float(np.float32(value))
                elif dt in NP_LOW:
                    v32 = float(np.asarray(value, np.float32).astype(LOW_NP[dt]))
                else:
                    v32 = float(value)
                text = fmt_float(v32) if dt == "f32" else repr(v32)
                ref = np.full(shape, v32)
            elif dt == "i1":
                text = "true" if value else "false"
                ref = np.full(shape, bool(value))
            else:
                text = str(int(value))
                ref = np.full(shape, int(value), np.int64)
            body = text
        else:
            arr = np.asarray(value)
            shape = arr.shape
            if dt == "f32":
                arr = arr.astype(np.float32)
                ref = arr.astype(np.float64)
                body = self._nested(arr, fmt_float)
            elif dt == "i1":
                ref = arr.astype(bool)
                body = self._nested(ref, lambda b: "true" if b else "false")
            else:
                ref = arr.astype(np.int64)
                body = self._nested(ref, lambda i: str(int(i)))
        v = self.val(shape, dt, ref, np.zeros(shape) if dt in FLOATS else None,
                     inf=dt in FLOATS and bool(np.isinf(ref).any()), prefix="c")
        self.emit(f"{v.name} = rlx_mir.constant dense<{body}> : {v.type}")
        return v

    @staticmethod
    def _nested(arr, f):
        if arr.ndim == 0:
            return f(arr.item())
        if arr.ndim == 1:
            return "[" + ", ".join(f(x) for x in arr.tolist()) + "]"
        return "[" + ", ".join(Builder._nested(a, f) for a in arr) + "]"

    # ---- elementwise -----------------------------------------------------
    UNARY = ("abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "silu",
             "gelu", "gelu_tanh", "relu", "erf", "sin", "cos")
    BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")

    def unary(self, op, x):
        assert x.dt in FLOATS
        u = U64 if x.dt == "f64" else U32  # bf16/f16: computed in f32, rounded once (below)
        a, ea = x.ref, x.err
        with np.errstate(all="ignore"):
            if op == "abs":
                r, e = np.abs(a), ea
            elif op == "neg":
                r, e = -a, ea
            elif op == "relu":
                r, e = np.maximum(a, 0), ea
            elif op == "exp":
                r = np.exp(a)
                e = r * (np.expm1(ea)) + 8 * u * r
            elif op == "log":
                assert (a - ea > 0).all()
                r = np.log(a)
                e = ea / (a - ea) + 8 * u * (np.abs(r) + 1)
            elif op == "sqrt":
                r = np.sqrt(a)
                e = ea / (2 * np.sqrt(np.maximum(a - ea, 1e-30))) + 4 * u * r
            elif op == "rsqrt":
                r = 1 / np.sqrt(a)
                e = ea / (2 * np.maximum(a - ea, 1e-30) ** 1.5) + 8 * u * r
            elif op == "reciprocal":
                r = 1 / a
                e = ea / np.maximum(a - ea, 1e-30) ** 2 + 4 * u * np.abs(r)
            elif op == "tanh":
                r = np.tanh(a)
                e = np.minimum(ea, 2.0) + 8 * u * np.abs(r) + 4 * u * np.minimum(np.abs(a), 1)
            elif op in ("sigmoid", "silu", "gelu", "gelu_tanh"):
                r = ACT[op](a)
                e = ACT_SLOPE[op] * ea + 8 * u * (np.abs(r) + np.minimum(np.abs(a), 1) + u)
            elif op == "erf":
                r = erf(a)
                e = 1.13 * ea + 8 * u * (np.abs(r) + u)
            elif op in ("sin", "cos"):
                r = np.sin(a) if op == "sin" else np.cos(a)
                e = ea + 8 * u * (1 + np.abs(a))
            else:
                raise ValueError(op)
        if x.dt in NP_LOW:
            e = e + UNIT[x.dt] * np.abs(r)
        v = self.val(x.shape, x.dt, r, e, dyn=x.dyn)
        self.use(x)
        self.emit(f"{v.name} = rlx_mir.{op} {x.name} : {x.type}")
        return v

    def binary(self, op, a, b):
        assert a.dt == b.dt
        shape = np.broadcast_shapes(a.shape, b.shape)
        dt = a.dt
        if dt in FLOATS:
            u = U64 if dt == "f64" else U32
            x, y = np.broadcast_to(a.ref, shape), np.broadcast_to(b.ref, shape)
            ex, ey = np.broadcast_to(a.err, shape), np.broadcast_to(b.err, shape)
            with np.errstate(all="ignore"):
                if op == "add":
                    r = x + y
                    e = ex + ey + u * np.abs(r)
                elif op == "sub":
                    r = x - y
                    e = ex + ey + u * np.abs(r)
                elif op == "mul":
                    r = x * y
                    e = np.abs(y) * ex + np.abs(x) * ey + ex * ey + u * np.abs(r)
                elif op == "div":
                    assert (np.abs(y) > ey).all()
                    r = x / y
                    e = (ex + np.abs(r) * ey) / (np.abs(y) - ey) + 2 * u * np.abs(r)
                elif op in ("max", "min"):
                    r = np.maximum(x, y) if op == "max" else np.minimum(x, y)
                    e = np.maximum(ex, ey)
                elif op == "pow":
                    assert (x - ex > 0).all()
                    r = np.power(x, y)
                    e = np.abs(r) * (np.abs(y) * ex / (x - ex) + np.abs(np.log(x)) * ey) + \
                        16 * u * np.abs(r) * (1 + np.abs(y * np.log(x)))
                else:
                    raise ValueError(op)
            if dt in NP_LOW:
                e = e + UNIT[dt] * np.abs(r)
            inf = (a.inf or b.inf)
            if inf:
                e = np.where(np.isfinite(r), e, 0.0)
            v = self.val(shape, dt, r, e, inf=inf, dyn=bcast_dyn(a, b))
        else:
            x, y = np.broadcast_to(a.ref, shape), np.broadcast_to(b.ref, shape)
            if op == "add":
                r = x + y
            elif op == "sub":
                r = x - y
            elif op == "mul":
                r = x * y
            elif op == "max":
                r = np.maximum(x, y)
            elif op == "min":
                r = np.minimum(x, y)
            elif op == "div":
                assert (y != 0).all()
                r = np.trunc(x / y).astype(np.int64)
            else:
                raise ValueError(op)
            v = self.val(shape, dt, r, dyn=bcast_dyn(a, b))
        self.use(a, b)
        self.emit(f"{v.name} = rlx_mir.{op} {a.name}, {b.name} : {a.type}, {b.type}")
        return v

    def select(self, c, a, b):
        shape = np.broadcast_shapes(c.shape, a.shape, b.shape)
        cc = np.broadcast_to(c.ref, shape)
        r = np.where(cc, np.broadcast_to(a.ref, shape), np.broadcast_to(b.ref, shape))
        if a.dt in FLOATS:
            e = np.where(cc, np.broadcast_to(a.err, shape), np.broadcast_to(b.err, shape))
            v = self.val(shape, a.dt, r, e, inf=a.inf or b.inf, dyn=bcast_dyn(c, a, b))
        else:
            v = self.val(shape, a.dt, r, dyn=bcast_dyn(c, a, b))
        self.use(c, a, b)
        self.emit(f"{v.name} = rlx_mir.select {c.name}, {a.name}, {b.name} : {c.type}, {a.type}, {b.type}")
        return v

    def cast(self, x, dt):
        src = x.dt
        if src in FLOATS and dt in FLOATS:
            r = x.ref
            narrower = UNIT[dt] > UNIT[src]
            e = x.err + (UNIT[dt] * np.abs(r) + (2.0 ** -25 if dt == "f16" else 0.0) if narrower else 0.0)
            if dt == "f32" and src == "f64" and (x.err == 0).all():
                r = r.astype(np.float32).astype(np.float64)
                e = np.zeros(x.shape)
            v = self.val(x.shape, dt, r, e, inf=x.inf, dyn=x.dyn)
        elif src in FLOATS:  # float -> int truncates
            r = np.trunc(x.ref).astype(np.int64)
            v = self.val(x.shape, dt, r, dyn=x.dyn)
        elif dt in FLOATS:  # int/bool -> float
            r = x.ref.astype(np.float64)
            v = self.val(x.shape, dt, r, np.zeros(x.shape), dyn=x.dyn)
        else:
            raise ValueError((src, dt))
        self.use(x)
        self.emit(f"{v.name} = rlx_mir.cast {x.name} : {x.type} to {v.type}")
        return v

    def cast_roundtrip(self, x, low):
        """f32 -> bf16/f16 -> f32 (two casts)."""
        assert x.dt == "f32"
        npt = LOW_NP[low]

        def rnd(a):  # what the compiled code does to an f32 value (monotone)
            return np.asarray(a, np.float64).astype(np.float32).astype(npt).astype(np.float64)

        # The f32 value lies in [ref - err, ref + err]; where that whole interval rounds to
        # one value the result is exact, else it may be either neighbour.
        rounded = rnd(x.ref)
        lo, hi = rnd(x.ref - x.err), rnd(x.ref + x.err)
        e = np.maximum(np.abs(hi - rounded), np.abs(rounded - lo))
        mid = Val(self.fresh(), x.shape, low, rounded, e, dyn=x.dyn)
        self.vals.append(mid)
        self.use(x)
        self.emit(f"{mid.name} = rlx_mir.cast {x.name} : {x.type} to {mid.type}")
        v = self.val(x.shape, "f32", rounded, e, dyn=x.dyn)
        mid.uses += 1
        self.emit(f"{v.name} = rlx_mir.cast {mid.name} : {mid.type} to {v.type}")
        return v

    # ---- data movement ---------------------------------------------------
    def reshape(self, x, shape, dyn=None):
        """`dyn` names the dynamic output dims (written -1); needed when x has dynamic dims."""
        shape = tuple(int(d) for d in shape)
        assert int(np.prod(shape)) == int(np.prod(x.shape)), (x.shape, shape)
        assert dyn is not None or x.static, "reshape of a dynamic value needs the output's dims"
        v = self._like(x, shape, x.ref.reshape(shape), None if x.err is None else x.err.reshape(shape), dyn)
        text = [-1 if v.dyn[i] else d for i, d in enumerate(shape)]
        self.emit(f"{v.name} = rlx_mir.reshape {x.name} [{', '.join(map(str, text))}] : {x.type}")
        return v

    def transpose(self, x, perm):
        perm = tuple(int(p) for p in perm)
        v = self._like(x, tuple(x.shape[p] for p in perm), np.transpose(x.ref, perm),
                       None if x.err is None else np.transpose(x.err, perm), tuple(x.dyn[p] for p in perm))
        self.emit(f"{v.name} = rlx_mir.transpose {x.name} [{', '.join(map(str, perm))}] : {x.type}")
        return v

    def slice(self, x, offsets, sizes, strides):
        idx = []
        out = []
        for d, (o, s, st) in enumerate(zip(offsets, sizes, strides)):
            n = x.shape[d]
            cnt = -(-(n - o) // st) if s == -1 else s
            assert 0 <= o and st >= 1 and cnt >= 1 and o + (cnt - 1) * st < n, (x.shape, offsets, sizes, strides)
            assert not x.dyn[d] or (o, s, st) == (0, -1, 1), "a dynamic axis is only kept whole"
            idx.append(slice(o, o + (cnt - 1) * st + 1, st))
            out.append(cnt)
        idx = tuple(idx)
        v = self._like(x, tuple(out), x.ref[idx], None if x.err is None else x.err[idx], x.dyn)
        j = lambda l: "[" + ", ".join(map(str, l)) + "]"
        self.emit(f"{v.name} = rlx_mir.slice {x.name} offsets {j(offsets)} sizes {j(sizes)} strides {j(strides)} : {x.type}")
        return v

    def slice_last(self, x, off, size):
        r = x.rank
        return self.slice(x, [0] * (r - 1) + [off], [-1] * (r - 1) + [size], [1] * r)

    def concat(self, xs, axis):
        ref = np.concatenate([x.ref for x in xs], axis)
        err = None if xs[0].err is None else np.concatenate([x.err for x in xs], axis)
        assert all(x.static for x in xs), "concat of static values only"
        v = self.val(ref.shape, xs[0].dt, ref, err, inf=any(x.inf for x in xs))
        self.use(*xs)
        self.emit(f"{v.name} = rlx_mir.concat {', '.join(x.name for x in xs)} axis = {axis} : "
                  f"{', '.join(x.type for x in xs)}")
        return v

    def broadcast(self, x, shape, text_shape=None):
        """`text_shape` may hold -1 (keep the input dim); dynamic input dims are always -1."""
        ref = np.broadcast_to(x.ref, shape)
        ts = list(text_shape or shape)
        lead = len(shape) - x.rank
        dyn = [""] * len(shape)
        for i in range(lead, len(shape)):
            if x.dyn[i - lead]:
                ts[i] = -1
                dyn[i] = x.dyn[i - lead]
        v = self._like(x, tuple(shape), ref.copy(), None if x.err is None else np.broadcast_to(x.err, shape).copy(),
                       tuple(dyn))
        self.emit(f"{v.name} = rlx_mir.broadcast {x.name} [{', '.join(map(str, ts))}] : {x.type}")
        return v

    def _like(self, x, shape, ref, err, dyn=None):
        v = self.val(shape, x.dt, ref, err, inf=x.inf, dyn=dyn)
        self.use(x)
        return v

    # ---- reductions, softmax, norms ------------------------------------------
    def reduce(self, kind, x, axes, keep):
        ax = tuple(sorted(a % x.rank for a in axes))
        n = int(np.prod([x.shape[a] for a in ax]))
        a, ea = x.ref, x.err
        u = UNIT[x.dt] if x.dt in FLOATS else 0
        if kind == "sum":
            r = a.sum(ax, keepdims=True)
            e = np.sqrt((ea * ea).sum(ax, keepdims=True)) + \
                2 * u * math.sqrt(n + 1) * np.sqrt((a * a).sum(ax, keepdims=True)) + u * np.abs(r)
        elif kind == "mean":
            r = a.mean(ax, keepdims=True)
            e = (np.sqrt((ea * ea).sum(ax, keepdims=True)) +
                 2 * u * math.sqrt(n + 1) * np.sqrt((a * a).sum(ax, keepdims=True))) / n + 2 * u * np.abs(r)
        elif kind in ("max", "min"):
            r = a.max(ax, keepdims=True) if kind == "max" else a.min(ax, keepdims=True)
            e = ea.max(ax, keepdims=True)
        elif kind == "prod":
            assert (np.abs(a) > 4 * ea).all()
            r = a.prod(ax, keepdims=True)
            e = np.abs(r) * ((ea / (np.abs(a) - ea)).sum(ax, keepdims=True) * 1.1 + (n + 1) * u)
        else:
            raise ValueError(kind)
        dyn = tuple("" if i in ax else x.dyn[i] for i in range(x.rank) if keep or i not in ax)
        if not keep:
            r, e = r.squeeze(ax), e.squeeze(ax)
        v = self.val(r.shape, x.dt, r, e, dyn=dyn)
        self.use(x)
        axes_t = ", ".join(str(a) for a in axes)
        self.emit(f"{v.name} = rlx_mir.reduce {kind} {x.name} axes = [{axes_t}]{' keep_dims' if keep else ''} : {x.type}")
        return v

    @staticmethod
    def softmax_ref(a, ea, axis):
        with np.errstate(all="ignore"):
            m = np.max(a, axis=axis, keepdims=True)
            ex = np.where(np.isneginf(m), 0.0, np.exp(a - np.where(np.isneginf(m), 0.0, m)))
            s = ex.sum(axis=axis, keepdims=True)
            p = np.where(s == 0, 0.0, ex / np.where(s == 0, 1.0, s))
            n = a.shape[axis]
            ea = np.where(np.isfinite(a), ea, 0.0)
            e = p * (np.expm1(ea + ea.max(axis=axis, keepdims=True)) * 1.01 + (2 * math.sqrt(n) + 8) * U32)
        return p, _safe(e)

    def softmax(self, x, axis):
        p, e = self.softmax_ref(x.ref, x.err, axis)
        v = self.val(x.shape, x.dt, p, e, dyn=x.dyn)
        self.use(x)
        self.emit(f"{v.name} = rlx_mir.softmax {x.name} axis = {axis} : {x.type}")
        return v

    @staticmethod
    def rms_ref(x, ex, w, ew, eps):
        n = x.shape[-1]
        ms = np.mean(x * x, -1, keepdims=True)
        s = np.sqrt(ms + eps)
        y0 = x / s
        # d(x/s): ex/s + |x| * mean(|x| ex) / s^3
        e0 = ex / s + _abs(x) * np.sqrt(np.sum(x * x * ex * ex, -1, keepdims=True)) / n / s ** 3 * 1.01 \
            + (2 * math.sqrt(n) + 8) * U32 * _abs(y0)
        if w is None:
            return y0, e0
        return y0 * w, _abs(w) * e0 + _abs(y0) * ew + U32 * _abs(y0 * w)

    @staticmethod
    def ln_ref(x, ex, w, ew, b, eb, eps):
        n = x.shape[-1]
        m = x.mean(-1, keepdims=True)
        c = x - m
        var = (c * c).mean(-1, keepdims=True)
        s = np.sqrt(var + eps)
        y0 = c / s
        ec = ex + np.sqrt(np.sum(ex * ex, -1, keepdims=True)) / n
        e0 = ec / s + _abs(c) * np.sqrt(np.sum(c * c * ec * ec, -1, keepdims=True)) / n / s ** 3 * 1.01 \
            + (2 * math.sqrt(n) + 8) * U32 * (_abs(y0) + _abs(m) / s + (m * m + var) / (var + eps) * _abs(y0))
        y, e = y0, e0
        if w is not None:
            y, e = y * w, _abs(w) * e + _abs(y) * ew + U32 * _abs(y * w)
        if b is not None:
            y, e = y + b, e + eb + U32 * _abs(y + b)
        return y, e

    def rms_norm(self, x, w, eps):
        y, e = self.rms_ref(x.ref, x.err, None if w is None else w.ref, None if w is None else w.err, eps)
        v = self.val(x.shape, x.dt, y, e, dyn=x.dyn)
        self.use(x, w)
        wt = f", {w.name}" if w is not None else ""
        tt = f", {w.type}" if w is not None else ""
        self.emit(f"{v.name} = rlx_mir.rms_norm {x.name}{wt} eps = {fmt_attr(eps)} : {x.type}{tt}")
        return v

    def layer_norm(self, x, w, b, eps):
        y, e = self.ln_ref(x.ref, x.err, None if w is None else w.ref, None if w is None else w.err,
                           None if b is None else b.ref, None if b is None else b.err, eps)
        v = self.val(x.shape, x.dt, y, e, dyn=x.dyn)
        self.use(x, w, b)
        ws = f" weight({w.name} : {w.type})" if w is not None else ""
        bs = f" bias({b.name} : {b.type})" if b is not None else ""
        self.emit(f"{v.name} = rlx_mir.layer_norm {x.name}{ws}{bs} eps = {fmt_attr(eps)} : {x.type}")
        return v

    def residual_rms_norm(self, x, r, w, eps):
        s = x.ref + r.ref
        es = x.err + r.err + U32 * np.abs(s)
        y, e = self.rms_ref(s, es, None if w is None else w.ref, None if w is None else w.err, eps)
        assert x.type == r.type
        out = self.val(x.shape, x.dt, y, e, dyn=x.dyn)
        sm = self.val(x.shape, x.dt, s, es, dyn=x.dyn)
        self.use(x, r, w)
        wt = f", {w.name}" if w is not None else ""
        tt = f", {w.type}" if w is not None else ""
        self.emit(f"{out.name}, {sm.name} = rlx_mir.residual_rms_norm {x.name}, {r.name}{wt} eps = {fmt_attr(eps)} "
                  f": {x.type}, {r.type}{tt}")
        return out, sm

    # ---- matmul ---------------------------------------------------------------
    @staticmethod
    def mm_ref(a, ea, b, eb, ta=False, tb=False):
        if ta:
            a, ea = np.swapaxes(a, -1, -2), np.swapaxes(ea, -1, -2)
        if tb:
            b, eb = np.swapaxes(b, -1, -2), np.swapaxes(eb, -1, -2)
        k = a.shape[-1]
        r = np.matmul(a, b)
        # Root-sum-square over the K terms of each dot product: propagated operand errors and
        # the accumulation's rounding (about sqrt(K) roundoffs of the partial sums).
        e = np.sqrt(np.matmul(a * a, eb * eb) + np.matmul(ea * ea, b * b) + np.matmul(ea * ea, eb * eb)) + \
            2 * U32 * math.sqrt(k + 1) * np.sqrt(np.matmul(a * a, b * b)) + U32 * np.abs(r)
        return r, e

    def matmul(self, a, b, ta=False, tb=False):
        r, e = self.mm_ref(a.ref, a.err, b.ref, b.err, ta, tb)
        ab = Val("", a.shape[:-2], a.dt, None, None, dyn=a.dyn[:-2])
        bb = Val("", b.shape[:-2], b.dt, None, None, dyn=b.dyn[:-2])
        batch = bcast_dyn(ab, bb) if (ab.rank or bb.rank) else ()
        dyn = batch + (a.dyn[-1] if ta else a.dyn[-2], b.dyn[-2] if tb else b.dyn[-1])
        v = self.val(r.shape, a.dt, r, e, dyn=dyn)
        self.use(a, b)
        flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
        self.emit(f"{v.name} = rlx_mir.matmul {a.name}, {b.name}{flags} : {a.type}, {b.type}")
        return v

    # ---- rope ------------------------------------------------------------------
    @staticmethod
    def rope_ref(x, ex, cos, sin, head_dim, rotary, style, heads=None):
        """x [B, S, N]; rotates the first `heads` heads (all by default)."""
        b, s, n = x.shape
        h_all = n // head_dim
        heads = h_all if heads is None else heads
        t = x.reshape(b, s, h_all, head_dim).copy()
        et = ex.reshape(b, s, h_all, head_dim).copy()
        c = cos if cos.ndim == 3 else np.broadcast_to(cos[None], (b,) + cos.shape)
        sn = sin if sin.ndim == 3 else np.broadcast_to(sin[None], (b,) + sin.shape)
        c, sn = c[:, :, None, :], sn[:, :, None, :]
        half = rotary // 2
        if style == "neox":
            ia, ib = np.arange(half), np.arange(half) + half
        else:
            ia, ib = np.arange(0, rotary, 2), np.arange(1, rotary, 2)
        A, B = t[:, :, :heads, ia].copy(), t[:, :, :heads, ib].copy()
        eA, eB = et[:, :, :heads, ia].copy(), et[:, :, :heads, ib].copy()
        t[:, :, :heads, ia] = A * c - B * sn
        t[:, :, :heads, ib] = B * c + A * sn
        rnd = 4 * U32 * (_abs(A * c) + _abs(B * sn))
        et[:, :, :heads, ia] = _abs(c) * eA + _abs(sn) * eB + rnd
        et[:, :, :heads, ib] = _abs(c) * eB + _abs(sn) * eA + rnd
        return t.reshape(b, s, n), et.reshape(b, s, n)

    def rope(self, x, cos, sin, head_dim, rotary, style):
        r, e = self.rope_ref(x.ref, x.err, cos.ref, sin.ref, head_dim, rotary, style)
        v = self.val(x.shape, x.dt, r, e, dyn=x.dyn)
        self.use(x, cos, sin)
        extra = (f" rotary_dim = {rotary}" if rotary != head_dim or self.chance(0.3) else "") + \
                (f" style {style}" if style != "neox" or self.chance(0.3) else "")
        self.emit(f"{v.name} = rlx_mir.rope {x.name}, {cos.name}, {sin.name} head_dim = {head_dim}{extra} : "
                  f"{x.type}, {cos.type}, {sin.type}")
        return v

    def rope_tables(self, b, s, rotary, batched=False, seq_name=""):
        shape = (b, s, rotary // 2) if batched else (s, rotary // 2)
        dyn = (("", seq_name, "") if batched else (seq_name, "")) if seq_name and self.chance(0.6) else None
        ang = self.rng.uniform(-3.0, 3.0, shape)
        cos = self.const_or_arg(np.cos(ang), dyn)
        sin = self.const_or_arg(np.sin(ang), dyn)
        return cos, sin

    def const_or_arg(self, arr, dyn=None):
        """An f32 argument holding exactly `arr` (rounded to f32)."""
        value = np.asarray(arr, np.float32)
        v = self.val(value.shape, "f32", value.astype(np.float64), np.zeros(value.shape), prefix="a", dyn=dyn)
        v.is_arg = True
        self.args.append(Arg(v, "input", value))
        return v

    # ---- attention ---------------------------------------------------------------
    @staticmethod
    def attn_ref(q, eq, k, ek, v, ev, heads, kvh, scale, softcap, kind, window, mask, mask_err):
        """q [B, H, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] -> o [B, H, Sq, Dv], err."""
        B, H, Sq, D = q.shape
        Sk = k.shape[2]
        G = heads // kvh
        kk = np.repeat(k, G, axis=1)
        ekk = np.repeat(ek, G, axis=1)
        vv = np.repeat(v, G, axis=1)
        evv = np.repeat(ev, G, axis=1)
        s, es = Builder.mm_ref(q, eq, kk, ekk, tb=True)
        s, es = s * scale, es * scale + U32 * _abs(s * scale)
        if softcap is not None:
            t = np.tanh(s / softcap)
            es = np.minimum(es, 2 * softcap) + 8 * U32 * (_abs(s) + softcap * U32)
            s = softcap * t
        vis = np.ones((Sq, Sk), bool)
        if kind in ("causal", "sliding_window"):
            i = np.arange(Sq)[:, None] + (Sk - Sq)
            j = np.arange(Sk)[None, :]
            vis = j <= i
            if kind == "sliding_window":
                vis = vis & (j > i - window)
        vis = np.broadcast_to(vis, s.shape)
        if mask is not None:
            m = mask
            if m.ndim == 3:
                m = m[:, None]
            m = np.broadcast_to(m, s.shape)
            if m.dtype == bool:
                vis = vis & m
            else:
                with np.errstate(invalid="ignore"):
                    s = s + m
                es = es + U32 * np.where(np.isfinite(s), _abs(s), 0)
                if mask_err is not None:
                    es = es + np.broadcast_to(mask_err if mask_err.ndim != 3 else mask_err[:, None], s.shape)
        s = np.where(vis, s, -np.inf)
        es = np.where(np.isfinite(s), es, 0.0)
        p, ep = Builder.softmax_ref(s, es, -1)
        o, eo = Builder.mm_ref(p, ep, vv, evv)
        return o, eo

    # ---- output --------------------------------------------------------------
    def finish(self, results):
        params = []
        for a in self.args:
            attr = f'rlx.{a.role} = "{a.val.name[1:]}"'
            if not a.val.static:
                attr += ", rlx.dim_names = [" + ", ".join(f'"{n}"' for n in a.val.dyn) + "]"
            params.append(f"{a.val.name}: {a.val.type} {{{attr}}}")
        res_types = ", ".join(v.type for v in results)
        body = "\n".join(self.lines)
        ret = f"  return {', '.join(v.name for v in results)} : {res_types}"
        text = (f"func.func @main(\n    " + ",\n    ".join(params) + f")\n    -> ({res_types}) {{\n"
                + body + ("\n" if body else "") + ret + "\n}\n")
        inputs = {a.val.name[1:]: a.value for a in self.args}
        tags = set(self.tags)
        if any(a.role == "param" and not a.val.static for a in self.args):
            tags.add("dynamic-param")
        if any(a.role == "param" and a.val.uses == 0 and a.val not in results for a in self.args):
            tags.add("unused-param")
        return Case(self.seed, text, inputs, results, list(self.motifs), tags)
