"""Warp matrix instructions (issue 16, first part): a hand-written tensor-core
tile kernel (ldmatrix from shared memory, mma.sync m16n8k16) that ptxas
assembles for sm_80 and sm_90a and that the emulator runs with the PTX ISA's
fragment layouts, against numpy: bit-exact on integer-valued inputs (as case
G4), within f32 rounding on random ones."""
from __future__ import annotations

import pathlib
import tempfile

import numpy as np
import pytest

from gpu_harness import compile_artifact, from_bf16_bits, run_artifact, to_bf16_bits

TEMPLATE = (pathlib.Path(__file__).parent / "mma_tile.mlir.in").read_text()


def module(dtype):
    return (TEMPLATE.replace("xT>", f"x{dtype}>").replace("xT,", f"x{dtype},")
            .replace("TYPE", dtype)
            .replace("OPERAND", "vector<2xf16>" if dtype == "f16" else "i32"))


def encode(a, dtype):
    return to_bf16_bits(a) if dtype == "bf16" else a.astype(np.float16)


def decoded(a, dtype):
    return from_bf16_bits(to_bf16_bits(a)) if dtype == "bf16" else a.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_mma_tile(dtype, chip):
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(module(dtype), art, chip=chip, cubin=True)
        ptx = (art / "tc.ptx").read_text()
        assert f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in ptx
        k = next(k for k in manifest["kernels"] if k["name"] == "mma")
        assert k["spill_bytes"] == 0 and k["stack_bytes"] == 0
        # G4-style: every product exact, so the result is bit-exact.
        i, kk = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        a = ((i + 2 * kk) % 3).astype(np.float32)
        k2, n = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
        b = ((2 * k2 + n) % 3).astype(np.float32)
        d = run_artifact(art, "f", {"a": encode(a, dtype), "b": encode(b, dtype)})["d"]
        np.testing.assert_array_equal(d, a @ b)
        # Random values: the f32 sum of exact products, rounded once.
        rng = np.random.default_rng(3)
        a = decoded(rng.standard_normal((16, 16)).astype(np.float32), dtype)
        b = decoded(rng.standard_normal((16, 8)).astype(np.float32), dtype)
        d = run_artifact(art, "f", {"a": encode(a, dtype), "b": encode(b, dtype)})["d"]
        np.testing.assert_allclose(d, a.astype(np.float64) @ b, rtol=1e-6, atol=1e-6)


def run_mir(text, inputs, chip="sm_90a"):
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, chip=chip, cubin=True)
        ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
        out = run_artifact(art, manifest["entry"], inputs)
        return out, ptx, manifest


