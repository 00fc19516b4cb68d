"""Forms other projects' exporters write, raised by rlx-import-to-mir: a 3-layer
MLP as torch.compile → linalg writes it (tpp-mlir's
benchmarks/mlir/pytorch/torch-dynamo-mlp-fp32-3x1024.mlir, and buddy-mlir's
examples/BuddyNext kernels use the same matmul init): each matmul accumulates
into `arith.constant dense<0.0>` (not linalg.fill), the weights are
transposed by a linalg.generic whose permutation is on the output's map, the
bias is an add generic and ReLU is `arith.cmpf ugt` + `arith.select`. The
module here is written for the test in those forms (not copied), small.
It must fuse to one kernel per layer and compute what numpy and upstream's
own lowering (mlir-opt-22 + mlir-runner, without RLX) compute, on the CPU
path and on the emulator."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from harness import BUILD, assert_close, run_single, run_upstream

B, D = 4, 8  # rows, width of every layer


def dense(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=1 << 20,
                                      floatmode="unique").replace("\n", "") + ">"


def mlp_text(ws, bs) -> str:
    t = f"tensor<{B}x{D}xf32>"
    w = f"tensor<{D}x{D}xf32>"
    lines = [
        "#id = affine_map<(d0, d1) -> (d0, d1)>",
        "#tr = affine_map<(d0, d1) -> (d1, d0)>",
        "#row = affine_map<(d0, d1) -> (d1)>",
        f"func.func @forward(%x: {t}) -> {t} {{",
        "  %zero = arith.constant 0.0 : f32",
        f"  %acc0 = arith.constant dense<0.0> : {t}",
        f"  %e = tensor.empty() : {w}",
        f"  %o = tensor.empty() : {t}",
    ]
    cur = "%x"
    for i, (wi, bi) in enumerate(zip(ws, bs)):
        lines += [
            f"  %w{i} = arith.constant {dense(wi)} : {w}",
            f"  %b{i} = arith.constant {dense(bi)} : tensor<{D}xf32>",
            # torch's [out, in] weight transposed for the matmul: the
            # permutation on the output's map.
            f"  %wt{i} = linalg.generic {{indexing_maps = [#id, #tr], iterator_types = [\"parallel\", \"parallel\"]}}"
            f" ins(%w{i} : {w}) outs(%e : {w}) {{",
            "  ^bb0(%in: f32, %out: f32):",
            "    linalg.yield %in : f32",
            f"  }} -> {w}",
            f"  %m{i} = linalg.matmul {{cast = #linalg.type_fn<cast_signed>}} ins({cur}, %wt{i} : {t}, {w})"
            f" outs(%acc0 : {t}) -> {t}",
            f"  %a{i} = linalg.generic {{indexing_maps = [#id, #row, #id], iterator_types = [\"parallel\", \"parallel\"]}}"
            f" ins(%m{i}, %b{i} : {t}, tensor<{D}xf32>) outs(%o : {t}) {{",
            "  ^bb0(%in: f32, %in_1: f32, %out: f32):",
            "    %s = arith.addf %in, %in_1 : f32",
            "    linalg.yield %s : f32",
            f"  }} -> {t}",
            f"  %r{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [\"parallel\", \"parallel\"]}}"
            f" ins(%a{i} : {t}) outs(%o : {t}) {{",
            "  ^bb0(%in: f32, %out: f32):",
            "    %c = arith.cmpf ugt, %in, %zero : f32",
            "    %v = arith.select %c, %in, %zero : f32",
            "    linalg.yield %v : f32",
            f"  }} -> {t}",
        ]
        cur = f"%r{i}"
    lines += [f"  return {cur} : {t}", "}"]
    return "\n".join(lines) + "\n"


def weights():
    rng = np.random.default_rng(7)
    ws = [(rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for _ in range(3)]
    bs = [(0.1 * rng.standard_normal(D)).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((B, D)).astype(np.float32)
    return x, ws, bs


def numpy_mlp(x, ws, bs):
    y = x.astype(np.float64)
    for w, b in zip(ws, bs):
        y = np.maximum(y @ w.T.astype(np.float64) + b, 0.0)
    return y


def upstream_mlp(text: str, x: np.ndarray) -> np.ndarray:
    t = f"tensor<{B}x{D}xf32>"
    main = (f"func.func private @printMemrefF32(tensor<*xf32>)\n"
            f"func.func @main() {{\n"
            f"  %x = arith.constant {dense(x)} : {t}\n"
            f"  %y = call @forward(%x) : ({t}) -> {t}\n"
            f"  %u = tensor.cast %y : {t} to tensor<*xf32>\n"
            f"  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()\n  return\n}}\n")
    return run_upstream(text + main).reshape(B, D)


def test_mlp_forms_are_raised_and_fuse_to_one_kernel_per_layer():
    x, ws, bs = weights()
    text = mlp_text(ws, bs)
    proc = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", "--rlx-import-to-mir",
                           "--rlx-mir-fuse=report=true", "-o", "-"], input=text,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "compute ops 9 -> 3" in proc.stderr, proc.stderr
    assert proc.stdout.count("rlx_mir.fused_matmul") == 3
    assert proc.stdout.count("activation relu") == 3
    assert "linalg." not in proc.stdout and "arith.cmpf" not in proc.stdout


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_mlp_forms_compute_numpy_and_upstream(device):
    x, ws, bs = weights()
    text = mlp_text(ws, bs)
    got = run_single(text, {"arg0": x}, extra=("--device", device))
    assert_close(got, numpy_mlp(x, ws, bs), rtol=1e-5, atol=1e-5)
    assert_close(got, upstream_mlp(text, x), rtol=1e-5, atol=1e-5)


def test_unordered_relu_keeps_nan_and_ordered_select_stays_linalg():
    """ugt + select is max (NaN in, NaN out); ogt + select maps NaN to 0,
    which no MIR op computes: it is not raised (and still runs)."""
    t = "tensor<4xf32>"
    body = """
#id = affine_map<(d0) -> (d0)>
func.func @f(%x: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}} ins(%x : {t}) outs(%o : {t}) {{
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf {pred}, %in, %zero : f32
    %v = arith.select %c, %in, %zero : f32
    linalg.yield %v : f32
  }} -> {t}
  return %r : {t}
}}"""
    x = np.array([np.nan, -1.0, 2.0, -0.0], np.float32)
    for pred, want in [("ugt", [np.nan, 0, 2, 0]), ("ogt", [0, 0, 2, 0])]:
        text = body.format(t=t, pred=pred)
        got = run_single(text, {"arg0": x})
        np.testing.assert_array_equal(got, np.array(want, np.float32))
        raised = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", "--rlx-import-to-mir",
                                 "-o", "-"], input=text, capture_output=True, text=True)
        assert ("linalg.generic" in raised.stdout) == (pred == "ogt"), raised.stdout
