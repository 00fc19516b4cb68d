"""rlx_mir.group_norm (a DecomposableOpInterface op: its decomposition is
its definition) against torch.nn.functional.group_norm's formula in numpy on
the CPU and the GPU emulator, and its derivatives and vmap through the
decomposition (test_autodiff's finite-difference and loop checks)."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from test_autodiff import build, check_grad, rand, t


def numpy_group_norm(x, groups, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.astype(np.float64).reshape(n, groups, -1)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    y = y.reshape(x.shape)
    shape = (c,) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.astype(np.float64).reshape(shape)
    if b is not None:
        y = y + b.astype(np.float64).reshape(shape)
    return y


def text_for(shape, groups, affine, et="f32"):
    c = shape[1]
    aff = (f" weight(%w : {t((c,), et)}) bias(%b : {t((c,), et)})" if affine else "")
    args = f'%x: {t(shape, et)} {{rlx.input = "x"}}'
    if affine:
        args += f', %w: {t((c,), et)} {{rlx.input = "w"}}, %b: {t((c,), et)} {{rlx.input = "b"}}'
    return (f"func.func @f({args}) -> {t(shape, et)} {{\n"
            f"  %y = rlx_mir.group_norm %x{aff} num_groups = {groups} eps = 1.0e-05 : {t(shape, et)}\n"
            f"  return %y : {t(shape, et)}\n}}\n")


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("shape,groups,affine", [((2, 6, 5), 3, True), ((1, 8, 3, 4), 2, True),
                                                 ((3, 4), 4, False), ((2, 6, 2, 2, 2), 1, True)])
def test_group_norm_matches_torch_formula(device, shape, groups, affine):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    m = rlx.parse(text_for(shape, groups, affine))
    inputs = dict(x=x, w=w, b=b) if affine else dict(x=x)
    model = rlx.compile_cpu(m) if device == "cpu" else rlx.gpu.compile(m, device="emu")
    got = model.run(inputs)["result0"]
    want = numpy_group_norm(x, groups, w if affine else None, b if affine else None)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_group_norm_bf16_rounds_once(device):
    import ml_dtypes
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 8, 6)) * 2).astype(ml_dtypes.bfloat16)
    w = (1 + 0.1 * rng.standard_normal(8)).astype(ml_dtypes.bfloat16)
    b = (0.1 * rng.standard_normal(8)).astype(ml_dtypes.bfloat16)
    m = rlx.parse(text_for((2, 8, 6), 4, True, "bf16"))
    model = rlx.compile_cpu(m) if device == "cpu" else rlx.gpu.compile(m, device="emu")
    got = np.asarray(model.run(x=x, w=w, b=b)["result0"], np.float64)
    want = numpy_group_norm(x, 4, w, b)
    # f32 statistics, one rounding: within a bf16 ulp.
    np.testing.assert_allclose(got, want, rtol=2.0 ** -7, atol=2.0 ** -7)


def test_group_norm_rules():
    rng = np.random.default_rng(2)
    body = (f"  %y = rlx_mir.group_norm %x weight(%w : {t((6,))}) bias(%b : {t((6,))}) "
            f"num_groups = 2 eps = 1.0e-05 : {t((2, 6, 3))}")
    text = build({"x": ((2, 6, 3), "f64"), "w": ((6,), "f64"), "b": ((6,), "f64")}, body, "%y",
                 (2, 6, 3))
    check_grad(text, {"x": rand(rng, 2, 6, 3), "w": rand(rng, 6), "b": rand(rng, 6),
                      "R": rand(rng, 2, 6, 3)}, ["x", "w", "b"])


@pytest.mark.parametrize("body, message", [
    ("rlx_mir.group_norm %x num_groups = 4 eps = 1.0e-05 : tensor<2x6x3xf32>",
     "group_norm num_groups = 4 must divide the 6 channels"),
    ("rlx_mir.group_norm %x num_groups = 2 eps = 0.0 : tensor<2x6x3xf32>", "eps"),
    ("rlx_mir.group_norm %x weight(%w : tensor<5xf32>) num_groups = 2 eps = 1.0e-05 : "
     "tensor<2x6x3xf32>", "group_norm weight must be [C] = [6], got 5"),
])
def test_group_norm_errors_are_diagnostics(body, message):
    text = (f"func.func @f(%x: tensor<2x6x3xf32>, %w: tensor<5xf32>) {{\n  %y = {body}\n"
            "  return\n}\n")
    with pytest.raises(rlx.RlxError) as e:
        rlx.parse(text)
    assert message in str(e.value), str(e.value)
