"""A custom op from another dialect, loaded as a plugin, joins RLX's pipelines.

examples/custom-op is built out of tree against the installed RLX package
(`cmake --install`, find_package(RLX), RLX's interface .td files). Its one
op, demo.swish_gate (silu(gate) · up), implements ElementwiseOpInterface's
buildScalar and takes RLX's defaults for the rest, so the installed rlx-opt
and rlx-run, given --load-dialect-plugin, fuse it with rlx_mir ops, run it
on the CPU and the GPU emulator, and differentiate it (rlx-mir-grad,
rlx-mir-jvp, rlx-mir-vmap) with no change to RLX. The derivatives are
checked against central finite differences of the compiled function in
f64; values against numpy.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from harness import BUILD, ROOT, run_mlir

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                                reason="cmake and ninja are needed")


def check(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(prefix, plugin): RLX installed into a prefix, the example built against it."""
    tmp = tmp_path_factory.mktemp("custom-op")
    prefix = tmp / "prefix"
    check(["cmake", "--install", BUILD, "--prefix", prefix])
    build = tmp / "build"
    cxx = shutil.which("clang++-22") or "c++"
    check(["cmake", "-G", "Ninja", "-S", ROOT / "examples" / "custom-op", "-B", build,
           f"-DRLX_DIR={prefix / 'lib' / 'cmake' / 'rlx'}", f"-DCMAKE_CXX_COMPILER={cxx}",
           "-DCMAKE_BUILD_TYPE=Release"], env=dict(os.environ))
    check(["ninja", "-C", build, "-j2"])
    plugin = build / "libSwishGatePlugin.so"
    assert plugin.is_file()
    return prefix, plugin


def opt(installed, text, *passes):
    prefix, plugin = installed
    return check([prefix / "bin" / "rlx-opt", f"--load-dialect-plugin={plugin}", "-", *passes],
                 input=text)


def run(installed, text, inputs, device, entry=None):
    prefix, plugin = installed
    return run_mlir(text, inputs, entry=entry, tool=prefix / "bin" / "rlx-run",
                    extra=(f"--load-dialect-plugin={plugin}", f"--device={device}"))


def swish_gate(gate, up):
    return gate / (1.0 + np.exp(-gate)) * up


def ty(et):
    return f"tensor<4x8x{et}>"


def example():
    return (ROOT / "examples" / "custom-op" / "swish_gate.mlir").read_text()


def inputs(et=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal((4, 8)).astype(et) for n in ("gate", "up", "x")}


def test_op_fuses_with_rlx_ops(installed):
    out = opt(installed, example(), "--rlx-mir-fuse")
    assert "demo.swish_gate" not in out, out
    assert out.count("rlx_mir.elementwise") == 1, out
    assert "math.exp" in out and "arith.addf" in out, out


def test_verifier_of_the_plugin_runs(installed):
    prefix, plugin = installed
    bad = ("func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
           "  %r = demo.swish_gate %a, %a : tensor<4xi32>, tensor<4xi32>\n  return %r : tensor<4xi32>\n}\n")
    proc = subprocess.run([str(prefix / "bin" / "rlx-opt"), f"--load-dialect-plugin={plugin}", "-"],
                          input=bad, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "<stdin>:2:8: error: 'demo.swish_gate' op expects float tensors" in proc.stderr, proc.stderr


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_op_runs_with_rlx_ops(installed, device):
    x = inputs()
    got = run(installed, example(), x, device)["result0"]
    want = swish_gate(1.5 * x["gate"].astype(np.float64), x["up"]) + x["x"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


LOSS = f"""func.func @f(%gate: {ty('f64')} {{rlx.input = "gate"}}, %up: {ty('f64')} {{rlx.input = "up"}}) -> tensor<f64> {{
  %s = demo.swish_gate %gate, %up : {ty('f64')}, {ty('f64')}
  %w = rlx_mir.mul %s, %s : {ty('f64')}, {ty('f64')}
  %r = rlx_mir.reduce sum %w axes = [0, 1] : {ty('f64')}
  return %r : tensor<f64>
}}
"""


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_vjp_and_jvp_match_finite_differences(installed, device):
    """loss = sum(swish_gate(gate, up)²): the directional derivative along a
    random tangent from @f_jvp and from @f_grad's gradients against central
    differences of the compiled @f (f64, eps 1e-6)."""
    x = {k: v for k, v in inputs(np.float64, seed=1).items() if k != "x"}
    rng = np.random.default_rng(2)
    t = {k: rng.standard_normal(v.shape) for k, v in x.items()}
    derived = opt(installed, LOSS, "--rlx-mir-grad", "--rlx-mir-jvp=function=f")
    eps = 1e-6
    f = lambda s: float(run(installed, LOSS, {k: x[k] + s * eps * t[k] for k in x}, "cpu")["result0"])
    fd = (f(1) - f(-1)) / (2 * eps)
    jvp = run(installed, derived, {**x, **{f"t_{k}": v for k, v in t.items()}}, device, entry="f_jvp")
    grad = run(installed, derived, {**x, "d_output": np.float64(1.0)}, device, entry="f_grad")
    directional = sum(float(np.sum(grad[f"d_{k}"] * t[k])) for k in x)
    assert float(jvp["t_result0"]) == pytest.approx(fd, rel=1e-6, abs=1e-6)
    assert directional == pytest.approx(fd, rel=1e-6, abs=1e-6)
    # The gradient itself, element by element, against the formula.
    s = 1 / (1 + np.exp(-x["gate"]))
    y = swish_gate(x["gate"], x["up"])
    np.testing.assert_allclose(grad["d_up"], 2 * y * x["gate"] * s, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad["d_gate"], 2 * y * x["up"] * s * (1 + x["gate"] * (1 - s)),
                               rtol=1e-9, atol=1e-12)


def test_vmap_batches_the_op(installed):
    text = (f"func.func @g(%gate: {ty('f32')} {{rlx.input = \"gate\"}}, "
            f"%up: {ty('f32')} {{rlx.input = \"up\"}}) -> {ty('f32')} {{\n"
            f"  %s = demo.swish_gate %gate, %up : {ty('f32')}, {ty('f32')}\n  return %s : {ty('f32')}\n}}\n")
    batched = opt(installed, text, "--rlx-mir-vmap=batch-size=3 args=gate function=g")
    rng = np.random.default_rng(3)
    gate = rng.standard_normal((3, 4, 8)).astype(np.float32)
    up = rng.standard_normal((4, 8)).astype(np.float32)
    for device in ("cpu", "emu"):
        got = run(installed, batched, {"gate": gate, "up": up}, device, entry="g_vmap")
        (out,) = got.values()
        np.testing.assert_allclose(out, swish_gate(gate, up[None]), rtol=1e-5, atol=1e-5)
