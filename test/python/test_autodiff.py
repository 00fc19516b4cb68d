"""MIR autodiff (rlx-mir-prepare-for-ad, rlx-mir-grad, rlx-mir-jvp) and vmap
(rlx-mir-vmap) against central finite differences in f64 and a loop over the
batch, and a Llama decoder layer's parameter gradients against a backward
pass written here in numpy.

Each rule is checked on a function `loss = Σ op(args) · R` (R a fixed random
tensor, so the cotangent reaching the op is not uniform) with a random
`d_output`: for every differentiated argument a and a few random directions
v, `<d_a, v>` must equal `d_output · (loss(a + h v) − loss(a − h v)) / 2h`;
the forward-mode tangent along all arguments at once must equal the same
difference quotient; and the function batched over a new leading axis must
equal the function applied to each entry.
"""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
import rlx

H = 1e-6          # f64 central differences: truncation ~h², rounding ~1e-16/h
FD_TOL = 1e-6     # relative to max(|fd|, |analytic|, 1)
DIRECTIONS = 3


def t(shape, et="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def build(args: dict, body: str, out: str, out_shape, et="f64") -> str:
    """func @f(args..., %R) -> Σ out·R, as MLIR text."""
    sig = []
    for name, (shape, aet) in args.items():
        sig.append(f'%{name}: {t(shape, aet)} {{rlx.input = "{name}"}}')
    sig.append(f'%R: {t(out_shape, et)} {{rlx.input = "R"}}')
    axes = list(range(len(out_shape)))
    return (f"func.func @f({', '.join(sig)}) -> ({t((), et)} {{rlx.output = \"loss\"}}) {{\n"
            f"{body}\n"
            f"  %lr = rlx_mir.mul {out}, %R : {t(out_shape, et)}, {t(out_shape, et)}\n"
            f"  %loss = rlx_mir.reduce sum %lr axes = {axes} : {t(out_shape, et)}\n"
            f"  return %loss : {t((), et)}\n}}\n")


def fd_directional(fwd, inputs: dict, direction: dict, h: float, out="loss"):
    """(f(x + h v) − f(x − h v)) / 2h for the compiled `fwd` along `direction`."""
    def at(sign):
        fwd.invalidate_packed_params()  # the parameters change between runs
        return fwd.run(dict(inputs, **{k: inputs[k] + sign * h * v
                                       for k, v in direction.items()}))[out]
    return (np.asarray(at(1.0), np.float64) - np.asarray(at(-1.0), np.float64)) / (2 * h)


def check_jvp(text: str, inputs: dict, wrt: list[str], *, h=H, tol=FD_TOL, seed=0):
    """rlx-mir-jvp's tangent of the loss along random tangents of every `wrt`
    argument at once, against the central difference quotient."""
    m = rlx.parse(text)
    m.run_pipeline(f"rlx-mir-jvp{{wrt={','.join(wrt)} function=f}}")
    fwd, jvp = rlx.compile_cpu(m, entry="f"), rlx.compile_cpu(m, entry="f_jvp")
    rng = np.random.default_rng(seed + 100)
    for _ in range(2):
        v = {name: rng.standard_normal(inputs[name].shape) for name in wrt}
        got = jvp.run(dict(inputs, **{f"t_{k}": x for k, x in v.items()}))
        fd = float(fd_directional(fwd, inputs, v, h))
        an = float(got["t_loss"])
        assert abs(fd - an) <= tol * max(abs(fd), abs(an), 1.0), (wrt, fd, an)


def check_vmap(text: str, inputs: dict, args: list[str], *, batch=3, seed=0, axis=0):
    """rlx-mir-vmap over `args` (stacked along `axis`) against the function
    run on each entry."""
    m = rlx.parse(text)
    m.run_pipeline(f"rlx-mir-vmap{{batch-size={batch} axis={axis} args={','.join(args)} "
                   "function=f}")
    fwd, vm = rlx.compile_cpu(m, entry="f"), rlx.compile_cpu(m, entry="f_vmap")
    rng = np.random.default_rng(seed + 200)
    entries = []
    for _ in range(batch):
        e = dict(inputs)
        for name in args:
            x = inputs[name]
            e[name] = (x + 0.1 * rng.standard_normal(x.shape)
                       if x.dtype.kind == "f" else rng.permutation(x.reshape(-1)).reshape(x.shape))
        entries.append(e)
    stacked = dict(inputs, **{n: np.stack([e[n] for e in entries], axis) for n in args})
    got = np.asarray(vm.run(stacked)["loss"])
    want = []
    for e in entries:
        fwd.invalidate_packed_params()  # parameters differ between entries
        want.append(np.asarray(fwd.run(e)["loss"]))
    want = np.stack(want, axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(want).max()))


