"""Every rlx_mir op, compiled for the CPU with rlx-run, against NumPy.

The functions are written in MIR directly (rlx-run's HIR→MIR step leaves
them alone); by default rlx-mir-fuse runs as in the real pipeline, and the
primitive-op tests also run with --no-fuse so each primitive's own lowering
is what is checked. Tolerance (max |got - ref| / max |ref|): f32 1e-5;
exact equality for data movement, integer ops and selects.
"""
import math
import re

import numpy as np
import pytest

import reference as ref
from harness import Arg, assert_close, run_function

TOL = 1e-5
rng = np.random.default_rng(99)


def randn(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def one(args, result, body, **kw):
    out, = run_function(args, [result], body, **kw)
    return out


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum, "pow": np.power}


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("op", BINARY)
def test_binary_broadcast(op, fuse):
    a = randn(2, 3, 8)
    b = randn(3, 1, scale=0.5)
    if op == "pow":
        a = np.abs(a) + 0.1
    if op == "div":
        b = np.sign(b) * (np.abs(b) + 0.5)
    out = one({"a": Arg(a), "b": Arg(b)}, ty((2, 3, 8)),
              f"""  %y = rlx_mir.{op} %a, %b : {ty(a.shape)}, {ty(b.shape)}
  return %y : {ty((2, 3, 8))}""", fuse=fuse)
    assert_close(out, BINARY[op](a.astype(np.float64), b), rtol=TOL)
def test_integer_add_and_cast_to_float():
    a = np.array([1, -7, 2 ** 40, 5], np.int64)
    out = one({"a": Arg(a)}, ty((4,)), """  %s = rlx_mir.add %a, %a : tensor<4xi64>, tensor<4xi64>
  %f = rlx_mir.cast %s : tensor<4xi64> to tensor<4xf32>
  return %f : tensor<4xf32>""")
    np.testing.assert_array_equal(out, (2 * a).astype(np.float32))


UNARY = {
    "neg": lambda x: -x, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x, "abs": np.abs,
    "tanh": np.tanh, "sigmoid": ref.ACT["sigmoid"], "silu": ref.silu, "gelu": ref.gelu,
    "gelu_tanh": ref.gelu_tanh, "relu": ref.ACT["relu"],
    "erf": np.vectorize(math.erf), "sin": np.sin, "cos": np.cos,
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("op", UNARY)
def test_unary(op, fuse):
    x = randn(4, 33, scale=3.0)
    if op in POSITIVE_ONLY:
        x = np.abs(x) + 0.05
    out = one({"x": Arg(x)}, ty(x.shape), f"""  %y = rlx_mir.{op} %x : {ty(x.shape)}
  return %y : {ty(x.shape)}""", fuse=fuse)
    assert_close(out, UNARY[op](x.astype(np.float64)), rtol=TOL)
def test_unary_large_arguments_stay_finite():
    # exp/sigmoid/tanh/silu/gelu_tanh at ±90: saturated, never NaN or inf.
    x = np.array([-90.0, -30.0, 0.0, 30.0, 88.0], np.float32)
    out = one({"x": Arg(x)}, ty((5, 4)), """  %a = rlx_mir.sigmoid %x : tensor<5xf32>
  %b = rlx_mir.tanh %x : tensor<5xf32>
  %c = rlx_mir.silu %x : tensor<5xf32>
  %d = rlx_mir.gelu_tanh %x : tensor<5xf32>
  %a2 = rlx_mir.reshape %a [5, 1] : tensor<5xf32>
  %b2 = rlx_mir.reshape %b [5, 1] : tensor<5xf32>
  %c2 = rlx_mir.reshape %c [5, 1] : tensor<5xf32>
  %d2 = rlx_mir.reshape %d [5, 1] : tensor<5xf32>
  %y = rlx_mir.concat %a2, %b2, %c2, %d2 axis = 1 : tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return %y : tensor<5x4xf32>""")
    x64 = x.astype(np.float64)
    want = np.stack([ref.ACT["sigmoid"](x64), np.tanh(x64), ref.silu(x64), ref.gelu_tanh(x64)], 1)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-30)


