"""Flash attention on tensor cores (issue 17): the mma.sync kernel of
lib/Conversion/LIRToGPU/FlashAttentionKernel.cpp under the emulator against
the float64 numpy reference written in reference.py (bf16/f16 2e-2
relative), over GQA ratios, head dims, masks, layouts and sequence lengths
that are not multiples of the 64-row / 64-key tiles; the cases A1-A6 and G2
of ../shared/cases; its PTX and ptxas resources; located errors."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile

import numpy as np
import pytest

import reference
from gpu_harness import compile_artifact, from_bf16_bits, run_artifact, run_gpu, to_bf16_bits
from harness import assert_close


def t(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def rounded(a, dtype):
    if dtype == "bf16":
        return from_bf16_bits(to_bf16_bits(np.asarray(a, np.float32)))
    if dtype == "f16":
        return np.asarray(a, np.float32).astype(np.float16)
    return np.asarray(a, np.float32)


def shapes(layout, B, S, H, D):
    return {"bsd": (B, S, H * D), "bshd": (B, S, H, D), "bhsd": (B, H, S, D)}[layout]


def attention_module(dtype, q, k, v, heads, kv, D, *, mask=None, attrs="", layout="bsd"):
    """One rlx_mir.attention; `attrs` are the mask kind / window / scale /
    softcap words of its syntax."""
    qt, kt, vt = t(q, dtype), t(k, dtype), t(v, dtype)
    Sq = q[2] if layout == "bhsd" else q[1]
    ot = t(shapes(layout, q[0], Sq, heads, v[-1] if layout != "bsd" else v[-1] // kv), dtype)
    margs = f', %m: {t(mask[0], mask[1])} {{rlx.input = "m"}}' if mask else ""
    mop = f" mask(%m : {t(mask[0], mask[1])})" if mask else ""
    lay = f" layout {layout}" if layout != "bsd" else ""
    return f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {vt} {{rlx.input = "v"}}{margs}) -> {ot} {{
  %o = rlx_mir.attention %q, %k, %v{mop} heads = {heads}, kv_heads = {kv}, head_dim = {D} {attrs}{lay} : {qt}, {kt}, {vt}
  return %o : {ot}
}}"""


def run_case(dtype, B, Sq, Sk, heads, kv, D, Dv=None, *, mask_kind="none", window=None,
             scale=None, softcap=None, mask=None, layout="bsd", seed=0, flags=("--attention-kernel", "flash")):
    Dv = Dv or D
    rng = np.random.default_rng(seed)
    qs, ks, vs = shapes(layout, B, Sq, heads, D), shapes(layout, B, Sk, kv, D), shapes(layout, B, Sk, kv, Dv)
    q, k, v = (rounded(rng.standard_normal(s), dtype) for s in (qs, ks, vs))
    attrs = {"none": "", "causal": "causal"}.get(mask_kind, f"sliding_window window = {window}")
    if scale is not None:
        attrs += f" scale = {scale:e}"
    if softcap is not None:
        attrs += f" softcap = {softcap:e}"
    inputs = {"q": q, "k": k, "v": v}
    mspec = None
    if mask is not None:
        inputs["m"] = mask
        mspec = (mask.shape, "i1" if mask.dtype == bool else dtype)
    text = attention_module(dtype, qs, ks, vs, heads, kv, D, mask=mspec, attrs=attrs,
                            layout=layout)
    y = run_gpu(text, inputs, flags=list(flags))["result0"]
    ref = reference.attention(q, k, v, heads, kv, D, mask_kind=mask_kind, window=window,
                              scale=scale, softcap=softcap, mask=mask, layout=layout)
    return y.astype(np.float32), ref


