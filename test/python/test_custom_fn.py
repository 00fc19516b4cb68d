"""rlx_mir.custom_fn: a function body as one op, with optional user rules.

The body is what runs (CPU, GPU emulator); rlx-mir-grad and rlx-mir-jvp use
the op's vjp/jvp regions where it has them (checked with rules that differ
from the body's true derivative: a straight-through estimator and a scaled
tangent) and differentiate the body otherwise (checked against central
finite differences of the compiled function, f64, eps 1e-6). Every case on
--device=cpu and --device=emu.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from harness import BUILD, run_mlir

DEVICES = ["cpu", "emu"]


def derive(text, *passes):
    proc = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", *passes], input=text,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run(text, inputs, device, entry=None):
    return run_mlir(text, inputs, entry=entry, extra=(f"--device={device}",))


def ste_module(et):
    t = f"tensor<8x{et}>"
    return f"""func.func @f(%x: {t} {{rlx.input = "x"}}) -> tensor<{et}> {{
  %y = rlx_mir.custom_fn "ste_clamp" ins(%x : {t}) -> {t} {{
  ^bb0(%a: {t}):
    %lo = rlx_mir.constant dense<-1.0> : tensor<{et}>
    %hi = rlx_mir.constant dense<1.0> : tensor<{et}>
    %m = rlx_mir.max %a, %lo : {t}, tensor<{et}>
    %c = rlx_mir.min %m, %hi : {t}, tensor<{et}>
    rlx_mir.yield %c : {t}
  }} vjp {{
  ^bb0(%a: {t}, %r: {t}, %dr: {t}):
    rlx_mir.yield %dr : {t}
  }} jvp {{
  ^bb0(%a: {t}, %ta: {t}):
    %three = rlx_mir.constant dense<3.0> : tensor<{et}>
    %s = rlx_mir.mul %ta, %three : {t}, tensor<{et}>
    rlx_mir.yield %s : {t}
  }}
  %s = rlx_mir.mul %y, %y : {t}, {t}
  %r = rlx_mir.reduce sum %s axes = [0] : {t}
  return %r : tensor<{et}>
}}
"""


X = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 0.9, 1.7, 3.0])


@pytest.mark.parametrize("device", DEVICES)
def test_body_runs_and_user_rules_replace_its_derivatives(device):
    text = ste_module("f32")
    x = X.astype(np.float32)
    c = np.clip(x, -1, 1)
    (loss,) = run(text, {"x": x}, device).values()
    np.testing.assert_allclose(loss, np.sum(c * c), rtol=1e-6)
    derived = derive(text, "--rlx-mir-grad", "--rlx-mir-jvp=function=f")
    grad = run(derived, {"x": x, "d_output": np.float32(1.0)}, device, entry="f_grad")
    # Straight through: 2·clamp(x), not 0 where |x| > 1 as the body's own
    # derivative would give.
    np.testing.assert_allclose(grad["d_x"], 2 * c, rtol=1e-6, atol=1e-7)
    t = np.linspace(-1, 1, 8).astype(np.float32)
    jvp = run(derived, {"x": x, "t_x": t}, device, entry="f_jvp")
    # The user's tangent of y is 3·t: d loss = sum(2·y·3·t).
    np.testing.assert_allclose(jvp["t_result0"], np.sum(2 * c * 3 * t), rtol=1e-5, atol=1e-6)


PROJ = """func.func @g(%x: tensor<2x8xf64> {rlx.input = "x"}, %w: tensor<8x3xf64> {rlx.input = "w"}) -> tensor<f64> {
  %h = rlx_mir.custom_fn "proj_tanh" ins(%x, %w : tensor<2x8xf64>, tensor<8x3xf64>) -> tensor<2x3xf64> {
  ^bb0(%a: tensor<2x8xf64>, %b: tensor<8x3xf64>):
    %m = rlx_mir.matmul %a, %b : tensor<2x8xf64>, tensor<8x3xf64>
    %t = rlx_mir.tanh %m : tensor<2x3xf64>
    rlx_mir.yield %t : tensor<2x3xf64>
  }
  %s = rlx_mir.mul %h, %h : tensor<2x3xf64>, tensor<2x3xf64>
  %r = rlx_mir.reduce sum %s axes = [0, 1] : tensor<2x3xf64>
  return %r : tensor<f64>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_without_rules_the_body_is_differentiated(device):
    rng = np.random.default_rng(0)
    x = {"x": rng.standard_normal((2, 8)) * 0.5, "w": rng.standard_normal((8, 3)) * 0.5}
    t = {k: rng.standard_normal(v.shape) for k, v in x.items()}
    eps = 1e-6
    f = lambda s: float(run(PROJ, {k: x[k] + s * eps * t[k] for k in x}, "cpu")["result0"])
    fd = (f(1) - f(-1)) / (2 * eps)
    derived = derive(PROJ, "--rlx-mir-grad", "--rlx-mir-jvp=function=g")
    assert "custom_fn" in derived.split("func.func @g_grad")[0]  # @g keeps it
    grad = run(derived, {**x, "d_output": np.float64(1.0)}, device, entry="g_grad")
    jvp = run(derived, {**x, **{f"t_{k}": v for k, v in t.items()}}, device, entry="g_jvp")
    assert float(jvp["t_result0"]) == pytest.approx(fd, rel=1e-6, abs=1e-6)
    directional = sum(float(np.sum(grad[f"d_{k}"] * t[k])) for k in x)
    assert directional == pytest.approx(fd, rel=1e-6, abs=1e-6)


TWO = """func.func @h(%x: tensor<4xf32> {rlx.input = "x"}, %w: tensor<4xf32> {rlx.input = "w"}) -> tensor<f32> {
  %a, %b = rlx_mir.custom_fn "two" ins(%x, %w : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %m = rlx_mir.mul %p, %q : tensor<4xf32>, tensor<4xf32>
    %s = rlx_mir.add %p, %q : tensor<4xf32>, tensor<4xf32>
    rlx_mir.yield %m, %s : tensor<4xf32>, tensor<4xf32>
  } vjp {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>, %m: tensor<4xf32>, %s: tensor<4xf32>, %dm: tensor<4xf32>, %ds: tensor<4xf32>):
    %two = rlx_mir.constant dense<2.0> : tensor<f32>
    %gp = rlx_mir.mul %dm, %two : tensor<4xf32>, tensor<f32>
    %gq = rlx_mir.add %dm, %ds : tensor<4xf32>, tensor<4xf32>
    rlx_mir.yield %gp, %gq : tensor<4xf32>, tensor<4xf32>
  }
  %r = rlx_mir.reduce sum %a axes = [0] : tensor<4xf32>
  return %r : tensor<f32>
}
"""


@pytest.mark.parametrize("device", DEVICES)
def test_unused_result_and_partial_wrt(device):
    """The second result has no use (its cotangent is zeros) and only w is
    differentiated: d_w is the rule's dm + ds = 1 (not x, the body's)."""
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    w = np.array([0.5, 1.5, -1.0, 2.0], np.float32)
    derived = derive(TWO, "--rlx-mir-grad=wrt=w")
    grad = run(derived, {"x": x, "w": w, "d_output": np.float32(1.0)}, device, entry="h_grad")
    assert set(grad) == {"loss", "d_w"}
    np.testing.assert_allclose(grad["loss"], np.sum(x * w), rtol=1e-6)
    np.testing.assert_allclose(grad["d_w"], np.ones(4), rtol=0, atol=0)
