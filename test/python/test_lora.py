"""rlx_mir.lora_matmul against numpy written here (y = x·Wᵀ + s·(x·Aᵀ)·Bᵀ with
PEFT's lora_A [r, in] / lora_B [out, r]; several adapters selected per row,
−1 for the base layer alone), on the CPU path and the emulator from one test
body; case LR1 of ../shared/cases/README.md literally; its derivatives,
forward mode and vmap by finite differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import rlx
from rlx import hir, mir
from test_autodiff import build, check_grad, rand, t

DEVICES = ["cpu", "emu"]


def compile_on(module, device):
    return rlx.compile_cpu(module) if device == "cpu" else rlx.gpu.compile(module, device=device)


def numpy_lora(x, w, a, b, scales, ids=None):
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    y = x64 @ w64.T
    if ids is None:
        return y + scales[0] * (x64 @ a.astype(np.float64).T) @ b.astype(np.float64).T
    for idx in np.ndindex(ids.shape):
        i = ids[idx]
        if 0 <= i < a.shape[0]:
            y[idx] += scales[i] * (x64[idx] @ a[i].astype(np.float64).T) @ b[i].astype(np.float64).T
    return y


def run_lora(device, x, w, a, b, scales, ids=None):
    f = hir.Function("f")
    xi, wi = f.input("x", x.shape), f.input("w", w.shape)
    ai, bi = f.input("a", a.shape), f.input("b", b.shape)
    feeds = dict(x=x, w=w, a=a, b=b)
    idv = None
    if ids is not None:
        idv = f.input("ids", ids.shape, "i64" if ids.dtype == np.int64 else "i32")
        feeds["ids"] = ids
    f.output("y", mir.lora_matmul(xi, wi, ai, bi, idv, scales=list(scales)))
    return compile_on(f.build(), device).run(**feeds)["y"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rslora,want", [
    (False, [15.0, 22.0, 34.0]),
    (True, [20.7989899, 30.2842712, 48.0832611]),
])
def test_case_lr1_scale_and_orientation(device, rslora, want):
    # The case's RLX form x·W + s·(x·A)·B with A [in, r], B [r, out]; PEFT
    # (and this op) store W, A and B transposed.
    x = np.array([[1, 2]], np.float32)
    W = np.array([[1, 0, 0], [0, 1, 0]], np.float32)
    A = np.array([[1, 2], [3, 4]], np.float32)
    B = np.array([[1, 0, 1], [0, 1, 1]], np.float32)
    r, alpha = 2, 4
    s = alpha / math.sqrt(r) if rslora else alpha / r
    got = run_lora(device, x, W.T.copy(), A.T.copy(), B.T.copy(), [s])
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    if not rslora:
        # The merged weight W' = W + s·A·B gives the same product.
        np.testing.assert_allclose(x @ (W + s * A @ B), [want], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_case_lr1_ones(device):
    x, w = np.ones((1, 4), np.float32), np.zeros((4, 4), np.float32)
    got = run_lora(device, x, w, np.ones((8, 4), np.float32), np.ones((4, 8), np.float32), [16 / 8])
    np.testing.assert_array_equal(got, np.full((1, 4), 64.0, np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_one_adapter_matches_numpy(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    w = rng.standard_normal((24, 16)).astype(np.float32)
    a = rng.standard_normal((4, 16)).astype(np.float32)
    b = rng.standard_normal((24, 4)).astype(np.float32)
    got = run_lora(device, x, w, a, b, [0.75])
    want = numpy_lora(x, w, a, b, [0.75])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("id_type", [np.int64, np.int32])
def test_adapters_per_row_match_numpy(device, id_type):
    rng = np.random.default_rng(1)
    n, r, din, dout = 3, 4, 16, 12
    x = rng.standard_normal((2, 5, din)).astype(np.float32)
    w = rng.standard_normal((dout, din)).astype(np.float32)
    a = rng.standard_normal((n, r, din)).astype(np.float32)
    b = rng.standard_normal((n, dout, r)).astype(np.float32)
    scales = [2.0, 0.5, 1.25]
    # Every adapter, the base layer alone (−1) and an id past the last.
    ids = np.array([[0, 1, 2, -1, 0], [2, 2, 3, 1, -1]], id_type)
    got = run_lora(device, x, w, a, b, scales, ids)
    want = numpy_lora(x, w, a, b, scales, ids)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # The rows without an adapter are the base layer's exactly as computed alone.
    base = (x.astype(np.float64) @ w.T.astype(np.float64))
    np.testing.assert_allclose(got[0, 3], base[0, 3], rtol=1e-5, atol=1e-5 * np.abs(base).max())


@pytest.mark.parametrize("device", DEVICES)
def test_bf16(device):
    import ml_dtypes
    rng = np.random.default_rng(2)
    bf = ml_dtypes.bfloat16
    x = rng.standard_normal((3, 32)).astype(bf)
    w = rng.standard_normal((16, 32)).astype(bf)
    a = rng.standard_normal((8, 32)).astype(bf)
    b = rng.standard_normal((16, 8)).astype(bf)
    got = run_lora(device, x, w, a, b, [0.5]).astype(np.float32)
    want = numpy_lora(x, w, a, b, [0.5])
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


def test_derivatives_one_adapter():
    rng = np.random.default_rng(3)
    args = {"x": ((2, 6), "f64"), "w": ((5, 6), "f64"), "a": ((3, 6), "f64"), "b": ((5, 3), "f64")}
    body = (f"  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [1.5] : {t((2, 6))}, {t((5, 6))}, "
            f"{t((3, 6))}, {t((5, 3))}")
    text = build(args, body, "%y", (2, 5))
    inputs = {k: rand(rng, *shape) for k, (shape, _) in args.items()}
    inputs["R"] = rand(rng, 2, 5)
    check_grad(text, inputs, ["x", "w", "a", "b"])


def test_derivatives_adapters_per_row():
    rng = np.random.default_rng(4)
    args = {"x": ((4, 6), "f64"), "w": ((5, 6), "f64"), "a": ((2, 3, 6), "f64"),
            "b": ((2, 5, 3), "f64"), "ids": ((4,), "i64")}
    body = (f"  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : {t((4,), 'i64')}) "
            f"scales = [1.5, -0.5] : {t((4, 6))}, {t((5, 6))}, {t((2, 3, 6))}, {t((2, 5, 3))}")
    text = build(args, body, "%y", (4, 5))
    inputs = {k: rand(rng, *shape) for k, (shape, et) in args.items() if et == "f64"}
    inputs["ids"] = np.array([1, -1, 0, 1], np.int64)
    inputs["R"] = rand(rng, 4, 5)
    check_grad(text, inputs, ["x", "w", "a", "b"], vmap_args=["x", "a"])
