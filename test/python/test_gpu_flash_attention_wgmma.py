"""Flash attention on sm_90a (issue 17): the FlashAttention-3-style kernel of
lib/Conversion/LIRToGPU/FlashAttentionWgmmaKernel.cpp (TMA, mbarriers,
warp-specialized wgmma, P in registers) under the emulator against the
float64 numpy reference of reference.py (bf16/f16 2e-2 relative), over GQA
ratios, head dims, masks, layouts, one and two consumer warpgroups, tile
boundaries and key splits; cases A4, A6 and G1 of ../shared/cases with head
dims padded to the kernel's 64 (A1-A3, A5 and G2 run on both flash kernels in
test_gpu_flash_attention.py); repeated runs; PTX and ptxas."""
from __future__ import annotations

import pathlib
import re
import tempfile

import numpy as np
import pytest

import reference
from gpu_harness import compile_artifact, run_artifact, run_gpu, to_bf16_bits
from harness import assert_close
from test_gpu_flash_attention import CASES as FLASH_CASES
from test_gpu_flash_attention import attention_module, padded, rounded, run_case

WGMMA = ("--attention-kernel", "wgmma")

# The mma.sync kernel's cases its head dims allow (64 and up), and more:
# GQA 7 at one query, MQA 16, head dims 80 / 192 / 256, value head sizes of
# their own, lengths off the 128-key and 128-row tiles, one consumer (packed
# rows <= 64) and two, BHSD's head-major tiles, key splits.
CASES = {
    **{name: case for name, case in FLASH_CASES.items()
       if case["D"] >= 64 and case.get("Dv", case["D"]) >= 64},
    "gqa7-d64-a6-1": dict(dtype="bf16", B=1, Sq=1, Sk=1, heads=14, kv=2, D=64, mask_kind="causal"),
    "mqa16-d64-sq9": dict(dtype="f16", B=1, Sq=9, Sk=200, heads=16, kv=1, D=64),
    "gqa4-d80-dv64": dict(dtype="bf16", B=1, Sq=40, Sk=130, heads=4, kv=1, D=80, Dv=64),
    "d256-causal": dict(dtype="bf16", B=1, Sq=70, Sk=150, heads=2, kv=1, D=256, mask_kind="causal"),
    "d128-dv256-f16": dict(dtype="f16", B=1, Sq=20, Sk=140, heads=2, kv=2, D=128, Dv=256),
    "sq-lt-sk-causal-multi-tile": dict(dtype="bf16", B=1, Sq=300, Sk=520, heads=2, kv=1, D=128,
                                       mask_kind="causal"),
    "sk-256-exact-tiles": dict(dtype="bf16", B=2, Sq=128, Sk=256, heads=2, kv=2, D=64),
    "window-300-sk700": dict(dtype="bf16", B=1, Sq=200, Sk=700, heads=2, kv=1, D=128,
                             mask_kind="sliding_window", window=300),
    "bhsd-gqa2-dv128": dict(dtype="f16", B=2, Sq=90, Sk=200, heads=4, kv=2, D=64, Dv=128,
                            layout="bhsd", mask_kind="causal"),
    "bhsd-gqa4-decode": dict(dtype="bf16", B=3, Sq=1, Sk=129, heads=8, kv=2, D=128,
                             layout="bhsd", mask_kind="causal"),
    "bhsd-gqa3-partial-tiles": dict(dtype="bf16", B=1, Sq=50, Sk=90, heads=6, kv=2, D=64,
                                    layout="bhsd", mask_kind="causal"),
    # Causal with Sq > Sk: rows that see no key are 0, whole blocks see none.
    "causal-sq-gt-sk": dict(dtype="bf16", B=1, Sq=200, Sk=50, heads=4, kv=2, D=64,
                            mask_kind="causal"),
    "two-consumers-d128-dv256": dict(dtype="f16", B=1, Sq=100, Sk=140, heads=2, kv=2, D=128,
                                     Dv=256, mask_kind="causal"),
    # Key splits of a prefill (partials with two consumers, 64-key tiles at
    # head dim 192, ranges off the tiles).
    "split3-prefill-causal-d192": dict(dtype="bf16", B=1, Sq=80, Sk=300, heads=4, kv=2, D=192,
                                       mask_kind="causal", extra=("--kv-splits", "3")),
    "split5-prefill-window-d64": dict(dtype="bf16", B=2, Sq=40, Sk=333, heads=4, kv=1, D=64,
                                      mask_kind="sliding_window", window=70,
                                      extra=("--kv-splits", "5")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_wgmma_attention_matches_numpy(name):
    case = dict(CASES[name])
    flags = WGMMA + tuple(case.pop("extra", ()))
    y, ref = run_case(**case, flags=flags)
    assert_close(y, ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_masks_a4_bool_and_additive(dtype):
    """A4: a boolean [B, Sq, Sk] mask whose row 0 hides every key gives an
    exact 0 row (no NaN); an additive [Sq, Sk] mask with -inf entries and
    HF's finfo.min over a whole row (a uniform average, not a hidden row)."""
    rng = np.random.default_rng(4)
    m = rng.random((2, 20, 150)) > 0.3
    m[:, 0, :] = False
    y, ref = run_case(dtype, 2, 20, 150, 4, 2, 64, mask=m, flags=WGMMA)
    assert np.all(y.reshape(2, 20, -1)[:, 0] == 0)
    assert_close(y, ref, rtol=2e-2, atol=2e-2)
    # Two consumers (100 queries × 2 heads), a [B, H, Sq, Sk] mask.
    m4 = rng.random((1, 4, 100, 150)) > 0.4
    m4[0, 1, 7, :] = False
    y, ref = run_case(dtype, 1, 100, 150, 4, 2, 64, mask=m4, flags=WGMMA)
    assert np.all(y.reshape(100, 4, 64)[7, 1] == 0)
    assert_close(y, ref, rtol=2e-2, atol=2e-2)
    add = np.where(rng.random((20, 150)) > 0.2, rng.standard_normal((20, 150)), -np.inf)
    if dtype == "bf16":
        add[3, :] = -3.3895313892515355e38
    y, ref = run_case(dtype, 1, 20, 150, 4, 2, 64, mask=rounded(add, dtype), mask_kind="causal",
                      flags=WGMMA)
    assert np.isfinite(y).all()
    assert_close(y, ref, rtol=2e-2, atol=2e-2)


def test_g1_partials_on_the_wgmma_kernel():
    """G1's splits as attention_partial on the wgmma kernel (D = 4 padded to
    64, scale 0.5, four splits of 2 keys over 5 keys: [0,2), [2,4), [4,5),
    [6,5)): per-split outputs and natural-log LSEs, an empty split 0 / -inf;
    attention_combine of them is the single pass."""
    q = padded(np.array([[[1, 0, 1, 0]]], np.float32))
    k = padded(np.array([[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1],
                          [1, 1, 1, 1]]], np.float32))
    v = padded(np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16],
                          [0, 0, 0, 0]]], np.float32))
    N, chunk = 4, 2

    def tt(s, dt):
        return "tensor<" + "x".join(map(str, s)) + f"x{dt}>"
    qt, kt, pt, lt = tt(q.shape, "f16"), tt(k.shape, "f16"), tt((N, 1, 1, 1, 64), "f32"), \
        tt((N, 1, 1, 1), "f32")
    text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> ({pt} {{rlx.output = "o"}}, {lt} {{rlx.output = "lse"}}) {{
  %o, %l = rlx_mir.attention_partial %q, %k, %v heads = 1, kv_heads = 1, head_dim = 64 scale = 5.0e-01 kv_splits = {N} kv_chunk = {chunk} : {qt}, {kt}, {kt}
  return %o, %l : {pt}, {lt}
}}"""
    out = run_gpu(text, {"q": q.astype(np.float16), "k": k.astype(np.float16),
                         "v": v.astype(np.float16)}, flags=list(WGMMA))
    o, lse = out["o"][:, 0, 0, 0, :4].astype(np.float64), out["lse"][:, 0, 0, 0].astype(np.float64)
    s = 0.5 * (q[0, 0, :4] @ k[0, :, :4].T)
    for sp in range(N):
        lo, hi = sp * chunk, min(5, (sp + 1) * chunk)
        if hi <= lo:
            assert lse[sp] == -np.inf and np.all(o[sp] == 0)
            continue
        p = np.exp(s[lo:hi] - s[lo:hi].max())
        assert_close(o[sp], p @ v[0, lo:hi, :4] / p.sum(), rtol=2e-2, atol=2e-3)
        assert abs(lse[sp] - (s[lo:hi].max() + np.log(p.sum()))) < 1e-3
    w = np.exp(lse - lse.max())
    assert_close((w[:, None] * o).sum(0) / w.sum(), [4.3024449, 4.9633263, 5.6242076, 6.2850889],
                 rtol=2e-2, atol=2e-3)


def test_repeated_runs_identical_and_ptx():
    """20 runs give the same bits; the PTX has TMA loads, mbarrier waits, both
    wgmma forms (register-A with trans-b for P·V), the register hand-over
    and the consumers' turns; ptxas: 0 spills, 0 stack, no serialized wgmma."""
    B, S, H, KV, D = 1, 200, 4, 2, 128
    text = attention_module("bf16", (B, S, H * D), (B, S, KV * D), (B, S, KV * D), H, KV, D,
                            attrs="causal")
    rng = np.random.default_rng(9)
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, cubin=True, chip="sm_90a", flags=list(WGMMA))
        ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
        for needle in ("cp.async.bulk.tensor.4d.shared::cluster.global.tile",
                       "mbarrier.try_wait.parity", "wgmma.fence.sync.aligned",
                       "setmaxnreg.inc.sync.aligned.u32", "bar.arrive", "ex2.approx",
                       "cvt.rn.bf16x2.f32"):
            assert needle in ptx, needle
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 [^;]*"
                         r"\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;", ptx)
        (kernel,) = [k for k in manifest["kernels"] if "attention" in k["name"]]
        assert kernel.get("spill_bytes", 0) == 0 and kernel.get("stack_bytes", 0) == 0, kernel
        assert not kernel.get("ptxas_warnings"), kernel
        inputs = {n: to_bf16_bits(rng.standard_normal(s).astype(np.float32))
                  for n, s in (("q", (B, S, H * D)), ("k", (B, S, KV * D)), ("v", (B, S, KV * D)))}
        run_artifact(art, "f", inputs, repeat=20)