def test_cast_float_rounding():
    # f32 → bf16 → f32 rounds to nearest even; → f16 likewise.
    x = np.array([1.0, 1.00390625, 1.01171875, -3.14159, 65504.0, 1e-3], np.float32)
    out = one({"x": Arg(x)}, ty((2, 6)), """  %b = rlx_mir.cast %x : tensor<6xf32> to tensor<6xbf16>
  %h = rlx_mir.cast %x : tensor<6xf32> to tensor<6xf16>
  %bf = rlx_mir.cast %b : tensor<6xbf16> to tensor<6xf32>
  %hf = rlx_mir.cast %h : tensor<6xf16> to tensor<6xf32>
  %b2 = rlx_mir.reshape %bf [1, 6] : tensor<6xf32>
  %h2 = rlx_mir.reshape %hf [1, 6] : tensor<6xf32>
  %y = rlx_mir.concat %b2, %h2 axis = 0 : tensor<1x6xf32>, tensor<1x6xf32>
  return %y : tensor<2x6xf32>""")
    import ml_dtypes
    np.testing.assert_array_equal(out[0], x.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(out[1], x.astype(np.float16).astype(np.float32))


def test_cast_float_to_int_truncates():
    x = np.array([2.7, -2.7, 0.5, -0.5, 100.0], np.float32)
    out = one({"x": Arg(x)}, ty((5,), "i32"), """  %y = rlx_mir.cast %x : tensor<5xf32> to tensor<5xi32>
  return %y : tensor<5xi32>""")
    np.testing.assert_array_equal(out, np.trunc(x).astype(np.int32))


@pytest.mark.parametrize("blas", [True, False])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_transposes(ta, tb, blas):
    a = randn(3, 17, 24) if not ta else randn(3, 24, 17)
    b = randn(24, 19) if not tb else randn(19, 24)
    flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
    out = one({"a": Arg(a), "b": Arg(b)}, ty((3, 17, 19)),
              f"""  %y = rlx_mir.matmul %a, %b{flags} : {ty(a.shape)}, {ty(b.shape)}
  return %y : {ty((3, 17, 19))}""", extra=("--blas-min-flops=0",) if blas else ("--no-blas",))
    a64 = a.astype(np.float64).swapaxes(-1, -2) if ta else a.astype(np.float64)
    b64 = b.astype(np.float64).T if tb else b.astype(np.float64)
    assert_close(out, a64 @ b64, rtol=TOL)
@pytest.mark.parametrize("blas", [True, False])
def test_matmul_batch_broadcast(blas):
    a, b = randn(2, 1, 8, 4), randn(3, 4, 5)
    out = one({"a": Arg(a), "b": Arg(b)}, ty((2, 3, 8, 5)),
              """  %y = rlx_mir.matmul %a, %b : tensor<2x1x8x4xf32>, tensor<3x4x5xf32>
  return %y : tensor<2x3x8x5xf32>""", extra=("--blas-min-flops=0",) if blas else ("--no-blas",))
    assert_close(out, np.matmul(a.astype(np.float64), b), rtol=TOL)
REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("kind", REDUCE)
@pytest.mark.parametrize("axes,keep", [([-1], True), ([0, 2], False), ([1], False)])
def test_reduce(kind, axes, keep):
    x = randn(3, 4, 5) if kind != "prod" else 1 + randn(3, 4, 5, scale=0.2)
    want = REDUCE[kind](x.astype(np.float64), axis=tuple(axes), keepdims=keep)
    axes_text = ", ".join(map(str, axes))
    out = one({"x": Arg(x)}, ty(want.shape),
              f"""  %y = rlx_mir.reduce {kind} %x axes = [{axes_text}]{' keep_dims' if keep else ''} : tensor<3x4x5xf32>
  return %y : {ty(want.shape)}""")
    assert_close(out, want, rtol=TOL)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_axis(axis):
    x = randn(3, 5, 7, scale=4)
    out = one({"x": Arg(x)}, ty(x.shape), f"""  %y = rlx_mir.softmax %x axis = {axis} : tensor<3x5x7xf32>
  return %y : tensor<3x5x7xf32>""")
    assert_close(out, ref.softmax(x, axis), rtol=TOL)
def test_norms_without_weights():
    x = randn(2, 3, 16) + 1
    out = one({"x": Arg(x)}, ty((2, 2, 3, 16)), """  %r = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<2x3x16xf32>
  %l = rlx_mir.layer_norm %x eps = 1.0e-05 : tensor<2x3x16xf32>
  %r4 = rlx_mir.reshape %r [1, 2, 3, 16] : tensor<2x3x16xf32>
  %l4 = rlx_mir.reshape %l [1, 2, 3, 16] : tensor<2x3x16xf32>
  %y = rlx_mir.concat %r4, %l4 axis = 0 : tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>
  return %y : tensor<2x2x3x16xf32>""")
    assert_close(out[0], ref.rms_norm(x, eps=1e-5), rtol=TOL)
    assert_close(out[1], ref.layer_norm(x, eps=1e-5), rtol=TOL)
def test_residual_rms_norm_and_layer_norm_with_weights():
    x, r, g, b = randn(4, 24), randn(4, 24), 1 + randn(24, scale=0.1), randn(24, scale=0.1)
    n, s, ln = run_function(
        {"x": Arg(x), "r": Arg(r), "g": Arg(g), "b": Arg(b)}, [ty((4, 24))] * 3,
        """  %n, %s = rlx_mir.residual_rms_norm %x, %r, %g eps = 1.0e-06 : tensor<4x24xf32>, tensor<4x24xf32>, tensor<24xf32>
  %l = rlx_mir.layer_norm %s weight(%g : tensor<24xf32>) bias(%b : tensor<24xf32>) eps = 1.0e-05 : tensor<4x24xf32>
  return %n, %s, %l : tensor<4x24xf32>, tensor<4x24xf32>, tensor<4x24xf32>""")
    total = x.astype(np.float64) + r
    assert_close(s, total, rtol=TOL)
    assert_close(n, ref.rms_norm(total, g, 1e-6), rtol=TOL)
    assert_close(ln, ref.layer_norm(total, g, b, 1e-5), rtol=TOL)
def test_attention_gqa_with_float_mask():
    q, k, v = randn(1, 6, 6 * 8), randn(1, 9, 2 * 8), randn(1, 9, 2 * 8)
    m = randn(1, 6, 9)
    out = one({"q": Arg(q), "k": Arg(k), "v": Arg(v), "m": Arg(m)}, ty((1, 6, 48)),
              """  %o = rlx_mir.attention %q, %k, %v mask(%m : tensor<1x6x9xf32>) heads = 6, kv_heads = 2, head_dim = 8 causal
      : tensor<1x6x48xf32>, tensor<1x9x16xf32>, tensor<1x9x16xf32>
  return %o : tensor<1x6x48xf32>""")
    assert_close(out, ref.attention(q, k, v, 6, 2, 8, "causal", mask=m), rtol=TOL)
@pytest.mark.parametrize("per_head", [False, True])
def test_attention_gqa_decode_with_boolean_mask(per_head):
    """One query row per sequence (a decode step) over 9 keys, some masked
    off per batch row: the query heads of a KV head taken together with the
    mask's one row (per_head: a [B, heads, 1, Sk] mask, head by head)."""
    q, k, v = randn(2, 1, 6 * 8), randn(2, 9, 2 * 8), randn(2, 9, 2 * 8)
    m = np.ones((2, 6 if per_head else 1, 1, 9), bool)
    m[0, ..., :4] = False
    m[1, ..., 2] = False
    if per_head:
        m[1, 3, :, 5:8] = False
    mt = ty(m.shape if per_head else (2, 1, 9), "i1")
    out = one({"q": Arg(q), "k": Arg(k), "v": Arg(v), "m": Arg(m if per_head else m[:, 0])},
              ty((2, 1, 48)),
              f"""  %o = rlx_mir.attention %q, %k, %v mask(%m : {mt}) heads = 6, kv_heads = 2, head_dim = 8 causal
      : tensor<2x1x48xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>
  return %o : tensor<2x1x48xf32>""")
    assert_close(out, ref.attention(q, k, v, 6, 2, 8, "causal", mask=m), rtol=TOL)
    unmasked = ref.attention(q, k, v, 6, 2, 8, "causal")
    assert np.abs(out - unmasked).max() > 1e-2, "the mask changed nothing"


def test_reshape_transpose_slice_concat():
    x = np.arange(2 * 6 * 4, dtype=np.float32).reshape(2, 6, 4)
    p = randn(2, 3, 2)
    out = one({"x": Arg(x, dynamic={1: "seq"}), "p": Arg(p)}, "tensor<3x2x3x2xf32>",
              """  %r = rlx_mir.reshape %x [2, -1, 2, 4] : tensor<2x?x4xf32>
  %t = rlx_mir.transpose %r [2, 0, 1, 3] : tensor<2x?x2x4xf32>
  %s = rlx_mir.slice %t offsets [0, 0, 0, 1] sizes [2, 2, -1, 2] strides [1, 1, 1, 2] : tensor<2x2x?x4xf32>
  %pr = rlx_mir.reshape %p [1, 2, 3, 2] : tensor<2x3x2xf32>
  %c = rlx_mir.concat %s, %pr axis = -4 : tensor<2x2x?x2xf32>, tensor<1x2x3x2xf32>
  return %c : tensor<3x2x3x2xf32>""")
    t = x.reshape(2, -1, 2, 4).transpose(2, 0, 1, 3)[..., 1::2]
    np.testing.assert_array_equal(out, np.concatenate([t, p.reshape(1, 2, 3, 2)], 0))


def test_broadcast_and_select():
    x = randn(1, 4, 1)
    cond = rng.random((3, 4, 5)) > 0.5
    out = one({"x": Arg(x), "c": Arg(cond)}, ty((3, 4, 5)),
              """  %b = rlx_mir.broadcast %x [3, 4, 5] : tensor<1x4x1xf32>
  %z = rlx_mir.constant dense<-2.5> : tensor<f32>
  %y = rlx_mir.select %c, %b, %z : tensor<3x4x5xi1>, tensor<3x4x5xf32>, tensor<f32>
  return %y : tensor<3x4x5xf32>""")
    np.testing.assert_array_equal(out, np.where(cond, np.broadcast_to(x, (3, 4, 5)), np.float32(-2.5)))


def test_constant_and_gather():
    ids = np.array([[4, 0, 2], [1, 1, 3]], np.int32)
    out = one({"ids": Arg(ids)}, ty((2, 3, 2)),
              """  %t = rlx_mir.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]> : tensor<5x2xf32>
  %g = rlx_mir.gather %t[%ids] : tensor<5x2xf32>, tensor<2x3xi32>
  return %g : tensor<2x3x2xf32>""")
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(out, table[ids])


@pytest.mark.parametrize("style", ["neox", "gptj"])
def test_rope_tables_partial_rotary(style):
    x = randn(2, 5, 3 * 8)
    ang = rng.random((5, 2)).astype(np.float32) * 6
    c, s = np.cos(ang), np.sin(ang)
    out = one({"x": Arg(x), "c": Arg(c), "s": Arg(s)}, ty(x.shape),
              f"""  %y = rlx_mir.rope %x, %c, %s head_dim = 8 rotary_dim = 4 style {style}
      : tensor<2x5x24xf32>, tensor<5x2xf32>, tensor<5x2xf32>
  return %y : tensor<2x5x24xf32>""")
    assert_close(out, ref.rope(x, c, s, 8, 4, style), rtol=TOL)
@pytest.mark.parametrize("window", [None, 2])
def test_causal_mask(window):
    s = randn(1, 2, 3, 5)
    w = f" window = {window}" if window else ""
    out = one({"s": Arg(s)}, ty(s.shape), f"""  %y = rlx_mir.causal_mask %s{w} : tensor<1x2x3x5xf32>
  return %y : tensor<1x2x3x5xf32>""")
    i = np.arange(3)[:, None] + 2
    j = np.arange(5)[None, :]
    visible = (j <= i) & ((j > i - window) if window else True)
    np.testing.assert_array_equal(out, np.where(visible, s, -np.inf))


def test_elementwise_region_two_results():
    p, f = randn(6, 1), randn(32)
    a, b = run_function({"p": Arg(p), "f": Arg(f)}, [ty((6, 32)), ty((6, 32))],
                        """  %0:2 = rlx_mir.elementwise ins(%p, %f : tensor<6x1xf32>, tensor<32xf32>) -> tensor<6x32xf32>, tensor<6x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %e = math.exp %m : f32
    rlx_mir.yield %m, %e : f32, f32
  }
  return %0#0, %0#1 : tensor<6x32xf32>, tensor<6x32xf32>""")
    m = p.astype(np.float64) * f
    assert_close(a, m, rtol=TOL)
    assert_close(b, np.exp(m), rtol=TOL)
FUSED = {
    "rms_bias_silu_residual": (
        "norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<32xf32>) bias(%b : tensor<40xf32>) "
        "activation silu residual(%r : tensor<2x7x40xf32>)", 40),
    "layer_norm_glu_gelu": (
        "norm layer_norm eps = 1.0e-05 norm_weight(%g : tensor<32xf32>) norm_bias(%nb : tensor<32xf32>) "
        "activation gelu glu", 20),
    "head_norm_rope": (
        "head_norm(%hn : tensor<3x8xf32>) head_norm_eps = 1.0e-06 "
        "rope(%c, %s : tensor<7x4xf32>, tensor<7x4xf32>) rope_heads = 4 head_dim = 8", 40),
}


@pytest.mark.parametrize("row_tile", [512, 3])
@pytest.mark.parametrize("case", FUSED)
def test_fused_matmul(case, row_tile):
    stages, n_out = FUSED[case]
    x, w = randn(2, 7, 32), randn(40, 32, scale=0.2)
    g, nb, b = 1 + randn(32, scale=0.1), randn(32, scale=0.1), randn(40, scale=0.1)
    r, hn = randn(2, 7, n_out), 1 + randn(3, 8, scale=0.1)
    ang = rng.random((7, 4)).astype(np.float32) * 6
    c, s = np.cos(ang), np.sin(ang)
    args = {"x": Arg(x), "w": Arg(w)}
    for name, value in {"g": g, "nb": nb, "b": b, "r": r, "hn": hn, "c": c, "s": s}.items():
        if re.search(rf"%{name}\b", stages):
            args[name] = Arg(value)
    out = one(args, ty((2, 7, n_out)), f"""  %y = rlx_mir.fused_matmul %x, %w transpose_b {stages}
      : tensor<2x7x32xf32>, tensor<40x32xf32>
  return %y : {ty((2, 7, n_out))}""", extra=("--row-tile", str(row_tile), "--blas-min-flops=0"))
    x64 = x.astype(np.float64)
    if case == "rms_bias_silu_residual":
        want = ref.silu(ref.rms_norm(x64, g, 1e-5) @ w.T + b) + r
    elif case == "layer_norm_glu_gelu":
        y = ref.layer_norm(x64, g, nb, 1e-5) @ w.T
        want = ref.gelu(y[..., :20]) * y[..., 20:]
    else:
        y = (x64 @ w.T).reshape(2, 7, 5, 8)
        y[:, :, :3] = ref.rms_norm(y[:, :, :3], hn, 1e-6)
        y = y.reshape(2, 7, 40)
        want = np.concatenate([ref.rope(y[..., :32], c, s, 8), y[..., 32:]], -1)
    assert_close(out, want, rtol=TOL)
@pytest.mark.parametrize("lir", [True, False], ids=["lir", "no-lir"])
def test_outputs_that_share_shapes_or_values(lir):
    """Two reductions to the same shape, a value returned twice and an
    argument returned as it is: every output gets its own correct bytes
    (regression: CSE'd reduction inits once made the second reduction
    accumulate into the first one's output)."""
    from harness import run_mlir
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    text = """
func.func @f(%a: tensor<3x4xf32> {rlx.input = "a"}, %b: tensor<3x4xf32> {rlx.input = "b"})
    -> (tensor<f32> {rlx.output = "sa"}, tensor<f32> {rlx.output = "sb"},
        tensor<3x4xf32> {rlx.output = "e1"}, tensor<3x4xf32> {rlx.output = "e2"},
        tensor<3x4xf32> {rlx.output = "a_again"}) {
  %sa = rlx_mir.reduce sum %a axes = [0, 1] : tensor<3x4xf32>
  %sb = rlx_mir.reduce sum %b axes = [0, 1] : tensor<3x4xf32>
  %e = rlx_mir.exp %b : tensor<3x4xf32>
  return %sa, %sb, %e, %e, %a : tensor<f32>, tensor<f32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
"""
    out = run_mlir(text, {"a": a, "b": b}, extra=() if lir else ("--no-lir",))
    assert_close(out["sa"], a.astype(np.float64).sum(), rtol=1e-6)
    assert_close(out["sb"], b.astype(np.float64).sum(), rtol=1e-6)
    assert_close(out["e1"], np.exp(b.astype(np.float64)), rtol=1e-6)
    assert_close(out["e2"], np.exp(b.astype(np.float64)), rtol=1e-6)
    np.testing.assert_array_equal(out["a_again"], a)
