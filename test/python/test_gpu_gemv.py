"""The decode matmul kernel (issue 16): GEMV for at most 16 rows with split-K
inside the block (warps summing disjoint K ranges, combined in split order
before the epilogue runs once), the forced-kernel options, and case G5:
bias per output column (a), a residual whose buffer the output overwrites
(b, the planner's in-place reuse), with bias and residual applied once
under split-K, on the CPU path and under the emulator, against numpy."""
from __future__ import annotations

import pathlib
import subprocess
import tempfile

import numpy as np
import pytest

from gpu_harness import RLX_COMPILE, compile_artifact, run_gpu
from harness import BUILD, run_mlir

RLX_OPT = BUILD / "bin" / "rlx-opt"


def t(*shape, dtype="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def kernels_of(text, flags=()):
    """The gpu.func names and PTX of the compiled module (matmul kernel names
    say which kernel template built them only through their code, so the
    PTX is returned for the caller to inspect)."""
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, cubin=True, flags=list(flags))
        return manifest, "".join(p.read_text() for p in art.glob("*.ptx"))


def g5a(M, n, K=3):
    return f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {t(n, K)} {{rlx.input = "w"}}, %b: {t(n)} {{rlx.input = "b"}}) -> {t(M, n)} {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t(M, K)}, {t(n, K)}
  %y = rlx_mir.add %m, %b : {t(M, n)}, {t(n)}
  return %y : {t(M, n)}
}}"""


@pytest.mark.parametrize("split", [0, 1, 3, 8])
@pytest.mark.parametrize("n", [4, 6])
def test_g5a_bias_axis_on_gemv(n, split):
    """G5(a): x = ones(4×3), W = ones, b per output column → every row
    [13, 23, 33, 43(, 53, 63)]; the square 4×4 output is the trap."""
    b = np.array([10, 20, 30, 40, 50, 60][:n], np.float32)
    inputs = {"x": np.ones((4, 3), np.float32), "w": np.ones((n, 3), np.float32), "b": b}
    out = run_gpu(g5a(4, n), inputs, flags=["--split-k", str(split)])
    np.testing.assert_array_equal(out["result0"], np.tile(b + 3, (4, 1)))


def g5b(K):
    """y = x·Wᵀ + b + r with r computed in the arena (r0 + r0) and dying at
    the fused_matmul, so the planner lets the output overwrite it."""
    M, N = 4, 4
    return f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {t(N, K)} {{rlx.input = "w"}}, %b: {t(N)} {{rlx.input = "b"}}, %r0: {t(M, N)} {{rlx.input = "r0"}}, %zero: {t(M, N)} {{rlx.input = "zero"}}) -> {t(M, N)} {{
  %r = rlx_mir.add %r0, %r0 : {t(M, N)}, {t(M, N)}
  %m = rlx_mir.matmul %x, %w transpose_b : {t(M, K)}, {t(N, K)}
  %y = rlx_mir.add %m, %b : {t(M, N)}, {t(N)}
  %z = rlx_mir.add %y, %r : {t(M, N)}, {t(M, N)}
  %o = rlx_mir.mul %z, %zero : {t(M, N)}, {t(M, N)}
  %p = rlx_mir.add %o, %z : {t(M, N)}, {t(M, N)}
  return %p : {t(M, N)}
}}"""


def test_g5b_plan_overwrites_the_residual():
    """The planner gives the fused_matmul's output the residual's bytes."""
    proc = subprocess.run([str(RLX_OPT), "-", "--rlx-mir-fuse", "--convert-rlx-mir-to-lir",
                           "--rlx-lir-bufferize", "--rlx-lir-plan-buffers",
                           "--rlx-lir-verify-plan"],
                          input=g5b(3), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if 'rlx_lir.kernel "fused_matmul"' in l)
    assert "in_place = array<i64: 3>" in line
    ins = line.split("ins(")[1].split(":")[0].split(", ")
    outs = line.split("outs(")[1].split(":")[0].strip()
    views = {l.split("=")[0].strip(): l.split("[")[1].split("]")[0]
             for l in proc.stdout.splitlines() if "rlx_lir.view" in l}
    assert views[ins[3].strip()] == views[outs]


def g5b_inputs(K):
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    return {"x": np.ones((4, K), np.float32), "w": np.ones((4, K), np.float32),
            "b": np.array([10, 20, 30, 40], np.float32),
            "r0": ((100 * i + j) / 2).astype(np.float32), "zero": np.zeros((4, 4), np.float32)}