@pytest.mark.parametrize("n", [4, 6])
def test_g5a_bias_axis_on_tensor_cores(n):
    """Case G5(a) with 20 rows (the tensor-core path takes more than 16):
    bias per output column, every row [13, 23, 33, 43(, 53, 63)]."""
    M, K = 20, 3
    text = f"""func.func @f(%x: tensor<{M}x{K}xbf16> {{rlx.input = "x"}}, %w: tensor<{n}x{K}xbf16> {{rlx.input = "w"}}, %b: tensor<{n}xbf16> {{rlx.input = "b"}}) -> tensor<{M}x{n}xbf16> {{
  %m = rlx_mir.matmul %x, %w transpose_b : tensor<{M}x{K}xbf16>, tensor<{n}x{K}xbf16>
  %y = rlx_mir.add %m, %b : tensor<{M}x{n}xbf16>, tensor<{n}xbf16>
  return %y : tensor<{M}x{n}xbf16>
}}"""
    b = np.array([10, 20, 30, 40, 50, 60][:n], np.float32)
    out, ptx, _ = run_mir(text, {"x": to_bf16_bits(np.ones((M, K), np.float32)),
                                 "w": to_bf16_bits(np.ones((n, K), np.float32)),
                                 "b": to_bf16_bits(b)})
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    np.testing.assert_array_equal(from_bf16_bits(out["result0"]), np.tile(b + 3, (M, 1)))


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("M,K,N", [(37, 96, 72), (100, 64, 128), (19, 200, 40)])
def test_matmul_on_tensor_cores_matches_numpy(M, K, N, dtype):
    rng = np.random.default_rng(M * K)
    x = decoded(rng.standard_normal((M, K)).astype(np.float32), dtype)
    w = decoded(rng.standard_normal((N, K)).astype(np.float32), dtype)
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + f"x{dtype}>"
    text = f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {t(N, K)} {{rlx.input = "w"}}) -> tensor<{M}x{N}xf32> {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t(M, K)}, {t(N, K)}
  %y = rlx_mir.cast %m : {t(M, N)} to tensor<{M}x{N}xf32>
  return %y : tensor<{M}x{N}xf32>
}}"""
    out, ptx, manifest = run_mir(text, {"x": encode(x, dtype), "w": encode(w, dtype)}, chip="sm_80")
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32" in ptx
    assert all(k.get("spill_bytes", 0) == 0 for k in manifest["kernels"])
    ref = x.astype(np.float64) @ w.T.astype(np.float64)
    # One rounding of the f32 sum to the matmul's dtype (the CPU path's rule).
    np.testing.assert_allclose(out["result0"], ref, rtol=1e-2 if dtype == "bf16" else 2e-3,
                               atol=1e-2 if dtype == "bf16" else 2e-3)


@pytest.mark.parametrize("config", ["llama-3.2-1b.json", "qwen3-0.6b.json"])
def test_two_layer_bf16_model_on_tensor_cores_matches_cpu(config):
    """Prefill of 37 tokens in bf16: every fused_matmul (norm prologue, GLU,
    head norm, RoPE, residual) on tensor cores, vs the CPU path."""
    from harness import gen_model, shared_dir
    from test_gpu_emulator import compare_with_cpu
    if not shared_dir():
        pytest.skip("../shared/models not present")
    sets = ["hidden_size=256", "intermediate_size=512", "num_attention_heads=8",
            "num_key_value_heads=2", "head_dim=32", "vocab_size=512"]
    text = gen_model(shared_dir() / "models" / config, "--layers", "2", "--dtype", "bf16",
                     "--seq", "37", *[a for s in sets for a in ("--set", s)])
    compare_with_cpu(text, {}, dtype="bf16")


G4_SUMS = {8: (65515, 84), 24: (196608, 86), 40: (327766, 214), 56: (458731, 84)}


def g4_b(K, N):
    """B[k, n] = (2k + n) mod 3 (case G4)."""
    k2, nn = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
    return ((2 * k2 + nn) % 3).astype(np.float32)


def g4_matmul(a, b, dtype, kernel):
    """a @ b through rlx_mir.matmul on the forced kernel, f32 out; 100 runs
    that must give the same bits (rlx-gpu-run --repeat)."""
    (M, K), N = a.shape, b.shape[1]
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + f"x{dtype}>"
    text = f"""func.func @f(%a: {t(M, K)} {{rlx.input = "a"}}, %b: {t(K, N)} {{rlx.input = "b"}}) -> tensor<{M}x{N}xf32> {{
  %m = rlx_mir.matmul %a, %b : {t(M, K)}, {t(K, N)}
  %y = rlx_mir.cast %m : {t(M, N)} to tensor<{M}x{N}xf32>
  return %y : tensor<{M}x{N}xf32>
}}"""
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        compile_artifact(text, art, cubin=True, flags=["--matmul-kernel", kernel])
        ptx = "".join(p.read_text() for p in art.glob("*.ptx"))
        assert ("mma.sync" in ptx) == (kernel == "tensor-cores")
        return run_artifact(art, "f", {"a": encode(a, dtype), "b": encode(b, dtype)},
                            repeat=100)["result0"]


@pytest.mark.parametrize("kernel", ["tensor-cores", "simt"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("n", sorted(G4_SUMS))
def test_g4_through_the_compiled_kernel(n, dtype, kernel):
    """Case G4(a) through rlx_mir.matmul on each kernel that takes 64 rows:
    bit-exact, and the same bits over 100 runs (G4(c); shared-memory staging
    races would differ)."""
    M, K = 64, 128
    i, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    a = ((i + 2 * k) % 3).astype(np.float32)
    first = g4_matmul(a, g4_b(K, n), dtype, kernel)
    np.testing.assert_array_equal(first, a @ g4_b(K, n))
    total, last = G4_SUMS[n]
    assert first.sum() == total and first[63, n - 1] == last and first.max() == 215
    np.testing.assert_array_equal(first[0, :4], [214, 84, 86, 214])


@pytest.mark.parametrize("kernel", ["tensor-cores", "simt"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_g4b_four_row_blocks(dtype, kernel):
    """Case G4(b): M = 256 (four 64-row tiles), K = 64, N = 24; A[i, k] =
    i // 64 + 1 on even k, else 0: C[i, n] = (i // 64 + 1) · s[n] with s =
    [31, 33, 32] repeated, 64-row block sums [49152, 98304, 147456, 196608]
    (swapped sub-blocks would permute them); 100 runs, identical bits."""
    M, K, N = 256, 64, 24
    i, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    a = np.where(k % 2 == 0, i // 64 + 1, 0).astype(np.float32)
    c = g4_matmul(a, g4_b(K, N), dtype, kernel)
    s = np.tile([31, 33, 32], 8)
    np.testing.assert_array_equal(c, (np.arange(M)[:, None] // 64 + 1) * s[None, :])
    np.testing.assert_array_equal(c.reshape(4, 64, N).sum(axis=(1, 2)),
                                  [49152, 98304, 147456, 196608])


def test_norm_prologue_and_swiglu_epilogue_on_tensor_cores():
    """rms_norm → matmul → silu(gate) · up: one fused_matmul on mma.sync."""
    text = (pathlib.Path(__file__).parents[1] / "Target" / "NVVM" / "tensor-cores.mlir").read_text()
    text = text.replace("%x: tensor<37x96xbf16>", '%x: tensor<37x96xbf16> {rlx.input = "x"}')
    text = text.replace("%g: tensor<96xbf16>", '%g: tensor<96xbf16> {rlx.input = "g"}')
    text = text.replace("%w: tensor<256x96xbf16>", '%w: tensor<256x96xbf16> {rlx.input = "w"}')
    rng = np.random.default_rng(5)
    x = decoded(rng.standard_normal((37, 96)).astype(np.float32), "bf16")
    g = decoded((1 + 0.1 * rng.standard_normal(96)).astype(np.float32), "bf16")
    w = decoded((0.1 * rng.standard_normal((256, 96))).astype(np.float32), "bf16")
    # sm_80: mma.sync (sm_90a takes wgmma, test_gpu_wgmma.py).
    out, ptx, manifest = run_mir(text, {"x": to_bf16_bits(x), "g": to_bf16_bits(g),
                                        "w": to_bf16_bits(w)}, chip="sm_80")
    assert "mma.sync" in ptx
    assert sum("fused_matmul" in k["name"] for k in manifest["kernels"]) == 1
    xd = x.astype(np.float64)
    n = decoded((xd / np.sqrt((xd ** 2).mean(1, keepdims=True) + 1e-5) * g).astype(np.float32),
                "bf16").astype(np.float64)
    m = n @ w.T.astype(np.float64)
    gate, up = m[:, :128], m[:, 128:]
    ref = gate / (1 + np.exp(-gate)) * up
    np.testing.assert_allclose(from_bf16_bits(out["result0"]), ref, rtol=2e-2, atol=2e-2)


ASYNC = (pathlib.Path(__file__).parent / "mma_tile_async.mlir.in").read_text()


@pytest.mark.parametrize("wait", [True, False])
def test_cp_async_staging_completes_only_at_its_wait(wait):
    """The tile kernel staged with cp.async (16-byte copies, one group): with
    cp.async.wait.group 0 before the barrier it matches numpy; without it the
    emulator reports the copies that were never waited for (on a GPU: a race)."""
    text = (ASYNC.replace("xT>", "xbf16>").replace("xT,", "xbf16,").replace("TYPE", "bf16")
            .replace("OPERAND", "i32")
            .replace("WAIT", "nvvm.cp.async.wait.group 0" if wait else ""))
    rng = np.random.default_rng(9)
    a = decoded(rng.standard_normal((16, 16)).astype(np.float32), "bf16")
    b = decoded(rng.standard_normal((16, 8)).astype(np.float32), "bf16")
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        compile_artifact(text, art, chip="sm_80", cubin=True)
        ptx = (art / "tc.ptx").read_text()
        assert "cp.async.cg.shared.global" in ptx and "cp.async.commit_group" in ptx
        assert ("cp.async.wait_group" in ptx) == wait
        if wait:
            d = run_artifact(art, "f", {"a": to_bf16_bits(a), "b": to_bf16_bits(b)})["d"]
            np.testing.assert_allclose(d, a.astype(np.float64) @ b, rtol=1e-6, atol=1e-6)
        else:
            with pytest.raises(RuntimeError, match="never waited"):
                run_artifact(art, "f", {"a": to_bf16_bits(a), "b": to_bf16_bits(b)})


RING = (pathlib.Path(__file__).parent / "mbarrier_ring.mlir").read_text()


@pytest.mark.parametrize("wait", [True, False])
def test_mbarrier_ring_through_ptxas_and_the_emulator(wait):
    """nvvm.mbarrier.{init, arrive, try_wait.parity} in a hand-written
    two-slot producer/consumer ring: ptxas builds it for sm_90a, the emulator
    runs it with the PTX phase semantics, 10 runs with identical bits.
    Without the producer's wait on empty[s] the producer runs ahead and
    completes full[s]'s phases before the consumer looks: the consumer then
    waits for a parity the barrier has already passed (on a GPU: a hang or
    overwritten tiles), which the emulator reports as a deadlock naming the
    waits."""
    wait_op = ("nvvm.mbarrier.try_wait.parity %empty, %other, %ticks : !llvm.ptr<3>, i32, i32"
               if wait else "")
    text = RING.replace("PRODUCER_WAIT", wait_op)
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, chip="sm_90a", cubin=True)
        ptx = (art / "ring.ptx").read_text()
        assert "mbarrier.init.shared" in ptx and "mbarrier.try_wait.parity" in ptx
        assert "mbarrier.arrive" in ptx
        assert all(k["spill_bytes"] == 0 for k in manifest["kernels"])
        if wait:
            out = run_artifact(art, "f", {}, repeat=10)["out"]
            i, lane = np.meshgrid(np.arange(8), np.arange(32), indexing="ij")
            np.testing.assert_array_equal(out, (100 * i + lane).reshape(-1).astype(np.float32))
        else:
            with pytest.raises(RuntimeError, match=r"deadlock: .*threads 0-31 have exited; "
                               r"threads 32-\d+ wait at mbarrier.try_wait.parity 0"):
                run_artifact(art, "f", {})


def test_wgmma_tile_through_ptxas_and_the_emulator():
    """nvvm.wgmma.mma_async m64n8k16 bf16 in a hand-written kernel: ptxas
    builds it for sm_90a (and the target check refuses it for sm_80); the
    emulator reads A and B through the matrix descriptors the kernel builds
    from its shared addresses and gives each thread its accumulators in the
    PTX ISA's layout, bit-exact on G4-style integers."""
    text = (pathlib.Path(__file__).parent / "wgmma_tile.mlir").read_text()
    r, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    a = ((r + 2 * k) % 3).astype(np.float32)
    n, k2 = np.meshgrid(np.arange(8), np.arange(16), indexing="ij")
    b = ((2 * k2 + n) % 3).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, chip="sm_90a", cubin=True)
        ptx = (art / "wg.ptx").read_text()
        assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16" in ptx
        assert "wgmma.fence.sync.aligned" in ptx and "fence.proxy.async.shared::cta" in ptx
        assert all(kk["spill_bytes"] == 0 for kk in manifest["kernels"])
        out = run_artifact(art, "f", {"a": to_bf16_bits(a.reshape(-1)),
                                      "b": to_bf16_bits(b.reshape(-1))}, repeat=5)["out"]
        with pytest.raises(RuntimeError, match="sm_90a"):
            compile_artifact(text, pathlib.Path(tmp) / "art80", chip="sm_80")
    d = a @ b.T  # [64, 8]
    t = np.arange(128)[:, None]
    i = np.arange(4)[None, :]
    w, lane = t // 32, t % 32
    rows = 16 * w + lane // 4 + 8 * (i // 2)
    cols = 2 * (lane % 4) + i % 2
    np.testing.assert_array_equal(out.reshape(128, 4), d[rows, cols])
