"""The field cases of ../shared/cases (A1-A6, N1-N3, L1, L4) on the CPU path.

Expected values in the A/N tables were computed independently of this
project (the cases file); where a case names no numbers, the reference is
the float64 NumPy code in reference.py. Tolerances: f32 1e-5 relative (the
tables give 7-8 digits; we compare at 1e-6 absolute there); bf16 2e-2.
"""
import math

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from harness import Arg, assert_close, run_function

rng = np.random.default_rng(7)
QK = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]], np.float32)
V = np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], np.float32)


def attention(q, k, v, attrs, heads=1, kv=1, hd=2, mask=None, dtype="f32", policy="direct"):
    args = {"q": Arg(q, dtype), "k": Arg(k, dtype), "v": Arg(v, dtype)}
    mask_text = ""
    if mask is not None:
        args["m"] = Arg(mask)
        mask_text = f"mask(%m : {args['m'].type()}) "
    ot = args["q"].type()
    out, = run_function(args, [ot], f"""  %o = rlx_hir.attention %q, %k, %v {mask_text}heads = {heads}, kv_heads = {kv}, head_dim = {hd} {attrs}
      : {args['q'].type()}, {args['k'].type()}, {args['v'].type()}
  return %o : {ot}""", policy=policy)
    return out


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_a1_causal(policy):
    out = attention(QK, QK, V, "causal", policy=policy)
    want = [[1, 2], [2.3395231, 3.3395231], [3.5104695, 4.5104695]]
    np.testing.assert_allclose(out[0], want, atol=1e-6)


def test_a2_decode_step_is_bottom_right_aligned():
    out = attention(QK[:, 2:], QK, V, "causal")
    np.testing.assert_allclose(out[0], [[3.5104695, 4.5104695]], atol=1e-6)


@pytest.mark.parametrize("window,want", [
    (2, [[1, 2], [2.3395231, 3.3395231], [4.3395231, 5.3395231]]),
    (1, [[1, 2], [3, 4], [5, 6]]),
])
@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_a3_sliding_window(window, want, policy):
    out = attention(QK, QK, V, f"sliding_window window = {window}", policy=policy)
    np.testing.assert_allclose(out[0], want, atol=1e-6)


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_a4_fully_masked_row_is_zero(policy):
    q, k, v = rng.standard_normal((3, 1, 5, 16)).astype(np.float32)
    mask = np.ones((5, 5), bool)
    mask[0, :] = False
    out = attention(q, k, v, "", heads=2, kv=2, hd=8, mask=mask, policy=policy)
    assert np.all(out[0, 0] == 0.0), out[0, 0]
    assert np.isfinite(out).all()
    unmasked = ref.attention(q, k, v, 2, 2, 8)
    assert_close(out[0, 1:], unmasked[0, 1:], rtol=1e-5)
def test_a4_additive_minus_inf_mask_row():
    q, k, v = rng.standard_normal((3, 1, 4, 8)).astype(np.float32)
    mask = np.zeros((4, 4), np.float32)
    mask[2, :] = -np.inf
    out = attention(q, k, v, "", heads=1, kv=1, hd=8, mask=mask)
    assert np.all(out[0, 2] == 0.0) and np.isfinite(out).all()


def test_a5_very_negative_logits_are_not_swallowed():
    # Scores -6e4 + O(1) (scale 1, D = 2): a "minus infinity" sentinel like
    # -1e4 or -65504 must never win over or zero these real logits.
    # δ·ε are multiples of 1/4, so every score is exact in f32 (ulp 2^-8 at
    # 6e4) and f32 and float64 see the same logits.
    delta = rng.integers(-2, 3, (1, 6, 1)).astype(np.float32)
    eps = (rng.integers(-8, 9, (1, 6, 1)) / 4).astype(np.float32)
    q = np.concatenate([np.ones_like(delta), delta], -1)
    k = np.concatenate([np.full_like(eps, -6.0e4), eps], -1)
    v = rng.standard_normal((1, 6, 2)).astype(np.float32)
    out = attention(q, k, v, "scale = 1.0")
    want = ref.attention(q, k, v, 1, 1, 2, scale=1.0)
    assert np.abs(out).min() > 0 or np.abs(want).min() == 0
    assert_close(out, want, rtol=1e-5)
