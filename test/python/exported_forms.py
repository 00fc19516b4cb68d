"""Decoder layers written the way PyTorch exporters write them, for the import
tests: TOSA as torch-mlir's TorchToTosa emits it for HF's LlamaDecoderLayer
(linear as transpose + reshape + 3-D tosa.matmul, rotate_half RoPE with the
cos/sin of cat(freqs, freqs), repeat_kv as reshape + tile + reshape, softmax as
reduce_max/sub/exp/reduce_sum/reciprocal/mul, RMSNorm as pow/reduce_sum/mul
(1/H)/add/rsqrt/mul, an additive causal mask constant), and the same layer in
linalg-on-tensors as TorchToLinalg emits it (named matmuls on zero fills,
elementwise and reduction linalg.generic, tensor reshapes and slices).
Written for these tests from the exporters' documented lowerings; no
third-party file is copied."""
from __future__ import annotations

import numpy as np


def ty(shape, et="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def flt(v) -> str:
    """An MLIR float literal (always with a mantissa dot and exponent)."""
    return f"{float(v):.9e}" if np.isfinite(v) else ("0xFF800000" if v < 0 else "0x7F800000")


def dense(a: np.ndarray) -> str:
    def nest(x):
        return "[" + ", ".join(nest(e) for e in x) + "]" if x.ndim else flt(x)
    return f"dense<{nest(np.asarray(a))}>"


class Tosa:
    def __init__(self):
        self.lines: list[str] = []
        self.n = 0
        self.shapes: dict[str, tuple] = {}
        self._shift = None
        self._zp = None

    def new(self, shape):
        self.n += 1
        name = f"%t{self.n}"
        self.shapes[name] = tuple(shape)
        return name

    def emit(self, text):
        self.lines.append("  " + text)

    def const(self, a: np.ndarray, et="f32"):
        r = self.new(a.shape)
        self.emit(f'{r} = "tosa.const"() <{{values = {dense(a)} : {ty(a.shape, et)}}}> : () -> {ty(a.shape, et)}')
        return r

    def splat(self, v, rank):
        shape = (1,) * rank
        r = self.new(shape)
        self.emit(f'{r} = "tosa.const"() <{{values = dense<{flt(v)}> : {ty(shape)}}}> : () -> {ty(shape)}')
        return r

    def shape_const(self, dims):
        self.n += 1
        r = f"%s{self.n}"
        self.emit(f"{r} = tosa.const_shape {{values = dense<{list(dims)}> : tensor<{len(dims)}xindex>}} "
                  f": () -> !tosa.shape<{len(dims)}>")
        return r

    def shift(self):
        if not self._shift:
            self._shift = "%shift"
            self.emit('%shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>')
        return self._shift

    def zp(self):
        if not self._zp:
            self._zp = "%zp"
            self.emit('%zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>')
        return self._zp

    def binary(self, op, a, b):
        sa, sb = self.shapes[a], self.shapes[b]
        out = tuple(max(x, y) for x, y in zip(sa, sb))
        r = self.new(out)
        if op == "mul":
            self.emit(f"{r} = tosa.mul {a}, {b}, {self.shift()} : ({ty(sa)}, {ty(sb)}, tensor<1xi8>) -> {ty(out)}")
        else:
            self.emit(f"{r} = tosa.{op} {a}, {b} : ({ty(sa)}, {ty(sb)}) -> {ty(out)}")
        return r

    def unary(self, op, a):
        s = self.shapes[a]
        r = self.new(s)
        if op == "negate":
            z = self.zp()
            self.emit(f"{r} = tosa.negate {a}, {z}, {z} : ({ty(s)}, tensor<1xf32>, tensor<1xf32>) -> {ty(s)}")
        else:
            self.emit(f"{r} = tosa.{op} {a} : ({ty(s)}) -> {ty(s)}")
        return r

    def reduce(self, op, a, axis):
        s = list(self.shapes[a])
        s[axis] = 1
        r = self.new(s)
        self.emit(f"{r} = tosa.reduce_{op} {a} {{axis = {axis} : i32}} : ({ty(self.shapes[a])}) -> {ty(s)}")
        return r

    def reshape(self, a, shape):
        sc = self.shape_const(shape)
        r = self.new(shape)
        self.emit(f"{r} = tosa.reshape {a}, {sc} : ({ty(self.shapes[a])}, !tosa.shape<{len(shape)}>) -> {ty(shape)}")
        return r

    def transpose(self, a, perm):
        s = self.shapes[a]
        out = tuple(s[p] for p in perm)
        r = self.new(out)
        self.emit(f"{r} = tosa.transpose {a} {{perms = array<i32: {', '.join(map(str, perm))}>}} "
                  f": ({ty(s)}) -> {ty(out)}")
        return r

    def matmul(self, a, b):
        sa, sb = self.shapes[a], self.shapes[b]
        out = (sa[0], sa[1], sb[2])
        r = self.new(out)
        z = self.zp()
        self.emit(f"{r} = tosa.matmul {a}, {b}, {z}, {z} : ({ty(sa)}, {ty(sb)}, tensor<1xf32>, "
                  f"tensor<1xf32>) -> {ty(out)}")
        return r

    def slice(self, a, start, size):
        st, sz = self.shape_const(start), self.shape_const(size)
        r = self.new(size)
        n = len(size)
        self.emit(f"{r} = tosa.slice {a}, {st}, {sz} : ({ty(self.shapes[a])}, !tosa.shape<{n}>, "
                  f"!tosa.shape<{n}>) -> {ty(size)}")
        return r

    def concat(self, xs, axis):
        shapes = [self.shapes[x] for x in xs]
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        r = self.new(out)
        self.emit(f"{r} = tosa.concat {', '.join(xs)} {{axis = {axis} : i32}} : "
                  f"({', '.join(ty(s) for s in shapes)}) -> {ty(out)}")
        return r

    def tile(self, a, mult):
        s = self.shapes[a]
        out = tuple(d * m for d, m in zip(s, mult))
        mc = self.shape_const(mult)
        r = self.new(out)
        self.emit(f"{r} = tosa.tile {a}, {mc} : ({ty(s)}, !tosa.shape<{len(mult)}>) -> {ty(out)}")
        return r

    def cast(self, a, src_et, dst_et="f32"):
        s = self.shapes[a]
        r = self.new(s)
        self.emit(f"{r} = tosa.cast {a} : ({ty(s, src_et)}) -> {ty(s, dst_et)}")
        return r

    # -- the form-neutral API llama_layer uses ------------------------------

    def add(self, a, b):
        return self.binary("add", a, b)

    def mul(self, a, b):
        return self.binary("mul", a, b)

    def mul_scalar(self, a, v):
        return self.binary("mul", a, self.splat(v, len(self.shapes[a])))

    def bmm(self, a, b):
        return self.matmul(a, b)

    def repeat(self, x, mult):
        return self.tile(x, mult)

    def rope_tables(self, pos, inv, S, HD):
        """cos/sin [1, 1, S, HD] of cat(freqs, freqs), freqs = pos ⊗ inv."""
        posf = self.reshape(self.cast(pos, "i64"), (1, S, 1))
        freqs = self.binary("mul", posf, self.const(inv.reshape(1, 1, HD // 2)))
        emb = self.concat([freqs, freqs], 2)
        return (self.reshape(self.unary("cos", emb), (1, 1, S, HD)),
                self.reshape(self.unary("sin", emb), (1, 1, S, HD)))

    def silu(self, x):
        return self.binary("mul", x, self.unary("sigmoid", x))

    # -- blocks, as TorchToTosa spells them ---------------------------------

    def linear(self, x, w):  # x [1, S, K], w [N, K] (nn.Linear)
        n, k = self.shapes[w]
        wt = self.transpose(w, [1, 0])
        return self.matmul(x, self.reshape(wt, (1, k, n)))

    def rms_norm(self, x, w, eps):
        h = self.shapes[x][-1]
        sq = self.binary("pow", x, self.splat(2.0, 3))
        mean = self.binary("mul", self.reduce("sum", sq, 2), self.splat(1.0 / h, 3))
        r = self.unary("rsqrt", self.binary("add", mean, self.splat(eps, 3)))
        return self.binary("mul", self.binary("mul", x, r), self.reshape(w, (1, 1, h)))

    def softmax(self, s):
        ax = len(self.shapes[s]) - 1
        e = self.unary("exp", self.binary("sub", s, self.reduce("max", s, ax)))
        return self.binary("mul", e, self.unary("reciprocal", self.reduce("sum", e, ax)))

    def rotate_half(self, x):
        b, h, s, d = self.shapes[x]
        x1 = self.slice(x, (0, 0, 0, 0), (b, h, s, d // 2))
        x2 = self.slice(x, (0, 0, 0, d // 2), (b, h, s, d // 2))
        return self.concat([self.unary("negate", x2), x1], 3)


def numpy_llama_layer(x, pos, w, H, KV, HD, eps=1e-5, theta=10000.0):
    """The same layer in numpy (float64), for the numeric comparison."""
    X = x[0].astype(np.float64)
    S = X.shape[0]
    inv = (1.0 / theta ** (np.arange(0, HD, 2, dtype=np.float32) / HD)).astype(np.float32)
    freqs = pos[0].astype(np.float32)[:, None] * inv[None]
    emb = np.concatenate([freqs, freqs], -1).astype(np.float64)
    cos, sin = np.cos(emb), np.sin(emb)

    def rms(z, g):
        return z / np.sqrt(np.mean(z * z, -1, keepdims=True) + eps) * g

    def rope(z, n):
        zh = z.reshape(S, n, HD)
        rot = np.concatenate([-zh[..., HD // 2:], zh[..., :HD // 2]], -1)
        return (zh * cos[:, None] + rot * sin[:, None]).reshape(S, n * HD)

    W = {k: v.astype(np.float64) for k, v in w.items()}
    h = rms(X, W["input_layernorm.weight"])
    q = rope(h @ W["self_attn.q_proj.weight"].T, H)
    k = rope(h @ W["self_attn.k_proj.weight"].T, KV)
    v = h @ W["self_attn.v_proj.weight"].T
    out = np.zeros((S, H * HD))
    for i in range(H):
        j = i // (H // KV)
        s = q[:, i * HD:(i + 1) * HD] @ k[:, j * HD:(j + 1) * HD].T / np.sqrt(HD)
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        out[:, i * HD:(i + 1) * HD] = (e / e.sum(-1, keepdims=True)) @ v[:, j * HD:(j + 1) * HD]
    h1 = X + out @ W["self_attn.o_proj.weight"].T
    n = rms(h1, W["post_attention_layernorm.weight"])
    g = n @ W["mlp.gate_proj.weight"].T
    y = h1 + ((g / (1 + np.exp(-g))) * (n @ W["mlp.up_proj.weight"].T)) @ W["mlp.down_proj.weight"].T
    return y[None]


class Linalg:
    """linalg-on-tensors as TorchToLinalg writes it: one linalg.generic per
    elementwise aten op (numpy broadcasting through constant-0 map results),
    reductions as generics on a filled init, named matmuls on zero fills,
    tensor reshapes, slices and concats."""

    def __init__(self):
        self.lines: list[str] = []
        self.n = 0
        self.shapes: dict[str, tuple] = {}
        self.consts: dict[float, str] = {}

    def new(self, shape):
        self.n += 1
        r = f"%v{self.n}"
        self.shapes[r] = tuple(shape)
        return r

    def emit(self, text):
        self.lines.append("  " + text)

    def scalar(self, v):
        if v not in self.consts:
            self.n += 1
            self.consts[v] = f"%c{self.n}"
            self.emit(f"{self.consts[v]} = arith.constant {flt(v)} : f32")
        return self.consts[v]

    def empty(self, shape):
        r = self.new(shape)
        self.emit(f"{r} = tensor.empty() : {ty(shape)}")
        return r

    def filled(self, shape, v):
        e = self.empty(shape)
        r = self.new(shape)
        self.emit(f"{r} = linalg.fill ins({self.scalar(v)} : f32) outs({e} : {ty(shape)}) -> {ty(shape)}")
        return r

    @staticmethod
    def dims(rank):
        return ", ".join(f"d{i}" for i in range(rank))

    def ew(self, ins, body, out_shape=None, ets=None):
        """out = body(scalars...) with numpy broadcasting of `ins`; `body`
        maps the scalar names to (lines, result)."""
        shapes = [self.shapes[i] for i in ins]
        rank = max(len(s) for s in shapes)
        out = out_shape or tuple(max(s[len(s) - rank + d] if d >= rank - len(s) else 1
                                     for s in shapes) for d in range(rank))
        ets = ets or ["f32"] * len(ins)
        maps = []
        for s in shapes:
            res = []
            for i, dsize in enumerate(s):
                d = i + rank - len(s)
                res.append("0" if dsize == 1 and out[d] != 1 else f"d{d}")
            maps.append(f"affine_map<({self.dims(rank)}) -> ({', '.join(res)})>")
        maps.append(f"affine_map<({self.dims(rank)}) -> ({self.dims(rank)})>")
        e = self.empty(out)
        r = self.new(out)
        args = [f"%in{k}" for k in range(len(ins))]
        lines, res = body(*args)
        block = ", ".join(f"{a}: {et}" for a, et in zip(args, ets)) + ", %out: f32"
        par = ", ".join(['"parallel"'] * rank)
        self.emit(f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = "
                  f"[{par}]}} ins({', '.join(ins)} : "
                  f"{', '.join(ty(s, et) for s, et in zip(shapes, ets))}) outs({e} : {ty(out)}) {{")
        self.emit(f"^bb0({block}):")
        for ln in lines:
            self.emit("  " + ln)
        self.emit(f"  linalg.yield {res} : f32")
        self.emit(f"}} -> {ty(out)}")
        return r

    def binary(self, op, a, b):
        return self.ew([a, b], lambda x, y: ([f"%r = arith.{op} {x}, {y} : f32"], "%r"))

    def with_scalar(self, op, a, v, scalar_first=False):
        c = self.scalar(v)
        def body(x):
            lhs, rhs = (c, x) if scalar_first else (x, c)
            return [f"%r = arith.{op} {lhs}, {rhs} : f32"], "%r"
        return self.ew([a], body)

    def unary(self, op, a):
        return self.ew([a], lambda x: ([f"%r = {op} {x} : f32"], "%r"))

    def reduce_last(self, kind, a):
        s = self.shapes[a]
        rank = len(s)
        out = s[:-1] + (1,)
        init = self.filled(out, 0.0 if kind == "sum" else float("-inf"))
        r = self.new(out)
        keep = ", ".join([f"d{i}" for i in range(rank - 1)] + ["0"])
        fn = "arith.addf" if kind == "sum" else "arith.maximumf"
        iters = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
        self.emit(f"{r} = linalg.generic {{indexing_maps = [affine_map<({self.dims(rank)}) -> "
                  f"({self.dims(rank)})>, affine_map<({self.dims(rank)}) -> ({keep})>], "
                  f"iterator_types = [{iters}]}} ins({a} : {ty(s)}) outs({init} : {ty(out)}) {{")
        self.emit("^bb0(%in: f32, %out: f32):")
        self.emit(f"  %r = {fn} %in, %out : f32")
        self.emit("  linalg.yield %r : f32")
        self.emit(f"}} -> {ty(out)}")
        return r

    def reassoc(self, small, big):
        """Reassociation grouping the dims of `big` onto those of `small`."""
        groups, j = [], 0
        for d in small:
            g, p = [j], big[j]
            j += 1
            while p != d or (j < len(big) and big[j] == 1 and len(groups) == len(small) - 1):
                g.append(j)
                p *= big[j]
                j += 1
            groups.append(g)
        while j < len(big):
            groups[-1].append(j)
            j += 1
        return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"

    def reshape(self, a, shape, et="f32"):
        s = self.shapes[a]
        r = self.new(shape)
        if len(shape) < len(s):
            self.emit(f"{r} = tensor.collapse_shape {a} {self.reassoc(shape, s)} : {ty(s, et)} "
                      f"into {ty(shape, et)}")
        else:
            self.emit(f"{r} = tensor.expand_shape {a} {self.reassoc(s, shape)} output_shape "
                      f"{list(shape)} : {ty(s, et)} into {ty(shape, et)}")
        return r

    def transpose(self, a, perm):
        s = self.shapes[a]
        out = tuple(s[p] for p in perm)
        e = self.empty(out)
        r = self.new(out)
        self.emit(f"{r} = linalg.transpose ins({a} : {ty(s)}) outs({e} : {ty(out)}) "
                  f"permutation = {list(perm)}")
        return r

    def matmul(self, a, b, batch=False):
        sa, sb = self.shapes[a], self.shapes[b]
        out = (sa[0], sa[1], sb[2]) if batch else (sa[0], sb[1])
        init = self.filled(out, 0.0)
        r = self.new(out)
        op = "linalg.batch_matmul" if batch else "linalg.matmul"
        self.emit(f"{r} = {op} ins({a}, {b} : {ty(sa)}, {ty(sb)}) outs({init} : {ty(out)}) -> {ty(out)}")
        return r

    def slice_last(self, a, off, size):
        s = self.shapes[a]
        out = s[:-1] + (size,)
        r = self.new(out)
        offs = [0] * (len(s) - 1) + [off]
        self.emit(f"{r} = tensor.extract_slice {a}{offs} {list(out)} {[1] * len(s)} : {ty(s)} to {ty(out)}")
        return r

    def concat_last(self, xs):
        shapes = [self.shapes[x] for x in xs]
        out = shapes[0][:-1] + (sum(s[-1] for s in shapes),)
        r = self.new(out)
        self.emit(f"{r} = tensor.concat dim({len(out) - 1}) {', '.join(xs)} : "
                  f"({', '.join(ty(s) for s in shapes)}) -> {ty(out)}")
        return r

    def constant(self, a):
        r = self.new(a.shape)
        self.emit(f"{r} = arith.constant {dense(a)} : {ty(a.shape)}")
        return r

    # -- the form-neutral API llama_layer uses ------------------------------

    def add(self, a, b):
        return self.binary("addf", a, b)

    def mul(self, a, b):
        return self.binary("mulf", a, b)

    def mul_scalar(self, a, v):
        return self.with_scalar("mulf", a, v)

    def const(self, a):
        return self.constant(a)

    def bmm(self, a, b):
        return self.matmul(a, b, batch=True)

    def repeat(self, x, mult):
        out = tuple(d * m for d, m in zip(self.shapes[x], mult))
        return self.ew([x], lambda v: ([], v), out_shape=out)

    def rope_tables(self, pos, inv, S, HD):
        pos3 = self.reshape(pos, (1, S, 1), et="i64")
        freqs = self.ew([pos3, self.constant(inv)],
                        lambda p, f: ([f"%p = arith.sitofp {p} : i64 to f32",
                                       f"%r = arith.mulf %p, {f} : f32"], "%r"),
                        ets=["i64", "f32"])
        emb = self.concat_last([freqs, freqs])
        return (self.reshape(self.unary("math.cos", emb), (1, 1, S, HD)),
                self.reshape(self.unary("math.sin", emb), (1, 1, S, HD)))

    def rotate_half(self, x):
        d = self.shapes[x][-1]
        return self.concat_last([self.unary("arith.negf", self.slice_last(x, d // 2, d // 2)),
                                 self.slice_last(x, 0, d // 2)])

    # -- blocks -------------------------------------------------------------

    def linear(self, x, w):
        b, s, k = self.shapes[x]
        n = self.shapes[w][0]
        y = self.matmul(self.reshape(x, (b * s, k)), self.transpose(w, [1, 0]))
        return self.reshape(y, (b, s, n))

    def rms_norm(self, x, w, eps):
        h = self.shapes[x][-1]
        sq = self.ew([x], lambda v: ([f"%two = arith.constant 2.000000e+00 : f32",
                                      f"%r = math.powf {v}, %two : f32"], "%r"))
        mean = self.with_scalar("divf", self.reduce_last("sum", sq), float(h))
        r = self.unary("math.rsqrt", self.with_scalar("addf", mean, eps))
        return self.binary("mulf", self.binary("mulf", x, r), w)

    def softmax(self, s):
        e = self.unary("math.exp", self.binary("subf", s, self.reduce_last("max", s)))
        return self.binary("divf", e, self.reduce_last("sum", e))

    def silu(self, x):
        one = self.scalar(1.0)
        return self.ew([x], lambda v: ([f"%n = arith.negf {v} : f32", "%e = math.exp %n : f32",
                                        f"%d = arith.addf %e, {one} : f32",
                                        f"%s = arith.divf {one}, %d : f32",
                                        f"%r = arith.mulf {v}, %s : f32"], "%r"))


def llama_layer(form, S, D, H, KV, HD, F, eps=1e-5, theta=10000.0, name="layer"):
    """HF LlamaDecoderLayer (plus its rotary embedding) as `form` (Tosa or
    Linalg) spells it. Arguments: hidden_states [1, S, D], position_ids
    [1, S] (i64), then the nine weights by their HF names."""
    t = form()
    G = H // KV
    args = [("%x", (1, S, D), "f32", 'rlx.input = "hidden_states"'),
            ("%pos", (1, S), "i64", 'rlx.input = "position_ids"')]
    wshapes = [("input_layernorm.weight", (D,)), ("self_attn.q_proj.weight", (H * HD, D)),
               ("self_attn.k_proj.weight", (KV * HD, D)), ("self_attn.v_proj.weight", (KV * HD, D)),
               ("self_attn.o_proj.weight", (D, H * HD)),
               ("post_attention_layernorm.weight", (D,)), ("mlp.gate_proj.weight", (F, D)),
               ("mlp.up_proj.weight", (F, D)), ("mlp.down_proj.weight", (D, F))]
    w = {}
    for i, (n, s) in enumerate(wshapes):
        w[n] = f"%w{i}"
        args.append((w[n], s, "f32", f'rlx.param = "{n}"'))
        t.shapes[w[n]] = s
    t.shapes["%x"], t.shapes["%pos"] = (1, S, D), (1, S)

    inv = (1.0 / theta ** (np.arange(0, HD, 2, dtype=np.float32) / HD)).astype(np.float32)
    cos, sin = t.rope_tables("%pos", inv, S, HD)
    h = t.rms_norm("%x", w["input_layernorm.weight"], eps)

    def heads(p, n):
        return t.transpose(t.reshape(p, (1, S, n, HD)), [0, 2, 1, 3])

    def rope(x):
        return t.add(t.mul(x, cos), t.mul(t.rotate_half(x), sin))

    def repeat_kv(x):
        if G == 1:
            return x
        r = t.repeat(t.reshape(x, (1, KV, 1, S, HD)), (1, 1, G, 1, 1))
        return t.reshape(r, (1, H, S, HD))

    q = rope(heads(t.linear(h, w["self_attn.q_proj.weight"]), H))
    k = repeat_kv(rope(heads(t.linear(h, w["self_attn.k_proj.weight"]), KV)))
    v = repeat_kv(heads(t.linear(h, w["self_attn.v_proj.weight"]), KV))
    kt = t.transpose(k, [0, 1, 3, 2])
    s = t.reshape(t.bmm(t.reshape(q, (H, S, HD)), t.reshape(kt, (H, HD, S))), (1, H, S, S))
    s = t.mul_scalar(s, 1.0 / np.sqrt(HD))
    mask = np.triu(np.full((S, S), np.finfo(np.float32).min, np.float32), 1).reshape(1, 1, S, S)
    p = t.softmax(t.add(s, t.const(mask)))
    o = t.reshape(t.bmm(t.reshape(p, (H, S, S)), t.reshape(v, (H, S, HD))), (1, H, S, HD))
    o = t.reshape(t.transpose(o, [0, 2, 1, 3]), (1, S, H * HD))
    h1 = t.add("%x", t.linear(o, w["self_attn.o_proj.weight"]))
    n2 = t.rms_norm(h1, w["post_attention_layernorm.weight"], eps)
    m = t.mul(t.silu(t.linear(n2, w["mlp.gate_proj.weight"])), t.linear(n2, w["mlp.up_proj.weight"]))
    y = t.add(h1, t.linear(m, w["mlp.down_proj.weight"]))
    sig = ", ".join(f"{n}: {ty(s, et)} {{{a}}}" for n, s, et, a in args)
    return (f"func.func @{name}({sig}) -> ({ty((1, S, D))} {{rlx.output = \"output\"}}) {{\n"
            + "\n".join(t.lines) + f"\n  return {y} : {ty((1, S, D))}\n}}\n")


def tosa_llama_layer(*args, **kw):
    """The layer as torch-mlir's TorchToTosa writes it."""
    return llama_layer(Tosa, *args, **kw)


def linalg_llama_layer(*args, **kw):
    """The layer as torch-mlir's TorchToLinalg writes it."""
    return llama_layer(Linalg, *args, **kw)