def check_grad(text: str, inputs: dict, wrt: list[str], *, h=H, tol=FD_TOL, seed=0,
               prepare=False, vmap_args=None):
    m = rlx.parse(text)
    pipeline = ("rlx-mir-prepare-for-ad," if prepare else "") + f"rlx-mir-grad{{wrt={','.join(wrt)}}}"
    m.run_pipeline(pipeline)
    assert "@f_grad" in m.text()
    fwd = rlx.compile_cpu(m, entry="f")
    bwd = rlx.compile_cpu(m, entry="f_grad")
    rng = np.random.default_rng(seed)
    d_out = np.array(1.7, np.float64)
    got = bwd.run(dict(inputs, d_output=d_out))
    loss = fwd.run(inputs)["loss"]
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-12)
    for name in wrt:
        g = got[f"d_{name}"]
        assert g.shape == inputs[name].shape
        for _ in range(DIRECTIONS):
            v = rng.standard_normal(inputs[name].shape)
            fwd.invalidate_packed_params()  # the parameter changes between runs
            plus = fwd.run(dict(inputs, **{name: inputs[name] + h * v}))["loss"]
            fwd.invalidate_packed_params()
            minus = fwd.run(dict(inputs, **{name: inputs[name] - h * v}))["loss"]
            fd = float(d_out) * (float(plus) - float(minus)) / (2 * h)
            an = float(np.sum(g * v))
            scale = max(abs(fd), abs(an), 1.0)
            assert abs(fd - an) <= tol * scale, (name, fd, an)
    # The same function in forward mode and batched.
    check_jvp(text, inputs, wrt, h=h, tol=tol, seed=seed)
    check_vmap(text, inputs, vmap_args or wrt, seed=seed)


def rand(rng, *shape, positive=False):
    x = rng.standard_normal(shape)
    return np.abs(x) + 0.5 if positive else x


# -- elementwise ------------------------------------------------------------

UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "abs", "tanh", "sigmoid", "silu",
         "gelu", "gelu_tanh", "relu", "erf", "sin", "cos"]
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    rng = np.random.default_rng(1)
    x = rand(rng, 3, 5, positive=op in POSITIVE)
    body = f"  %y = rlx_mir.{op} %x : {t((3, 5))}"
    text = build({"x": ((3, 5), "f64")}, body, "%y", (3, 5))
    check_grad(text, {"x": x, "R": rand(rng, 3, 5)}, ["x"])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow"])
@pytest.mark.parametrize("bshape", [(3, 4), (4,), (3, 1), ()], ids=["same", "row", "col", "scalar"])
def test_binary_with_broadcasting(op, bshape):
    rng = np.random.default_rng(2)
    a = rand(rng, 3, 4, positive=op == "pow")
    b = rand(rng, *bshape, positive=op in ("div", "pow"))
    body = f"  %y = rlx_mir.{op} %a, %b : {t((3, 4))}, {t(bshape)}"
    text = build({"a": ((3, 4), "f64"), "b": (bshape, "f64")}, body, "%y", (3, 4))
    check_grad(text, {"a": a, "b": np.asarray(b), "R": rand(rng, 3, 4)}, ["a", "b"])


def test_operand_used_twice_sums_gradients():
    rng = np.random.default_rng(3)
    body = (f"  %s = rlx_mir.mul %x, %x : {t((4, 3))}, {t((4, 3))}\n"
            f"  %y = rlx_mir.add %s, %x : {t((4, 3))}, {t((4, 3))}")
    text = build({"x": ((4, 3), "f64")}, body, "%y", (4, 3))
    check_grad(text, {"x": rand(rng, 4, 3), "R": rand(rng, 4, 3)}, ["x"])


def test_select():
    rng = np.random.default_rng(4)
    body = f"  %y = rlx_mir.select %c, %a, %b : {t((3, 4), 'i1')}, {t((3, 4))}, {t((3, 4))}"
    text = build({"c": ((3, 4), "i1"), "a": ((3, 4), "f64"), "b": ((3, 4), "f64")}, body, "%y",
                 (3, 4))
    c = rng.random((3, 4)) > 0.5
    check_grad(text, {"c": c, "a": rand(rng, 3, 4), "b": rand(rng, 3, 4), "R": rand(rng, 3, 4)},
               ["a", "b"])


def test_cast_round_trip_through_f32():
    rng = np.random.default_rng(5)
    body = (f"  %h = rlx_mir.cast %x : {t((3, 4))} to {t((3, 4), 'f32')}\n"
            f"  %e = rlx_mir.exp %h : {t((3, 4), 'f32')}\n"
            f"  %y = rlx_mir.cast %e : {t((3, 4), 'f32')} to {t((3, 4))}")
    text = build({"x": ((3, 4), "f64")}, body, "%y", (3, 4))
    # f32 in the middle: a larger step and an f32 tolerance.
    check_grad(text, {"x": rand(rng, 3, 4), "R": rand(rng, 3, 4)}, ["x"], h=1e-3, tol=1e-4)


