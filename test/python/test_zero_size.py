"""Tensors with a 0-size dim, through every op: valid and computed, or a diagnostic.

RLX follows PyTorch (docs/design.md, "Zero-size dims"): a 0-size dim is a
valid shape everywhere and ops compute what torch computes: empty results,
a sum over an empty axis is 0 and a mean NaN, a matmul over K = 0 is zeros,
attention over zero keys is 0 (no visible key). What torch rejects is a
located diagnostic: max/min over an empty axis (no identity) and a reshape
whose dynamic dim cannot be inferred from zero elements.

Each program runs fused and unfused (--no-fuse) on the CPU path against
numpy, including a 0-size batch of an empty KV cache.
"""
import subprocess

import numpy as np
import pytest

import reference as ref
from harness import BUILD, Arg, run_function

RLX_OPT = BUILD / "bin" / "rlx-opt"


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


rng = np.random.default_rng(5)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def attention_ref(q, k, v, heads, kv_heads, causal):
    b, sq, _ = q.shape
    sk = k.shape[1]
    d = q.shape[2] // heads
    out = np.zeros((b, sq, heads * d))
    for h in range(heads):
        kh = h // (heads // kv_heads)
        qs = q[:, :, h * d:(h + 1) * d].astype(np.float64)
        ks = k[:, :, kh * d:(kh + 1) * d].astype(np.float64)
        vs = v[:, :, kh * d:(kh + 1) * d].astype(np.float64)
        s = qs @ ks.transpose(0, 2, 1) / np.sqrt(d)
        if causal:
            i = np.arange(sq)[:, None] + sk - sq
            s = np.where(np.arange(sk)[None, :] <= i, s, -np.inf)
        for bi in range(b):
            for qi in range(sq):
                row = s[bi, qi]
                if sk == 0 or np.all(np.isneginf(row)):
                    continue  # no visible key: 0
                p = np.exp(row - row.max())
                out[bi, qi, h * d:(h + 1) * d] = (p / p.sum()) @ vs[bi]
    return out


