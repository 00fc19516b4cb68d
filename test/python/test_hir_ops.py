"""Every rlx_hir op, compiled for the CPU with rlx-run, against NumPy.

References come from reference.py (float64, written from the PyTorch/HF
definitions). Tolerances, max |got - ref| / max |ref|:
  f32: 1e-5; bf16: 2e-2 (inputs are bf16 values; results are rounded to bf16
  once, and bf16 matmul/attention accumulate in f32).
Each op runs under both HIR→MIR policies (`direct` emits fused MIR ops,
`fusable` primitives that rlx-mir-fuse must fuse back).
"""
import ml_dtypes
import numpy as np
import pytest

import reference as ref
from harness import Arg, assert_close, run_function

TOL = {"f32": 1e-5, "bf16": 2e-2}
POLICIES = ["direct", "fusable"]
rng = np.random.default_rng(1234)


def randn(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def as_bf16(a):
    """The bf16 value nearest to each element, held in f32."""
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("act", ["none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
def test_linear_bias_activation(policy, act):
    x, w, b = randn(2, 5, 24), randn(40, 24, scale=0.2), randn(40, scale=0.1)
    out, = run_function(
        {"x": Arg(x), "w": Arg(w), "b": Arg(b)}, [ty((2, 5, 40))],
        f"""  %y = rlx_hir.linear %x, %w bias %b activation {act}
      : {ty(x.shape)}, {ty(w.shape)}, {ty(b.shape)}
  return %y : {ty((2, 5, 40))}""", policy=policy)
    assert_close(out, ref.ACT[act](x.astype(np.float64) @ w.T + b), "f32")
@pytest.mark.parametrize("policy", POLICIES)
def test_linear_in_out_layout_dynamic_rows(policy):
    # GPT-2 Conv1D layout [in, out]; the sequence dim is dynamic and bound from the input.
    x, w = randn(1, 7, 32), randn(32, 48, scale=0.2)
    out, = run_function(
        {"x": Arg(x, dynamic={1: "seq"}), "w": Arg(w)}, ["tensor<1x?x48xf32>"],
        """  %y = rlx_hir.linear %x, %w layout in_out : tensor<1x?x32xf32>, tensor<32x48xf32>
  return %y : tensor<1x?x48xf32>""", policy=policy)
    assert_close(out, x.astype(np.float64) @ w, "f32")
def test_linear_bf16():
    x, w = as_bf16(randn(4, 64)), as_bf16(randn(32, 64, scale=0.125))
    out, = run_function(
        {"x": Arg(x, "bf16"), "w": Arg(w, "bf16")}, [ty((4, 32), "bf16")],
        f"""  %y = rlx_hir.linear %x, %w activation silu : {ty((4, 64), 'bf16')}, {ty((32, 64), 'bf16')}
  return %y : {ty((4, 32), 'bf16')}""")
    assert_close(out, ref.silu(x.astype(np.float64) @ w.T), "bf16")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_rms_norm(policy, dtype):
    x, g = randn(2, 3, 64), 1 + randn(64, scale=0.1)
    if dtype == "bf16":
        x, g = as_bf16(x), as_bf16(g)
    t = ty((2, 3, 64), dtype)
    out, = run_function(
        {"x": Arg(x, dtype), "g": Arg(g, dtype)}, [t],
        f"""  %y = rlx_hir.rms_norm %x, %g eps = 1.0e-06 : {t}, {ty((64,), dtype)}
  return %y : {t}""", policy=policy)
    assert_close(out, ref.rms_norm(x, g, 1e-6), dtype)
@pytest.mark.parametrize("policy", POLICIES)
def test_residual_rms_norm_returns_norm_and_sum(policy):
    x, r, g = randn(1, 6, 48), randn(1, 6, 48), 1 + randn(48, scale=0.1)
    t = ty(x.shape)
    out, total = run_function(
        {"x": Arg(x), "r": Arg(r), "g": Arg(g)}, [t, t],
        f"""  %n, %s = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-05 : {t}, {t}, {ty((48,))}
  return %n, %s : {t}, {t}""", policy=policy)
    s = x.astype(np.float64) + r
    assert_close(total, s, "f32")
    assert_close(out, ref.rms_norm(s, g, 1e-5), "f32")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(policy, affine):
    x, g, b = randn(3, 40) + 3.0, 1 + randn(40, scale=0.1), randn(40, scale=0.1)
    args = {"x": Arg(x)}
    params = ""
    if affine:
        args |= {"g": Arg(g), "b": Arg(b)}
        params = "weight(%g : tensor<40xf32>) bias(%b : tensor<40xf32>) "
    out, = run_function(args, [ty(x.shape)], f"""  %y = rlx_hir.layer_norm %x {params}eps = 1.0e-05 : {ty(x.shape)}
  return %y : {ty(x.shape)}""", policy=policy)
    want = ref.layer_norm(x, g, b, 1e-5) if affine else ref.layer_norm(x, eps=1e-5)
    assert_close(out, want, "f32")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("act,layout", [("silu", "out_in"), ("gelu_tanh", "in_out")])
def test_swiglu(policy, act, layout):
    H, inter = 32, 56
    x = randn(1, 5, H)
    wg, wu, wd = randn(inter, H, scale=0.2), randn(inter, H, scale=0.2), randn(H, inter, scale=0.15)
    if layout == "in_out":
        wg, wu, wd = wg.T.copy(), wu.T.copy(), wd.T.copy()
    t = ty(x.shape)
    out, = run_function(
        {"x": Arg(x), "wg": Arg(wg), "wu": Arg(wu), "wd": Arg(wd)}, [t],
        f"""  %y = rlx_hir.swiglu %x, gate %wg, up %wu, down %wd activation {act} layout {layout}
      : {t}, {ty(wg.shape)}, {ty(wu.shape)}, {ty(wd.shape)}
  return %y : {t}""", policy=policy)
    x64 = x.astype(np.float64)
    if layout == "out_in":
        want = (ref.ACT[act](x64 @ wg.T) * (x64 @ wu.T)) @ wd.T
    else:
        want = (ref.ACT[act](x64 @ wg) * (x64 @ wu)) @ wd
    assert_close(out, want, "f32")
def _attention(q, k, v, attrs, heads, kv, hd, *, mask=None, layout="bsd", dtype="f32",
               policy="direct", out_shape=None, **ref_kw):
    args = {"q": Arg(q, dtype), "k": Arg(k, dtype), "v": Arg(v, dtype)}
    mask_text = ""
    if mask is not None:
        args["m"] = Arg(mask)
        mask_text = f"mask(%m : {args['m'].type()}) "
    out_shape = out_shape or q.shape[:-1] + (v.shape[-1] * heads // kv if layout == "bsd" else v.shape[-1],)
    ot = ty(out_shape, dtype)
    layout_text = f" layout {layout}" if layout != "bsd" else ""
    out, = run_function(args, [ot], f"""  %o = rlx_hir.attention %q, %k, %v {mask_text}heads = {heads}, kv_heads = {kv}, head_dim = {hd} {attrs}{layout_text}
      : {args['q'].type()}, {args['k'].type()}, {args['v'].type()}
  return %o : {ot}""", policy=policy)
    want = ref.attention(q, k, v, heads, kv, hd, mask=mask, layout=layout, **ref_kw)
    return out, want


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("sq,sk", [(9, 9), (1, 12), (4, 11)])
def test_attention_causal_gqa(policy, sq, sk):
    q, k, v = randn(1, sq, 6 * 8), randn(1, sk, 2 * 8), randn(1, sk, 2 * 8)
    out, want = _attention(q, k, v, "causal", 6, 2, 8, mask_kind="causal", policy=policy)
    assert_close(out, want, "f32")
@pytest.mark.parametrize("window", [1, 3, 20])
def test_attention_sliding_window(window):
    q, k, v = randn(2, 7, 32), randn(2, 10, 16), randn(2, 10, 16)
    out, want = _attention(q, k, v, f"sliding_window window = {window}", 4, 2, 8,
                           mask_kind="sliding_window", window=window)
    assert_close(out, want, "f32")
def test_attention_no_mask_scale_softcap():
    q, k, v = randn(1, 5, 32, scale=3), randn(1, 8, 32, scale=3), randn(1, 8, 32)
    out, want = _attention(q, k, v, "scale = 0.3 softcap = 5.0", 4, 4, 8, scale=0.3, softcap=5.0)
    assert_close(out, want, "f32")
def test_attention_boolean_mask_rank2_with_causal():
    q, k, v = randn(1, 6, 16), randn(1, 6, 16), randn(1, 6, 16)
    mask = rng.random((6, 6)) > 0.3
    mask[:, 0] = True  # every row keeps at least its first key (row 0 is causal-only key 0)
    out, want = _attention(q, k, v, "causal", 2, 2, 8, mask=mask, mask_kind="causal")
    assert_close(out, want, "f32")
def test_attention_additive_mask_rank4_per_head():
    q, k, v = randn(2, 5, 24), randn(2, 7, 24), randn(2, 7, 24)
    mask = randn(2, 3, 5, 7, scale=2.0)
    out, want = _attention(q, k, v, "", 3, 3, 8, mask=mask)
    assert_close(out, want, "f32")
def test_attention_bhsd_value_head_dim_differs():
    q, k, v = randn(2, 4, 9, 16), randn(2, 2, 11, 16), randn(2, 2, 11, 12)
    out, want = _attention(q, k, v, "causal", 4, 2, 16, layout="bhsd", mask_kind="causal",
                           out_shape=(2, 4, 9, 12))
    assert_close(out, want, "f32")
def test_attention_bshd():
    q, k, v = randn(1, 9, 4, 8), randn(1, 9, 1, 8), randn(1, 9, 1, 8)
    out, want = _attention(q, k, v, "causal", 4, 1, 8, layout="bshd", mask_kind="causal",
                           out_shape=(1, 9, 4, 8))
    assert_close(out, want, "f32")
def test_attention_bf16():
    q, k, v = (as_bf16(randn(1, 13, 64)), as_bf16(randn(1, 13, 32)), as_bf16(randn(1, 13, 32)))
    out, want = _attention(q, k, v, "causal", 4, 2, 16, dtype="bf16", mask_kind="causal")
    assert_close(out, want, "bf16")
ROPE_CASES = {
    "neox": ("", {}, "neox", None),
    "gptj_partial": ("style gptj", {}, "gptj", 8),
    "llama3": ("scaling <rope_type = llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, "
               "original_max_position_embeddings = 64>",
               {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64}, "neox", None),
    "linear": ("scaling <rope_type = linear, factor = 4.0>", {"rope_type": "linear", "factor": 4.0},
               "neox", None),
    # gpt-oss's: no truncation, the derived attention factor.
    "yarn": ("scaling <rope_type = yarn, factor = 32.0, original_max_position_embeddings = 4096, "
             "truncate = false>",
             {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
              "truncate": False}, "neox", None),
    # DeepSeek-style: truncated, other betas, an explicit attention factor.
    "yarn_truncated": ("scaling <rope_type = yarn, factor = 8.0, original_max_position_embeddings = 512, "
                       "beta_fast = 16.0, beta_slow = 2.0, attention_factor = 0.75>",
                       {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512,
                        "beta_fast": 16.0, "beta_slow": 2.0, "attention_factor": 0.75}, "neox", None),
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", ROPE_CASES)
def test_rope_from_positions(policy, case):
    attrs, scaling, style, rdim = ROPE_CASES[case]
    x = randn(1, 6, 3 * 16)
    pos = np.array([0, 5, 17, 100, 1000, 4095], np.int64)
    theta = 10000.0
    out, = run_function(
        {"x": Arg(x, dynamic={1: "seq"}), "pos": Arg(pos, dynamic={0: "seq"})}, ["tensor<1x?x48xf32>"],
        f"""  %y = rlx_hir.rope %x positions(%pos : tensor<?xi64>) head_dim = 16{f" rotary_dim = {rdim}" if rdim else ""} theta = {theta} {attrs}
      : tensor<1x?x48xf32>
  return %y : tensor<1x?x48xf32>""", policy=policy)
    cos, sin = ref.rope_tables(pos, rdim or 16, theta, scaling or None)
    assert_close(out, ref.rope(x, cos, sin, 16, rdim, style), "f32")
def test_rope_from_tables_batched_positions():
    x = randn(2, 5, 32)
    ang = rng.random((2, 5, 4)).astype(np.float32) * 10
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    out, = run_function(
        {"x": Arg(x), "c": Arg(cos), "s": Arg(sin)}, [ty(x.shape)],
        f"""  %y = rlx_hir.rope %x tables(%c, %s : {ty(cos.shape)}, {ty(sin.shape)}) head_dim = 8 : {ty(x.shape)}
  return %y : {ty(x.shape)}""")
    assert_close(out, ref.rope(x, cos, sin, 8), "f32")
@pytest.mark.parametrize("policy", POLICIES)
def test_qk_norm(policy):
    x, g = randn(1, 4, 3 * 16), 1 + randn(16, scale=0.1)
    out, = run_function(
        {"x": Arg(x), "g": Arg(g)}, [ty(x.shape)],
        f"""  %y = rlx_hir.qk_norm %x, %g head_dim = 16 eps = 1.0e-06 : {ty(x.shape)}, tensor<16xf32>
  return %y : {ty(x.shape)}""", policy=policy)
    want = ref.rms_norm(x.reshape(1, 4, 3, 16), g, 1e-6).reshape(x.shape)
    assert_close(out, want, "f32")
def test_embedding():
    table = randn(50, 12)
    ids = np.array([[3, 0, 49, 3, 17]], np.int64)
    out, = run_function(
        {"ids": Arg(ids, dynamic={1: "seq"}), "t": Arg(table)}, ["tensor<1x?x12xf32>"],
        """  %y = rlx_hir.embedding %ids, %t : tensor<1x?xi64>, tensor<50x12xf32>
  return %y : tensor<1x?x12xf32>""")
    np.testing.assert_array_equal(out, table[ids])


def _layer_weights(H, heads, kv, D, inter, qk_norm):
    w = {
        "input_layernorm.weight": 1 + randn(H, scale=0.1),
        "self_attn.q_proj.weight": randn(heads * D, H, scale=H ** -0.5),
        "self_attn.k_proj.weight": randn(kv * D, H, scale=H ** -0.5),
        "self_attn.v_proj.weight": randn(kv * D, H, scale=H ** -0.5),
        "self_attn.o_proj.weight": randn(H, heads * D, scale=(heads * D) ** -0.5),
        "post_attention_layernorm.weight": 1 + randn(H, scale=0.1),
        "mlp.gate_proj.weight": randn(inter, H, scale=H ** -0.5),
        "mlp.up_proj.weight": randn(inter, H, scale=H ** -0.5),
        "mlp.down_proj.weight": randn(H, inter, scale=inter ** -0.5),
    }
    if qk_norm:
        w["self_attn.q_norm.weight"] = 1 + randn(D, scale=0.1)
        w["self_attn.k_norm.weight"] = 1 + randn(D, scale=0.1)
    return w


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("variant", ["llama", "qwen3_cache", "window_gelu"])
def test_decoder_layer(policy, variant):
    H, heads, kv, D, inter, S, P = 48, 4, 2, 16, 80, 6, 5
    qk = variant == "qwen3_cache"
    past = variant == "qwen3_cache"
    w = _layer_weights(H, heads, kv, D, inter, qk)
    x = randn(1, S, H)
    pos = np.arange(P if past else 0, (P if past else 0) + S, dtype=np.int64)
    names = ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
             "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
             "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"]
    args = {"x": Arg(x), "pos": Arg(pos)}
    args |= {f"w{i}": Arg(w[n]) for i, n in enumerate(names)}
    weights = ", ".join(f"%w{i}" for i in range(len(names))) + " : " + \
        ", ".join(args[f"w{i}"].type() for i in range(len(names)))
    extra = ""
    cfg = {"heads": heads, "kv_heads": kv, "head_dim": D, "eps": 1e-5, "rope_theta": 10000.0}
    pk = pv = None
    if qk:
        args |= {"qn": Arg(w["self_attn.q_norm.weight"]), "kn": Arg(w["self_attn.k_norm.weight"])}
        extra += f"qk_norm(%qn, %kn : tensor<{D}xf32>, tensor<{D}xf32>) "
        cfg["qk_norm"] = True
    if past:
        pk, pv = randn(1, P, kv * D), randn(1, P, kv * D)
        args |= {"pk": Arg(pk), "pv": Arg(pv)}
        extra += f"cache(%pk, %pv : {ty(pk.shape)}, {ty(pv.shape)}) "
    tail = ""
    if variant == "window_gelu":
        tail = "mask sliding_window window = 3 activation gelu_tanh "
        cfg |= {"sliding_window": 3, "act": "gelu_tanh"}
    kvt = ty((1, (P if past else 0) + S, kv * D))
    y, k_out, v_out = run_function(args, [ty(x.shape), kvt, kvt], f"""  %y:3 = rlx_hir.decoder_layer %x positions(%pos : {args['pos'].type()})
      weights({weights}) {extra}
      heads = {heads}, kv_heads = {kv}, head_dim = {D} eps = 1.0e-05 theta = 10000.0 {tail}: {ty(x.shape)}
  return %y#0, %y#1, %y#2 : {ty(x.shape)}, {kvt}, {kvt}""", policy=policy)
    want, k_ref, v_ref = ref.llama_layer(x, pos, {"model.layers.0." + n: v for n, v in w.items()}, cfg,
                                         past=(pk, pv) if past else None)
    assert_close(y, want, "f32")
    assert_close(k_out, k_ref, "f32")
    assert_close(v_out, v_ref, "f32")

# Attention sinks (gpt-oss): attention_partial + attention_combine with the
# sinks on the CPU and the emulator; GQA, a sliding window, a decode row
# with split keys, rows whose keys are all masked (a sink alone: 0) and bf16
# on the tensor-core flash kernels (mma.sync, wgmma), forced strictly.
SINK_CASES = {
    # name: (sq, sk, heads, kv, hd, attrs, ref kwargs, dtype, extra flags)
    "prefill_gqa_causal": (9, 9, 4, 2, 16, "causal", {"mask_kind": "causal"}, "f32", ()),
    "sliding": (7, 12, 4, 1, 8, "sliding_window window = 3",
                {"mask_kind": "sliding_window", "window": 3}, "f32", ()),
    "decode_split_kv": (1, 300, 8, 2, 16, "causal", {"mask_kind": "causal"}, "f32",
                        ("--kv-splits=4",)),
    "bf16_flash": (33, 40, 4, 2, 64, "causal", {"mask_kind": "causal"}, "bf16",
                   ("--attention-kernel=flash", "--strict-kernels")),
    "bf16_wgmma_decode": (1, 200, 8, 2, 64, "causal", {"mask_kind": "causal"}, "bf16",
                          ("--attention-kernel=wgmma", "--strict-kernels", "--kv-splits=2")),
}


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("case", SINK_CASES)
def test_attention_sinks(case, device):
    sq, sk, heads, kv, hd, attrs, kw, dtype, flags = SINK_CASES[case]
    q, k, v = randn(1, sq, heads * hd), randn(1, sk, kv * hd), randn(1, sk, kv * hd)
    # About as heavy as the keys' whole mass (exp(sink) ~ Sk), so it matters.
    sinks = randn(heads) + np.float32(np.log(sk))
    if dtype == "bf16":
        q, k, v, sinks = as_bf16(q), as_bf16(k), as_bf16(v), as_bf16(sinks)
    args = {"q": Arg(q, dtype), "k": Arg(k, dtype), "v": Arg(v, dtype), "s": Arg(sinks, dtype)}
    ot = ty((1, sq, heads * hd), dtype)
    # ptxas -v of every kernel (the partials and the combine holding the
    # sinks): a spill or a stack frame is an error.
    extra = ("--device", device) + (flags + ("--spills=error",) if device == "emu" else ())
    out, = run_function(args, [ot], f"""  %o = rlx_hir.attention %q, %k, %v sinks(%s : {ty((heads,), dtype)}) heads = {heads}, kv_heads = {kv}, head_dim = {hd} {attrs}
      : {args['q'].type()}, {args['k'].type()}, {args['v'].type()}
  return %o : {ot}""", extra=extra)
    want = ref.attention(q, k, v, heads, kv, hd, sinks=sinks, **kw)
    # The sinks matter: without them the rows differ by far more than the tolerance.
    assert np.abs(ref.attention(q, k, v, heads, kv, hd, **kw) - want).max() > 0.05
    assert_close(out, want, dtype)


# Chunked attention (Llama-4): keys of the query's own chunk only, on the
# CPU and on every GPU kernel forced strictly (SIMT f32, the flash kernels
# on mma.sync and wgmma in bf16, split-KV decode), chunk boundaries inside
# and across key tiles.
CHUNKED_CASES = {
    # name: (sq, sk, heads, kv, hd, chunk, dtype, extra flags)
    "prefill_simt": (21, 21, 4, 2, 16, 8, "f32", ("--attention-kernel=simt", "--strict-kernels")),
    "bf16_flash": (150, 150, 4, 2, 64, 48, "bf16",
                   ("--attention-kernel=flash", "--strict-kernels")),
    "bf16_wgmma": (150, 150, 4, 2, 64, 40, "bf16",
                   ("--attention-kernel=wgmma", "--strict-kernels")),
    "decode_split_kv": (1, 300, 8, 2, 16, 128, "f32", ("--kv-splits=3",)),
    "bf16_wgmma_decode": (2, 200, 8, 2, 64, 96, "bf16",
                          ("--attention-kernel=wgmma", "--strict-kernels", "--kv-splits=2")),
}


def seeded_qkv(case, *shapes):
    """q, k, v from a generator of the case's own (independent of test order)."""
    g = np.random.default_rng(sum(map(ord, case)))
    return [g.standard_normal(s).astype(np.float32) for s in shapes]


def bf16_atol(want, dtype):
    """bf16 kernels round P to bf16 before P·V: an absolute error of about
    2^-8 of the output's size on its smallest entries."""
    return 4e-3 * np.abs(want).max() if dtype == "bf16" else None


def kernel_attention(case, device, sq, sk, heads, kv, d, dv, dtype, flags, attrs):
    """q [1, Sq, heads·d], k [1, Sk, kv·d], v [1, Sk, kv·dv] from the case's
    own generator (bf16-rounded for bf16) through rlx_hir.attention with
    `attrs`; on the emulator with `flags` and every kernel under ptxas -v
    with spills as errors. Returns q, k, v and the output."""
    q, k, v = seeded_qkv(case, (1, sq, heads * d), (1, sk, kv * d), (1, sk, kv * dv))
    if dtype == "bf16":
        q, k, v = as_bf16(q), as_bf16(k), as_bf16(v)
    args = {"q": Arg(q, dtype), "k": Arg(k, dtype), "v": Arg(v, dtype)}
    ot = ty((1, sq, heads * dv), dtype)
    extra = ("--device", device) + (flags + ("--spills=error",) if device == "emu" else ())
    out, = run_function(args, [ot], f"""  %o = rlx_hir.attention %q, %k, %v heads = {heads}, kv_heads = {kv}, head_dim = {d} {attrs}
      : {args['q'].type()}, {args['k'].type()}, {args['v'].type()}
  return %o : {ot}""", extra=extra)
    return q, k, v, out


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("case", CHUNKED_CASES)
def test_attention_chunked(case, device):
    sq, sk, heads, kv, hd, chunk, dtype, flags = CHUNKED_CASES[case]
    q, k, v, out = kernel_attention(case, device, sq, sk, heads, kv, hd, hd, dtype, flags,
                                    f"chunked window = {chunk}")
    want = ref.attention(q, k, v, heads, kv, hd, mask_kind="chunked", window=chunk)
    # The chunks matter: plain causal attention is another output.
    assert np.abs(ref.attention(q, k, v, heads, kv, hd, mask_kind="causal") - want).max() > 0.05
    assert_close(out, want, dtype, atol=bf16_atol(want, dtype))


# A value head size of its own (DeepSeek-V3's MLA: q·k over
# qk_nope + qk_rope, v over v_head_dim), bsd layout: v's width is
# num_kv_heads · dv. On the CPU and on each GPU kernel forced strictly.
VALUE_DIM_CASES = {
    # name: (sq, sk, heads, kv, d, dv, dtype, extra flags)
    "simt": (9, 9, 4, 4, 12, 16, "f32", ("--attention-kernel=simt", "--strict-kernels")),
    "bf16_flash": (70, 70, 4, 4, 96, 64, "bf16", ("--attention-kernel=flash", "--strict-kernels")),
    "bf16_wgmma": (70, 70, 2, 2, 192, 128, "bf16",
                   ("--attention-kernel=wgmma", "--strict-kernels")),
    "bf16_wgmma_decode": (1, 150, 2, 2, 192, 128, "bf16",
                          ("--attention-kernel=wgmma", "--strict-kernels", "--kv-splits=2")),
}


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("case", VALUE_DIM_CASES)
def test_attention_value_head_dim_differs(case, device):
    sq, sk, heads, kv, d, dv, dtype, flags = VALUE_DIM_CASES[case]
    q, k, v, out = kernel_attention(case, device, sq, sk, heads, kv, d, dv, dtype, flags, "causal")
    want = ref.attention(q, k, v, heads, kv, d, mask_kind="causal")
    assert_close(out, want, dtype, atol=bf16_atol(want, dtype))


def test_attention_sinks_masked_rows_are_zero():
    """A row whose every key is masked attends to its sink alone: 0, not NaN."""
    q, k, v = randn(1, 3, 16), randn(1, 3, 16), randn(1, 3, 16)
    mask = np.ones((3, 3), bool)
    mask[1] = False
    sinks = randn(2)
    args = {"q": Arg(q), "k": Arg(k), "v": Arg(v), "m": Arg(mask), "s": Arg(sinks)}
    out, = run_function(args, [ty((1, 3, 16))], f"""  %o = rlx_hir.attention %q, %k, %v mask(%m : tensor<3x3xi1>) sinks(%s : tensor<2xf32>) heads = 2, kv_heads = 2, head_dim = 8
      : {ty(q.shape)}, {ty(k.shape)}, {ty(v.shape)}
  return %o : {ty((1, 3, 16))}""")
    assert np.all(out[0, 1] == 0.0)
    assert_close(out, ref.attention(q, k, v, 2, 2, 8, mask=mask, sinks=sinks), "f32")


@pytest.mark.parametrize("case", ["yarn", "yarn_truncated"])
def test_yarn_reference_is_transformers(case):
    """The numpy yarn frequencies and factor above are transformers' own."""
    pytest.importorskip("torch")
    from transformers import PretrainedConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    scaling = dict(ROPE_CASES[case][1])
    cfg = PretrainedConfig(hidden_size=48, num_attention_heads=3, head_dim=16,
                           max_position_embeddings=4096,
                           rope_parameters=scaling | {"rope_theta": 10000.0})
    inv_freq, factor = ROPE_INIT_FUNCTIONS["yarn"](cfg, "cpu")
    np.testing.assert_allclose(ref.rope_inv_freq(16, 10000.0, scaling), inv_freq.numpy(), rtol=1e-6)
    assert ref.rope_attention_factor(scaling) == pytest.approx(factor, rel=1e-12)