# -- matmul, reductions, softmax ---------------------------------------------

@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_transposes(ta, tb):
    rng = np.random.default_rng(6)
    ashape = (2, 4, 3) if ta else (2, 3, 4)
    bshape = (5, 4) if tb else (4, 5)
    flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
    body = f"  %y = rlx_mir.matmul %a, %b{flags} : {t(ashape)}, {t(bshape)}"
    text = build({"a": (ashape, "f64"), "b": (bshape, "f64")}, body, "%y", (2, 3, 5))
    check_grad(text, {"a": rand(rng, *ashape), "b": rand(rng, *bshape),
                      "R": rand(rng, 2, 3, 5)}, ["a", "b"])


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axes,keep", [([1], True), ([0, 2], False), ([-1], False)])
def test_reduce(kind, axes, keep):
    """max/min (random inputs: no ties) send the gradient to the extremum."""
    rng = np.random.default_rng(7)
    shape = (2, 3, 4)
    out = [d for i, d in enumerate(shape) if i not in [a % 3 for a in axes]]
    if keep:
        out = [1 if i in [a % 3 for a in axes] else d for i, d in enumerate(shape)]
    k = " keep_dims" if keep else ""
    body = f"  %y = rlx_mir.reduce {kind} %x axes = {axes}{k} : {t(shape)}"
    text = build({"x": (shape, "f64")}, body, "%y", tuple(out))
    check_grad(text, {"x": rand(rng, *shape), "R": rand(rng, *out)}, ["x"])


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax(axis):
    rng = np.random.default_rng(8)
    body = f"  %y = rlx_mir.softmax %x axis = {axis} : {t((3, 5))}"
    text = build({"x": ((3, 5), "f64")}, body, "%y", (3, 5))
    check_grad(text, {"x": rand(rng, 3, 5), "R": rand(rng, 3, 5)}, ["x"])


# -- norms (unfused into primitives) ----------------------------------------

def test_rms_norm():
    rng = np.random.default_rng(9)
    body = f"  %y = rlx_mir.rms_norm %x, %w eps = 1.0e-05 : {t((2, 3, 8))}, {t((8,))}"
    text = build({"x": ((2, 3, 8), "f64"), "w": ((8,), "f64")}, body, "%y", (2, 3, 8))
    check_grad(text, {"x": rand(rng, 2, 3, 8), "w": rand(rng, 8), "R": rand(rng, 2, 3, 8)},
               ["x", "w"])


def test_layer_norm():
    rng = np.random.default_rng(10)
    body = (f"  %y = rlx_mir.layer_norm %x weight(%w : {t((8,))}) bias(%b : {t((8,))}) "
            f"eps = 1.0e-05 : {t((3, 8))}")
    text = build({"x": ((3, 8), "f64"), "w": ((8,), "f64"), "b": ((8,), "f64")}, body, "%y",
                 (3, 8))
    check_grad(text, {"x": rand(rng, 3, 8), "w": rand(rng, 8), "b": rand(rng, 8),
                      "R": rand(rng, 3, 8)}, ["x", "w", "b"])


def test_residual_rms_norm_both_results():
    rng = np.random.default_rng(11)
    body = (f"  %n, %s = rlx_mir.residual_rms_norm %x, %r, %w eps = 1.0e-05 : "
            f"{t((3, 8))}, {t((3, 8))}, {t((8,))}\n"
            f"  %y = rlx_mir.mul %n, %s : {t((3, 8))}, {t((3, 8))}")
    text = build({"x": ((3, 8), "f64"), "r": ((3, 8), "f64"), "w": ((8,), "f64")}, body, "%y",
                 (3, 8))
    check_grad(text, {"x": rand(rng, 3, 8), "r": rand(rng, 3, 8), "w": rand(rng, 8),
                      "R": rand(rng, 3, 8)}, ["x", "r", "w"])


# -- rope, attention, gather ------------------------------------------------