def test_a5_mir_softmax_near_minus_6e4():
    x = (-6.0e4 + rng.uniform(-3, 3, (4, 9))).astype(np.float32)
    out, = run_function({"x": Arg(x)}, ["tensor<4x9xf32>"], """  %y = rlx_mir.softmax %x axis = -1 : tensor<4x9xf32>
  return %y : tensor<4x9xf32>""")
    assert_close(out, ref.softmax(x), rtol=1e-5)
@pytest.mark.parametrize("s", [37, 100, 1])
@pytest.mark.parametrize("dtype,tol", [("f32", 1e-5), ("bf16", 2e-2)])
def test_a6_untiled_lengths_gqa_14_2(s, dtype, tol):
    q = rng.standard_normal((1, s, 14 * 64)).astype(np.float32)
    k = rng.standard_normal((1, s, 2 * 64)).astype(np.float32)
    v = rng.standard_normal((1, s, 2 * 64)).astype(np.float32)
    if dtype == "bf16":
        q, k, v = (t.astype(ml_dtypes.bfloat16).astype(np.float32) for t in (q, k, v))
    out = attention(q, k, v, "causal", heads=14, kv=2, hd=64, dtype=dtype)
    assert_close(out, ref.attention(q, k, v, 14, 2, 64, "causal"), rtol=tol)
def test_n1_softmax_shift_invariance():
    x = np.array([[0, 1, 2, 3], [10000, 10001, 10002, 10003]], np.float32)
    out, = run_function({"x": Arg(x)}, ["tensor<2x4xf32>"], """  %y = rlx_mir.softmax %x axis = -1 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>""")
    want = [0.0320586, 0.0871443, 0.2368828, 0.6439143]
    np.testing.assert_allclose(out, [want, want], atol=1e-6)


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_n2_rms_norm_eps_inside_the_root(policy):
    x = np.full((1, 8), 1e-4, np.float32)
    out, = run_function({"x": Arg(x), "g": Arg(np.ones(8, np.float32))}, ["tensor<1x8xf32>"],
                        """  %y = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x8xf32>, tensor<8xf32>
  return %y : tensor<1x8xf32>""", policy=policy)
    np.testing.assert_allclose(out, np.full((1, 8), 0.0316070), atol=1e-6)


def _chain(op, depth):
    lines, cur = [], "%x"
    for i in range(depth):
        if op == "rms_norm":
            lines.append(f"  %y{i} = rlx_hir.rms_norm {cur}, %g eps = 1.0e-05 : tensor<4x256xbf16>, tensor<256xbf16>")
        else:
            lines.append(f"  %y{i} = rlx_hir.layer_norm {cur} weight(%g : tensor<256xbf16>) "
                         f"bias(%b : tensor<256xbf16>) eps = 1.0e-05 : tensor<4x256xbf16>")
        cur = f"%y{i}"
    return "\n".join(lines) + f"\n  return {cur} : tensor<4x256xbf16>"


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm"])
def test_n3_bf16_norms_do_not_drift_with_depth(op):
    # bf16 in, statistics in f32, one rounding at the end of each norm. The
    # reference computes each norm in float64 from the previous bf16 output
    # and rounds once to bf16, as the definition says; a correct kernel then
    # stays within about one bf16 ulp of it after 32 chained norms, where
    # bf16 statistics or a second rounding drift further with depth. Large
    # offsets make a bf16 accumulation of the statistics visibly wrong.
    bf = ml_dtypes.bfloat16
    x = (rng.standard_normal((4, 256)) * 3 + 40).astype(bf).astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(256)).astype(bf).astype(np.float32)
    b = (0.1 * rng.standard_normal(256)).astype(bf).astype(np.float32)
    args = {"x": Arg(x, "bf16"), "g": Arg(g, "bf16")}
    if op == "layer_norm":
        args["b"] = Arg(b, "bf16")
    # One bf16 ulp is 2^-7 relative to a value (2^-8 at the top of a
    # binade): element-wise, every entry within one ulp of its own value
    # (the atol only covers values that round to 0).
    for depth, rtol in ((1, 2 ** -8), (32, 2 ** -7)):
        out, = run_function(args, ["tensor<4x256xbf16>"], _chain(op, depth))
        want = x.astype(np.float64)
        for _ in range(depth):
            want = ref.rms_norm(want, g, 1e-5) if op == "rms_norm" else ref.layer_norm(want, g, b, 1e-5)
            want = want.astype(np.float32).astype(bf).astype(np.float64)
        assert_close(out, want, rtol=rtol, atol=1e-30)