@pytest.mark.parametrize("where", ["cpu", "gpu", "gpu-split3", "gpu-simt", "gpu-split3-K200",
                                   "gpu-wgmma-f16-K200", "gpu-tensor-cores-f16-K200"])
def test_g5b_residual_aliasing_the_output(where):
    """G5(b): row 0 [13, 24, 35, 46], row 3 [313, 324, 335, 346], equal to
    the out-of-place result; with 3 splits bias and residual still once
    (per split they give [33, 64, 95, 126] or [33, 67, 101, 135]); the
    tensor-core kernels in f16 (every value exact)."""
    K = 200 if where.endswith("K200") else 3
    inputs = g5b_inputs(K)
    text = g5b(K)
    flags = {"gpu": [], "gpu-split3": ["--split-k", "3"], "gpu-simt": ["--matmul-kernel", "simt"],
             "gpu-split3-K200": ["--split-k", "3"],
             "gpu-wgmma-f16-K200": ["--matmul-kernel", "wgmma"],
             "gpu-tensor-cores-f16-K200": ["--matmul-kernel", "tensor-cores"]}
    if "f16" in where:
        text = text.replace("xf32>", "xf16>")
        inputs = {k: v.astype(np.float16) for k, v in inputs.items()}
    y = run_mlir(text, inputs) if where == "cpu" else run_gpu(text, inputs, flags=flags[where])
    y = y["result0"].astype(np.float32)
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    expect = K + np.array([10, 20, 30, 40], np.float32) + (100 * i + j)
    np.testing.assert_array_equal(y, expect)
    if K == 3:
        np.testing.assert_array_equal(y[0], [13, 24, 35, 46])
        np.testing.assert_array_equal(y[3], [313, 324, 335, 346])


def fused_decode(M, K, N, dtype, glu):
    """RMSNorm prologue, bias, SiLU (or SwiGLU on packed gate|up), residual."""
    nw = 2 * N if glu else N
    act = "silu"
    return f"""func.func @f(%x: {t(M, K, dtype=dtype)} {{rlx.input = "x"}}, %g: {t(K, dtype=dtype)} {{rlx.input = "g"}}, %w: {t(nw, K, dtype=dtype)} {{rlx.input = "w"}}, %b: {t(nw, dtype=dtype)} {{rlx.input = "b"}}, %r: {t(M, N, dtype=dtype)} {{rlx.input = "r"}}) -> {t(M, N, dtype=dtype)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : {t(K, dtype=dtype)}) bias(%b : {t(nw, dtype=dtype)}) activation {act} {"glu " if glu else ""}residual(%r : {t(M, N, dtype=dtype)}) : {t(M, K, dtype=dtype)}, {t(nw, K, dtype=dtype)}
  return %y : {t(M, N, dtype=dtype)}
}}"""


def silu(v):
    return v / (1 + np.exp(-v))


def reference(x, g, w, b, r, glu):
    x, g, w, b, r = (a.astype(np.float64) for a in (x, g, w, b, r))
    n = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g
    z = n @ w.T + b
    if glu:
        N = z.shape[-1] // 2
        return silu(z[:, :N]) * z[:, N:] + r
    return silu(z) + r


def bf16_round(a):
    from gpu_harness import from_bf16_bits, to_bf16_bits
    return from_bf16_bits(to_bf16_bits(a))


@pytest.mark.parametrize("split", [0, 2, 5])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("M,K,N,glu", [(1, 256, 24, False), (5, 264, 16, True), (16, 520, 40, False)])
def test_fused_gemv_matches_numpy(M, K, N, glu, dtype, split):
    """Norm prologue + bias + SiLU/SwiGLU + residual on the gemv kernel, K
    not a multiple of the splits' chunks, vs numpy in f64."""
    rng = np.random.default_rng(M * K + N)
    nw = 2 * N if glu else N
    vals = {"x": rng.standard_normal((M, K)), "g": 1 + 0.1 * rng.standard_normal(K),
            "w": rng.standard_normal((nw, K)) / np.sqrt(K), "b": 0.1 * rng.standard_normal(nw),
            "r": rng.standard_normal((M, N))}
    vals = {k: v.astype(np.float32) for k, v in vals.items()}
    if dtype == "bf16":
        vals = {k: bf16_round(v) for k, v in vals.items()}
    out = run_gpu(fused_decode(M, K, N, dtype, glu), vals, flags=["--split-k", str(split)])
    ref = reference(vals["x"], vals["g"], vals["w"], vals["b"], vals["r"], glu)
    tol = 1e-5 if dtype == "f32" else 2e-2
    np.testing.assert_allclose(out["result0"], ref, rtol=tol, atol=tol)