@pytest.mark.parametrize("flags,dtype,D,chip,message", [
    (WGMMA, "f32", 64, "sm_90a",
     "attention-kernel=wgmma: its query, key, value and output are not all bf16 or all f16"),
    (WGMMA, "bf16", 32, "sm_90a",
     "attention-kernel=wgmma: head_dim 32 is not a multiple of 16 from 64 to 256"),
    (WGMMA, "bf16", 64, "sm_80", "attention-kernel=wgmma: sm_80 has no wgmma (sm_90a only)"),
    ((*WGMMA, "--no-tensor-cores"), "bf16", 64, "sm_90a",
     "attention-kernel=wgmma: tensor cores are off"),
])
def test_forced_kernel_errors_are_located(flags, dtype, D, chip, message):
    text = attention_module(dtype, (1, 4, 2 * D), (1, 4, D), (1, 4, D), 2, 1, D)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        with tempfile.TemporaryDirectory() as tmp:
            compile_artifact(text, pathlib.Path(tmp) / "art", chip=chip,
                             flags=[*flags, "--strict-kernels"])


def test_decode_reads_the_kv_cache_the_layer_appends_to():
    """B2 on the wgmma kernel: a Llama-3.1-8B-shaped bf16 decode layer (head
    dim 128, GQA 4) with a KV cache of 200 positions plus the new token: the
    attention's K/V are the present-cache outputs the append kernel wrote
    (tensor maps over those output buffers), at a position off the tiles."""
    from harness import gen_model, shared_dir
    from test_gpu_emulator import compare_with_cpu
    if not shared_dir():
        pytest.skip("../shared/models not present")
    sets = ["hidden_size=512", "intermediate_size=512", "num_attention_heads=4",
            "num_key_value_heads=1", "head_dim=128", "vocab_size=512"]
    args = ["--layers", "1", "--dtype", "bf16", "--kv-cache", "--seq", "1", "--past", "200"]
    args += [a for s in sets for a in ("--set", s)]
    text = gen_model(shared_dir() / "models" / "llama-3.1-8b.json", *args)
    compare_with_cpu(text, {}, dtype="bf16", flags=list(WGMMA))