CASES = {
    # GQA 1 / 2 / 4 / 7 / 8, head dims 64 / 96 / 128, Sq != Sk, odd lengths.
    "gqa1-d64-causal": dict(dtype="bf16", B=1, Sq=37, Sk=37, heads=2, kv=2, D=64, mask_kind="causal"),
    "gqa2-d128-f16": dict(dtype="f16", B=1, Sq=100, Sk=100, heads=4, kv=2, D=128),
    "gqa4-d96-sq5-sk77": dict(dtype="bf16", B=1, Sq=5, Sk=77, heads=8, kv=2, D=96, mask_kind="causal"),
    "gqa7-d64-a6": dict(dtype="bf16", B=1, Sq=100, Sk=100, heads=14, kv=2, D=64, mask_kind="causal"),
    "gqa8-d128-decode": dict(dtype="bf16", B=2, Sq=1, Sk=300, heads=8, kv=1, D=128, mask_kind="causal"),
    "gqa8-d64-sq3-sk200": dict(dtype="f16", B=1, Sq=3, Sk=200, heads=8, kv=1, D=64),
    # Sliding window: whole key tiles skipped below the window.
    "window-20": dict(dtype="bf16", B=1, Sq=130, Sk=130, heads=4, kv=2, D=64,
                      mask_kind="sliding_window", window=20),
    "window-1-sq7-sk70": dict(dtype="f16", B=1, Sq=7, Sk=70, heads=2, kv=1, D=64,
                              mask_kind="sliding_window", window=1),
    "softcap-scale": dict(dtype="bf16", B=1, Sq=33, Sk=65, heads=4, kv=4, D=64, scale=0.3,
                          softcap=5.0, mask_kind="causal"),
    "bshd-causal": dict(dtype="bf16", B=2, Sq=70, Sk=70, heads=4, kv=2, D=64, mask_kind="causal",
                        layout="bshd"),
    "bhsd-dv32": dict(dtype="f16", B=1, Sq=20, Sk=90, heads=2, kv=1, D=64, Dv=32, layout="bhsd"),
    "bshd-d16-dv48": dict(dtype="bf16", B=1, Sq=9, Sk=9, heads=3, kv=1, D=16, Dv=48, layout="bshd"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_flash_attention_matches_numpy(name):
    y, ref = run_case(**CASES[name])
    assert_close(y, ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_masks_a4_bool_and_additive(dtype):
    """A4: a boolean [B, Sq, Sk] mask whose row 0 hides every key gives an
    exact 0 row (no NaN); an additive [Sq, Sk] mask with -inf entries."""
    rng = np.random.default_rng(4)
    m = rng.random((2, 20, 33)) > 0.3
    m[:, 0, :] = False
    y, ref = run_case(dtype, 2, 20, 33, 4, 2, 64, mask=m)
    assert np.all(y.reshape(2, 20, -1)[:, 0] == 0)
    assert_close(y, ref, rtol=2e-2, atol=2e-2)
    add = np.where(rng.random((20, 33)) > 0.2, rng.standard_normal((20, 33)), -np.inf)
    y, ref = run_case(dtype, 1, 20, 33, 4, 2, 64, mask=rounded(add, dtype), mask_kind="causal")
    assert np.isfinite(y).all()
    assert_close(y, ref, rtol=2e-2, atol=2e-2)


KERNELS = ["flash", "wgmma"]


def padded(a, D=64):
    """Zero-padded to head dim D (the wgmma kernel's smallest is 64; zero
    dims change no logit)."""
    out = np.zeros(a.shape[:-1] + (D,), np.float32)
    out[..., :a.shape[-1]] = a
    return out


@pytest.mark.parametrize("kernel", KERNELS)
def test_a1_a2_a3_closed_forms(kernel):
    """A1-A3 (D = 2 in the case, zero-padded to 64 with scale 1/sqrt(2)
    kept): bottom-right causal, a decode row, windows; on both flash kernels."""
    q = padded(np.array([[[1, 0], [0, 1], [1, 1]]], np.float32))
    v = padded(np.array([[[1, 2], [3, 4], [5, 6]]], np.float32))

    def run(qq, attrs):
        text = attention_module("f16", qq.shape, q.shape, v.shape, 1, 1, 64,
                                attrs=attrs + f" scale = {1 / np.sqrt(2):e}")
        return run_gpu(text, {"q": qq.astype(np.float16), "k": q.astype(np.float16),
                              "v": v.astype(np.float16)},
                       flags=["--attention-kernel", kernel])["result0"].astype(np.float32)[0, :, :2]

    tol = dict(rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(run(q, "causal"), [[1, 2], [2.3395231, 3.3395231],
                                                  [3.5104695, 4.5104695]], **tol)
    np.testing.assert_allclose(run(q[:, 2:], "causal"), [[3.5104695, 4.5104695]], **tol)
    np.testing.assert_allclose(run(q, "sliding_window window = 2"),
                               [[1, 2], [2.3395231, 3.3395231], [4.3395231, 5.3395231]], **tol)
    np.testing.assert_allclose(run(q, "sliding_window window = 1"), [[1, 2], [3, 4], [5, 6]], **tol)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a5_logits_near_minus_60000(kernel):
    """A5: logits all near -6e4 are a normal softmax, not a masked row (200
    keys: several key tiles, so the running max rescales)."""
    Sk = 200
    q = np.zeros((1, 1, 64), np.float32)
    q[0, 0, :2] = 1
    k = np.zeros((1, Sk, 64), np.float32)
    k[0, :, 0] = -60000.0  # exact in f16
    k[0, :, 1] = np.linspace(-2, 2, Sk)
    v = np.random.default_rng(5).standard_normal((1, Sk, 64)).astype(np.float16)
    text = attention_module("f16", q.shape, k.shape, v.shape, 1, 1, 64, attrs="scale = 1.0")
    y = run_gpu(text, {"q": q.astype(np.float16), "k": k.astype(np.float16), "v": v},
                flags=["--attention-kernel", kernel])["result0"].astype(np.float64)
    s = k[0, :, 1].astype(np.float16).astype(np.float64)
    p = np.exp(s - s.max())
    assert_close(y[0, 0], (p / p.sum()) @ v[0].astype(np.float64), rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("splits", [None, 3])
def test_g2_decode_tail(causal, splits, kernel):
    """G2 (D = 64): Sq = 1, q = 0, K = 1, V[j, d] = j + 0.01 d gives
    out[d] = (Sk - 1)/2 + 0.01 d at every Sk, across the 64- and 128-key
    tiles, with and without key splits (ranges off the tiles): keys past Sk
    never weigh in."""
    D = 64
    flags = ["--attention-kernel", kernel] + (["--kv-splits", str(splits)] if splits else [])
    for Sk in (1, 17, 128, 129, 257, 300):
        j, d = np.meshgrid(np.arange(Sk), np.arange(D), indexing="ij")
        v = (j + 0.01 * d)[None].astype(np.float16)
        q = np.zeros((1, 1, D), np.float16)
        k = np.ones((1, Sk, D), np.float16)
        text = attention_module("f16", q.shape, k.shape, v.shape, 1, 1, D,
                                attrs="causal" if causal else "")
        y = run_gpu(text, {"q": q, "k": k, "v": v}, flags=flags)["result0"].astype(np.float64)
        expect = v[0].astype(np.float64).mean(0)  # the f16-rounded V's mean
        assert_close(y[0, 0], expect, rtol=2e-2, atol=1e-3)
        assert abs(y[0, 0, 0] - (Sk - 1) / 2) <= 2e-2 * max(1, (Sk - 1) / 2), Sk


def test_repeated_runs_identical_and_ptx():
    """20 runs give the same bits; the PTX has the tensor-core, ldmatrix
    (.trans for V) and cp.async instructions; ptxas: 0 spills / stack."""
    B, S, H, KV, D = 1, 70, 4, 2, 64
    text = attention_module("bf16", (B, S, H * D), (B, S, KV * D), (B, S, KV * D), H, KV, D,
                            attrs="causal")
    rng = np.random.default_rng(9)
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, cubin=True, chip="sm_80")
        ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
        for needle in ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                       "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                       "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
                       "cp.async.cg.shared.global", "cp.async.wait_group", "ex2.approx"):
            assert needle in ptx, needle
        (kernel,) = [k for k in manifest["kernels"] if "attention" in k["name"]]
        assert kernel.get("spill_bytes", 0) == 0 and kernel.get("stack_bytes", 0) == 0, kernel
        inputs = {n: to_bf16_bits(rng.standard_normal(s).astype(np.float32))
                  for n, s in (("q", (B, S, H * D)), ("k", (B, S, KV * D)), ("v", (B, S, KV * D)))}
        run_artifact(art, "f", inputs, repeat=20)


@pytest.mark.parametrize("flags,dtype,D,message", [
    (["--attention-kernel", "flash"], "f32", 64,
     "attention-kernel=flash: its query, key, value and output are not all bf16 or all f16"),
    (["--attention-kernel", "flash"], "bf16", 256,
     "attention-kernel=flash: head_dim 256 is not a multiple of 16 up to 128"),
    (["--attention-kernel", "flash", "--no-tensor-cores"], "bf16", 64,
     "attention-kernel=flash: tensor cores are off"),
    (["--attention-kernel", "fast"], "bf16", 64,
     "attention-kernel must be auto, simt, flash or wgmma, got 'fast'"),
])
def test_forced_kernel_errors_are_located(flags, dtype, D, message):
    text = attention_module(dtype, (1, 4, 2 * D), (1, 4, D), (1, 4, D), 2, 1, D)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        with tempfile.TemporaryDirectory() as tmp:
            compile_artifact(text, pathlib.Path(tmp) / "art", flags=[*flags, "--strict-kernels"])


def test_auto_picks_wgmma_then_flash_then_simt():
    """auto: the wgmma kernel on sm_90a (bf16/f16, head dims 64..256), the
    mma.sync kernel on sm_80+ (head dims up to 128; on sm_90a those below
    64), the SIMT kernel for the rest."""
    def ptx_of(dtype, D, chip="sm_90a"):
        text = attention_module(dtype, (1, 8, 2 * D), (1, 8, D), (1, 8, D), 2, 1, D)
        with tempfile.TemporaryDirectory() as tmp:
            art = pathlib.Path(tmp) / "art"
            compile_artifact(text, art, chip=chip, flags=["--no-emulator"])
            return "".join(p.read_text() for p in art.glob("*.ptx"))

    def kernel(ptx):
        return "wgmma" if "wgmma.mma_async" in ptx else "flash" if "mma.sync" in ptx else "simt"
    assert kernel(ptx_of("bf16", 128)) == "wgmma"
    assert kernel(ptx_of("bf16", 256)) == "wgmma"
    assert kernel(ptx_of("bf16", 32)) == "flash"      # below the wgmma kernel's 64
    assert kernel(ptx_of("f16", 64, "sm_80")) == "flash"
    assert kernel(ptx_of("bf16", 256, "sm_80")) == "simt"
    assert kernel(ptx_of("f32", 64)) == "simt"


MODEL_SETS = {
    # Each config's own head_dim and GQA ratio (sliding window shortened to
    # cross the 37-token prefill), fewer heads and a narrow hidden size for time.
    "gpt2.json": ["n_embd=256", "n_head=4", "vocab_size=512"],
    "llama-3.1-8b.json": ["num_attention_heads=4", "num_key_value_heads=1"],
    "llama-3.2-1b.json": ["num_attention_heads=4", "num_key_value_heads=1"],
    "mistral-7b-v0.1.json": ["num_attention_heads=4", "num_key_value_heads=1", "sliding_window=24"],
    "qwen3-0.6b.json": ["num_attention_heads=4", "num_key_value_heads=2"],
    "tinyllama-1.1b.json": ["num_attention_heads=8", "num_key_value_heads=1"],
}
NARROW = ["hidden_size=256", "intermediate_size=512", "vocab_size=512"]


@pytest.mark.parametrize("kernel", ["wgmma", "flash"])
@pytest.mark.parametrize("mode", ["prefill", "decode"])
@pytest.mark.parametrize("config", sorted(MODEL_SETS))
def test_every_model_on_flash_attention_matches_cpu(config, mode, kernel):
    """One bf16 layer of every ../shared/models config, prefill of 37 tokens
    and a decode step on a 70-token KV cache (attention reads the cache the
    layer's append kernel wrote), on the GPU path vs the CPU path, with
    attention on the sm_90a wgmma kernel and on the mma.sync kernel."""
    from harness import gen_model, shared_dir
    from test_gpu_emulator import compare_with_cpu
    if not shared_dir():
        pytest.skip("../shared/models not present")
    if "ASAN_OPTIONS" in os.environ:  # CI's sanitizer stage: the same kernels as above, 12 models
        pytest.skip("numerics sweep; run without the sanitizers")
    sets = MODEL_SETS[config] + ([] if config == "gpt2.json" else NARROW)
    args = ["--layers", "1", "--dtype", "bf16", *[a for s in sets for a in ("--set", s)]]
    args += ["--seq", "37"] if mode == "prefill" else ["--kv-cache", "--seq", "1", "--past", "70"]
    text = gen_model(shared_dir() / "models" / config, *args)
    compare_with_cpu(text, {}, dtype="bf16", flags=["--attention-kernel", kernel])


def test_hf_finfo_min_additive_mask():
    """An additive mask with HF's torch.finfo(bf16).min (-3.39e38) over a
    whole row (a padded query) and over some keys: the row's logits are all
    equal (a uniform average of V, as PyTorch gives), not a hidden row, on the
    flash kernel, the SIMT kernel and the CPU path alike."""
    from harness import run_mlir
    fmin = -3.3895313892515355e38
    rng = np.random.default_rng(12)
    m = np.where(rng.random((20, 70)) > 0.3, 0.0, fmin)
    m[3, :] = fmin
    m = rounded(m, "bf16")
    y, ref = run_case("bf16", 1, 20, 70, 4, 2, 64, mask=m)
    assert_close(y, ref, rtol=2e-2, atol=2e-2)
    row = y.reshape(20, 4, 64)[3]
    assert np.abs(row).max() > 0  # not the zero row of a hidden query
    y2, _ = run_case("bf16", 1, 20, 70, 4, 2, 64, mask=m, flags=("--attention-kernel", "simt"))
    assert_close(y2, ref, rtol=2e-2, atol=2e-2)


def test_rlx_gpu_run_zero_missing(tmp_path):
    """rlx-gpu-run --zero-missing (the benchmarks' inputs): inputs no file
    gives are zeros, so attention over zero K/V is 0; without it, missing
    inputs are an error naming them."""
    from gpu_harness import RLX_GPU_RUN
    text = attention_module("bf16", (1, 5, 128), (1, 9, 64), (1, 9, 64), 2, 1, 64)
    art = tmp_path / "art"
    compile_artifact(text, art)
    q = to_bf16_bits(np.ones((1, 5, 128), np.float32))
    np.save(tmp_path / "q.npy", q)
    out = tmp_path / "out"
    proc = subprocess.run([str(RLX_GPU_RUN), str(art), "--device", "emu", "--input",
                           f"q={tmp_path / 'q.npy'}", "--zero-missing", "--output-dir", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert not np.load(out / "result0.npy").any()
    proc = subprocess.run([str(RLX_GPU_RUN), str(art), "--device", "emu", "--input",
                           f"q={tmp_path / 'q.npy'}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "missing inputs of function 'f': k (input), v (input)" in proc.stderr
