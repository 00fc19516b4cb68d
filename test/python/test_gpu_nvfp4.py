"""NVFP4 on the GPU path (issue 18) under the emulator: the kernels of
lib/Conversion/LIRToGPU/Nvfp4Kernels.cpp and the matmul kernels' NVFP4
weights (GEMV for decode, SIMT otherwise), against the numpy references of
test_nvfp4.py and against the CPU path: cases Q1-Q5 and G7(a) of
../shared/cases, quantized bytes equal to the CPU path's, every fused_matmul
stage on an NVFP4 weight, and a Llama layer with NVFP4 weights from
rlx-gen --nvfp4-weights; the sm_100a block-scaled FP4 kernel through ptxas."""
from __future__ import annotations

import re

import numpy as np
import pytest

import rlx
import rlx.gpu
from harness import assert_close
from test_nvfp4 import (dequant_fn, dequant_ref, matmul_fn, pack, quant_ref, quantize_fn,
                        t)


def gpu(text, inputs, **kw):
    return rlx.gpu.compile(rlx.parse(text), device="emu", **kw).run(inputs)


def cpu(text, inputs):
    return rlx.compile_cpu(rlx.parse(text)).run(inputs)


def test_q1_e2m1_codes_and_g7a_nibble_order():
    """Q1 / G7(a): packed bytes 0x10, 0x32, ..., 0xFE (element 2i in the low
    nibble) decode to the E2M1 table in order; their dot with 1..16 is -144."""
    packed = np.array([[0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE]], np.uint8).view(np.int8)
    y = gpu(dequant_fn(1, 16), {"w": packed, "s": np.array([[0x38]], np.uint8),
                                "g": np.array(1.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[0], [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3,
                                         -4, -6])
    assert np.signbit(y[0, 8])
    x = np.arange(1, 17, dtype=np.float32)[None]
    out = gpu(matmul_fn(1, 1, 16), {"x": x, "w": packed, "s": np.array([[0x38]], np.uint8),
                                    "g": np.array(1.0, np.float32)})["y"]
    assert out[0, 0] == -144.0


def test_q2_e4m3_scale_bytes():
    codes = np.full((4, 16), 2, np.uint8)  # 1.0
    scales = np.array([[0x38], [0x7F], [0xFF], [0x01]], np.uint8)
    y = gpu(dequant_fn(4, 16), {"w": pack(codes), "s": scales, "g": np.array(1.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[:, 0], [1.0, 0.0, 0.0, 2.0 ** -9])
    assert not np.isnan(y).any()


@pytest.mark.parametrize("layout", ["out_in", "in_out"])
def test_q3_matmul(layout):
    codes_nk = np.tile(np.array([2, 4, 2, 4], np.uint8), (16, 1)).T.copy()
    packed, scales = pack(codes_nk), np.full((4, 1), 0x38, np.uint8)
    if layout == "in_out":
        packed, scales = packed.T.copy(), scales.T.copy()
    x = np.arange(1, 17, dtype=np.float32)[None]
    y = gpu(matmul_fn(1, 4, 16, layout), {"x": x, "w": packed, "s": scales,
                                          "g": np.array(2.0, np.float32)})["y"]
    np.testing.assert_array_equal(y[0], [272, 544, 272, 544])


def test_q4_quantize_bytes_equal_the_cpu_path():
    """Q4 on the GPU quantize kernel: the same bytes, scales and global scale
    as the CPU path and the numpy recipe; NRMSE 0.095 ± 0.002."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    out = gpu(quantize_fn(256, 1024), {"x": x})
    pw, ps, g = quant_ref(x)
    assert out["g"] == g
    np.testing.assert_array_equal(out["s"].view(np.uint8), ps)
    np.testing.assert_array_equal(out["w"], pw)
    ref_out = cpu(quantize_fn(256, 1024), {"x": x})
    np.testing.assert_array_equal(out["w"], ref_out["w"])
    np.testing.assert_array_equal(out["y"], ref_out["y"])
    nrmse = np.sqrt(np.mean((out["y"] - x) ** 2)) / np.sqrt(np.mean(x ** 2))
    assert abs(nrmse - 0.095) <= 0.002, nrmse


@pytest.mark.parametrize("m,k", [(3, 48), (37, 80), (2, 40 * 16)])
def test_q5_k_off_the_tiles(m, k):
    """Q5: K not a multiple of the GEMV's 32-code vector (48, 80: the scalar
    path; 640: the vector path) or of the SIMT tile (37 rows): equal to the
    unpadded reference, no NaN."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((24, k)).astype(np.float32)
    pw, ps, g = quant_ref(w)
    x = rng.standard_normal((m, k)).astype(np.float32)
    y = gpu(matmul_fn(m, 24, k), {"x": x, "w": pw, "s": ps, "g": np.array(g)})["y"]
    want = x.astype(np.float64) @ dequant_ref(pw, ps, g).T.astype(np.float64)
    assert not np.isnan(y).any()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def fused_fn(m, n, k, dtype, stages):
    """One fused_matmul on an NVFP4 weight with `stages` (its syntax)."""
    xt, ot = t((1, m, k), dtype), t((1, m, n // 2 if "glu" in stages else n), dtype)
    ws, ss = t((n, k // 2), "i8"), t((n, k // 16), "f8E4M3FN")
    extra = ""
    if "bias(" in stages:
        extra += f', %b: {t((n,), dtype)} {{rlx.param = "b"}}'
    if "norm_weight(" in stages:
        extra += f', %nw: {t((k,), dtype)} {{rlx.param = "nw"}}'
    if "residual(" in stages:
        extra += f', %r: {ot} {{rlx.input = "r"}}'
    return f"""func.func @f(%x: {xt} {{rlx.input = "x"}}, %w: {ws} {{rlx.param = "w"}}, %s: {ss} {{rlx.param = "s"}}, %g: tensor<f32> {{rlx.param = "g"}}{extra}) -> ({ot} {{rlx.output = "y"}}) {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b nvfp4(%s, %g : {ss}, tensor<f32>) {stages} : {xt}, {ws}
  return %y : {ot}
}}"""


STAGES = ["bias-silu", "norm-glu", "residual"]


def fused_case(m, n, k, dtype, stage, seed):
    """A fused_matmul on a seeded NVFP4 weight with the stage family `stage`
    (bias + silu, rms_norm prologue + SwiGLU, residual) and its inputs."""
    import ml_dtypes
    glu = stage == "norm-glu"
    out_n = n // 2 if glu else n
    stages = {"bias-silu": f"bias(%b : {t((n,), dtype)}) activation silu",
              "norm-glu": f"norm rms_norm eps = 1.0e-05 norm_weight(%nw : {t((k,), dtype)}) "
                          "activation silu glu",
              "residual": f"residual(%r : {t((1, m, out_n), dtype)})"}[stage]
    rng = np.random.default_rng(seed)
    pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32) / 16)

    def rnd(a):
        a = np.asarray(a, np.float32)
        return a if dtype == "f32" else a.astype(ml_dtypes.bfloat16).astype(np.float32)
    inputs = {"x": rnd(rng.standard_normal((1, m, k))), "w": pw, "s": ps, "g": np.array(g)}
    if stage == "bias-silu":
        inputs["b"] = rnd(rng.standard_normal(n))
    if glu:
        inputs["nw"] = rnd(1 + 0.1 * rng.standard_normal(k))
    if stage == "residual":
        inputs["r"] = rnd(rng.standard_normal((1, m, out_n)))
    return fused_fn(m, n, k, dtype, stages), inputs


@pytest.mark.parametrize("m", [1, 5, 16, 37])
@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("dtype", ["bf16", "f32"])
def test_fused_stages_on_nvfp4_match_the_cpu_path(m, stage, dtype):
    """Every epilogue family on an NVFP4 weight, decode rows (GEMV: M <= 16,
    K = 256 on the 32-code vector path) and prefill rows (SIMT), bf16 and
    f32 activations: the GPU kernels equal the CPU path (f32 1e-5, bf16
    2e-2 relative)."""
    text, inputs = fused_case(m, 64, 256, dtype, stage, seed=m)
    y, want = gpu(text, inputs)["y"], cpu(text, inputs)["y"]
    assert_close(np.asarray(y, np.float32), np.asarray(want, np.float32), dtype,
                 atol=1e-5 if dtype == "f32" else 2e-2)


def test_decode_gemv_vector_path_matches_numpy():
    """M = 1 and 4 rows of a 512 × 1024 NVFP4 weight (the GEMV's vector path:
    16 bytes of codes per lane, block sums scaled once) against numpy on the
    dequantized weight, and bit-stable over repeated runs."""
    n, k = 512, 1024
    rng = np.random.default_rng(7)
    pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32))
    for m in (1, 4):
        x = rng.standard_normal((m, k)).astype(np.float32)
        model = rlx.gpu.compile(rlx.parse(matmul_fn(m, n, k)), device="emu")
        y = model.run({"x": x, "w": pw, "s": ps, "g": np.array(g)})["y"]
        want = x.astype(np.float64) @ dequant_ref(pw, ps, g).T.astype(np.float64)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
        y2 = model.run({"x": x, "w": pw, "s": ps, "g": np.array(g)})["y"]
        np.testing.assert_array_equal(y, y2)


def nvfp4_model_inputs(text, seed=0):
    """Seeded inputs of a generated model: NVFP4 weights quantized from
    Gaussian data (ModelOpt names: .weight, .weight_scale, .weight_scale_2),
    bf16-exact activations and norm weights, position ids."""
    import ml_dtypes
    from harness import signature
    rng = np.random.default_rng(seed)
    args = signature(text)
    values = {}
    for a in args:
        name, shape = a["name"], a["shape"]
        if a["dtype"] == "i8":
            n, k = shape[0], 2 * shape[1]
            pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32) / np.sqrt(k))
            values[name], values[name + "_scale"], values[name + "_scale_2"] = pw, ps, np.array(g)
        elif a["dtype"] == "i64":
            values[name] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        elif name not in values:
            v = rng.standard_normal(shape).astype(np.float32)
            v = 1 + 0.1 * v if a["param"] and len(shape) == 1 else v * (0.02 if a["param"] else 1)
            values[name] = v.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert {a["name"] for a in args} == set(values), sorted(set(values) ^ {a["name"] for a in args})
    return values


def test_generated_llama_layer_with_nvfp4_weights_matches_cpu():
    """A Llama layer whose seven linear weights are NVFP4 (rlx-gen
    --nvfp4-weights, bf16 activations): prefill and a decode step on the GPU
    path equal the CPU path (bf16 2e-2)."""
    from gpu_harness import run_gpu
    from harness import gen_model, run_mlir, shared_dir
    if not shared_dir():
        pytest.skip("../shared/models not present")
    sets = ["hidden_size=128", "intermediate_size=256", "num_attention_heads=4",
            "num_key_value_heads=2", "head_dim=32", "vocab_size=256"]
    base = ["--layers", "1", "--dtype", "bf16", "--nvfp4-weights"]
    base += [a for s in sets for a in ("--set", s)]
    for mode in (["--seq", "9"], ["--kv-cache", "--seq", "1", "--past", "20"]):
        text = gen_model(shared_dir() / "models" / "llama-3.2-1b.json", *base, *mode)
        assert text.count("dequant_linear") == 7, text[:2000]
        inputs = nvfp4_model_inputs(text)
        got, want = run_gpu(text, inputs), run_mlir(text, inputs)
        assert got.keys() == want.keys()
        for name in want:
            assert_close(np.asarray(got[name], np.float32), np.asarray(want[name], np.float32),
                         "bf16", atol=2e-2)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("m,k", [(37, 256), (130, 352)])
def test_prefill_on_wgmma_dequantizes_in_the_producer(stage, m, k):
    """Prefill rows on the sm_90a wgmma kernel (forced; auto picks it for
    bf16): the producer warpgroup TMA-loads packed codes, dequantizes them
    with their E4M3 scales into the swizzled B tile (exact in bf16), the
    global scale multiplies the accumulators; one and two consumers, a K
    tail off the 64-deep stage (352), norm prologue with GLU, bias with
    activation, residual; equal to the CPU path (bf16 2e-2). The PTX has
    wgmma and no mma.sync."""
    import pathlib
    import tempfile
    from gpu_harness import compile_artifact, run_gpu
    text, inputs = fused_case(m, 128, k, "bf16", stage, seed=m + k)
    flags = ["--matmul-kernel", "wgmma"]
    y = run_gpu(text, inputs, flags=flags)["y"]
    want = cpu(text, inputs)["y"]
    assert_close(np.asarray(y, np.float32), np.asarray(want, np.float32), "bf16", atol=2e-2)
    with tempfile.TemporaryDirectory() as tmp:
        compile_artifact(text, pathlib.Path(tmp) / "art", flags=["--no-emulator"])
        ptx = "".join(p.read_text() for p in (pathlib.Path(tmp) / "art").glob("*.ptx"))
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx


G7B_OFFSETS = {(0, 0): 0, (0, 1): 1, (1, 0): 16, (31, 0): 496, (32, 0): 4, (127, 3): 511,
               (0, 4): 512, (128, 0): 1024, (129, 4): 1552, (100, 2): 78}


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_g7b_block_scales_layout(backend):
    """G7(b): 130 × 5 scales (K = 80) in the 128×4 tile layout of
    block-scaled MMA: 2 × 2 tiles of 512 bytes (2048 in all), the table's
    byte offsets, and zeros (never a NaN scale) in the 1398 padding bytes."""
    M, KB = 130, 5
    rng = np.random.default_rng(7)
    s = rng.integers(0x08, 0x70, size=(M, KB), dtype=np.uint8)  # finite, nonzero
    text = f"""func.func @f(%s: {t((M, KB), 'f8E4M3FN')} {{rlx.input = "s"}}) -> ({t((2, 2, 32, 16), 'f8E4M3FN')} {{rlx.output = "b"}}) {{
  %b = rlx_mir.nvfp4_block_scales %s : {t((M, KB), 'f8E4M3FN')}
  return %b : {t((2, 2, 32, 16), 'f8E4M3FN')}
}}"""
    out = (gpu if backend == "gpu" else cpu)(text, {"s": s})["b"]
    flat = np.asarray(out).view(np.uint8).reshape(-1)
    assert flat.size == 2048
    for (m, kb), off in G7B_OFFSETS.items():
        assert flat[off] == s[m, kb], (m, kb, off)
    # Every scale once, at the formula's offset; the rest zero.
    seen = np.zeros(2048, bool)
    for m in range(M):
        for kb in range(KB):
            off = ((m // 128) * 2 + kb // 4) * 512 + (m % 32) * 16 + ((m % 128) // 32) * 4 + kb % 4
            assert flat[off] == s[m, kb]
            seen[off] = True
    assert seen.sum() == 650 and not flat[~seen].any() and (~seen).sum() == 1398


@pytest.mark.parametrize("stage", ["plain", *STAGES])
def test_sm100a_block_scaled_fp4_kernels_build_clean(stage, tmp_path):
    """sm_100a (+ptx88), forced (W4A4 changes the numbers, so auto never
    picks it): NVFP4 prefill on block-scaled FP4 MMA (tcgen05.mma
    kind::mxf4nvf4 block16, scales copied to tensor memory in the 128x4
    layout, activations quantized to NVFP4 in the kernel), every epilogue
    family; ptxas builds it with no spills and no stack. No device and no
    emulator run it here: its artifact says so, and the emulator refuses it
    by name. Without +ptx88 (or on sm_90a) forcing it is a located error."""
    import json
    import subprocess
    from gpu_harness import RLX_GPU_RUN, compile_artifact
    text = (matmul_fn(200, 128, 256, xet="bf16") if stage == "plain"
            else fused_case(200, 128, 256, "bf16", stage, seed=0)[0])
    art = tmp_path / "art"
    manifest = compile_artifact(text, art, chip="sm_100a", cubin=True,
                                flags=["--features", "+ptx88", "--matmul-kernel", "tcgen05"])
    ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
    for needle in ("tcgen05.alloc.cta_group::1", "tcgen05.cp.cta_group::1.32x128b.warpx4",
                   "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16",
                   "tcgen05.commit.cta_group::1.mbarrier::arrive::one",
                   "tcgen05.ld.sync.aligned.32x32b.x32.b32", "tcgen05.dealloc"):
        assert needle in ptx, needle
    (kernel,) = [k_ for k_ in manifest["kernels"] if "matmul" in k_["name"]]
    assert kernel["spill_bytes"] == 0 and kernel["stack_bytes"] == 0, kernel
    assert "emu" not in kernel and "tcgen05" in kernel["emu_unavailable"], kernel
    # The emulator names the kernel and why it cannot run it.
    proc = subprocess.run([str(RLX_GPU_RUN), str(art), "--device", "emu",
                           "--zero-missing"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "has no emulator entry (tcgen05" in proc.stderr, proc.stderr
    for chip, features, why in (("sm_100a", ["--features=+ptx86"],
                                 "has no block-scaled FP4 MMA (sm_100a and PTX "
                                                  "ISA 8.8: +ptx88)"),
                                ("sm_90a", ["--features=+ptx80"],
                                 "sm_90a with PTX ISA 8.0 has no block-scaled FP4 "
                                               "MMA")):
        with pytest.raises(RuntimeError, match=re.escape("matmul-kernel=tcgen05: ") + ".*" +
                           re.escape(why)):
            compile_artifact(text, tmp_path / "bad", chip=chip,
                             flags=[*features, "--matmul-kernel", "tcgen05", "--strict-kernels",
                                    "--no-emulator"])
    assert json.loads((art / "manifest.json").read_text())["kernels"]


NVFP4_CONFIGS = [
    # (chip, rows, stages, kernel the PTX must show)
    ("sm_90a", 1, "bias-silu", "mma.sync.aligned.m16n8k16"),  # GEMV on mma.sync
    ("sm_90a", 16, "norm-glu", "shfl.sync.bfly"),       # GEMV vector path: 16 rows of
                                                        # K = 2048 exceed the staging
    ("sm_90a", 300, "norm-glu", "wgmma.mma_async"),     # wgmma, producer dequant
    ("sm_90a", 300, "residual", "wgmma.mma_async"),
    ("sm_80", 300, "bias-silu", "fma.rn.f32"),          # SIMT
    ("sm_100a features=+ptx88 matmul-kernel=tcgen05", 300, "norm-glu", "tcgen05.mma"),
    ("sm_100a features=+ptx88", 300, "bias-silu", "fma.rn.f32"),  # auto: W4A16 (SIMT)
    ("sm_100a features=+ptx88", 1, "residual", "mma.sync.aligned.m16n8k16"),
]


@pytest.mark.parametrize("chip,m,stage,expect", NVFP4_CONFIGS,
                         ids=[f"{i}-{c[0].split()[0]}-m{c[1]}" for i, c in enumerate(NVFP4_CONFIGS)])
def test_every_nvfp4_configuration_builds_clean(rlx_opt, tmp_path, chip, m, stage, expect):
    """The NVFP4 matmul kernels auto picks, through ptxas: 0 spills, 0 stack,
    no performance note, on the kernel each configuration names."""
    from test_gpu_compile import build_clean
    resources, ptx = build_clean(rlx_opt, tmp_path, chip,
                                 fused_case(m, 4096, 2048, "bf16", stage, seed=0)[0])
    assert resources and all(r["spill"] == 0 and r["stack"] == 0 for r in resources.values())
    assert expect in ptx, expect


@pytest.mark.parametrize("m", [1, 16, 37, 130])
def test_blocked_scales_read_by_every_kernel(m):
    """Scales blocked by nvfp4_block_scales (what rlx-mir-block-nvfp4-scales
    inserts for sm_100a, moved to weight-packing time) read by the CPU path,
    the GEMV (M <= 16), the wgmma kernel and SIMT: the same result as the
    linear scales (N = 192: a partial 128-row tile; K = 320: a partial
    4-block column)."""
    n, k = 192, 320
    rng = np.random.default_rng(m)
    pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32))
    x = rng.standard_normal((m, k)).astype(np.float32)
    ws, ss, bs = t((n, k // 2), "i8"), t((n, k // 16), "f8E4M3FN"), t((-(-n // 128), -(-k // 64), 32, 16), "f8E4M3FN")
    xt, yt = t((m, k), "bf16"), t((m, n), "bf16")
    text = f"""func.func @f(%x: {xt} {{rlx.input = "x"}}, %w: {ws} {{rlx.param = "w"}}, %s: {ss} {{rlx.param = "s"}}, %g: tensor<f32> {{rlx.param = "g"}}) -> ({yt} {{rlx.output = "y"}}) {{
  %b = rlx_mir.nvfp4_block_scales %s : {ss}
  %y = rlx_mir.nvfp4_matmul %x, %w, %b, %g : {xt}, {ws}, {bs}, tensor<f32>
  return %y : {yt}
}}"""
    import ml_dtypes
    xb = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    inputs = {"x": xb, "w": pw, "s": ps, "g": np.array(g)}
    want = xb.astype(np.float64) @ dequant_ref(pw, ps, g).T.astype(np.float64)
    got_cpu = np.asarray(cpu(text, inputs)["y"], np.float32)
    got_gpu = np.asarray(gpu(text, inputs)["y"], np.float32)
    assert_close(got_cpu, want, "bf16", atol=2e-2)
    assert_close(got_gpu, got_cpu, "bf16", atol=2e-2)


def test_sm100a_takes_the_newest_ptx_and_tcgen05_where_it_applies(tmp_path):
    """--chip=sm_100a without +ptxNN: the newest PTX ISA the chip, LLVM (9.0)
    and the installed ptxas take (block-scaled FP4 MMA needs 8.8), said by
    rlx-compile -v and the manifest. --matmul-kernel=tcgen05 on a whole NVFP4
    layer: its NVFP4 projections of enough rows take tcgen05, every other
    matmul falls back with a remark (it used to fail on the first)."""
    import json
    import pathlib
    import shutil
    import subprocess

    from harness import BUILD, gen_model, shared_dir
    if not shared_dir():
        pytest.skip("../shared/models not present")
    if not shutil.which("ptxas") and not pathlib.Path("/usr/local/cuda/bin/ptxas").exists():
        pytest.skip("no ptxas: the default PTX ISA is the chip's first")
    sets = ["hidden_size=128", "intermediate_size=256", "num_attention_heads=4",
            "num_key_value_heads=2", "head_dim=32", "vocab_size=256"]
    text = gen_model(shared_dir() / "models" / "llama-3.2-1b.json", "--layers", "1", "--dtype",
                     "bf16", "--nvfp4-weights", "--seq", "300",
                     *[a for s in sets for a in ("--set", s)])
    (tmp_path / "m.mlir").write_text(text)
    proc = subprocess.run([str(BUILD / "bin" / "rlx-compile"), "-v", str(tmp_path / "m.mlir"),
                           "-o", str(tmp_path / "art"), "--chip", "sm_100a", "--no-cubin",
                           "--no-emulator", "--matmul-kernel", "tcgen05"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"target: sm_100a, PTX ISA (\d+)\.(\d)", proc.stdout)
    assert m, proc.stdout
    ptx = int(m.group(1)) * 10 + int(m.group(2))
    manifest = json.loads((tmp_path / "art" / "manifest.json").read_text())
    assert manifest["target"]["ptx_version"] == f"{ptx // 10}.{ptx % 10}"
    assert ptx >= 88  # CUDA 13's ptxas takes 9.0; 8.8 has the block-scaled MMA
    if ptx < 90:  # below LLVM's newest, ptxas must refuse the next one
        bad = subprocess.run([str(BUILD / "bin" / "rlx-compile"), str(tmp_path / "m.mlir"), "-o",
                              str(tmp_path / "bad"), "--chip", "sm_100a", "--no-cubin",
                              f"--features=+ptx{ptx + 1}"], capture_output=True, text=True)
        assert "newer than the installed ptxas" in bad.stderr, bad.stderr
    ptx_text = "".join(p.read_text() for p in (tmp_path / "art").glob("*.ptx"))
    assert "tcgen05.mma" in ptx_text
    assert "matmul-kernel=tcgen05 does not apply" in proc.stderr, proc.stderr


@pytest.mark.parametrize("dtype,m,n,k,split_k,chip,blocked", [
    ("bf16", 1, 96, 1024, 0, "sm_90a", False),
    ("bf16", 3, 40, 2048, 4, "sm_90a", True),
    ("bf16", 16, 32, 256, 0, "sm_90a", False),
    ("f16", 2, 48, 512, 2, "sm_90a", False),
    ("bf16", 5, 24, 384, 0, "sm_80", True),
])
def test_decode_gemv_on_mma_sync_matches_numpy(tmp_path, dtype, m, n, k, split_k, chip, blocked):
    """The NVFP4 GEMV on mma.sync (Nvfp4GemvKernel.cpp: bf16/f16 lhs, K a
    multiple of 128): rows of 1, 3, 5 and 16, columns off its 16-row warp
    tiles, split-K, blocked scales, sm_80 (no e4m3x2 cvt: the scale decode of
    nvfp4::decodeScale); negative, subnormal and NaN (0x7F, 0xFF: 0) scales,
    activations from 1e-30 to 3e4 (bf16; f16 1e-6 to 30) and zeros. The products are exact, so
    the f32 sums round to the output type of the float64 reference."""
    import ml_dtypes
    rng = np.random.default_rng(k + m)
    pw, ps, g = quant_ref(rng.standard_normal((n, k)).astype(np.float32))
    ps = ps.copy()
    ps[0, 0], ps[1, 1], ps[2, 2], ps[3, 3] = 0xB8, 0x7F, 0xFF, 0x03  # -1, NaN, -NaN, 3·2^-9
    np_t = ml_dtypes.bfloat16 if dtype == "bf16" else np.float16
    x = rng.standard_normal((m, k)).astype(np.float32)
    big, tiny = (3e4, 1e-30) if dtype == "bf16" else (30.0, 1e-6)
    x[0, :8] = [big, -big, 0.0, tiny, 7.5, -0.0, 1e-3, 12.0]
    x = x.astype(np_t).astype(np.float32)
    ws, ss = t((n, k // 2), "i8"), t((n, k // 16), "f8E4M3FN")
    bs = t((-(-n // 128), -(-k // 64), 32, 16), "f8E4M3FN")
    xt, yt = t((m, k), dtype), t((m, n), dtype)
    scales = f"%b = rlx_mir.nvfp4_block_scales %s : {ss}\n  " if blocked else ""
    text = f"""func.func @f(%x: {xt} {{rlx.input = "x"}}, %w: {ws} {{rlx.param = "w"}}, %s: {ss} {{rlx.param = "s"}}, %g: tensor<f32> {{rlx.param = "g"}}) -> ({yt} {{rlx.output = "y"}}) {{
  {scales}%y = rlx_mir.nvfp4_matmul %x, %w, {'%b' if blocked else '%s'}, %g : {xt}, {ws}, {bs if blocked else ss}, tensor<f32>
  return %y : {yt}
}}"""
    art = tmp_path / "art"
    model = rlx.gpu.compile(rlx.parse(text), device="emu", chip=chip, split_k=split_k,
                            artifact_dir=art)
    ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
    assert "mma.sync.aligned.m16n8k16.row.col.f32." + dtype in ptx
    assert ("cvt.rn.f16x2.e4m3x2" in ptx) == (chip == "sm_90a")
    y = np.asarray(model.run({"x": x, "w": pw, "s": ps, "g": np.array(g)})["y"], np.float32)
    want = (x.astype(np.float64) @ dequant_ref(pw, ps, g).T.astype(np.float64))
    want = want.astype(np.float32).astype(np_t).astype(np.float32)
    assert np.isfinite(want).all()
    ulp = 2.0 ** (-8 if dtype == "bf16" else -11)
    np.testing.assert_allclose(y, want, rtol=ulp, atol=1e-6 * np.abs(want).max())
