"""Seeded random rlx_mir graphs: the motifs and `generate` (the op builder,
its float64 reference and error bounds are in random_graph_builder.py).
"""
from __future__ import annotations

import math

import numpy as np

from random_graph_builder import *  # noqa: F401,F403 (the builder's vocabulary)
from random_graph_builder import Builder, Case, GenError, Val, _abs  # noqa: F401

# ==== motifs ===================================================================

ACTS = ("relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh")


class Gen(Builder):
    """Builder plus the random motifs; `generate` strings a few together."""

    # ---- operands ------------------------------------------------------------
    def rand_shape(self, rank=None, lo=1, hi=None, max_elems=None):
        rank = self.r(1, 4) if rank is None else rank
        hi = hi or (40 if self.big else 8)
        max_elems = max_elems or (4096 if self.big else 384)
        while True:
            s = tuple(self.r(lo, hi) for _ in range(rank))
            if int(np.prod(s)) <= max_elems:
                return s

    def dim(self, lo, hi, big_hi=None):
        """A size in [lo, hi], or up to big_hi in a graph with big sizes (BLAS, tiling, long rows)."""
        return self.r(lo, big_hi if self.big and big_hi else hi)

    def new_input(self, shape=None, scale=1.0, dyn=None):
        shape = self.rand_shape() if shape is None else shape
        return self.arg(shape, scale=scale, dyn=dyn)

    def seq(self, name="seq"):
        """(size, name) of a sequence-like dim: symbolic in a dynamic-dims graph."""
        if name in self.dyn_sizes:
            return self.dyn_sizes[name], name
        if self.dynamic and self.chance(0.8):
            n = self.dim(2, 7, 40)
            self.dyn_sizes[name] = n
            return n, name
        return self.dim(1, 7, 40), ""

    def float_operand(self, rank=None, pred=None):
        """A pool value (or a new input) of the given rank."""
        v = self.pick(lambda v: (rank is None or v.rank == rank) and (pred is None or pred(v)))
        if v is None or self.chance(0.25):
            v = self.new_input(self.rand_shape(rank))
        return v

    def broadcast_shape_of(self, x):
        """(shape, dyn) that broadcasts against Val `x` without changing the result."""
        s, d = list(x.shape), list(x.dyn)
        for i in range(len(s)):
            if self.chance(0.4):
                s[i], d[i] = 1, ""
        drop = self.r(0, len(s)) if self.chance(0.4) else 0
        return tuple(s[drop:]), tuple(d[drop:])

    def operand_like(self, x):
        """An operand for a binary op with `x` that keeps (or grows) the shape."""
        k = self.rng.random()
        if k < 0.25:
            same = self.pick(lambda v: v.type == x.type and v is not x)
            if same is not None:
                return same
            return self.new_input(x.shape, dyn=x.dyn)
        if k < 0.45:
            bs, bd = self.broadcast_shape_of(x)
            return self.new_input(bs, dyn=bd)
        if k < 0.55:
            return self.const(float(np.round(self.rng.uniform(-2, 2), 3)))
        if k < 0.62 and x.static:
            return self.const(float(np.round(self.rng.uniform(-2, 2), 3)), shape=x.shape)
        if k < 0.70:
            bs, bd = self.broadcast_shape_of(x)
            bs = tuple(1 if n else d for d, n in zip(bs, bd))
            if int(np.prod(bs)) <= 64:
                return self.const(np.round(self.rng.uniform(-2, 2, bs), 2))
            return self.new_input(bs)
        if k < 0.74:
            # a constant expression (constant folding)
            bs, bd = self.broadcast_shape_of(x)
            bs = tuple(1 if n else d for d, n in zip(bs, bd))
            if int(np.prod(bs)) <= 32:
                c = self.const(np.round(self.rng.uniform(-1.5, 1.5, bs), 2))
                c = self.unary(self.choice(["tanh", "neg", "exp", "sigmoid", "abs"]), c)
                if self.chance(0.5):
                    c = self.binary(self.choice(["add", "mul", "max"]), c, self.const(float(self.r(1, 3))))
                return c
        if k < 0.78 and x.rank < 4:
            # The other operand is bigger: the result grows a leading dim or stretches a 1.
            s, d = list(x.shape), list(x.dyn)
            ones = [i for i, n in enumerate(s) if n == 1 and not d[i]]
            if ones and self.chance(0.5):
                s[self.choice(ones)] = self.r(2, 4)
            else:
                s, d = [self.r(2, 3)] + s, [""] + d
            if int(np.prod(s)) <= 512:
                return self.new_input(tuple(s), dyn=tuple(d))
        if k < 0.85:
            return x
        return self.new_input(x.shape, dyn=x.dyn)

    # ---- domain guards -------------------------------------------------------
    def positivize(self, x, lo):
        """A value >= lo computed from x (abs/square/exp/sigmoid + constant)."""
        if x.dt == "f32" and float((x.ref - x.err).min()) >= lo and x.mag < 50 and self.chance(0.5):
            return x
        k = self.r(0, 3)
        c = float(np.round(lo + self.rng.uniform(0.0, 1.0), 3))
        if k == 0:
            y = self.binary("add", self.unary("abs", x), self.const(c, x.dt))
        elif k == 1:
            xb = self.bounded(x, 4.0)
            y = self.binary("add", self.binary("mul", xb, xb), self.const(c, x.dt))
        elif k == 2:
            y = self.unary("exp", self.unary("tanh", x))
            if lo > 0.3:
                y = self.binary("add", y, self.const(c, x.dt))
        else:
            y = self.binary("add", self.const(c, x.dt), self.unary("sigmoid", x))
        for _ in range(3):  # large error bounds (bf16/f16): shift further
            if float((y.ref - y.err).min()) >= lo * 0.99:
                return y
            y = self.binary("add", y, self.const(1.0, x.dt))
        raise GenError("positivize: operand too uncertain")

    def bounded(self, x, lim):
        if x.mag <= lim:
            return x
        if self.chance(0.5):
            return self.binary("mul", x, self.const(float(np.float32(lim / x.mag)), x.dt))
        return self.binary("mul", self.unary("tanh", x), self.const(lim, x.dt))

    def rescale(self, x, lim=30.0):
        """Keeps magnitudes moderate between motifs."""
        if x.dt in FLOATS and not x.inf and x.mag > lim:
            return self.binary("mul", x, self.const(float(np.float32(2.0 / x.mag)), x.dt))
        return x

    # ---- elementwise chains --------------------------------------------------
    def step(self, cur):
        """One random elementwise op on `cur` (f32 or f64)."""
        k = self.rng.random()
        dt = cur.dt
        if k < 0.40:
            op = self.choice(self.UNARY)
            if op in ("log", "sqrt"):
                x = self.positivize(cur, 0.1)
            elif op in ("rsqrt", "reciprocal"):
                x = self.positivize(cur, 0.25)
            elif op == "exp":
                x = self.bounded(cur, 4.0)
            elif op in ("sin", "cos"):
                x = self.bounded(cur, 12.0)
            else:
                x = cur
            return self.unary(op, x)
        if k < 0.80:
            op = self.choice(self.BINARY)
            other = self.operand_like(cur) if dt == "f32" else self.cast(self.operand_like_f32(cur), dt)
            a, b = (cur, other) if self.chance(0.6) else (other, cur)
            if op == "div":
                b = self.positivize(b, 0.3)
                if self.chance(0.3):
                    b = self.unary("neg", b)
            elif op == "pow":
                a = self.bounded(self.positivize(a, 0.3), 3.0)
                a = self.positivize(a, 0.3)
                if self.chance(0.5):
                    b = self.const(float(self.choice([0.5, 2.0, -1.0, 1.5, 3.0, -0.5, 0.25])), dt)
                else:
                    b = self.bounded(b, 1.5)
            return self.binary(op, a, b)
        if k < 0.88 and dt == "f32":
            cshape, cdyn = self.broadcast_shape_of(cur) if self.chance(0.6) else (cur.shape, cur.dyn)
            if self.chance(0.2) and int(np.prod(cshape)) <= 32 and not any(cdyn):
                cond = self.const(self.rng.random(cshape) < 0.5, "i1")
            else:
                cond = self.arg(cshape, "i1", role="input", p=self.rng.uniform(0.2, 0.8), dyn=cdyn)
            other = self.operand_like(cur)
            a, b = (cur, other) if self.chance(0.5) else (other, cur)
            return self.select(cond, a, b)
        if k < 0.94 and dt == "f32":
            return self.cast_roundtrip(cur, self.choice(["bf16", "f16"]))
        if dt == "f32" and self.chance(0.5):
            # float -> int truncation and back, when no element sits near an integer boundary.
            lo, hi = np.trunc(cur.ref - 2 * cur.err - 1e-6), np.trunc(cur.ref + 2 * cur.err + 1e-6)
            scaled = cur
            if (lo == hi).all():
                it = self.cast(scaled, self.choice(["i32", "i64"]))
                return self.cast(it, "f32")
        return self.unary(self.choice(["tanh", "neg", "abs", "sigmoid"]), cur)

    def operand_like_f32(self, x):
        """operand_like for a non-f32 value: an f32 operand of a compatible shape."""
        k = self.rng.random()
        if k < 0.5:
            return self.new_input(x.shape, dyn=x.dyn)
        bs, bd = self.broadcast_shape_of(x)
        return self.new_input(bs, dyn=bd)

    def m_elementwise(self):
        x = self.float_operand()
        cur = x
        n = self.r(2, 6)
        k = self.rng.random()
        if k < 0.16:
            # A stretch computed in f64 (or bf16 / f16), cast back to f32.
            dt = "f64" if k < 0.1 else self.choice(["bf16", "f16"])
            if dt != "f64":
                cur = self.bounded(cur, 20.0)
            cur = self.cast(cur, dt)
            for _ in range(self.r(1, 3)):
                cur = self.step(cur)
                if dt != "f64":
                    cur = self.bounded(cur, 20.0)
            cur = self.cast(cur, "f32")
        for _ in range(n):
            if not self.well_conditioned(cur):
                break
            cur = self.step(cur)
            if cur.mag > 100:
                cur = self.rescale(cur)
        self.add_pool(cur)
        return cur

    def m_int(self):
        """An integer chain (exact), cast to f32 (or used as a select condition source)."""
        dt = self.choice(["i32", "i64"])
        shape = self.rand_shape(self.r(1, 3))
        a = self.arg(shape, dt, role="input", lo=-20, hi=20)
        cur = a
        for _ in range(self.r(1, 4)):
            op = self.choice(["add", "sub", "mul", "max", "min", "div"])
            if op == "div":
                b = self.arg(self.broadcast_shape_of(cur)[0], dt, role="input", lo=1, hi=7)
            elif self.chance(0.3):
                b = self.const(self.r(-5, 5), dt)
            else:
                b = self.arg(self.broadcast_shape_of(cur)[0], dt, role="input", lo=-9, hi=9)
            if op == "mul" and np.abs(cur.ref).max() > 1000:
                op = "add"
            cur = self.binary(op, cur, b) if self.chance(0.7) or op == "div" else self.binary(op, b, cur)
        if self.chance(0.25):
            return cur  # an integer result
        f = self.cast(cur, "f32")
        f = self.rescale(f, 30.0)
        self.add_pool(f)
        return f

    # ---- data movement ----------------------------------------------------------
    def factor_shape(self, shape):
        """Another shape with the same element count (split/merge groups, or anything)."""
        n = int(np.prod(shape))
        if self.chance(0.5) and len(shape) >= 2:
            # merge two neighbours
            i = self.r(0, len(shape) - 2)
            return tuple(shape[:i]) + (shape[i] * shape[i + 1],) + tuple(shape[i + 2:])
        if self.chance(0.6):
            # split one dim
            i = self.r(0, len(shape) - 1)
            d = shape[i]
            divs = [f for f in range(2, d) if d % f == 0]
            if divs:
                f = self.choice(divs)
                return tuple(shape[:i]) + (f, d // f) + tuple(shape[i + 1:])
            return tuple(shape[:i]) + (1, d) + tuple(shape[i + 1:])
        # any factorization of n
        out = []
        m = n
        for _ in range(self.r(1, 3)):
            divs = [f for f in range(1, m + 1) if m % f == 0]
            f = self.choice(divs)
            out.append(f)
            m //= f
        out.append(m)
        return tuple(out)

    def m_movement(self):
        k = self.rng.random()
        x = self.float_operand(pred=(lambda v: True) if 0.25 <= k < 0.45 else (lambda v: v.static))
        if k < 0.25:
            y = self.reshape(x, self.factor_shape(x.shape))
        elif k < 0.45 and x.rank >= 2:
            perm = list(self.rng.permutation(x.rank))
            y = self.transpose(x, perm)
        elif k < 0.7:
            offs, sizes, strides = [], [], []
            for d in x.shape:
                st = self.r(1, 3) if self.chance(0.3) else 1
                o = self.r(0, d - 1) if self.chance(0.5) else 0
                cnt_max = -(-(d - o) // st)
                if self.chance(0.3):
                    sz = -1
                else:
                    sz = self.r(1, cnt_max)
                offs.append(o)
                sizes.append(sz)
                strides.append(st)
            y = self.slice(x, offs, sizes, strides)
        elif k < 0.85:
            axis = self.r(0, x.rank - 1)
            parts = [x]
            for _ in range(self.r(1, 2)):
                s = list(x.shape)
                s[axis] = self.r(1, 4)
                if self.chance(0.5):
                    parts.append(self.new_input(tuple(s)))
                else:
                    parts.append(self.unary(self.choice(["tanh", "neg", "sigmoid"]), x))
            self.rng.shuffle(parts)
            y = self.concat(parts, axis if self.chance(0.8) else axis - x.rank)
        else:
            s = list(x.shape)
            for i, d in enumerate(s):
                if d == 1 and self.chance(0.7):
                    s[i] = self.r(2, 4)
            lead = [self.r(1, 3)] if self.chance(0.5) and len(s) < 4 else []
            shape = lead + s
            if int(np.prod(shape)) > 1024:
                shape = s
            text = [(-1 if (i >= len(lead) and shape[i] == x.shape[i - len(lead)] and self.chance(0.3)) else d)
                    for i, d in enumerate(shape)]
            y = self.broadcast(x, tuple(shape), text)
        if self.chance(0.6):
            y = self.step(y)
        self.add_pool(y)
        return y

    # ---- reductions, softmax, norms -------------------------------------------
    def m_reduce(self):
        x = self.float_operand()
        kind = self.choice(["sum", "mean", "max", "min", "prod"])
        nax = self.r(1, x.rank)
        axes = sorted(self.rng.choice(x.rank, nax, replace=False).tolist())
        axes = [a - x.rank if self.chance(0.3) else a for a in axes]
        if kind == "prod":
            n = int(np.prod([x.shape[a] for a in axes]))
            if n > 8:
                kind = "sum"
            else:
                x = self.binary("add", self.const(0.8), self.unary("sigmoid", x))
        keep = self.chance(0.5)
        if not keep and nax == x.rank:
            keep = True  # keep a rank >= 1 result
        y = self.reduce(kind, x, axes, keep)
        y = self.rescale(y)
        if self.chance(0.5) and y.rank >= 1:
            # broadcast back against the input (x - mean(x) style)
            if keep:
                y = self.binary(self.choice(["sub", "mul", "add"]), x, y)
        self.add_pool(y)
        return y

    def m_softmax(self):
        x = self.float_operand()
        x = self.bounded(x, 20.0)
        axis = self.r(-x.rank, x.rank - 1)
        y = self.softmax(x, axis)
        self.add_pool(y)
        return y

    def norm_weight(self, n, role=None):
        return self.arg((n,), role=role, scale=0.3) if self.chance(0.5) else \
            self.binary("add", self.const(1.0), self.arg((n,), role=role, scale=0.2)) if self.chance(0.2) else \
            self.arg((n,), role=role, dist="uniform", lo=0.5, hi=1.5)

    def eps(self):
        return self.choice([1e-5, 1e-6, 1e-3, 1e-5])

    def norm(self, x, kind=None):
        kind = kind or self.choice(["rms", "ln"])
        n = x.shape[-1]
        if kind == "rms":
            w = self.norm_weight(n) if self.chance(0.7) else None
            return self.rms_norm(x, w, self.eps())
        w = self.norm_weight(n) if self.chance(0.7) else None
        b = self.arg((n,), scale=0.2) if self.chance(0.6) else None
        return self.layer_norm(x, w, b, self.eps())

    def m_norm(self):
        x = self.float_operand(pred=lambda v: v.shape[-1] >= 2 and not v.dyn[-1])
        k = self.rng.random()
        if k < 0.4:
            y = self.norm(x)
        elif k < 0.75:
            r = self.operand_same(x)
            s = self.binary("add", x, r) if self.chance(0.5) else self.binary("add", r, x)
            w = self.norm_weight(x.shape[-1]) if self.chance(0.7) else None
            y = self.rms_norm(s, w, self.eps())
            if self.chance(0.4):
                # the sum is read again (the next residual)
                z = self.binary("add", s, y)
                self.add_pool(z)
        else:
            r = self.operand_same(x)
            w = self.norm_weight(x.shape[-1]) if self.chance(0.7) else None
            y, s = self.residual_rms_norm(x, r, w, self.eps())
            self.add_pool(s)
        self.add_pool(y)
        return y

    def operand_same(self, x):
        o = self.pick(lambda v: v.type == x.type and v is not x)
        return o if o is not None and self.chance(0.6) else self.new_input(x.shape, dyn=x.dyn)

    # ---- gather -----------------------------------------------------------------
    def m_gather(self):
        V, E = self.r(2, 12), self.r(1, 16)
        table = self.arg((V, E), role="param" if self.chance(0.7) else "input")
        ishape = self.rand_shape(self.r(1, 2), hi=6)
        dt = self.choice(["i32", "i64"])
        oob = self.chance(0.15)
        ids = self.arg(ishape, dt, role="input", lo=-2 if oob else 0, hi=V + 1 if oob else V - 1)
        if self.chance(0.3):
            ids = self.binary("add", ids, self.const(0, dt))
        # Ids given as arguments are checked against the table by every runner
        # (rlx.index_bound): out-of-range ones reach the gather computed (a max
        # with a constant below them, which no canonicalization folds), where
        # the kernels clamp them.
        if oob:
            ids = self.binary("max", ids, self.const(-3, dt))
        clamped = np.clip(ids.ref, 0, V - 1)
        ref = table.ref[clamped]
        v = self.val(ref.shape, "f32", ref, np.zeros(ref.shape))
        self.use(table, ids)
        self.emit(f"{v.name} = rlx_mir.gather {table.name}[{ids.name}] : {table.type}, {ids.type}")
        if self.chance(0.5):
            v = self.step(v)
        self.add_pool(v)
        return v

    # ---- matmuls ----------------------------------------------------------------------
    def lhs(self, rank=None, kmax=48):
        x = self.pick(lambda v: v.rank in ((2, 3) if rank is None else (rank,)) and 2 <= v.shape[-1] <= kmax
                      and v.mag < 50 and not v.dyn[-1])
        if x is None or self.chance(0.3):
            r = rank or self.choice([2, 3, 3])
            m, name = self.seq() if self.chance(0.7) else (self.dim(1, 8, 48), "")
            shape = (self.r(1, 3),) * (r == 3) + (m, self.dim(1, 32, 96))
            x = self.new_input(shape, dyn=("",) * (r == 3) + (name, ""))
        return x

    def activation(self, act, x):
        return self.unary(act, x)

    def maybe_prologue(self, x, p=0.5):
        if self.chance(p):
            return self.norm(x), True
        return x, False

    def epilogue(self, y, order=None):
        """Adds bias / activation / residual stages to a matmul output."""
        N = y.shape[-1]
        stages = [s for s in ("bias", "act", "residual") if self.chance(0.5)]
        if self.chance(0.25):
            self.rng.shuffle(stages)
        for s in stages:
            if s == "bias":
                bshape = (N,) if self.chance(0.85) else (1, N)
                b = self.arg(bshape, scale=0.3)
                y = self.binary("add", y, b) if self.chance(0.6) else self.binary("add", b, y)
            elif s == "act":
                y = self.activation(self.choice(ACTS), y)
            else:
                r = self.operand_same(y)
                y = self.binary("add", y, r) if self.chance(0.5) else self.binary("add", r, y)
        return y

    def linear(self, x, n, tb=None, role=None):
        K = x.shape[-1]
        tb = self.chance(0.7) if tb is None else tb
        w = self.weight((n, K) if tb else (K, n), role=role)
        return self.matmul(x, w, tb=tb)

    def m_linear(self):
        x = self.lhs()
        xn, _ = self.maybe_prologue(x, 0.5)
        N = self.dim(1, 40, 96)
        if self.chance(0.08) and x.rank == 2:
            # transpose_a: lhs read as [K, M]
            xt = self.transpose(xn, [1, 0])
            w = self.weight((N, x.shape[-1]), role=None)
            y = self.matmul(xt, w, ta=True, tb=True)
        else:
            y = self.linear(xn, N)
        if self.chance(0.12):
            # per-head RMSNorm of the output (head-norm epilogue candidate, any rank)
            divs = [d for d in (1, 2, 3, 4, 8) if N % d == 0]
            d = self.choice(divs)
            y = self.head_norm(y, N // d, d)
        if self.chance(0.15):
            # also read the raw matmul (blocks epilogue fusion)
            self.add_pool(y)
            self.use(y)
            extra = self.unary("neg", y)
            self.add_pool(extra)
        y = self.epilogue(y)
        y = self.rescale(y)
        self.add_pool(y)
        return y

    def m_batched_matmul(self):
        """Batched matmuls (rank >= 3 rhs, broadcast batch axes): no fused_matmul."""
        B = self.r(1, 3)
        M, K, N = self.r(1, 6), self.r(1, 12), self.r(1, 8)
        a_b = (B,) if self.chance(0.7) else (1,)
        b_b = (B,) if self.chance(0.7) else (1,)
        if self.chance(0.3):
            a_b, b_b = (2,) + a_b, (1,) + b_b
        ta, tb = self.chance(0.3), self.chance(0.5)
        a = self.new_input(a_b + ((K, M) if ta else (M, K)))
        b = self.new_input(b_b + ((N, K) if tb else (K, N)), scale=1 / math.sqrt(K))
        y = self.matmul(a, b, ta=ta, tb=tb)
        if self.chance(0.5):
            y = self.epilogue(y)
        self.add_pool(y)
        return y

    def m_glu(self):
        x = self.lhs()
        xn, _ = self.maybe_prologue(x, 0.4)
        F = self.dim(1, 20, 64)
        act = self.choice(ACTS) if self.chance(0.3) else self.choice(GLU_ACTS)
        if self.chance(0.35):
            # packed gate|up weight, sliced halves
            y = self.linear(xn, 2 * F)
            if self.chance(0.3):
                y = self.binary("add", y, self.arg((2 * F,), scale=0.3))
            g = self.slice_last(y, 0, F)
            u = self.slice_last(y, F, F)
        else:
            tb = self.chance(0.8)
            g = self.linear(xn, F, tb=tb)
            u = self.linear(xn, F, tb=tb if self.chance(0.9) else not tb)
            if self.chance(0.2):
                g = self.binary("add", g, self.arg((F,), scale=0.3))
                u = self.binary("add", u, self.arg((F,), scale=0.3))
        a = self.activation(act, g)
        y = self.binary("mul", a, u) if self.chance(0.6) else self.binary("mul", u, a)
        if self.chance(0.6):
            # down projection (+ residual)
            d = self.linear(y, self.r(1, 24))
            y = self.epilogue(d)
        y = self.rescale(y)
        self.add_pool(y)
        return y

    def head_norm(self, y, heads, d):
        """Qwen3-style per-head RMSNorm: reshape -> rms_norm(g[D]) -> reshape."""
        t = self.reshape(y, y.shape[:-1] + (heads, d), dyn=y.dyn[:-1] + ("", ""))
        w = self.norm_weight(d) if self.chance(0.8) else None
        t = self.rms_norm(t, w, self.eps())
        return self.reshape(t, y.shape, dyn=y.dyn)

    def m_qkv(self):
        """Matmuls sharing their input (Q/K/V-like), with per-branch epilogues."""
        B, (S, name) = self.r(1, 2), self.seq()
        x = self.lhs(rank=3, kmax=32) if self.chance(0.6) else \
            self.new_input((B, S, self.r(4, 24)), dyn=("", name, ""))
        if x.dyn[0]:
            x = self.new_input((B, S, self.r(4, 24)), dyn=("", name, ""))
        xn, _ = self.maybe_prologue(x, 0.6)
        b, s, _ = x.shape
        D = self.choice([2, 4, 8])
        n_mm = self.r(2, 4)
        bias_all = self.chance(0.4)
        tb = self.chance(0.8)
        rope_tables = None
        outs = []
        for i in range(n_mm):
            heads = self.r(1, 3)
            N = heads * D
            y = self.linear(xn, N, tb=tb if self.chance(0.9) else not tb)
            if bias_all or self.chance(0.1):
                y = self.binary("add", y, self.arg((N,), scale=0.3))
            if self.chance(0.1):
                y = self.activation(self.choice(ACTS), y)
            if self.chance(0.3):
                y = self.head_norm(y, heads, D)
            if self.chance(0.35):
                if rope_tables is None or self.chance(0.2):
                    rot = self.choice([r for r in (2, 4, 8) if r <= D])
                    rope_tables = (self.rope_tables(b, s, rot, batched=self.chance(0.3), seq_name=x.dyn[1]), rot,
                                   self.choice(["neox", "gptj"]))
                (cos, sin), rot, style = rope_tables
                y = self.rope(y, cos, sin, D, rot, style)
            outs.append(y)
        for y in outs:
            self.add_pool(y)
        if self.chance(0.5):
            # combine the branches so that they are all used
            cur = outs[0]
            for o in outs[1:]:
                if o.type == cur.type:
                    cur = self.binary("add", cur, o)
            return cur
        return outs[-1]

    def m_rope(self):
        B, S = self.r(1, 2), self.r(1, 6)
        D = self.choice([2, 4, 6, 8])
        H = self.r(1, 3)
        x = self.pick(lambda v: v.rank == 3 and v.shape[-1] % 2 == 0 and v.shape[-1] <= 32 and not v.dyn[-1]
                      and not v.dyn[0])
        if x is None or self.chance(0.4):
            S, name = self.seq()
            x = self.new_input((B, S, H * D), dyn=("", name, ""))
        else:
            D = self.choice([d for d in (2, 4, 6, 8, x.shape[-1]) if x.shape[-1] % d == 0])
        b, s, n = x.shape
        rot = self.choice([r for r in range(2, D + 1, 2)])
        cos, sin = self.rope_tables(b, s, rot, batched=self.chance(0.3), seq_name=x.dyn[1])
        if self.chance(0.5):
            # produced by a matmul: a rope epilogue candidate
            xin = self.lhs(rank=3) if self.chance(0.3) else x
            if xin.shape[:2] != (b, s) or xin.dyn[:2] != x.dyn[:2]:
                xin = x
            x = self.linear(xin, n)
        y = self.rope(x, cos, sin, D, rot, self.choice(["neox", "gptj"]))
        self.add_pool(y)
        return y

    # ---- fused_matmul written directly ---------------------------------------------
    def m_fused_matmul(self):
        B, (S, name) = self.r(1, 2), self.seq()
        x = self.lhs(rank=3) if self.chance(0.5) else self.new_input((B, S, self.r(2, 24)), dyn=("", name, ""))
        if x.dyn[0]:
            x = self.new_input((B, S, self.r(2, 24)), dyn=("", name, ""))
        b, s, K = x.shape
        D = self.choice([2, 4, 8])
        glu = self.chance(0.25)
        heads_out = self.r(1, 4)
        Nout = heads_out * D
        N = 2 * Nout if glu else Nout
        tb = self.chance(0.7)
        w = self.weight((N, K) if tb else (K, N))
        parts = [f"{x.name}, {w.name}"]
        if tb:
            parts.append("transpose_b")
        xr, ex = x.ref, x.err
        norm = self.choice([None, "rms_norm", "layer_norm"])
        ops_used = [x, w]
        if norm:
            eps = self.eps()
            parts.append(f"norm {norm} eps = {fmt_attr(eps)}")
            nw = self.arg((K,), scale=0.3) if self.chance(0.6) else None
            nb = self.arg((K,), scale=0.2) if norm == "layer_norm" and self.chance(0.6) else None
            if nw is not None:
                parts.append(f"norm_weight({nw.name} : {nw.type})")
                ops_used.append(nw)
            if nb is not None:
                parts.append(f"norm_bias({nb.name} : {nb.type})")
                ops_used.append(nb)
            if norm == "rms_norm":
                xr, ex = self.rms_ref(xr, ex, None if nw is None else nw.ref, None if nw is None else nw.err, eps)
            else:
                xr, ex = self.ln_ref(xr, ex, None if nw is None else nw.ref, None if nw is None else nw.err,
                                     None if nb is None else nb.ref, None if nb is None else nb.err, eps)
        y, e = self.mm_ref(xr, ex, w.ref, w.err, tb=tb)
        if self.chance(0.5):
            bias = self.arg((N,), scale=0.3)
            parts.append(f"bias({bias.name} : {bias.type})")
            ops_used.append(bias)
            y, e = y + bias.ref, e + U32 * _abs(y + bias.ref)
        act = None
        if glu:
            act = self.choice(GLU_ACTS)
        elif self.chance(0.5):
            act = self.choice(ACTS)
        if act:
            parts.append(f"activation {act}")
        if glu:
            parts.append("glu")
            g, up = y[..., :Nout], y[..., Nout:]
            eg, eu = e[..., :Nout], e[..., Nout:]
            ag = ACT[act](g)
            eag = ACT_SLOPE[act] * eg + 8 * U32 * (_abs(ag) + np.minimum(_abs(g), 1))
            y = ag * up
            e = _abs(up) * eag + _abs(ag) * eu + U32 * _abs(y)
        elif act:
            ay = ACT[act](y)
            e = ACT_SLOPE[act] * e + 8 * U32 * (_abs(ay) + np.minimum(_abs(y), 1))
            y = ay
        need_hd = False
        if self.chance(0.35):
            hn = self.r(1, heads_out)
            hw = self.arg((hn, D), scale=0.3) if self.chance(0.5) else \
                self.arg((hn, D), dist="uniform", lo=0.5, hi=1.5)
            heps = self.eps()
            parts.append(f"head_norm({hw.name} : {hw.type}) head_norm_eps = {fmt_attr(heps)}")
            ops_used.append(hw)
            t = y.reshape(b, s, heads_out, D).copy()
            et = e.reshape(b, s, heads_out, D).copy()
            nt, net = self.rms_ref(t[:, :, :hn], et[:, :, :hn], hw.ref, hw.err, heps)
            t[:, :, :hn], et[:, :, :hn] = nt, net
            y, e = t.reshape(y.shape), et.reshape(e.shape)
            need_hd = True
        if self.chance(0.35):
            rh = self.r(1, heads_out)
            rot = self.choice([r for r in (2, 4, 8) if r <= D])
            style = self.choice(["neox", "gptj"])
            cos, sin = self.rope_tables(b, s, rot, batched=self.chance(0.3), seq_name=x.dyn[1])
            parts.append(f"rope({cos.name}, {sin.name} : {cos.type}, {sin.type}) rope_heads = {rh}")
            if rot != D or self.chance(0.3):
                parts.append(f"rotary_dim = {rot}")
            if style != "neox" or self.chance(0.3):
                parts.append(f"rope_style {style}")
            ops_used += [cos, sin]
            y, e = self.rope_ref(y, e, cos.ref, sin.ref, D, rot, style, heads=rh)
            need_hd = True
        if need_hd:
            parts.append(f"head_dim = {D}")
        if self.chance(0.4):
            res = self.operand_same(Val("", y.shape, "f32", y, e, dyn=x.dyn[:-1] + ("",)))
            parts.append(f"residual({res.name} : {res.type})")
            ops_used.append(res)
            y, e = y + res.ref, e + res.err + U32 * _abs(y + res.ref)
        v = self.val(y.shape, "f32", y, e, dyn=x.dyn[:-1] + ("",))
        self.use(*ops_used)
        self.emit(f"{v.name} = rlx_mir.fused_matmul {' '.join(parts)} : {x.type}, {w.type}")
        v = self.rescale(v)
        self.add_pool(v)
        return v

    # ---- attention --------------------------------------------------------------------
    def attn_config(self):
        kvh = self.r(1, 2)
        G = self.r(1, 3)
        H = kvh * G
        D = self.choice([2, 4, 8, 16] + [32, 64] * self.big)
        Dv = D if self.chance(0.8) else self.choice([2, 4, 8])
        B = self.r(1, 2)
        Sq, nq = self.seq("seq")
        if self.chance(0.3):
            Sk, nk = Sq, nq
        else:
            Sk, nk = self.seq("kv_seq")
            if not nk:
                Sk = self.dim(1, 9, 70)
        kind = self.choice(["none", "causal", "sliding_window"], p=[0.35, 0.4, 0.25])
        window = self.r(1, Sk + 1) if kind == "sliding_window" else None
        scale = None if self.chance(0.6) else float(np.float32(self.rng.uniform(0.05, 1.0)))
        softcap = None if self.chance(0.75) else float(np.float32(self.rng.uniform(1.0, 30.0)))
        layout = self.choice(["bsd", "bshd", "bhsd"], p=[0.5, 0.25, 0.25])
        return dict(H=H, kvh=kvh, D=D, Dv=Dv, B=B, Sq=Sq, Sk=Sk, kind=kind, window=window,
                    scale=scale, softcap=softcap, layout=layout, nq=nq, nk=nk)

    @staticmethod
    def layout_shape(layout, B, S, h, d):
        return {"bsd": (B, S, h * d), "bshd": (B, S, h, d), "bhsd": (B, h, S, d)}[layout]

    @staticmethod
    def layout_dyn(layout, name):
        return {"bsd": ("", name, ""), "bshd": ("", name, "", ""), "bhsd": ("", "", name, "")}[layout]

    @staticmethod
    def to_bhsd_arr(a, layout, h):
        if layout == "bsd":
            B, S, hd = a.shape
            return a.reshape(B, S, h, hd // h).transpose(0, 2, 1, 3)
        if layout == "bshd":
            return a.transpose(0, 2, 1, 3)
        return a

    @staticmethod
    def from_bhsd_arr(a, layout):
        B, H, S, D = a.shape
        if layout == "bsd":
            return a.transpose(0, 2, 1, 3).reshape(B, S, H * D)
        if layout == "bshd":
            return a.transpose(0, 2, 1, 3)
        return a

    def attn_mask(self, c, for_chain):
        """None, or (Val mask, mode) with mode 'bool'/'add'; shapes the op accepts."""
        if self.chance(0.5):
            return None
        B, H, Sq, Sk = c["B"], c["H"], c["Sq"], c.get("stretch") or c["Sk"]
        shape = self.choice([(Sq, Sk), (B, Sq, Sk), (1, Sq, Sk), (B, 1, Sq, Sk), (1, H, Sq, Sk),
                             (B, H, Sq, Sk)])
        if for_chain and len(shape) == 3 and self.chance(0.5):
            shape = (shape[0], 1) + shape[1:]
        if self.chance(0.5):
            m = self.arg(shape, "i1", role="input", p=self.rng.uniform(0.5, 0.95))
            return m, "bool"
        k = self.rng.random()
        if k < 0.4:
            vals = np.where(self.rng.random(shape) < 0.75, 0.0, -np.inf)
        elif k < 0.7:
            vals = self.rng.standard_normal(shape)
        else:
            vals = np.where(self.rng.random(shape) < 0.75, self.rng.standard_normal(shape) * 0.5, -30.0)
        m = self.const_or_arg(vals)
        m.inf = bool(np.isinf(vals).any())
        return m, "add"

    def attn_inputs(self, c):
        L = c["layout"]
        q = self.new_input(self.layout_shape(L, c["B"], c["Sq"], c["H"], c["D"]), dyn=self.layout_dyn(L, c["nq"]))
        k = self.new_input(self.layout_shape(L, c["B"], c["Sk"], c["kvh"], c["D"]), dyn=self.layout_dyn(L, c["nk"]))
        v = self.new_input(self.layout_shape(L, c["B"], c["Sk"], c["kvh"], c["Dv"]), dyn=self.layout_dyn(L, c["nk"]))
        return q, k, v

    def attention_op(self, q, k, v, c, mask):
        L = c["layout"]
        qh = self.to_bhsd_arr(q.ref, L, c["H"])
        kh = self.to_bhsd_arr(k.ref, L, c["kvh"])
        vh = self.to_bhsd_arr(v.ref, L, c["kvh"])
        eqh = self.to_bhsd_arr(q.err, L, c["H"])
        ekh = self.to_bhsd_arr(k.err, L, c["kvh"])
        evh = self.to_bhsd_arr(v.err, L, c["kvh"])
        scale = c["scale"] if c["scale"] is not None else 1.0 / math.sqrt(c["D"])
        m = mask[0] if mask else None
        o, eo = self.attn_ref(qh, eqh, kh, ekh, vh, evh, c["H"], c["kvh"], scale, c["softcap"], c["kind"],
                              c["window"], None if m is None else m.ref, None if m is None or m.err is None else m.err)
        ref, err = self.from_bhsd_arr(o, L), self.from_bhsd_arr(eo, L)
        seq_axis = 2 if L == "bhsd" else 1
        v_out = self.val(ref.shape, "f32", ref, err, dyn=self.layout_dyn(L, q.dyn[seq_axis]))
        self.use(q, k, v, m)
        text = f"{v_out.name} = rlx_mir.attention {q.name}, {k.name}, {v.name}"
        if m is not None:
            text += f" mask({m.name} : {m.type})"
        text += f" heads = {c['H']}, kv_heads = {c['kvh']}, head_dim = {c['D']}"
        if c["kind"] != "none" or self.chance(0.1):
            text += f" {c['kind']}"
        if c["window"] is not None:
            text += f" window = {c['window']}"
        if c["scale"] is not None:
            text += f" scale = {fmt_attr(c['scale'])}"
        if c["softcap"] is not None:
            text += f" softcap = {fmt_attr(c['softcap'])}"
        if L != "bsd" or self.chance(0.2):
            text += f" layout {L}"
        self.emit(f"{text} : {q.type}, {k.type}, {v.type}")
        return v_out

    def attention_chain(self, q, k, v, c, mask, near_miss=False):
        """matmul -> scale -> [softcap] -> [causal_mask] -> [mask] -> softmax -> matmul."""
        L, H, kvh, D, Dv, B = c["layout"], c["H"], c["kvh"], c["D"], c["Dv"], c["B"]
        Sq, Sk = c["Sq"], c["Sk"]
        G = H // kvh

        def heads_first(x, h, d, S):
            if L == "bsd":
                x = self.reshape(x, (B, S, h, d), dyn=("", x.dyn[1], "", ""))
                return self.transpose(x, [0, 2, 1, 3])
            if L == "bshd":
                return self.transpose(x, [0, 2, 1, 3])
            return x

        stretch = c.get("stretch")  # Sk = 1 keys broadcast along the sequence too

        def repeat(x, d, S):
            if G == 1 and not stretch:
                return x
            n = x.dyn[2]
            S2 = stretch or S
            x = self.reshape(x, (B, kvh, 1, S, d), dyn=("", "", "", n, ""))
            x = self.broadcast(x, (B, kvh, G, S2, d), [B, -1 if self.chance(0.3) else kvh, G, S2, d])
            return self.reshape(x, (B, H, S2, d), dyn=("", "", n, ""))

        qh = heads_first(q, H, D, Sq)
        kh = repeat(heads_first(k, kvh, D, Sk), D, Sk)
        vh = repeat(heads_first(v, kvh, Dv, Sk), Dv, Sk)
        s = self.matmul(qh, kh, tb=True)
        scale = c["scale"] if c["scale"] is not None else float(np.float32(1.0 / math.sqrt(D)))
        mode = self.choice(["mul", "mul_r", "div", "none"], p=[0.5, 0.2, 0.2, 0.1])
        if mode == "none":
            c["scale"] = 1.0
        elif mode == "mul":
            s = self.binary("mul", s, self.const(scale))
        elif mode == "mul_r":
            s = self.binary("mul", self.const(scale), s)
        else:
            inv = float(np.float32(1.0 / scale))
            s = self.binary("div", s, self.const(inv))
        if c["softcap"] is not None:
            cap = self.const(c["softcap"])
            t = self.binary("div", s, cap)
            t = self.unary("tanh", t)
            s = self.binary("mul", t, cap) if self.chance(0.7) else self.binary("mul", cap, t)
        if c["kind"] != "none":
            s = self.causal_mask(s, c["window"])
        if mask is not None:
            m, kind = mask
            if m.rank == 3:
                m = self.reshape(m, (m.shape[0], 1) + m.shape[1:])
            if kind == "bool":
                s = self.select(m, s, self.const(-np.inf))
            else:
                s = self.binary("add", s, m) if self.chance(0.6) else self.binary("add", m, s)
        axis = -1 if self.chance(0.8) else 3
        if near_miss and self.chance(0.3):
            axis = 2
        if near_miss and self.chance(0.3):
            self.add_extra_output(s)
        p = self.softmax(s, axis)
        o = self.matmul(p, vh)
        if L == "bsd":
            o = self.transpose(o, [0, 2, 1, 3])
            o = self.reshape(o, (B, Sq, H * Dv), dyn=("", o.dyn[1], ""))
        elif L == "bshd":
            o = self.transpose(o, [0, 2, 1, 3])
        return o

    def causal_mask(self, s, window):
        Sq, Sk = s.shape[-2], s.shape[-1]
        i = np.arange(Sq)[:, None] + (Sk - Sq)
        j = np.arange(Sk)[None, :]
        vis = j <= i
        if window is not None:
            vis = vis & (j > i - window)
        r = np.where(vis, s.ref, -np.inf)
        e = np.where(vis, s.err, 0.0)
        v = self.val(s.shape, s.dt, r, e, inf=True, dyn=s.dyn)
        self.use(s)
        w = f" window = {window}" if window is not None else ""
        self.emit(f"{v.name} = rlx_mir.causal_mask {s.name}{w} : {s.type}")
        return v

    def add_extra_output(self, v):
        self.extra_outputs.append(v)
        v.uses += 1

    def m_attention(self):
        c = self.attn_config()
        q, k, v = self.attn_inputs(c)
        chain = self.chance(0.5)
        if chain and c["Sk"] == 1 and not c["nk"] and self.chance(0.4):
            c["stretch"] = self.r(2, 4)
            self.tags.add("kv-seq-stretch")
            if c["window"] is not None:
                c["window"] = self.r(1, c["stretch"] + 1)
        mask = self.attn_mask(c, chain)
        if chain:
            o = self.attention_chain(q, k, v, c, mask, near_miss=self.chance(0.2))
        else:
            o = self.attention_op(q, k, v, c, mask)
        self.motifs[-1] += "/chain" if chain else "/op"
        if self.chance(0.4) and o.rank == 3:
            # output projection (+ residual)
            y = self.linear(o, self.r(1, 16))
            o = self.epilogue(y)
        self.add_pool(o)
        return o

    def m_layer(self):
        """A small decoder layer: norm -> QKV (+RoPE, head norm) -> attention -> o_proj + residual
        -> norm -> SwiGLU -> residual."""
        kvh = self.r(1, 2)
        H = kvh * self.r(1, 2)
        D = self.choice([4, 8] + [16, 32] * self.big)
        B, (S, name) = self.r(1, 2), self.seq()
        E = H * D if self.chance(0.7) else self.r(4, 24)
        x = self.new_input((B, S, E), dyn=("", name, ""))
        h = self.norm(x, "rms" if self.chance(0.8) else "ln")
        bias = self.chance(0.3)
        tb = self.chance(0.85)

        def proj(inp, n):
            y = self.linear(inp, n, tb=tb)
            if bias:
                y = self.binary("add", y, self.arg((n,), scale=0.2))
            return y

        q, k, v = proj(h, H * D), proj(h, kvh * D), proj(h, kvh * D)
        if self.chance(0.3):
            q, k = self.head_norm(q, H, D), self.head_norm(k, kvh, D)
        if self.chance(0.6):
            rot = D if self.chance(0.7) else D // 2
            cos, sin = self.rope_tables(B, S, rot, seq_name=name)
            style = "neox" if self.chance(0.8) else "gptj"
            q = self.rope(q, cos, sin, D, rot, style)
            k = self.rope(k, cos, sin, D, rot, style)
        kind = self.choice(["causal", "sliding_window", "none"], p=[0.6, 0.2, 0.2])
        c = dict(H=H, kvh=kvh, D=D, Dv=D, B=B, Sq=S, Sk=S, kind=kind,
                 window=self.r(1, S + 1) if kind == "sliding_window" else None,
                 scale=None, softcap=None, layout="bsd", nq=name, nk=name)
        a = self.attention_chain(q, k, v, c, None) if self.chance(0.6) else self.attention_op(q, k, v, c, None)
        o = self.linear(a, E, tb=tb)
        r = self.binary("add", x, o) if self.chance(0.5) else self.binary("add", o, x)
        n = self.rms_norm(r, self.norm_weight(E), 1e-5)
        F = self.r(2, 16)
        g, u = self.linear(n, F, tb=tb), self.linear(n, F, tb=tb)
        m = self.binary("mul", self.activation(self.choice(GLU_ACTS), g), u)
        d = self.linear(m, E, tb=tb)
        out = self.binary("add", r, d)
        self.add_pool(out)
        return out


MOTIFS = {
    "elementwise": (Gen.m_elementwise, 3.0),
    "int": (Gen.m_int, 0.4),
    "movement": (Gen.m_movement, 1.5),
    "reduce": (Gen.m_reduce, 0.8),
    "softmax": (Gen.m_softmax, 0.7),
    "norm": (Gen.m_norm, 1.2),
    "gather": (Gen.m_gather, 0.4),
    "linear": (Gen.m_linear, 2.0),
    "batched_matmul": (Gen.m_batched_matmul, 0.5),
    "glu": (Gen.m_glu, 1.0),
    "qkv": (Gen.m_qkv, 1.0),
    "rope": (Gen.m_rope, 0.6),
    "fused_matmul": (Gen.m_fused_matmul, 0.6),
    "attention": (Gen.m_attention, 2.0),
    "layer": (Gen.m_layer, 0.6),
}


def generate(seed: int, motifs: list[str] | None = None, max_motifs: int = 4, big: bool | None = None) -> Case:
    """One random graph from `seed` (deterministic). `big=False` keeps every graph small
    (the pytest); by default 15% of the graphs use larger sizes."""
    g = Gen(seed)
    g.extra_outputs = []
    g.dynamic = g.chance(0.3)  # symbolic seq dims (bound by rlx-run from the input shapes)
    g.big = g.chance(0.15)
    if big is not None:
        g.big = big
    names = list(MOTIFS)
    weights = np.array([MOTIFS[n][1] for n in names])
    weights = weights / weights.sum()
    todo = motifs or [names[g.rng.choice(len(names), p=weights)] for _ in range(g.r(1, max_motifs))]
    for name in todo:
        g.motifs.append(name)
        try:
            MOTIFS[name][0](g)
        except GenError:
            g.motifs[-1] += "(cut)"  # what was emitted so far stays valid IR
    # Results: every value nobody reads, plus a few intermediates, an argument or a duplicate.
    results = [v for v in g.vals if v.uses == 0 and not v.is_arg]
    results += [v for v in g.extra_outputs if v not in results]
    inner = [v for v in g.vals if v.uses > 0 and not v.is_arg and v.dt not in ("bf16", "f16")]
    if inner and g.chance(0.3):
        results.append(g.choice(inner))
    if g.chance(0.05):
        results.append(g.choice([a.val for a in g.args]))
    if results and g.chance(0.05):
        results.append(results[0])
    if not results:
        results = [g.vals[-1]]
    return g.finish(results)