# name -> (args, result types, body, numpy reference)
CASES = {
    "add_broadcast": (
        {"a": randn(0, 4), "b": randn(4)}, [ty((0, 4))],
        f"  %y = rlx_mir.add %a, %b : {ty((0, 4))}, {ty((4,))}\n  return %y : {ty((0, 4))}",
        lambda a, b: [a + b]),
    "unary_chain": (
        {"x": randn(3, 0)}, [ty((3, 0))],
        f"  %e = rlx_mir.exp %x : {ty((3, 0))}\n  %y = rlx_mir.silu %e : {ty((3, 0))}\n"
        f"  return %y : {ty((3, 0))}",
        lambda x: [ref.silu(np.exp(x))]),
    "matmul_m0": (
        {"x": randn(0, 4), "w": randn(4, 6)}, [ty((0, 6))],
        f"  %y = rlx_mir.matmul %x, %w : {ty((0, 4))}, {ty((4, 6))}\n  return %y : {ty((0, 6))}",
        lambda x, w: [x @ w]),
    "matmul_k0": (
        {"x": randn(3, 0), "w": randn(0, 5)}, [ty((3, 5))],
        f"  %y = rlx_mir.matmul %x, %w : {ty((3, 0))}, {ty((0, 5))}\n  return %y : {ty((3, 5))}",
        lambda x, w: [np.zeros((3, 5))]),
    "matmul_n0": (
        {"x": randn(3, 4), "w": randn(0, 4)}, [ty((3, 0))],
        f"  %y = rlx_mir.matmul %x, %w transpose_b : {ty((3, 4))}, {ty((0, 4))}\n"
        f"  return %y : {ty((3, 0))}",
        lambda x, w: [x @ w.T]),
    "fused_matmul_m0": (
        {"x": randn(1, 0, 8), "w": randn(6, 8), "g": randn(8), "b": randn(6), "r": randn(1, 0, 6)},
        [ty((1, 0, 6))],
        f"  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 "
        f"norm_weight(%g : {ty((8,))}) bias(%b : {ty((6,))}) activation silu "
        f"residual(%r : {ty((1, 0, 6))}) : {ty((1, 0, 8))}, {ty((6, 8))}\n"
        f"  return %y : {ty((1, 0, 6))}",
        lambda x, w, g, b, r: [np.zeros((1, 0, 6))]),
    "reduce_sum_empty_axis": (
        {"x": randn(0, 4)}, [ty((4,))],
        f"  %y = rlx_mir.reduce sum %x axes = [0] : {ty((0, 4))}\n  return %y : {ty((4,))}",
        lambda x: [x.sum(axis=0)]),
    "reduce_mean_empty_axis": (
        {"x": randn(0, 4)}, [ty((4,))],
        f"  %y = rlx_mir.reduce mean %x axes = [0] : {ty((0, 4))}\n  return %y : {ty((4,))}",
        lambda x: [np.full(4, np.nan)]),
    "reduce_max_of_empty_rows": (
        {"x": randn(0, 4)}, [ty((0,))],
        f"  %y = rlx_mir.reduce max %x axes = [1] : {ty((0, 4))}\n  return %y : {ty((0,))}",
        lambda x: [x.max(axis=1)]),
    "softmax_rows0": (
        {"x": randn(0, 4)}, [ty((0, 4))],
        f"  %y = rlx_mir.softmax %x axis = -1 : {ty((0, 4))}\n  return %y : {ty((0, 4))}",
        lambda x: [x]),
    "softmax_empty_axis": (
        {"x": randn(3, 0)}, [ty((3, 0))],
        f"  %y = rlx_mir.softmax %x axis = -1 : {ty((3, 0))}\n  return %y : {ty((3, 0))}",
        lambda x: [x]),
    "rms_norm_rows0": (
        {"x": randn(1, 0, 8), "g": randn(8)}, [ty((1, 0, 8))],
        f"  %y = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : {ty((1, 0, 8))}, {ty((8,))}\n"
        f"  return %y : {ty((1, 0, 8))}",
        lambda x, g: [x]),
    "layer_norm_rows0": (
        {"x": randn(0, 8), "g": randn(8)}, [ty((0, 8))],
        f"  %y = rlx_mir.layer_norm %x weight(%g : {ty((8,))}) bias(%g : {ty((8,))}) "
        f"eps = 1.0e-05 : {ty((0, 8))}\n  return %y : {ty((0, 8))}",
        lambda x, g: [x]),
    "residual_rms_norm_rows0": (
        {"x": randn(0, 8), "r": randn(0, 8), "g": randn(8)}, [ty((0, 8)), ty((0, 8))],
        f"  %y:2 = rlx_mir.residual_rms_norm %x, %r, %g eps = 1.0e-05 : {ty((0, 8))}, "
        f"{ty((0, 8))}, {ty((8,))}\n  return %y#0, %y#1 : {ty((0, 8))}, {ty((0, 8))}",
        lambda x, r, g: [x, x]),
    "attention_no_queries": (
        {"q": randn(1, 0, 16), "k": randn(1, 5, 8), "v": randn(1, 5, 8)}, [ty((1, 0, 16))],
        f"  %y = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 8 causal : "
        f"{ty((1, 0, 16))}, {ty((1, 5, 8))}, {ty((1, 5, 8))}\n  return %y : {ty((1, 0, 16))}",
        lambda q, k, v: [attention_ref(q, k, v, 2, 1, True)]),
    "attention_no_keys": (
        {"q": randn(1, 3, 16), "k": randn(1, 0, 8), "v": randn(1, 0, 8)}, [ty((1, 3, 16))],
        f"  %y = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 8 : "
        f"{ty((1, 3, 16))}, {ty((1, 0, 8))}, {ty((1, 0, 8))}\n  return %y : {ty((1, 3, 16))}",
        lambda q, k, v: [np.zeros((1, 3, 16))]),
    "concat_empty_cache": (
        {"p": randn(1, 0, 8), "n": randn(1, 2, 8)}, [ty((1, 2, 8))],
        f"  %y = rlx_mir.concat %p, %n axis = 1 : {ty((1, 0, 8))}, {ty((1, 2, 8))}\n"
        f"  return %y : {ty((1, 2, 8))}",
        lambda p, n: [np.concatenate([p, n], axis=1)]),
    "slice_size0": (
        {"x": randn(4, 6)}, [ty((0, 6))],
        f"  %y = rlx_mir.slice %x offsets [4, 0] sizes [0, -1] strides [1, 1] : {ty((4, 6))}\n"
        f"  return %y : {ty((0, 6))}",
        lambda x: [x[4:4]]),
    "reshape_zero_elements": (
        {"x": randn(0, 4)}, [ty((2, 0, 3))],
        f"  %y = rlx_mir.reshape %x [2, 0, 3] : {ty((0, 4))}\n  return %y : {ty((2, 0, 3))}",
        lambda x: [x.reshape(2, 0, 3)]),
    "transpose": (
        {"x": randn(0, 3, 2)}, [ty((2, 0, 3))],
        f"  %y = rlx_mir.transpose %x [2, 0, 1] : {ty((0, 3, 2))}\n  return %y : {ty((2, 0, 3))}",
        lambda x: [x.transpose(2, 0, 1)]),
    "broadcast_to_0": (
        {"x": randn(1, 4)}, [ty((0, 4))],
        f"  %y = rlx_mir.broadcast %x [0, 4] : {ty((1, 4))}\n  return %y : {ty((0, 4))}",
        lambda x: [np.broadcast_to(x, (0, 4))]),
    "gather_no_ids": (
        {"t": randn(10, 4), "i": np.zeros((1, 0), np.int64)}, [ty((1, 0, 4))],
        f"  %y = rlx_mir.gather %t[%i] : {ty((10, 4))}, {ty((1, 0), 'i64')}\n"
        f"  return %y : {ty((1, 0, 4))}",
        lambda t, i: [t[i]]),
    "rope_seq0": (
        {"x": randn(1, 0, 16), "c": randn(0, 4), "s": randn(0, 4)}, [ty((1, 0, 16))],
        f"  %y = rlx_mir.rope %x, %c, %s head_dim = 8 : {ty((1, 0, 16))}, {ty((0, 4))}, "
        f"{ty((0, 4))}\n  return %y : {ty((1, 0, 16))}",
        lambda x, c, s: [x]),
    "causal_mask_rows0": (
        {"x": randn(1, 1, 0, 4)}, [ty((1, 1, 0, 4))],
        f"  %y = rlx_mir.causal_mask %x : {ty((1, 1, 0, 4))}\n  return %y : {ty((1, 1, 0, 4))}",
        lambda x: [x]),
}


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("name", list(CASES))
def test_zero_size_is_computed(name, fuse):
    args, results, body, reference = CASES[name]
    got = run_function({n: Arg(v) for n, v in args.items()}, results, body, fuse=fuse)
    want = reference(*[v.astype(np.float64) if v.dtype == np.float32 else v for v in args.values()])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


DIAGNOSTICS = {
    "max over an empty axis": (
        f"func.func @f(%x: {ty((0, 4))}) -> {ty((4,))} {{\n"
        f"  %y = rlx_mir.reduce max %x axes = [0] : {ty((0, 4))}\n  return %y : {ty((4,))}\n}}",
        "a max reduction over an empty axis has no value"),
    "dynamic dim from zero elements": (
        f"func.func @f(%x: {ty((0, 4))}) -> tensor<2x?xf32> {{\n"
        f"  %y = rlx_mir.reshape %x [2, -1] : {ty((0, 4))}\n  return %y : tensor<2x?xf32>\n}}",
        "a dynamic dim of a tensor with no elements cannot be inferred"),
}


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_zero_size_diagnostics(name):
    text, message = DIAGNOSTICS[name]
    proc = subprocess.run([str(RLX_OPT), "-"], input=text, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "<stdin>:2:" in proc.stderr and message in proc.stderr, proc.stderr