def test_split_k_results_are_the_same_bits_every_run():
    """Partial sums combine in split order: identical bits over repeats."""
    rng = np.random.default_rng(7)
    M, K, N = 3, 1000, 8
    vals = {"x": rng.standard_normal((M, K)), "g": np.ones(K), "w": rng.standard_normal((N, K)),
            "b": np.zeros(N), "r": np.zeros((M, N))}
    vals = {k: v.astype(np.float32) for k, v in vals.items()}
    text = fused_decode(M, K, N, "f32", False)
    first = run_gpu(text, vals, flags=["--split-k", "8"])["result0"]
    for _ in range(2):
        np.testing.assert_array_equal(run_gpu(text, vals, flags=["--split-k", "8"])["result0"],
                                      first)


def test_forced_kernels_compile_and_agree():
    """matmul-kernel forces each template on one bf16 matmul (12 rows: every
    kernel can take it); mma.sync appears exactly when tensor cores are
    forced, and all three agree with numpy."""
    M, K, N = 12, 64, 64
    text = f"""func.func @f(%x: {t(M, K, dtype="bf16")} {{rlx.input = "x"}}, %w: {t(N, K, dtype="bf16")} {{rlx.input = "w"}}) -> {t(M, N)} {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t(M, K, dtype="bf16")}, {t(N, K, dtype="bf16")}
  %y = rlx_mir.cast %m : {t(M, N, dtype="bf16")} to {t(M, N)}
  return %y : {t(M, N)}
}}"""
    rng = np.random.default_rng(1)
    x = bf16_round(rng.standard_normal((M, K)).astype(np.float32))
    w = bf16_round(rng.standard_normal((N, K)).astype(np.float32))
    ref = bf16_round((x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32))
    for kernel in ["auto", "gemv", "simt", "tensor-cores"]:
        manifest, ptx = kernels_of(text, ["--matmul-kernel", kernel])
        assert ("mma.sync.aligned.m16n8k16" in ptx) == (kernel == "tensor-cores"), kernel
        assert all(k.get("spill_bytes", 0) == 0 for k in manifest["kernels"]), kernel
        out = run_gpu(text, {"x": x, "w": w}, flags=["--matmul-kernel", kernel])
        np.testing.assert_allclose(out["result0"], ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("flags,message", [
    (["--matmul-kernel", "gemv"], "matmul-kernel=gemv on 40 rows (the gemv kernel takes at most 16)"),
    (["--matmul-kernel", "tensor-cores"], "matmul-kernel=tensor-cores: its operands are not both bf16 or both f16"),
    (["--matmul-kernel", "fast"], "matmul-kernel must be auto, gemv, simt, tensor-cores, wgmma or tcgen05, got 'fast'"),
    (["--split-k", "17"], "split-k must be 0 (the heuristic) or 1..16, got 17"),
])
def test_forced_kernel_that_cannot_apply_is_a_located_error(tmp_path, flags, message):
    text = f"""func.func @f(%x: {t(40, 32)} {{rlx.input = "x"}}, %w: {t(32, 32)} {{rlx.input = "w"}}) -> {t(40, 32)} {{
  %m = rlx_mir.matmul %x, %w : {t(40, 32)}, {t(32, 32)}
  return %m : {t(40, 32)}
}}"""
    (tmp_path / "m.mlir").write_text(text)
    proc = subprocess.run([str(RLX_COMPILE), str(tmp_path / "m.mlir"), "-o", str(tmp_path / "a"),
                           "--no-cubin", "--strict-kernels", *flags], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert message in proc.stderr
    # A value no kernel has is the flag's error; the rest point at the op.
    assert ("rlx-compile: --" if "got 'fast'" in message else "m.mlir:") in proc.stderr
    assert "Assertion" not in proc.stderr and "Stack dump" not in proc.stderr


@pytest.mark.parametrize("kernel", ["tensor-cores", "simt", "wgmma"])
@pytest.mark.parametrize("n", [4, 6])
def test_g5a_bias_axis_on_the_prefill_kernels(n, kernel):
    """G5(a) with 20 rows (more than gemv takes) on each prefill kernel, bf16
    (K = 8 on wgmma, whose TMA rows are whole 16-byte units)."""
    M, K = 20, 8 if kernel == "wgmma" else 3
    text = g5a(M, n, K).replace("xf32>", "xbf16>")
    b = np.array([10, 20, 30, 40, 50, 60][:n], np.float32)
    out = run_gpu(text, {"x": np.ones((M, K), np.float32), "w": np.ones((n, K), np.float32),
                         "b": b}, flags=["--matmul-kernel", kernel])
    np.testing.assert_array_equal(out["result0"], np.tile(b + K, (M, 1)))


G5C = f"""func.func @f(%a: {t(2, 32, 32)} {{rlx.input = "a"}}, %b: {t(2, 32, 16)} {{rlx.input = "b"}}, %bias: {t(32, 16)} {{rlx.input = "bias"}}) -> {t(32, 16)} {{
  %m = rlx_mir.matmul %a, %b : {t(2, 32, 32)}, {t(2, 32, 16)}
  %s = rlx_mir.reduce sum %m axes = [0] : {t(2, 32, 16)}
  %y = rlx_mir.add %s, %bias : {t(32, 16)}, {t(32, 16)}
  return %y : {t(32, 16)}
}}"""


@pytest.mark.parametrize("where", ["cpu", "auto", "simt", "gemv-rejected"])
def test_g5c_full_bias_after_a_batch_reduce(where):
    """G5(c): a full M×N bias (not a vector) after a batch-reduce of 2: all
    ones, bias 100 → 164 everywhere (64: the bias was dropped). A forced
    kernel that cannot take the matmul is rejected at compile time."""
    inputs = {"a": np.ones((2, 32, 32), np.float32), "b": np.ones((2, 32, 16), np.float32),
              "bias": np.full((32, 16), 100, np.float32)}
    if where == "gemv-rejected":
        with pytest.raises(RuntimeError, match="matmul-kernel=gemv on 32 rows"):
            run_gpu(G5C, inputs, flags=["--matmul-kernel", "gemv", "--strict-kernels"])
        return
    y = run_mlir(G5C, inputs) if where == "cpu" else run_gpu(
        G5C, inputs, flags=["--matmul-kernel", where])
    np.testing.assert_array_equal(y["result0"], np.full((32, 16), 164, np.float32))


def head_norm_decode(M, K, heads, D):
    return f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {t(heads * D, K)} {{rlx.input = "w"}}, %hw: {t(heads, D)} {{rlx.input = "hw"}}) -> {t(M, heads * D)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b head_norm(%hw : {t(heads, D)}) head_norm_eps = 1.0e-06 head_dim = {D} : {t(M, K)}, {t(heads * D, K)}
  return %y : {t(M, heads * D)}
}}"""


def test_head_norm_on_gemv_with_split_k_matches_numpy():
    """Head stages on gemv (a block per head, 16 warps), K split in 2."""
    M, K, H, D = 16, 96, 2, 128
    rng = np.random.default_rng(11)
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = (rng.standard_normal((H * D, K)) / np.sqrt(K)).astype(np.float32)
    hw = (1 + 0.1 * rng.standard_normal((H, D))).astype(np.float32)
    out = run_gpu(head_norm_decode(M, K, H, D), {"x": x, "w": w, "hw": hw},
                  flags=["--split-k", "2"])["result0"]
    z = (x.astype(np.float64) @ w.T.astype(np.float64)).reshape(M, H, D)
    ref = z / np.sqrt((z * z).mean(-1, keepdims=True) + 1e-6) * hw
    np.testing.assert_allclose(out, ref.reshape(M, H * D), rtol=1e-5, atol=1e-5)


def test_forced_split_k_whose_partial_sums_do_not_fit_is_an_error(tmp_path):
    (tmp_path / "m.mlir").write_text(head_norm_decode(16, 96, 2, 128))
    proc = subprocess.run([str(RLX_COMPILE), str(tmp_path / "m.mlir"), "-o", str(tmp_path / "a"),
                           "--no-cubin", "--split-k", "16"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert ("split-k=16 on 16 rows of 128 columns: its partial sums exceed 40960 bytes of "
            "shared memory") in proc.stderr
    assert "m.mlir:" in proc.stderr
