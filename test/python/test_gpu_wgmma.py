"""The sm_90a fast path of fused_matmul (issue 16): TMA loads through tensor
maps the runtime builds, a 3-4 stage mbarrier pipeline, wgmma from 128-byte
swizzled shared memory, a producer warpgroup feeding one or two consumer
warpgroups (setmaxnreg), every epilogue stage after the accumulators. Under
the emulator against numpy (bit-exact on case G4's integer inputs, 100 runs
identical), and through ptxas: 0 spills, 0 stack, no serialized wgmma
(C7517/C7519), the PTX instructions the path stands for."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import tempfile

import numpy as np
import pytest

from gpu_harness import (RLX_COMPILE, compile_artifact, from_bf16_bits, run_artifact, run_gpu,
                         to_bf16_bits)


def t(*shape, dtype="bf16"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def rounded(a, dtype):
    a = np.asarray(a, np.float32)
    return from_bf16_bits(to_bf16_bits(a)) if dtype == "bf16" else a.astype(np.float16).astype(np.float32)


def encode(a, dtype):
    return to_bf16_bits(a) if dtype == "bf16" else np.asarray(a, np.float16)


def compiled(text, tmp, flags=()):
    art = pathlib.Path(tmp) / "art"
    manifest = compile_artifact(text, art, cubin=True, flags=list(flags))
    ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
    return art, manifest, ptx


def matmul_kernel(manifest):
    return next(k for k in manifest["kernels"] if "matmul" in k["name"])


def assert_wgmma_path(manifest, ptx, n, dtype="bf16", consumers=2, norm=False):
    """The instructions of the fast path, and ptxas' verdict on it. A norm
    prologue keeps 96 registers for the producer, which normalizes A, and
    the consumers take the rest (setmaxnreg); without one the grid is
    persistent and every warpgroup keeps its registers (setmaxnreg per tile
    would hold the tile loop's values in the producer's 40)."""
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype}" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.arrive.expect_tx" in ptx and "mbarrier.try_wait.parity" in ptx
    assert re.search(r"wgmma.wait_group.sync.aligned\s+1;", ptx)
    reallocates = consumers == 2 and norm
    assert bool(re.search(r"setmaxnreg.dec.sync.aligned.u32\s+96;", ptx)) == reallocates
    assert "setmaxnreg" in ptx or not reallocates
    assert ("fence.proxy.async.shared::cta" in ptx) == norm
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    k = matmul_kernel(manifest)
    assert k["block"] == [128 * (consumers + 1), 1, 1]
    assert k["spill_bytes"] == 0 and k["stack_bytes"] == 0, k
    if reallocates:
        # setmaxnreg's balance (4 warps give 128 - 40 or 96, 8 take 64 or 32
        # more) holds only if every warp starts with 65536 / 384 -> 168.
        assert k["registers"] == 168, k
    assert not k.get("ptxas_warnings"), k["ptxas_warnings"]
    maps = [a["tensor_map"] for f in manifest["functions"] for l in f["launches"]
            for a in l["args"] if "tensor_map" in a]
    assert len(maps) == 2 and all(m["swizzle"] == 3 and m["box"][0] == 64 for m in maps)


def plain(M, K, N, dtype):
    return f"""func.func @f(%x: {t(M, K, dtype=dtype)} {{rlx.input = "x"}}, %w: {t(N, K, dtype=dtype)} {{rlx.input = "w"}}) -> {t(M, N, dtype="f32")} {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t(M, K, dtype=dtype)}, {t(N, K, dtype=dtype)}
  %y = rlx_mir.cast %m : {t(M, N, dtype=dtype)} to {t(M, N, dtype="f32")}
  return %y : {t(M, N, dtype="f32")}
}}"""


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("M,K,N,consumers", [
    (130, 200, 136, 2),   # every edge ragged: rows, K (zero-filled by TMA), columns
    (40, 64, 72, 1),      # one consumer warpgroup (at most 64 rows)
    (300, 520, 256, 2),   # 9 k-tiles through a 4-stage ring: the phases wrap twice
    (37, 8192, 128, 1),   # 128 k-tiles: the emulator's fragment slots are allocated
                          # once per thread, not per iteration (256 KiB fiber stacks)
])
def test_matmul_on_wgmma_matches_numpy(M, K, N, consumers, dtype):
    rng = np.random.default_rng(M + K + N)
    x = rounded(rng.standard_normal((M, K)), dtype)
    w = rounded(rng.standard_normal((N, K)), dtype)
    with tempfile.TemporaryDirectory() as tmp:
        art, manifest, ptx = compiled(plain(M, K, N, dtype), tmp)
        assert_wgmma_path(manifest, ptx, 128, dtype, consumers)
        d = run_artifact(art, "f", {"x": encode(x, dtype), "w": encode(w, dtype)})["result0"]
    ref = x.astype(np.float64) @ w.T.astype(np.float64)
    # The f32 sum rounded once to the matmul's type (the CPU path's rule).
    np.testing.assert_allclose(d, rounded(ref, dtype), rtol=1e-2 if dtype == "bf16" else 2e-3,
                               atol=1e-2 if dtype == "bf16" else 2e-3)


def test_persistent_grid_loops_over_tiles():
    """More 128 × 128 tiles (2 × 67 = 134) than sm_90a's 132 SMs: the
    persistent grid launches 132 blocks and blocks 0 and 1 take a second
    tile, whose first stages were issued during their first tile's epilogue
    (the ring's phases carried across tiles: 5 k-tiles per tile through 4
    stages). Against numpy on every tile."""
    M, K, N, dtype = 256, 320, 67 * 128, "bf16"
    rng = np.random.default_rng(11)
    x = rounded(rng.standard_normal((M, K)), dtype)
    w = rounded(rng.standard_normal((N, K)) / 16, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        art, manifest, ptx = compiled(plain(M, K, N, dtype), tmp)
        assert_wgmma_path(manifest, ptx, 128, dtype, 2)
        launch = next(l for f in manifest["functions"] for l in f["launches"]
                      if "matmul" in l.get("kernel", ""))
        assert launch["grid"] == [132, 1, 1], launch
        d = run_artifact(art, "f", {"x": encode(x, dtype), "w": encode(w, dtype)})["result0"]
    ref = x.astype(np.float64) @ w.T.astype(np.float64)
    np.testing.assert_allclose(d, rounded(ref, dtype), rtol=1e-2, atol=1e-2)


G4_SUMS = {8: (65515, 84), 24: (196608, 86), 40: (327766, 214), 56: (458731, 84)}


def g4(M, K, N, a, dtype):
    """a @ B with case G4's B[k, n] = (2k + n) mod 3, the weight given as
    the [N, K] matrix B^T (the layout the fast path reads); f32 out, 100
    runs that must give the same bits."""
    k2, nn = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
    b = ((2 * k2 + nn) % 3).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        art, manifest, ptx = compiled(plain(M, K, N, dtype), tmp, ["--matmul-kernel", "wgmma"])
        assert "wgmma.mma_async" in ptx
        c = run_artifact(art, "f", {"x": encode(a, dtype), "w": encode(b.T.copy(), dtype)},
                         repeat=100)["result0"]
    return c, a @ b


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("n", sorted(G4_SUMS))
def test_g4a_on_wgmma_bit_exact(n, dtype):
    M, K = 64, 128
    i, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    c, ref = g4(M, K, n, ((i + 2 * k) % 3).astype(np.float32), dtype)
    np.testing.assert_array_equal(c, ref)
    total, last = G4_SUMS[n]
    assert c.sum() == total and c[63, n - 1] == last and c.max() == 215
    np.testing.assert_array_equal(c[0, :4], [214, 84, 86, 214])


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_g4b_on_wgmma_four_row_blocks(dtype):
    """G4(b): 256 rows are two 128-row tiles of two consumer warpgroups each;
    the 64-row block sums would permute if a consumer wrote another's rows."""
    M, K, N = 256, 64, 24
    i, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    c, _ = g4(M, K, N, np.where(k % 2 == 0, i // 64 + 1, 0).astype(np.float32), dtype)
    s = np.tile([31, 33, 32], 8)
    np.testing.assert_array_equal(c, (np.arange(M)[:, None] // 64 + 1) * s[None, :])
    np.testing.assert_array_equal(c.reshape(4, 64, N).sum(axis=(1, 2)), [49152, 98304, 147456, 196608])


def silu(v):
    return v / (1 + np.exp(-v))


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))


def rope_neox(z, cos, sin, heads, D):
    """z [B, S, H·D]; rotates the first `heads` heads by position s."""
    B, S, N = z.shape
    h = z.reshape(B, S, N // D, D).copy()
    a, b = h[:, :, :heads, :D // 2].copy(), h[:, :, :heads, D // 2:].copy()
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    h[:, :, :heads, :D // 2] = a * c - b * s
    h[:, :, :heads, D // 2:] = b * c + a * s
    return h.reshape(B, S, N)


# Each epilogue the fusion patterns produce on a layer's projections, as
# one fused_matmul: (name, stages, reference of the f32 accumulators z).
def epilogue_case(name, B, S, K, N, rng, dtype):
    M = B * S
    vals = {"x": rng.standard_normal((B, S, K)), "w": rng.standard_normal((N, K)) / np.sqrt(K)}
    out_n, H, D = N, N // 64, 64
    if name == "bias_gelu_tanh":
        vals["b"] = 0.5 * rng.standard_normal(N)
        stages = f'bias(%b : {t(N, dtype=dtype)}) activation gelu_tanh'
        ref = lambda z: gelu_tanh(z + vals["b"])
    elif name == "swiglu_bias_residual":
        out_n = N // 2
        vals["b"] = 0.5 * rng.standard_normal(N)
        vals["r"] = rng.standard_normal((B, S, out_n))
        stages = (f'bias(%b : {t(N, dtype=dtype)}) activation silu glu '
                  f'residual(%r : {t(B, S, out_n, dtype=dtype)})')
        ref = lambda z: silu((z + vals["b"])[..., :out_n]) * (z + vals["b"])[..., out_n:] + vals["r"]
    elif name == "residual":
        vals["r"] = rng.standard_normal((B, S, N))
        stages = f'residual(%r : {t(B, S, N, dtype=dtype)})'
        ref = lambda z: z + vals["r"]
    elif name == "rms_norm_swiglu":
        # The MLP's gate|up projection: the post-attention norm in front.
        out_n = N // 2
        vals["g"] = 1 + 0.1 * rng.standard_normal(K)
        stages = (f'norm rms_norm eps = 1.0e-05 norm_weight(%g : {t(K, dtype=dtype)}) '
                  f'activation silu glu')
        ref = lambda z: silu(z[..., :out_n]) * z[..., out_n:]
    elif name == "layer_norm_bias_gelu":
        vals["g"] = 1 + 0.1 * rng.standard_normal(K)
        vals["nb"] = 0.1 * rng.standard_normal(K)
        vals["b"] = 0.5 * rng.standard_normal(N)
        stages = (f'norm layer_norm eps = 1.0e-05 norm_weight(%g : {t(K, dtype=dtype)}) '
                  f'norm_bias(%nb : {t(K, dtype=dtype)}) bias(%b : {t(N, dtype=dtype)}) '
                  f'activation gelu_tanh')
        ref = lambda z: gelu_tanh(z + vals["b"])
    elif name == "head_norm_rope":
        # Qwen3's packed q|k|v: head norm on q and k heads, RoPE on them.
        ang = rng.uniform(-3, 3, (S, D // 2))
        vals["cos"], vals["sin"] = np.cos(ang), np.sin(ang)
        vals["hw"] = 1 + 0.1 * rng.standard_normal((H - 1, D))
        stages = (f'head_norm(%hw : {t(H - 1, D, dtype=dtype)}) head_norm_eps = 1.0e-06 '
                  f'rope(%cos, %sin : {t(S, D // 2, dtype=dtype)}, {t(S, D // 2, dtype=dtype)}) '
                  f'rope_heads = {H - 1} head_dim = {D}')

        def ref(z):
            h = z.reshape(B, S, H, D).copy()
            q = h[:, :, :H - 1]
            h[:, :, :H - 1] = q / np.sqrt((q * q).mean(-1, keepdims=True) + 1e-6) * vals["hw"]
            return rope_neox(h.reshape(B, S, N), vals["cos"], vals["sin"], H - 1, D)
    vals = {k: rounded(v, dtype) for k, v in vals.items()}
    args = ", ".join(f'%{k}: {t(*v.shape, dtype=dtype)} {{rlx.input = "{k}"}}' for k, v in vals.items())
    text = f"""func.func @f({args}) -> {t(B, S, out_n, dtype=dtype)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b {stages} : {t(B, S, K, dtype=dtype)}, {t(N, K, dtype=dtype)}
  return %y : {t(B, S, out_n, dtype=dtype)}
}}"""
    x = vals["x"].astype(np.float64)
    if stages.startswith("norm"):
        # The prologue: statistics in f32, the normalized rows rounded once
        # to the input type (as the unfused norm's output).
        mean = x.mean(-1, keepdims=True) if "layer_norm" in stages else 0.0
        c = x - mean
        var = (c * c).mean(-1, keepdims=True)
        x = c / np.sqrt(var + 1e-5) * vals["g"] + (vals["nb"] if "nb" in vals else 0.0)
        x = rounded(x, dtype).astype(np.float64)
    z = x @ vals["w"].T.astype(np.float64)
    return text, vals, ref(z)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("name,N,tile", [("bias_gelu_tanh", 200, 128),
                                          ("swiglu_bias_residual", 256, 128),
                                          ("residual", 136, 128),
                                          ("rms_norm_swiglu", 272, 128),
                                          ("layer_norm_bias_gelu", 200, 128),
                                          ("head_norm_rope", 192, 64)])
def test_fused_epilogues_on_wgmma_match_numpy(name, N, tile, dtype):
    """[2, 37, 136] rows through one fused_matmul: bias + activation, SwiGLU
    on packed gate|up with bias and residual, residual alone, per-head norm
    + RoPE (a block per head of 64); bf16 / f16 tolerance 2e-2."""
    rng = np.random.default_rng(len(name) + N)
    text, vals, ref = epilogue_case(name, 2, 37, 136, N, rng, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        art, manifest, ptx = compiled(text, tmp)
        assert_wgmma_path(manifest, ptx, tile, dtype, 2, norm=name.startswith(("rms_norm", "layer_norm")))
        assert len(manifest["kernels"]) == 1
        out = run_artifact(art, "f", {k: encode(v, dtype) for k, v in vals.items()})["result0"]
    out = from_bf16_bits(out) if dtype == "bf16" else out.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=2e-2, atol=2e-2)


def test_auto_picks_wgmma_on_sm90a_and_mma_sync_elsewhere():
    """The heuristic (docs/gpu.md): wgmma for more than 16 bf16 rows with a
    K-major weight on sm_90a (a norm prologue too: the producer normalizes
    the A tiles TMA brought); sm_80 takes mma.sync; 16 rows take gemv."""
    norm = f"""func.func @f(%x: {t(40, 64)} {{rlx.input = "x"}}, %g: {t(64)} {{rlx.input = "g"}}, %w: {t(64, 64)} {{rlx.input = "w"}}) -> {t(40, 64)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : {t(64)}) : {t(40, 64)}, {t(64, 64)}
  return %y : {t(40, 64)}
}}"""
    with tempfile.TemporaryDirectory() as tmp:
        for text, chip, expect in [(plain(40, 64, 64, "bf16"), "sm_90a", "wgmma.mma_async"),
                                   (plain(40, 64, 64, "bf16"), "sm_80", "mma.sync.aligned"),
                                   (norm, "sm_90a", "wgmma.mma_async"),
                                   (norm, "sm_80", "mma.sync.aligned"),
                                   (plain(16, 64, 64, "bf16"), "sm_90a", "shfl.sync")]:
            art = pathlib.Path(tmp) / chip
            compile_artifact(text, art, chip=chip, cubin=True)
            ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
            assert expect in ptx, (chip, expect)
            assert ("wgmma" in ptx) == (expect == "wgmma.mma_async")


@pytest.mark.parametrize("text,chip,message", [
    (plain(40, 64, 64, "bf16"), "sm_80", "matmul-kernel=wgmma: sm_80 has no wgmma (sm_90a only)"),
    (plain(40, 60, 64, "bf16"), "sm_90a",
     "matmul-kernel=wgmma: K = 60 (TMA rows must be a positive multiple of 16 bytes)"),
    (plain(40, 64, 64, "f32"), "sm_90a", "matmul-kernel=wgmma: its operands are not both bf16 or both f16"),
])
def test_forced_wgmma_that_cannot_apply_is_a_located_error(tmp_path, text, chip, message):
    (tmp_path / "m.mlir").write_text(text)
    proc = subprocess.run([str(RLX_COMPILE), str(tmp_path / "m.mlir"), "-o", str(tmp_path / "a"),
                           "--chip", chip, "--no-cubin", "--matmul-kernel", "wgmma",
                           "--strict-kernels"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert message in proc.stderr and "m.mlir:" in proc.stderr


def test_tensor_maps_in_the_manifest_and_a_bad_one_is_refused(tmp_path):
    """The artifact carries each tensor map (innermost dimension first, the
    leading dimensions of [2, 37, 136] collapsed into 74 rows); the runtime
    checks it when it opens the artifact."""
    rng = np.random.default_rng(2)
    text, vals, ref = epilogue_case("residual", 2, 37, 136, 136, rng, "bf16")
    art = tmp_path / "art"
    manifest = compile_artifact(text, art)
    maps = {a["buffer"]: a["tensor_map"] for a in manifest["functions"][0]["launches"][0]["args"]
            if "tensor_map" in a}
    assert maps["x"] == {"dtype": "bf16", "dims": [136, 74], "strides": [272], "box": [64, 128],
                         "swizzle": 3}
    assert maps["w"] == {"dtype": "bf16", "dims": [136, 136], "strides": [272], "box": [64, 128],
                         "swizzle": 3}
    path = art / "manifest.json"
    doc = json.loads(path.read_text())
    for a in doc["functions"][0]["launches"][0]["args"]:
        if a.get("buffer") == "x" and "tensor_map" in a:
            a["tensor_map"]["dims"][1] = 75  # one row past the buffer
    path.write_text(json.dumps(doc))
    with pytest.raises(RuntimeError, match=r"tensor_map: the tensor spans 20400 bytes from offset 0, "
                                           r"past the end of its buffer \(20128 bytes\)"):
        run_artifact(art, "f", {k: encode(v, "bf16") for k, v in vals.items()})


def test_llama_3_2_1b_layer_on_tensor_cores_matches_numpy():
    """A whole Llama-3.2-1B decoder layer at its real sizes (hidden 2048, 32
    q / 8 kv heads of 64, intermediate 8192), bf16, 37 tokens, under the
    emulator: its four projections on wgmma (QKV and gate|up with the norm
    prologue, o_proj and down_proj with the residual epilogue) and its
    attention on the sm_90a flash kernel, against the numpy layer with bf16
    activations (HF's bf16 modules)."""
    import ml_dtypes
    import reference as ref
    from harness import gen_model, shared_dir
    from test_models import ref_config, seeded_arguments
    if not shared_dir():
        pytest.skip("../shared/models not present")
    path = shared_dir() / "models" / "llama-3.2-1b.json"
    cfg = json.loads(path.read_text())
    text = gen_model(path, "--layer-only", "--dtype", "bf16")
    dims = {"seq": 37}
    v = seeded_arguments(text, dims, "bf16")
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, dims=dims, cubin=True)
        ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
    # The projections and the attention on wgmma; no mma.sync anywhere.
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    assert all(k["spill_bytes"] == 0 and not k.get("ptxas_warnings") for k in manifest["kernels"])
    entry = next(f for f in manifest["functions"] if f["name"] == manifest["entry"])
    on_wgmma = [l["kernel"] for l in entry["launches"]
                if any("tensor_map" in a for a in l["args"])]
    assert len(on_wgmma) == 5, on_wgmma
    assert sum("fused_matmul" in k for k in on_wgmma) == 4, on_wgmma
    assert sum("attention" in k for k in on_wgmma) == 1, on_wgmma
    out = run_gpu(text, v, dims=dims)["hidden_states"]
    rnd = lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float64)
    want, _, _ = ref.llama_layer(v["hidden_states"].astype(np.float64), v["position_ids"], v,
                                 ref_config(cfg), rnd=rnd)
    np.testing.assert_allclose(out, want, rtol=2e-2, atol=2e-2)
