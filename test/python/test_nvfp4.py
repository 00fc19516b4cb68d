"""NVFP4 on the CPU path (the reference for the GPU kernels): the cases Q1-Q5
of ../shared/cases, the NRMSE of the two-level recipe, both weight layouts,
and a Llama layer whose linear weights are NVFP4, each against numpy written
here (E4M3 through ml_dtypes, E2M1 from its table)."""
from __future__ import annotations

import subprocess

import ml_dtypes
import numpy as np
import pytest

import reference as ref
import rlx

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def pack(codes: np.ndarray) -> np.ndarray:
    """[N, K] codes → [N, K/2] bytes, the lower K index in the low nibble."""
    c = codes.astype(np.uint8)
    return (c[:, 0::2] | (c[:, 1::2] << 4)).view(np.int8)


def unpack(packed: np.ndarray) -> np.ndarray:
    b = packed.view(np.uint8)
    out = np.empty((b.shape[0], b.shape[1] * 2), np.uint8)
    out[:, 0::2], out[:, 1::2] = b & 15, b >> 4
    return out


def e4m3(bytes_: np.ndarray) -> np.ndarray:
    v = np.asarray(bytes_, np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return np.where(np.isnan(v), 0.0, v)


def dequant_ref(packed, scales, g):
    """[N, K] f32 from NVIDIA's layout."""
    codes = unpack(packed)
    s = np.repeat(e4m3(scales), 16, axis=1)
    return E2M1[codes] * s * np.float32(g)


def quant_ref(w: np.ndarray):
    """The standard two-level recipe in numpy: (packed, scale bytes, global)."""
    w = w.astype(np.float32)
    amax = np.abs(w).max()
    g = np.float32(amax / (448 * 6)) if amax > 0 else np.float32(1)
    n, k = w.shape
    bam = np.abs(w.reshape(n, k // 16, 16)).max(-1)
    s8 = (bam / np.float32(6) / g).astype(ml_dtypes.float8_e4m3fn)
    s = s8.astype(np.float32)
    denom = np.repeat(s, 16, axis=1) * g
    q = np.where(denom > 0, w / np.where(denom > 0, denom, 1), 0).astype(np.float32)
    mags = E2M1[:8]
    a = np.abs(q)
    # nearest magnitude, ties to the even code
    dist = np.abs(a[..., None] - mags)
    best = dist.min(-1, keepdims=True)
    cand = np.where(dist == best, np.arange(8), 99)
    even = np.where(cand % 2 == 0, cand, 99).min(-1)
    code = np.where(even < 99, even, cand.min(-1))
    code = np.where(a > 6, 7, code).astype(np.uint8) | np.where(q < 0, 8, 0).astype(np.uint8)
    return pack(code), s8.view(np.uint8), g


def run(text, inputs, entry=""):
    return rlx.compile_cpu(rlx.parse(text), entry=entry).run(inputs)


def t(shape, et="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def dequant_fn(n, k, layout="out_in"):
    ws = (n, k // 2) if layout == "out_in" else (k // 2, n)
    ss = (n, k // 16) if layout == "out_in" else (k // 16, n)
    out = (n, k) if layout == "out_in" else (k, n)
    attr = "" if layout == "out_in" else " layout in_out"
    return f"""
func.func @f(%w: {t(ws, 'i8')} {{rlx.input = "w"}}, %s: {t(ss, 'f8E4M3FN')} {{rlx.input = "s"}},
             %g: tensor<f32> {{rlx.input = "g"}}) -> ({t(out)} {{rlx.output = "y"}}) {{
  %y = rlx_mir.nvfp4_dequantize %w, %s, %g{attr} : {t(ws, 'i8')}, {t(ss, 'f8E4M3FN')}, tensor<f32>
  return %y : {t(out)}
}}"""


def test_q1_e2m1_codes():
    codes = np.arange(16, dtype=np.uint8)[None]
    y = run(dequant_fn(1, 16), {"w": pack(codes), "s": np.array([[0x38]], np.uint8),
                                "g": np.array(1.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[0], [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
    assert np.signbit(y[0, 8])  # code 8 is -0


def test_q2_e4m3_scale_bytes():
    codes = np.full((4, 16), 2, np.uint8)  # 1.0
    scales = np.array([[0x38], [0x7F], [0xFF], [0x01]], np.uint8)
    y = run(dequant_fn(4, 16), {"w": pack(codes), "s": scales, "g": np.array(1.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[:, 0], [1.0, 0.0, 0.0, 2.0 ** -9])
    assert not np.isnan(y).any()


def matmul_fn(m, n, k, layout="out_in", xet="f32"):
    ws = (n, k // 2) if layout == "out_in" else (k // 2, n)
    ss = (n, k // 16) if layout == "out_in" else (k // 16, n)
    attr = "" if layout == "out_in" else " layout in_out"
    return f"""
func.func @f(%x: {t((m, k), xet)} {{rlx.input = "x"}}, %w: {t(ws, 'i8')} {{rlx.param = "w"}},
             %s: {t(ss, 'f8E4M3FN')} {{rlx.param = "s"}}, %g: tensor<f32> {{rlx.param = "g"}})
    -> ({t((m, n), xet)} {{rlx.output = "y"}}) {{
  %y = rlx_hir.dequant_linear %x, %w, %s, %g{attr}
      : {t((m, k), xet)}, {t(ws, 'i8')}, {t(ss, 'f8E4M3FN')}, tensor<f32>
  return %y : {t((m, n), xet)}
}}"""


@pytest.mark.parametrize("layout", ["out_in", "in_out"])
def test_q3_matmul(layout):
    # w[k][n] = 1 for even n, 2 for odd n (code 2 = 1.0, code 4 = 2.0).
    codes_kn = np.tile(np.array([2, 4, 2, 4], np.uint8), (16, 1))
    codes_nk = codes_kn.T.copy()
    packed = pack(codes_nk)
    scales = np.full((4, 1), 0x38, np.uint8)
    if layout == "in_out":
        packed, scales = packed.T.copy(), scales.T.copy()
    x = np.arange(1, 17, dtype=np.float32)[None]
    y = run(matmul_fn(1, 4, 16, layout), {"x": x, "w": packed, "s": scales,
                                          "g": np.array(2.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[0], [272, 544, 272, 544])


def quantize_fn(n, k):
    return f"""
func.func @q(%x: {t((n, k))} {{rlx.input = "x"}})
    -> ({t((n, k // 2), 'i8')} {{rlx.output = "w"}}, {t((n, k // 16), 'f8E4M3FN')} {{rlx.output = "s"}},
        tensor<f32> {{rlx.output = "g"}}, {t((n, k))} {{rlx.output = "y"}}) {{
  %w, %s, %g = rlx_mir.nvfp4_quantize %x : {t((n, k))}
  %y = rlx_mir.nvfp4_dequantize %w, %s, %g : {t((n, k // 2), 'i8')}, {t((n, k // 16), 'f8E4M3FN')}, tensor<f32>
  return %w, %s, %g, %y : {t((n, k // 2), 'i8')}, {t((n, k // 16), 'f8E4M3FN')}, tensor<f32>, {t((n, k))}
}}"""


def test_q4_quantize_nrmse_on_gaussian_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 1024)).astype(np.float32)  # 1M samples
    out = run(quantize_fn(1024, 1024), {"x": x})
    nrmse = np.sqrt(np.mean((out["y"] - x) ** 2)) / np.sqrt(np.mean(x ** 2))
    assert abs(nrmse - 0.095) <= 0.002, nrmse
    # The bytes are the recipe's, computed independently here.
    pw, ps, g = quant_ref(x)
    assert out["g"] == g
    np.testing.assert_array_equal(out["s"].view(np.uint8), ps)
    np.testing.assert_array_equal(out["w"], pw)
    # Equal up to the order of the two f32 products (one rounding each).
    np.testing.assert_allclose(out["y"], dequant_ref(pw, ps, g), rtol=3e-7, atol=0)


def test_q5_k_not_a_multiple_of_a_tile():
    """K = 48 (not a multiple of a 32-wide tile): equal to the unpadded
    reference, no NaN from scales of absent blocks."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 48)).astype(np.float32)
    pw, ps, g = quant_ref(w)
    x = rng.standard_normal((3, 48)).astype(np.float32)
    y = run(matmul_fn(3, 8, 48), {"x": x, "w": pw, "s": ps, "g": np.array(g)})["y"]
    want = x.astype(np.float64) @ dequant_ref(pw, ps, g).T.astype(np.float64)
    assert not np.isnan(y).any()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_ml_dtypes_float8_scales_are_accepted():
    codes = np.full((1, 16), 3, np.uint8)  # 1.5
    s = np.array([[2.0]], ml_dtypes.float8_e4m3fn)
    y = run(dequant_fn(1, 16), {"w": pack(codes), "s": s, "g": np.array(0.5, np.float32)})["y"]
    np.testing.assert_array_equal(y, np.full((1, 16), 1.5, np.float32))


def test_llama_layer_with_nvfp4_weights_matches_numpy():
    S, D, H, KV, HD, F, eps = 5, 32, 4, 2, 8, 64, 1e-5
    rng = np.random.default_rng(9)
    lin = {"wq": (H * HD, D), "wk": (KV * HD, D), "wv": (KV * HD, D), "wo": (D, H * HD),
           "wg": (F, D), "wu": (F, D), "wd": (D, F)}
    inputs, deq = {}, {}
    for name, (n, k) in lin.items():
        pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32) / np.sqrt(k))
        inputs.update({name: pw, name + "_s": ps, name + "_g": np.array(g)})
        deq[name] = dequant_ref(pw, ps, g).astype(np.float64)
    n1 = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
    n2 = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
    x = rng.standard_normal((1, S, D)).astype(np.float32)
    cos, sin = ref.rope_tables(np.arange(S), HD, 10000.0)
    inputs.update(x=x, n1=n1, n2=n2, cos=cos, sin=sin)

    def q_args(name):
        n, k = lin[name]
        return (f'%{name}: {t((n, k // 2), "i8")} {{rlx.param = "{name}"}}, '
                f'%{name}_s: {t((n, k // 16), "f8E4M3FN")} {{rlx.param = "{name}_s"}}, '
                f'%{name}_g: tensor<f32> {{rlx.param = "{name}_g"}}')

    def dl(out, x_, xs, name):
        n, k = lin[name]
        return (f"  %{out} = rlx_hir.dequant_linear %{x_}, %{name}, %{name}_s, %{name}_g : "
                f"{t(xs)}, {t((n, k // 2), 'i8')}, {t((n, k // 16), 'f8E4M3FN')}, tensor<f32>")

    T = lambda *s: t(s)  # noqa: E731
    text = f"""
func.func @layer(%x: {T(1, S, D)} {{rlx.input = "x"}}, %cos: {T(S, HD // 2)} {{rlx.input = "cos"}},
    %sin: {T(S, HD // 2)} {{rlx.input = "sin"}}, %n1: {T(D)} {{rlx.param = "n1"}},
    %n2: {T(D)} {{rlx.param = "n2"}}, {", ".join(q_args(n) for n in lin)})
    -> ({T(1, S, D)} {{rlx.output = "y"}}) {{
  %h = rlx_hir.rms_norm %x, %n1 eps = 1.0e-05 : {T(1, S, D)}, {T(D)}
{dl("q", "h", (1, S, D), "wq")}
{dl("k", "h", (1, S, D), "wk")}
{dl("v", "h", (1, S, D), "wv")}
  %qr = rlx_hir.rope %q tables(%cos, %sin : {T(S, HD // 2)}, {T(S, HD // 2)}) head_dim = {HD} : {T(1, S, H * HD)}
  %kr = rlx_hir.rope %k tables(%cos, %sin : {T(S, HD // 2)}, {T(S, HD // 2)}) head_dim = {HD} : {T(1, S, KV * HD)}
  %a = rlx_hir.attention %qr, %kr, %v heads = {H}, kv_heads = {KV}, head_dim = {HD} causal
      : {T(1, S, H * HD)}, {T(1, S, KV * HD)}, {T(1, S, KV * HD)}
{dl("o", "a", (1, S, H * HD), "wo")}
  %n, %r = rlx_hir.residual_rms_norm %o, %x, %n2 eps = 1.0e-05 : {T(1, S, D)}, {T(1, S, D)}, {T(D)}
{dl("g", "n", (1, S, D), "wg")}
{dl("u", "n", (1, S, D), "wu")}
  %sg = rlx_mir.silu %g : {T(1, S, F)}
  %gu = rlx_mir.mul %sg, %u : {T(1, S, F)}, {T(1, S, F)}
{dl("m", "gu", (1, S, F), "wd")}
  %y = rlx_mir.add %m, %r : {T(1, S, D)}, {T(1, S, D)}
  return %y : {T(1, S, D)}
}}"""
    got = run(text, inputs)["y"]

    X = x[0].astype(np.float64)
    h = ref.rms_norm(X, n1, eps)
    q = ref.rope(h[None] @ deq["wq"].T, cos, sin, HD)
    k = ref.rope(h[None] @ deq["wk"].T, cos, sin, HD)
    a = ref.attention(q, k, h[None] @ deq["wv"].T, H, KV, HD, mask_kind="causal")
    r = x.astype(np.float64) + a @ deq["wo"].T
    nn = ref.rms_norm(r, n2, eps)
    want = r + (ref.silu(nn @ deq["wg"].T) * (nn @ deq["wu"].T)) @ deq["wd"].T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def quantized_linears(rng, prefix, shapes):
    """prefix + name → quant_ref of a random [N, K] weight (scaled by 1/√K)."""
    return {prefix + name: quant_ref(rng.standard_normal((n, k)).astype(np.float32) / np.sqrt(k))
            for name, (n, k) in shapes.items()}


def test_generated_llama_layer_with_nvfp4_weights():
    """rlx.models.from_hf_config(..., nvfp4_weights=True): every linear weight
    of the layer is NVFP4 (ModelOpt names); the compiled layer matches numpy on
    the dequantized weights."""
    import json
    from harness import shared_dir
    from rlx.models import from_hf_config

    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/models not found")
    cfg = json.loads((shared / "models" / "llama-3.2-1b.json").read_text())
    small = dict(cfg, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16)
    m = from_hf_config(small, 1, layer_only=True, seq=6, nvfp4_weights=True)
    text = m.text()
    assert text.count("rlx_hir.dequant_linear") == 7 and "weight_scale_2" in text
    rng = np.random.default_rng(11)
    p = "model.layers.0."
    shapes = {"self_attn.q_proj": (64, 64), "self_attn.k_proj": (32, 64),
              "self_attn.v_proj": (32, 64), "self_attn.o_proj": (64, 64),
              "mlp.gate_proj": (128, 64), "mlp.up_proj": (128, 64), "mlp.down_proj": (64, 128)}
    inputs, dense = {}, {}
    for name, (pw, ps, g) in quantized_linears(rng, p, shapes).items():
        inputs[name + ".weight"] = pw
        inputs[name + ".weight_scale"] = ps
        inputs[name + ".weight_scale_2"] = np.array(g)
        dense[name + ".weight"] = dequant_ref(pw, ps, g).astype(np.float64)
    for name in ["input_layernorm.weight", "post_attention_layernorm.weight"]:
        dense[p + name] = inputs[p + name] = (1 + 0.1 * rng.standard_normal(64)).astype(np.float32)
    x = rng.standard_normal((1, 6, 64)).astype(np.float32)
    pos = np.arange(6, dtype=np.int64)
    got = rlx.compile_cpu(m).run(dict(inputs, hidden_states=x, position_ids=pos))["hidden_states"]
    rcfg = {"heads": 4, "kv_heads": 2, "head_dim": 16, "eps": cfg["rms_norm_eps"],
            "rope_theta": cfg["rope_theta"], "rope_scaling": cfg.get("rope_scaling")}
    want, _, _ = ref.llama_layer(x.astype(np.float64), pos, dense, rcfg)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_modelopt_nvfp4_checkpoint_binds_by_name(tmp_path):
    """A ModelOpt-style NVFP4 checkpoint (U8 packed codes, F8_E4M3 block
    scales, F32 weight_scale_2 and input_scale, bf16 norms) written by
    safetensors binds to a generated NVFP4 layer by name: the same output as
    passing each weight, input_scale dropped; rlx-run --weights reads it too."""
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    import json
    from harness import RLX_RUN, shared_dir
    from rlx.models import from_hf_config

    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared/models not found")
    cfg = json.loads((shared / "models" / "llama-3.2-1b.json").read_text())
    small = dict(cfg, hidden_size=32, intermediate_size=64, num_attention_heads=2,
                 num_key_value_heads=1, head_dim=16)
    m = from_hf_config(small, 1, layer_only=True, seq=4, nvfp4_weights=True)
    model = rlx.compile_cpu(m)
    rng = np.random.default_rng(5)
    p = "model.layers.0."
    shapes = {"self_attn.q_proj": (32, 32), "self_attn.k_proj": (16, 32),
              "self_attn.v_proj": (16, 32), "self_attn.o_proj": (32, 32),
              "mlp.gate_proj": (64, 32), "mlp.up_proj": (64, 32), "mlp.down_proj": (32, 64)}
    direct, stored = {}, {}
    for name, (pw, ps, g) in quantized_linears(rng, p, shapes).items():
        direct[name + ".weight"] = pw
        direct[name + ".weight_scale"] = ps
        direct[name + ".weight_scale_2"] = np.array(g)
        stored[name + ".weight"] = torch.from_numpy(pw.view(np.uint8).copy())
        stored[name + ".weight_scale"] = torch.from_numpy(ps.copy()).view(torch.float8_e4m3fn)
        stored[name + ".weight_scale_2"] = torch.tensor(g, dtype=torch.float32)
        stored[name + ".input_scale"] = torch.tensor(0.01, dtype=torch.float32)
    for name in ["input_layernorm.weight", "post_attention_layernorm.weight"]:
        w = torch.tensor(1 + 0.1 * rng.standard_normal(32), dtype=torch.bfloat16)
        stored[p + name] = w
        direct[p + name] = w.float().numpy()
    path = tmp_path / "model.safetensors"
    safetensors_torch.save_file(stored, str(path))

    weights = rlx.load_weights(path, model)
    assert sorted(weights) == sorted(direct)
    x = rng.standard_normal((1, 4, 32)).astype(np.float32)
    pos = np.arange(4, dtype=np.int64)
    got = model.run(dict(weights, hidden_states=x, position_ids=pos))["hidden_states"]
    want = model.run(dict(direct, hidden_states=x, position_ids=pos))["hidden_states"]
    np.testing.assert_array_equal(got, want)

    # rlx-run binds the same file by name.
    (tmp_path / "layer.mlir").write_text(m.text())
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "pos.npy", pos)
    proc = subprocess.run([str(RLX_RUN), str(tmp_path / "layer.mlir"), "--weights", str(path),
                           "--input", f"hidden_states={tmp_path / 'x.npy'}",
                           "--input", f"position_ids={tmp_path / 'pos.npy'}",
                           "--output-dir", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "hidden_states.npy"), want)

    # The GPU path (the emulator, the code --device=cuda runs): the checkpoint
    # by name, and every tensor by --input with the block scales as raw bytes
    # and as ml_dtypes float8 and a global scale per projection: the CPU
    # path's numbers (to the f32 summation order).
    for form in ("checkpoint", "uint8", "ml_dtypes"):
        args = ["--device", "emu", "--input", f"hidden_states={tmp_path / 'x.npy'}",
                "--input", f"position_ids={tmp_path / 'pos.npy'}",
                "--output-dir", str(tmp_path / form)]
        if form == "checkpoint":
            args += ["--weights", str(path)]
        for name, value in ({} if form == "checkpoint" else direct).items():
            if name.endswith(".weight_scale"):
                value = value.view(np.uint8) if form == "uint8" else \
                    value.view(np.uint8).view(ml_dtypes.float8_e4m3fn)
            np.save(tmp_path / f"{name}.npy", value)
            args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
        proc = subprocess.run([str(RLX_RUN), str(tmp_path / "layer.mlir"), *args],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "generated" not in proc.stdout, proc.stdout
        got = np.load(tmp_path / form / "hidden_states.npy")
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max(),
                                   err_msg=form)

    # Without its NVFP4 linear, an input_scale is an unknown tensor.
    stored["model.layers.0.mlp.extra.input_scale"] = torch.tensor(1.0)
    safetensors_torch.save_file(stored, str(tmp_path / "extra.safetensors"))
    with pytest.raises(rlx.RlxError, match="'model.layers.0.mlp.extra.input_scale' is not a "
                                           "parameter"):
        rlx.load_weights(tmp_path / "extra.safetensors", model)


def test_scales_must_be_bytes_and_uint8_stays_numeric():
    codes = np.full((1, 16), 2, np.uint8)
    with pytest.raises(rlx.RlxError, match="pass its bytes"):
        run(dequant_fn(1, 16), {"w": pack(codes), "s": np.array([[2.0]], np.float32),
                                "g": np.array(1.0, np.float32)})
    m = rlx.parse("""func.func @f(%x: tensor<2xf32> {rlx.input = "x"}) -> (tensor<2xf32> {rlx.output = "y"}) {
  %y = rlx_mir.neg %x : tensor<2xf32>
  return %y : tensor<2xf32>
}""")
    y = rlx.compile_cpu(m).run(x=np.array([200, 3], np.uint8))["y"]
    np.testing.assert_array_equal(y, [-200.0, -3.0])