def _round_trip(x, dtype):
    n = x.shape[0]
    out, = run_function({"x": Arg(x)}, [f"tensor<{n}xf32>"], f"""  %t = rlx_mir.cast %x : tensor<{n}xf32> to tensor<{n}x{dtype}>
  %y = rlx_mir.cast %t : tensor<{n}x{dtype}> to tensor<{n}xf32>
  return %y : tensor<{n}xf32>""")
    return out


def test_l1_f8e4m3fn_round_trip():
    special = [0.0, -0.0, 1.0, -1.0, 0.1, 1.0625, 1.1875, 448.0, 464.0, 1000.0, -1e6,
               2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -6, 0.017578125, 240.0, 256.0]
    x = np.concatenate([np.array(special, np.float32),
                        rng.standard_normal(300).astype(np.float32) * 50]).astype(np.float32)
    out = _round_trip(x, "f8E4M3FN")
    # Saturating conversion (cvt.rn.satfinite): clip to ±448, then round to
    # nearest even, which ml_dtypes implements.
    want = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    assert np.signbit(out[1])


def test_l1_f4e2m1fn_round_trip():
    x = np.concatenate([np.array([0.0, 0.25, 0.26, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 7.0, -100.0],
                                 np.float32),
                        rng.standard_normal(200).astype(np.float32) * 3]).astype(np.float32)
    out = _round_trip(x, "f4E2M1FN")
    want = np.clip(x, -6, 6).astype(ml_dtypes.float4_e2m1fn).astype(np.float32)
    np.testing.assert_array_equal(out, want)


def test_l1_f8_codes_decode_exactly():
    # Every finite E4M3 value survives f32 → f8 → f32 unchanged.
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    finite = codes[np.isfinite(codes)]
    np.testing.assert_array_equal(_round_trip(finite, "f8E4M3FN"), finite)


@pytest.mark.parametrize("n", [32, 8, 64])
def test_l4_reshape_middle_dynamic_specializes_to_bound_sizes(n):
    x = np.arange(n, dtype=np.float32)
    out, = run_function({"x": Arg(x, dynamic={0: "n"})}, ["tensor<1x?x8xf32>"],
                        """  %y = rlx_mir.reshape %x [1, -1, 8] : tensor<?xf32>
  %z = rlx_mir.mul %y, %y : tensor<1x?x8xf32>, tensor<1x?x8xf32>
  return %z : tensor<1x?x8xf32>""")
    assert out.shape == (1, n // 8, 8)
    np.testing.assert_array_equal(out, (x * x).reshape(1, n // 8, 8))


def test_l4_two_dynamic_middle_dims():
    x = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    out, = run_function({"x": Arg(x, dynamic={1: "a", 2: "b"})}, ["tensor<2x?x?x2x4xf32>"],
                        """  %y = rlx_mir.reshape %x [2, -1, -1, 2, 4] : tensor<2x?x?x8xf32>
  return %y : tensor<2x?x?x2x4xf32>""")
    assert out.shape == (2, 3, 4, 2, 4)
    np.testing.assert_array_equal(out, x.reshape(2, 3, 4, 2, 4))