@pytest.mark.parametrize("style,rot", [("neox", 8), ("gptj", 8), ("neox", 4)])
def test_rope(style, rot):
    rng = np.random.default_rng(12)
    cos, sin = ref.rope_tables(np.arange(5), rot, 10000.0)
    attrs = f" rotary_dim = {rot}" if rot != 8 else ""
    attrs += " style gptj" if style == "gptj" else ""
    body = (f"  %y = rlx_mir.rope %x, %c, %s head_dim = 8{attrs} : "
            f"{t((1, 5, 16))}, {t((5, rot // 2))}, {t((5, rot // 2))}")
    text = build({"x": ((1, 5, 16), "f64"), "c": ((5, rot // 2), "f64"),
                  "s": ((5, rot // 2), "f64")}, body, "%y", (1, 5, 16))
    check_grad(text, {"x": rand(rng, 1, 5, 16), "c": cos.astype(np.float64),
                      "s": sin.astype(np.float64), "R": rand(rng, 1, 5, 16)}, ["x"])


ATTENTION = {
    "causal_gqa": "heads = 4, kv_heads = 2, head_dim = 4 causal",
    "sliding_window": "heads = 4, kv_heads = 4, head_dim = 4 sliding_window window = 2",
    "chunked": "heads = 4, kv_heads = 2, head_dim = 4 chunked window = 2",
    "none_softcap_scale": "heads = 4, kv_heads = 1, head_dim = 4 scale = 0.3 softcap = 2.0",
}


@pytest.mark.parametrize("case", list(ATTENTION))
def test_attention(case):
    rng = np.random.default_rng(13)
    kvw = 16 // 4 * int(ATTENTION[case].split("kv_heads = ")[1].split(",")[0])
    body = (f"  %y = rlx_mir.attention %q, %k, %v {ATTENTION[case]} : "
            f"{t((1, 5, 16))}, {t((1, 6, kvw))}, {t((1, 6, kvw))}")
    text = build({"q": ((1, 5, 16), "f64"), "k": ((1, 6, kvw), "f64"),
                  "v": ((1, 6, kvw), "f64")}, body, "%y", (1, 5, 16))
    check_grad(text, {"q": rand(rng, 1, 5, 16), "k": rand(rng, 1, 6, kvw),
                      "v": rand(rng, 1, 6, kvw), "R": rand(rng, 1, 5, 16)}, ["q", "k", "v"])


@pytest.mark.parametrize("kind", ["additive", "boolean"])
def test_attention_with_mask_operand(kind):
    rng = np.random.default_rng(14)
    mt = t((1, 4, 4)) if kind == "additive" else t((1, 4, 4), "i1")
    body = (f"  %y = rlx_mir.attention %q, %k, %v mask(%m : {mt}) heads = 2, kv_heads = 2, "
            f"head_dim = 4 : {t((1, 4, 8))}, {t((1, 4, 8))}, {t((1, 4, 8))}")
    text = build({"q": ((1, 4, 8), "f64"), "k": ((1, 4, 8), "f64"), "v": ((1, 4, 8), "f64"),
                  "m": ((1, 4, 4), "f64" if kind == "additive" else "i1")}, body, "%y", (1, 4, 8))
    m = rng.standard_normal((1, 4, 4)) if kind == "additive" else rng.random((1, 4, 4)) > 0.3
    if kind == "boolean":
        m[..., 0] = True  # every row sees a key
    check_grad(text, {"q": rand(rng, 1, 4, 8), "k": rand(rng, 1, 4, 8), "v": rand(rng, 1, 4, 8),
                      "m": m, "R": rand(rng, 1, 4, 8)}, ["q", "k", "v"])


def test_gather_embedding():
    rng = np.random.default_rng(15)
    body = f"  %y = rlx_mir.gather %e[%ids] : {t((7, 4))}, {t((2, 3), 'i64')}"
    text = build({"e": ((7, 4), "f64"), "ids": ((2, 3), "i64")}, body, "%y", (2, 3, 4))
    ids = np.array([[1, 3, 1], [6, 0, 3]], np.int64)  # repeated ids accumulate
    # vmap batches the table and the ids.
    check_grad(text, {"e": rand(rng, 7, 4), "ids": ids, "R": rand(rng, 2, 3, 4)}, ["e"],
               vmap_args=["e", "ids"])


# -- data movement ----------------------------------------------------------

MOVES = {
    "reshape": ("rlx_mir.reshape %x [4, 6] : tensor<2x3x4xf64>", (4, 6)),
    "transpose": ("rlx_mir.transpose %x [2, 0, 1] : tensor<2x3x4xf64>", (4, 2, 3)),
    "slice": ("rlx_mir.slice %x offsets [0, 1, 1] sizes [2, 2, 2] strides [1, 1, 1] "
              ": tensor<2x3x4xf64>", (2, 2, 2)),
    "concat": ("rlx_mir.concat %x, %x axis = 1 : tensor<2x3x4xf64>, tensor<2x3x4xf64>", (2, 6, 4)),
    "broadcast": ("rlx_mir.broadcast %x [5, 2, 3, 4] : tensor<2x3x4xf64>", (5, 2, 3, 4)),
}


@pytest.mark.parametrize("op", list(MOVES))
def test_data_movement(op):
    rng = np.random.default_rng(16)
    text_op, out = MOVES[op]
    text = build({"x": ((2, 3, 4), "f64")}, f"  %y = {text_op}", "%y", out)
    check_grad(text, {"x": rand(rng, 2, 3, 4), "R": rand(rng, *out)}, ["x"])


def test_broadcast_of_size_one_axis():
    rng = np.random.default_rng(17)
    text = build({"x": ((3, 1), "f64")}, "  %y = rlx_mir.broadcast %x [3, 5] : tensor<3x1xf64>",
                 "%y", (3, 5))
    check_grad(text, {"x": rand(rng, 3, 1), "R": rand(rng, 3, 5)}, ["x"])


# -- fused MIR, unfused by rlx-mir-prepare-for-ad -----------------------------

def test_fused_matmul_and_elementwise_regions_are_unfused():
    rng = np.random.default_rng(18)
    body = (f"  %h = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 "
            f"norm_weight(%g : {t((6,))}) bias(%b : {t((8,))}) activation silu glu "
            f"residual(%r : {t((3, 4))}) : {t((3, 6))}, {t((8, 6))}\n"
            f"  %y = rlx_mir.elementwise ins(%h, %r : {t((3, 4))}, {t((3, 4))}) -> {t((3, 4))} {{\n"
            f"  ^bb0(%a: f64, %c: f64):\n"
            f"    %m = arith.mulf %a, %c : f64\n"
            f"    %e = math.tanh %m : f64\n"
            f"    rlx_mir.yield %e : f64\n"
            f"  }}")
    text = build({"x": ((3, 6), "f64"), "w": ((8, 6), "f64"), "g": ((6,), "f64"),
                  "b": ((8,), "f64"), "r": ((3, 4), "f64")}, body, "%y", (3, 4))
    check_grad(text, {"x": rand(rng, 3, 6), "w": rand(rng, 8, 6), "g": rand(rng, 6),
                      "b": rand(rng, 8), "r": rand(rng, 3, 4), "R": rand(rng, 3, 4)},
               ["x", "w", "g", "b", "r"], prepare=True)
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-prepare-for-ad")
    assert "fused_matmul" not in m.text() and "rlx_mir.elementwise" not in m.text()


def test_gradient_function_fuses_plans_and_runs():
    """The gradient is ordinary MIR: compiled with fusion and the arena plan
    (compile_cpu's default) it gives the same values as unfused."""
    rng = np.random.default_rng(19)
    body = (f"  %h = rlx_mir.matmul %x, %w transpose_b : {t((4, 6))}, {t((8, 6))}\n"
            f"  %y = rlx_mir.silu %h : {t((4, 8))}")
    text = build({"x": ((4, 6), "f64"), "w": ((8, 6), "f64")}, body, "%y", (4, 8))
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-grad{wrt=w}")
    inputs = {"x": rand(rng, 4, 6), "w": rand(rng, 8, 6), "R": rand(rng, 4, 8),
              "d_output": np.array(1.0)}
    fused = rlx.compile_cpu(m, entry="f_grad")
    plain = rlx.compile_cpu(m, entry="f_grad", fuse=False, lir=False)
    # Planned (transient buffers in an arena at its lower bound) and not.
    assert fused.stats["arena_bytes"] > 0
    assert fused.stats["arena_bytes"] == fused.stats["arena_lower_bound_bytes"]
    assert plain.stats["arena_bytes"] == -1
    np.testing.assert_allclose(fused.run(inputs)["d_w"], plain.run(inputs)["d_w"], rtol=1e-12)


# -- a whole Llama decoder layer vs a numpy backward --------------------------

def llama_layer_loss_hir(S, D, H, KV, HD, F, eps, et="f64"):
    """HIR of loss = Σ layer(x) · R for a pre-norm Llama layer (HF weights
    [out, in]; RoPE tables as inputs)."""
    T = lambda *s: t(s, et)  # noqa: E731
    return f"""
func.func @f(%x: {T(1, S, D)} {{rlx.input = "x"}}, %cos: {T(S, HD // 2)} {{rlx.input = "cos"}},
    %sin: {T(S, HD // 2)} {{rlx.input = "sin"}}, %R: {T(1, S, D)} {{rlx.input = "R"}},
    %n1: {T(D)} {{rlx.param = "n1"}}, %wq: {T(H * HD, D)} {{rlx.param = "wq"}},
    %wk: {T(KV * HD, D)} {{rlx.param = "wk"}}, %wv: {T(KV * HD, D)} {{rlx.param = "wv"}},
    %wo: {T(D, H * HD)} {{rlx.param = "wo"}}, %n2: {T(D)} {{rlx.param = "n2"}},
    %wg: {T(F, D)} {{rlx.param = "wg"}}, %wu: {T(F, D)} {{rlx.param = "wu"}},
    %wd: {T(D, F)} {{rlx.param = "wd"}}) -> ({T()} {{rlx.output = "loss"}}) {{
  %h = rlx_hir.rms_norm %x, %n1 eps = {eps:.6e} : {T(1, S, D)}, {T(D)}
  %q = rlx_hir.linear %h, %wq : {T(1, S, D)}, {T(H * HD, D)}
  %k = rlx_hir.linear %h, %wk : {T(1, S, D)}, {T(KV * HD, D)}
  %v = rlx_hir.linear %h, %wv : {T(1, S, D)}, {T(KV * HD, D)}
  %qr = rlx_hir.rope %q tables(%cos, %sin : {T(S, HD // 2)}, {T(S, HD // 2)}) head_dim = {HD} : {T(1, S, H * HD)}
  %kr = rlx_hir.rope %k tables(%cos, %sin : {T(S, HD // 2)}, {T(S, HD // 2)}) head_dim = {HD} : {T(1, S, KV * HD)}
  %a = rlx_hir.attention %qr, %kr, %v heads = {H}, kv_heads = {KV}, head_dim = {HD} causal
      : {T(1, S, H * HD)}, {T(1, S, KV * HD)}, {T(1, S, KV * HD)}
  %o = rlx_hir.linear %a, %wo : {T(1, S, H * HD)}, {T(D, H * HD)}
  %n, %s1 = rlx_hir.residual_rms_norm %o, %x, %n2 eps = {eps:.6e} : {T(1, S, D)}, {T(1, S, D)}, {T(D)}
  %m = rlx_hir.swiglu %n, gate %wg, up %wu, down %wd : {T(1, S, D)}, {T(F, D)}, {T(F, D)}, {T(D, F)}
  %y = rlx_mir.add %m, %s1 : {T(1, S, D)}, {T(1, S, D)}
  %l = rlx_mir.mul %y, %R : {T(1, S, D)}, {T(1, S, D)}
  %loss = rlx_mir.reduce sum %l axes = [0, 1, 2] : {T(1, S, D)}
  return %loss : {T()}
}}
"""


def numpy_llama_layer_grads(x, cos, sin, R, w, H, KV, HD, eps):
    """Forward and a hand-written backward in numpy (float64), independent of
    RLX: returns d loss / d every parameter and d x, for loss = Σ y·R."""
    S, D = x.shape[1], x.shape[2]
    X = x[0]
    group = H // KV

    def rms_fwd(z, g):
        r = 1.0 / np.sqrt(np.mean(z * z, -1, keepdims=True) + eps)
        return z * r * g, (z * r, r)

    def rms_bwd(dout, g, cache):
        zn, r = cache
        dg = np.sum(dout * zn, 0)
        dzn = dout * g
        dz = r * (dzn - zn * np.mean(dzn * zn, -1, keepdims=True))
        return dz, dg

    def rope_fwd(z, heads):
        zh = z.reshape(S, heads, HD)
        a, b = zh[..., :HD // 2], zh[..., HD // 2:]
        c, s = cos[:, None, :], sin[:, None, :]
        return np.concatenate([a * c - b * s, b * c + a * s], -1).reshape(S, heads * HD)

    def rope_bwd(dz, heads):
        dh = dz.reshape(S, heads, HD)
        da, db = dh[..., :HD // 2], dh[..., HD // 2:]
        c, s = cos[:, None, :], sin[:, None, :]
        return np.concatenate([da * c + db * s, db * c - da * s], -1).reshape(S, heads * HD)

    h, c1 = rms_fwd(X, w["n1"])
    q, k, v = h @ w["wq"].T, h @ w["wk"].T, h @ w["wv"].T
    qr, kr = rope_fwd(q, H), rope_fwd(k, KV)
    scale = 1.0 / np.sqrt(HD)
    causal = np.tril(np.ones((S, S), bool))
    P = np.zeros((H, S, S))
    attn = np.zeros((S, H * HD))
    for i in range(H):
        j = i // group
        sc = qr[:, i * HD:(i + 1) * HD] @ kr[:, j * HD:(j + 1) * HD].T * scale
        sc = np.where(causal, sc, -np.inf)
        e = np.exp(sc - sc.max(-1, keepdims=True))
        P[i] = e / e.sum(-1, keepdims=True)
        attn[:, i * HD:(i + 1) * HD] = P[i] @ v[:, j * HD:(j + 1) * HD]
    o = attn @ w["wo"].T
    s1 = X + o
    n, c2 = rms_fwd(s1, w["n2"])
    g, u = n @ w["wg"].T, n @ w["wu"].T
    sg = 1.0 / (1.0 + np.exp(-g))
    act = g * sg * u
    y = s1 + act @ w["wd"].T
    loss = float(np.sum(y * R[0]))

    d = {}
    dy = R[0]
    d["wd"] = dy.T @ act
    dact = dy @ w["wd"]
    dg = dact * u * (sg * (1 + g * (1 - sg)))
    du = dact * g * sg
    d["wg"], d["wu"] = dg.T @ n, du.T @ n
    dn = dg @ w["wg"] + du @ w["wu"]
    ds1, d["n2"] = rms_bwd(dn, w["n2"], c2)
    ds1 = ds1 + dy
    d["wo"] = ds1.T @ attn
    dattn = ds1 @ w["wo"]
    dqr, dkr, dv = np.zeros_like(qr), np.zeros_like(kr), np.zeros_like(v)
    for i in range(H):
        j = i // group
        do = dattn[:, i * HD:(i + 1) * HD]
        vj = v[:, j * HD:(j + 1) * HD]
        dv[:, j * HD:(j + 1) * HD] += P[i].T @ do
        dP = do @ vj.T
        dS = P[i] * (dP - np.sum(dP * P[i], -1, keepdims=True)) * scale
        dqr[:, i * HD:(i + 1) * HD] = dS @ kr[:, j * HD:(j + 1) * HD]
        dkr[:, j * HD:(j + 1) * HD] += dS.T @ qr[:, i * HD:(i + 1) * HD]
    dq, dk = rope_bwd(dqr, H), rope_bwd(dkr, KV)
    d["wq"], d["wk"], d["wv"] = dq.T @ h, dk.T @ h, dv.T @ h
    dh = dq @ w["wq"] + dk @ w["wk"] + dv @ w["wv"]
    dx, d["n1"] = rms_bwd(dh, w["n1"], c1)
    d["x"] = (dx + ds1)[None]
    return loss, d


def test_llama_layer_parameter_gradients_match_numpy_backward():
    S, D, H, KV, HD, F, eps = 6, 32, 4, 2, 8, 48, 1e-5
    rng = np.random.default_rng(20)
    shapes = {"n1": (D,), "wq": (H * HD, D), "wk": (KV * HD, D), "wv": (KV * HD, D),
              "wo": (D, H * HD), "n2": (D,), "wg": (F, D), "wu": (F, D), "wd": (D, F)}
    w = {k: (1.0 + 0.1 * rng.standard_normal(s)) if len(s) == 1 else
         rng.standard_normal(s) / np.sqrt(s[1]) for k, s in shapes.items()}
    x = rng.standard_normal((1, S, D))
    R = rng.standard_normal((1, S, D))
    cos, sin = (a.astype(np.float64) for a in ref.rope_tables(np.arange(S), HD, 10000.0))

    m = rlx.parse(llama_layer_loss_hir(S, D, H, KV, HD, F, eps))
    m.run_pipeline("convert-rlx-hir-to-mir{fusion-policy=fusable},"
                   "rlx-mir-grad{wrt=x,n1,wq,wk,wv,wo,n2,wg,wu,wd}")
    grad = rlx.compile_cpu(m, entry="f_grad")
    got = grad.run(dict(w, x=x, cos=cos, sin=sin, R=R, d_output=np.array(1.0)))

    loss, want = numpy_llama_layer_grads(x, cos, sin, R, w, H, KV, HD, eps)
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-12)
    for name in ["x", *shapes]:
        g, ref_g = got[f"d_{name}"], want[name]
        assert g.shape == ref_g.shape, name
        np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-12, err_msg=name)


def test_llama_layer_gradient_matches_finite_differences():
    """The same layer, every parameter at once along random directions."""
    S, D, H, KV, HD, F, eps = 4, 16, 4, 2, 4, 24, 1e-5
    rng = np.random.default_rng(21)
    shapes = {"n1": (D,), "wq": (H * HD, D), "wk": (KV * HD, D), "wv": (KV * HD, D),
              "wo": (D, H * HD), "n2": (D,), "wg": (F, D), "wu": (F, D), "wd": (D, F)}
    inputs = {k: rng.standard_normal(s) * (0.3 if len(s) == 2 else 1.0) for k, s in shapes.items()}
    cos, sin = (a.astype(np.float64) for a in ref.rope_tables(np.arange(S), HD, 10000.0))
    inputs.update(x=rng.standard_normal((1, S, D)), R=rng.standard_normal((1, S, D)), cos=cos,
                  sin=sin)
    m = llama_layer_loss_hir(S, D, H, KV, HD, F, eps)
    mod = rlx.parse(m)
    mod.run_pipeline("convert-rlx-hir-to-mir{fusion-policy=fusable}")
    check_grad(mod.text(), inputs, list(shapes))


@pytest.mark.parametrize("bad, message", [
    ("  %y = rlx_hir.rms_norm %x, %w eps = 1.0e-05 : tensor<2x4xf64>, tensor<4xf64>",
     "HIR is not differentiated directly; lower it first with "
     "convert-rlx-hir-to-mir{fusion-policy=fusable}"),
])
def test_hir_input_is_a_diagnostic(bad, message):
    text = build({"x": ((2, 4), "f64"), "w": ((4,), "f64")}, bad, "%y", (2, 4))
    m = rlx.parse(text)
    with pytest.raises(rlx.RlxError) as e:
        m.run_pipeline("rlx-mir-grad")
    assert message in str(e.value)


@pytest.mark.parametrize("norm", ["rms_norm", "layer_norm"])
def test_unfused_bf16_norm_matches_the_lowering(norm):
    """One definition of the norms' numerics: unfused for autodiff
    (rlx-mir-prepare-for-ad) a bf16 norm keeps f32 statistics and rounds once,
    like its lowering (the decomposition kept statistics in bf16)."""
    import ml_dtypes
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 96)) * 3 + 1).astype(ml_dtypes.bfloat16)
    g = (1 + 0.1 * rng.standard_normal(96)).astype(ml_dtypes.bfloat16)
    ty = "tensor<6x96xbf16>"
    op = (f"rlx_mir.rms_norm %x, %g eps = 1.0e-05 : {ty}, tensor<96xbf16>" if norm == "rms_norm"
          else f"rlx_mir.layer_norm %x weight(%g : tensor<96xbf16>) eps = 1.0e-05 : {ty}")
    text = (f'func.func @f(%x: {ty} {{rlx.input = "x"}}, %g: tensor<96xbf16> {{rlx.input = "g"}}) '
            f"-> {ty} {{\n  %y = {op}\n  return %y : {ty}\n}}\n")
    fused = rlx.parse(text)
    unfused = rlx.parse(text)
    unfused.run_pipeline("rlx-mir-prepare-for-ad")
    assert "rlx_mir.reduce" in unfused.text() and norm not in unfused.text()
    xf, gf = x.astype(np.float64), g.astype(np.float64)
    if norm == "rms_norm":
        want = xf / np.sqrt((xf ** 2).mean(-1, keepdims=True) + 1e-5) * gf
    else:
        c = xf - xf.mean(-1, keepdims=True)
        want = c / np.sqrt((c ** 2).mean(-1, keepdims=True) + 1e-5) * gf
    outs = []
    for m in (fused, unfused):
        y = rlx.compile_cpu(m).run(x=x, g=g)["result0"].astype(np.float64)
        # One rounding of the f32 value: within half a bf16 ulp (2^-9 relative).
        np.testing.assert_allclose(y, want, rtol=2.0 ** -8, atol=1e-6)
        outs.append(y)
    np.testing.assert_allclose(outs[1], outs[0], rtol=2.0 ** -7, atol=0)


def test_max_reduction_splits_ties_evenly():
    """torch.amax's gradient: each tied maximum gets an equal share."""
    text = build({"x": ((2, 4), "f64")}, "  %y = rlx_mir.reduce max %x axes = [1] : "
                 f"{t((2, 4))}", "%y", (2,))
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-grad{wrt=x}")
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 5.0, 5.0]])
    got = rlx.compile_cpu(m, entry="f_grad").run(x=x, R=np.array([2.0, 4.0]), d_output=np.float64(1))
    np.testing.assert_array_equal(got["d_x"], [[0, 1, 1, 0], [0, 0, 2, 2]])


def test_attention_with_sinks():
    """gpt-oss's sinks: gradients through the softmax with each head's sink
    logit in its denominator, for q, k, v and the sinks themselves (f64:
    the chain form, which rlx-mir-prepare-for-ad also writes for the fused
    attention_partial + attention_combine of narrower types)."""
    rng = np.random.default_rng(16)
    body = (f"  %y = rlx_hir.attention %q, %k, %v sinks(%s : {t((4,))}) heads = 4, kv_heads = 2, "
            f"head_dim = 4 causal : {t((1, 5, 16))}, {t((1, 6, 8))}, {t((1, 6, 8))}")
    text = build({"q": ((1, 5, 16), "f64"), "k": ((1, 6, 8), "f64"), "v": ((1, 6, 8), "f64"),
                  "s": ((4,), "f64")}, body, "%y", (1, 5, 16))
    m = rlx.parse(text)
    m.run_pipeline("convert-rlx-hir-to-mir")
    check_grad(m.text(), {"q": rand(rng, 1, 5, 16), "k": rand(rng, 1, 6, 8),
                          "v": rand(rng, 1, 6, 8), "s": rand(rng, 4), "R": rand(rng, 1, 5, 16)},
               ["q", "k", "v", "s"])
