"""rlx_mir.grouped_matmul against numpy written here (each row through its
expert's nn.Linear weight), on cpu and emu from one test body; its
derivatives, forward mode and vmap by finite differences and a loop."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from rlx import hir, mir
from test_autodiff import build, check_grad, rand, t

DEVICES = ["cpu", "emu"]


def numpy_grouped_matmul(x, w, ids):
    ids = np.clip(ids, 0, w.shape[0] - 1)
    return np.einsum("tk,tnk->tn", x.astype(np.float64), w[ids].astype(np.float64))


def compile_on(module, device):
    return rlx.compile_cpu(module) if device == "cpu" else rlx.gpu.compile(module, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("id_type", ["i64", "i32"])
def test_grouped_matmul_matches_numpy(device, id_type):
    rng = np.random.default_rng(0)
    T, K, E, N = 9, 16, 4, 12
    f = hir.Function("f")
    x, w = f.input("x", (T, K)), f.input("w", (E, N, K))
    ids = f.input("ids", (T,), id_type)
    f.output("y", mir.grouped_matmul(x, w, ids))
    xs = rng.standard_normal((T, K)).astype(np.float32)
    ws = rng.standard_normal((E, N, K)).astype(np.float32)
    # Every expert, repeats, and ids outside [0, E) (clamped).
    ii = np.array([0, 3, 1, 1, 2, 3, -2, 7, 0], np.int64 if id_type == "i64" else np.int32)
    got = compile_on(f.build(), device).run(x=xs, w=ws, ids=ii)["y"]
    want = numpy_grouped_matmul(xs, ws, ii)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
def test_grouped_matmul_bf16(device):
    import ml_dtypes
    rng = np.random.default_rng(1)
    f = hir.Function("f")
    x, w = f.input("x", (6, 32), "bf16"), f.input("w", (3, 8, 32), "bf16")
    ids = f.input("ids", (6,), "i64")
    f.output("y", mir.grouped_matmul(x, w, ids))
    xs = rng.standard_normal((6, 32)).astype(ml_dtypes.bfloat16)
    ws = rng.standard_normal((3, 8, 32)).astype(ml_dtypes.bfloat16)
    ii = np.array([2, 0, 1, 2, 2, 0], np.int64)
    got = compile_on(f.build(), device).run(x=xs, w=ws, ids=ii)["y"]
    want = numpy_grouped_matmul(xs.astype(np.float32), ws.astype(np.float32), ii)
    # One bf16 rounding of an f32 accumulation.
    np.testing.assert_allclose(got, want, rtol=2 ** -8, atol=2 ** -8 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
def test_another_experts_inf_does_not_reach_the_row(device):
    f = hir.Function("f")
    x, w, ids = f.input("x", (2, 4)), f.input("w", (3, 2, 4)), f.input("ids", (2,), "i64")
    f.output("y", mir.grouped_matmul(x, w, ids))
    xs = np.ones((2, 4), np.float32)
    ws = np.ones((3, 2, 4), np.float32)
    ws[2] = np.inf  # expert 2: no row routed to it
    got = compile_on(f.build(), device).run(x=xs, w=ws, ids=np.array([0, 1], np.int64))["y"]
    np.testing.assert_array_equal(got, np.full((2, 2), 4.0, np.float32))


@pytest.mark.parametrize("flag,ids", [("", [2, 0, 2, 1, 0]),
                                      (" zero_out_of_range", [2, -1, 3, 1, 0])])
def test_grouped_matmul_rules(flag, ids):
    """Derivatives, forward mode and vmap (through the decomposition); with
    zero_out_of_range the rows of ids outside [0, E) have none."""
    rng = np.random.default_rng(2)
    body = (f"  %y = rlx_mir.grouped_matmul %x, %w, %ids{flag} : {t((5, 4))}, {t((3, 6, 4))}, "
            f"{t((5,), 'i64')}")
    text = build({"x": ((5, 4), "f64"), "w": ((3, 6, 4), "f64"), "ids": ((5,), "i64")}, body,
                 "%y", (5, 6))
    check_grad(text, {"x": rand(rng, 5, 4), "w": rand(rng, 3, 6, 4),
                      "ids": np.array(ids, np.int64), "R": rand(rng, 5, 6)},
               ["x", "w"], vmap_args=["x", "w", "ids"])


@pytest.mark.parametrize("shapes,message", [
    (((5, 4), (3, 6, 5), (5,)), "grouped_matmul K is 4 in the input but 5 in the weight"),
    (((5, 4), (3, 6, 4), (4,)), "one expert id per row: 5 rows, 4 ids"),
    (((5, 4), (6, 4), (5,)), r"needs input \[T, K\], weight \[E, N, K\] and ids \[T\]"),
    (((5, 4), (0, 6, 4), (5,)), "needs at least one expert"),
])
def test_grouped_matmul_errors(shapes, message):
    f = hir.Function("f")
    x, w, ids = f.input("x", shapes[0]), f.input("w", shapes[1]), f.input("i", shapes[2], "i64")
    with pytest.raises(rlx.RlxError, match=message):
        mir.grouped_matmul(x, w, ids)


@pytest.mark.parametrize("device", DEVICES)
def test_case_m5_grouped_matmul_routing(device):
    """../shared/cases M5 (RLX's [K, N] experts, here as nn.Linear's [N, K]):
    ids pick the expert per row; four rows on one expert all come back."""
    f = hir.Function("f")
    x, w, ids = f.input("x", (3, 2)), f.input("w", (2, 2, 2)), f.input("ids", (3,), "i64")
    f.output("y", mir.grouped_matmul(x, w, ids))
    w0 = np.array([[1, 2], [3, 4]], np.float32)
    weights = np.stack([w0.T, 10 * w0.T])
    got = compile_on(f.build(), device).run(
        x=np.array([[1, 0], [0, 1], [1, 1]], np.float32), w=weights,
        ids=np.array([1, 0, 1], np.int64))["y"]
    np.testing.assert_array_equal(got, [[10, 20], [3, 4], [40, 60]])
    g = hir.Function("g")
    x4, w4, i4 = g.input("x", (4, 16)), g.input("w", (4, 16, 16)), g.input("ids", (4,), "i32")
    g.output("y", mir.grouped_matmul(x4, w4, i4))
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((4, 16)).astype(np.float32)
    ws = rng.standard_normal((4, 16, 16)).astype(np.float32)
    ii = np.full(4, 2, np.int32)
    got = compile_on(g.build(), device).run(x=xs, w=ws, ids=ii)["y"]
    np.testing.assert_allclose(got, xs @ ws[2].T, rtol=1e-5, atol=1e-5)


def test_cpu_grouped_matmul_calls_the_runtime_gemm():
    """On the CPU path an f32 grouped_matmul is one call of the runtime's
    grouped GEMM (one BLAS call per expert), not loops over every expert."""
    import subprocess
    from harness import BUILD
    text = ("func.func @f(%x: tensor<6x8xf32>, %w: tensor<3x5x8xf32>, %i: tensor<6xi64>)"
            " -> tensor<6x5xf32> {\n"
            "  %y = rlx_mir.grouped_matmul %x, %w, %i : tensor<6x8xf32>, tensor<3x5x8xf32>,"
            " tensor<6xi64>\n  return %y : tensor<6x5xf32>\n}\n")
    out = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "--rlx-lower-to-cpu"], input=text,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "rlx_cpu_grouped_sgemm_i64" in out.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_grouped_matmul_of_a_slice(device):
    """Rows that are a column slice of a wider tensor (an offset and a row
    stride other than K reach the grouped GEMM), and K = 0 (all zeros)."""
    rng = np.random.default_rng(4)
    T, K, E, N = 7, 12, 3, 5
    f = hir.Function("f")
    wide, w = f.input("x", (T, K + 5)), f.input("w", (E, N, K))
    ids = f.input("ids", (T,), "i64")
    f.output("y", mir.grouped_matmul(mir.slice(wide, offsets=[0, 2], sizes=[T, K], strides=[1, 1]), w, ids))
    xs = rng.standard_normal((T, K + 5)).astype(np.float32)
    ws = rng.standard_normal((E, N, K)).astype(np.float32)
    ii = np.array([2, 0, 2, 1, 1, 0, 2], np.int64)
    got = compile_on(f.build(), device).run(x=xs, w=ws, ids=ii)["y"]
    want = numpy_grouped_matmul(xs[:, 2:2 + K], ws, ii)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    g = hir.Function("g")
    x0, w0, i0 = g.input("x", (3, 0)), g.input("w", (2, 4, 0)), g.input("ids", (3,), "i64")
    g.output("y", mir.grouped_matmul(x0, w0, i0))
    got = compile_on(g.build(), device).run(x=np.zeros((3, 0), np.float32),
                                            w=np.zeros((2, 4, 0), np.float32),
                                            ids=np.array([0, 1, 1], np.int64))["y"]
    np.testing.assert_array_equal(got, np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("dtype,kernel,K", [("bf16", "tensor-cores", 40), ("f16", "tensor-cores", 36),
                                            ("f32", "simt", 40), ("bf16", "simt", 40)])
def test_grouped_kernel_on_the_emulator(dtype, kernel, K):
    """The GPU grouped GEMM (the matmul kernel, one expert per M-tile, each
    block finding its expert's rows by scanning the ids) forced strictly:
    300 rows (more than a thread each in the scan), an expert with three
    M-tiles, an expert with none, ids to clamp, two N tiles with a tail, K
    with a tail (K = 36: no 16-byte copies of the rows)."""
    import ml_dtypes
    np_type = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}[dtype]
    rng = np.random.default_rng(5)
    T, E, N = 300, 5, 72
    ii = rng.choice([0, 2, 4], size=T).astype(np.int32)
    ii[rng.permutation(T)[:150]] = 1  # expert 1: 150 rows, three 64-row tiles
    ii[[7, 100, 299]] = [-1, 9, 5]    # clamped to 0, 4, 4; expert 3 gets none
    f = hir.Function("f")
    x, w = f.input("x", (T, K), dtype), f.input("w", (E, N, K), dtype)
    ids = f.input("ids", (T,), "i32")
    f.output("y", mir.grouped_matmul(x, w, ids))
    xs = rng.standard_normal((T, K)).astype(np_type)
    ws = rng.standard_normal((E, N, K)).astype(np_type)
    model = rlx.gpu.compile(f.build(), device="emu", matmul_kernel=kernel, strict_kernels=True)
    got = model.run(x=xs, w=ws, ids=ii)["y"].astype(np.float64)
    want = numpy_grouped_matmul(xs.astype(np.float32), ws.astype(np.float32), ii)
    tol = 1e-5 if dtype == "f32" else 2 ** -7  # one rounding of an f32 sum
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("kernel", ["wgmma", "tcgen05"])
def test_grouped_kernel_refuses_other_kernels(kernel):
    f = hir.Function("f")
    x, w, ids = f.input("x", (4, 32), "bf16"), f.input("w", (2, 64, 32), "bf16"), f.input(
        "ids", (4,), "i32")
    f.output("y", mir.grouped_matmul(x, w, ids))
    with pytest.raises(rlx.RlxError, match="a grouped matmul runs on gemv, tensor-cores or simt"):
        rlx.gpu.compile(f.build(), device="emu", matmul_kernel=kernel, strict_kernels=True)


@pytest.mark.parametrize("dtype,T,K,zero", [("bf16", 2, 64, False), ("f32", 16, 40, True),
                                            ("bf16", 5, 36, True), ("f16", 1, 96, False)])
def test_grouped_gemv_on_the_emulator(dtype, T, K, zero):
    """Decode (a token's k routed rows, at most 16): the GEMV kernel, each
    row streaming its own expert's weights, forced strictly. K = 40 and 36:
    no 16-byte vectors; ids to clamp, or with zero_out_of_range rows of
    zeros; split-K forced on one case."""
    import ml_dtypes
    np_type = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}[dtype]
    rng = np.random.default_rng(T)
    E, N = 6, 72
    f = hir.Function("f")
    x, w = f.input("x", (T, K), dtype), f.input("w", (E, N, K), dtype)
    ids = f.input("ids", (T,), "i64")
    f.output("y", mir.grouped_matmul(x, w, ids, zero_out_of_range=zero or None))
    ii = rng.integers(-1, E + 1, T).astype(np.int64)
    ii[0] = 3
    xs = rng.standard_normal((T, K)).astype(np_type)
    ws = rng.standard_normal((E, N, K)).astype(np_type)
    model = rlx.gpu.compile(f.build(), device="emu", matmul_kernel="gemv", strict_kernels=True,
                            split_k=2 if T == 5 else 0)
    got = model.run(x=xs, w=ws, ids=ii)["y"].astype(np.float64)
    want = numpy_grouped_matmul(xs.astype(np.float32), ws.astype(np.float32), ii)
    if zero:
        want *= ((ii >= 0) & (ii < E))[:, None]
    tol = 1e-5 if dtype == "f32" else 2 ** -7
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_zero_out_of_range(device, dtype):
    """zero_out_of_range (expert parallelism's local experts): rows whose id
    is outside [0, E) are zeros, not clamped, and are not computed (an inf in
    every weight does not reach them); the others are as without it."""
    import ml_dtypes
    np_type = np.float32 if dtype == "f32" else ml_dtypes.bfloat16
    rng = np.random.default_rng(6)
    T, K, E, N = 70, 24, 3, 40
    f = hir.Function("f")
    x, w = f.input("x", (T, K), dtype), f.input("w", (E, N, K), dtype)
    ids = f.input("ids", (T,), "i64")
    f.output("y", mir.grouped_matmul(x, w, ids, zero_out_of_range=True))
    xs = rng.standard_normal((T, K)).astype(np_type)
    ws = rng.standard_normal((E, N, K)).astype(np_type)
    ii = rng.integers(-2, E + 2, T).astype(np.int64)
    ii[:4] = [-1, E, 0, E + 7]
    model = compile_on(f.build(), device)
    got = model.run(x=xs, w=ws, ids=ii)["y"].astype(np.float64)
    kept = (ii >= 0) & (ii < E)
    want = numpy_grouped_matmul(xs.astype(np.float32), ws.astype(np.float32), ii) * kept[:, None]
    tol = 1e-5 if dtype == "f32" else 2 ** -7
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    assert not got[~kept].any()
    # Rows out of range read no weight: inf everywhere, still zeros there.
    got = model.run(x=xs, w=np.full((E, N, K), np.inf, np_type),
                    ids=np.full(T, -1, np.int64))["y"]
    np.testing.assert_array_equal(got, np.zeros((T, N), np_type))

