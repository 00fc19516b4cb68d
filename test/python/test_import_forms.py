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


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_lse_softmax_and_gqa_repeat_compute_numpy(device):
    """Decode attention in buddy-mlir's BuddyNext form, small: K/V heads
    repeated by an add of zeros, Q·Kᵀ·scale + mask, softmax through
    log-sum-exp (math.exp on whole tensors), ·V; raised (softmax and
    broadcast recognized) and equal to numpy."""
    kv, rep, s, d = 2, 3, 16, 8
    h = kv * rep
    text = f"""
func.func @f(%q: tensor<{h}x1x{d}xf32>, %k: tensor<1x{kv}x1x{s}x{d}xf32>,
             %v: tensor<1x{kv}x1x{s}x{d}xf32>, %mask: tensor<1x1x{s}xf32>) -> tensor<{h}x1x{d}xf32> {{
  %z = "tosa.const"() <{{values = dense<0.0> : tensor<1x{kv}x{rep}x{s}x{d}xf32>}}> : () -> tensor<1x{kv}x{rep}x{s}x{d}xf32>
  %kr = tosa.add %k, %z : (tensor<1x{kv}x1x{s}x{d}xf32>, tensor<1x{kv}x{rep}x{s}x{d}xf32>) -> tensor<1x{kv}x{rep}x{s}x{d}xf32>
  %vr = tosa.add %v, %z : (tensor<1x{kv}x1x{s}x{d}xf32>, tensor<1x{kv}x{rep}x{s}x{d}xf32>) -> tensor<1x{kv}x{rep}x{s}x{d}xf32>
  %ks = tensor.collapse_shape %kr [[0, 1, 2], [3], [4]] : tensor<1x{kv}x{rep}x{s}x{d}xf32> into tensor<{h}x{s}x{d}xf32>
  %vs = tensor.collapse_shape %vr [[0, 1, 2], [3], [4]] : tensor<1x{kv}x{rep}x{s}x{d}xf32> into tensor<{h}x{s}x{d}xf32>
  %acc = arith.constant dense<0.0> : tensor<{h}x1x{s}xf32>
  %qk = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%q, %ks : tensor<{h}x1x{d}xf32>, tensor<{h}x{s}x{d}xf32>) outs(%acc : tensor<{h}x1x{s}xf32>) -> tensor<{h}x1x{s}xf32>
  %sc = "tosa.const"() <{{values = dense<0.353553385> : tensor<{h}x1x{s}xf32>}}> : () -> tensor<{h}x1x{s}xf32>
  %shift = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %scaled = tosa.mul %qk, %sc, %shift : (tensor<{h}x1x{s}xf32>, tensor<{h}x1x{s}xf32>, tensor<1xi8>) -> tensor<{h}x1x{s}xf32>
  %sm = tosa.add %scaled, %mask : (tensor<{h}x1x{s}xf32>, tensor<1x1x{s}xf32>) -> tensor<{h}x1x{s}xf32>
  %m = tosa.reduce_max %sm {{axis = 2 : i32}} : (tensor<{h}x1x{s}xf32>) -> tensor<{h}x1x1xf32>
  %dd = tosa.sub %sm, %m : (tensor<{h}x1x{s}xf32>, tensor<{h}x1x1xf32>) -> tensor<{h}x1x{s}xf32>
  %e = math.exp %dd : tensor<{h}x1x{s}xf32>
  %sum = tosa.reduce_sum %e {{axis = 2 : i32}} : (tensor<{h}x1x{s}xf32>) -> tensor<{h}x1x1xf32>
  %l = tosa.log %sum : (tensor<{h}x1x1xf32>) -> tensor<{h}x1x1xf32>
  %lse = tosa.add %m, %l : (tensor<{h}x1x1xf32>, tensor<{h}x1x1xf32>) -> tensor<{h}x1x1xf32>
  %x = tosa.sub %sm, %lse : (tensor<{h}x1x{s}xf32>, tensor<{h}x1x1xf32>) -> tensor<{h}x1x{s}xf32>
  %p = math.exp %x : tensor<{h}x1x{s}xf32>
  %acc2 = arith.constant dense<0.0> : tensor<{h}x1x{d}xf32>
  %o = linalg.batch_matmul ins(%p, %vs : tensor<{h}x1x{s}xf32>, tensor<{h}x{s}x{d}xf32>) outs(%acc2 : tensor<{h}x1x{d}xf32>) -> tensor<{h}x1x{d}xf32>
  return %o : tensor<{h}x1x{d}xf32>
}}"""
    rng = np.random.default_rng(9)
    q = rng.standard_normal((h, 1, d)).astype(np.float32)
    k = rng.standard_normal((1, kv, 1, s, d)).astype(np.float32)
    v = rng.standard_normal((1, kv, 1, s, d)).astype(np.float32)
    mask = np.where(np.arange(s) < s - 3, 0.0, -1e9).astype(np.float32)[None, None]
    raised = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", "--convert-elementwise-to-linalg",
                             "--rlx-import-to-mir", "-o", "-"], input=text, capture_output=True,
                            text=True)
    assert raised.returncode == 0, raised.stderr
    assert "rlx_mir.softmax" in raised.stdout and "rlx_mir.broadcast" in raised.stdout
    got = run_single(text, {"arg0": q, "arg1": k, "arg2": v, "arg3": mask},
                     extra=("--device", device))
    kk = np.repeat(k[0, :, 0], rep, axis=0).astype(np.float64)  # [h, s, d]
    vv = np.repeat(v[0, :, 0], rep, axis=0).astype(np.float64)
    sc = q.astype(np.float64) @ kk.transpose(0, 2, 1) * np.float32(0.353553385) + mask
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert_close(got, p @ vv, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_rms_norm_with_a_dropped_then_expanded_reduce(device):
    """The lit case exporter-forms.mlir @rms_norm_reduce_then_expand (a
    linalg reduction drops the axis, expand_shape restores it): recognized
    as rms_norm, and equal to numpy."""
    import pathlib
    text = (pathlib.Path(__file__).parents[1] / "Conversion" / "ImportToMIR" /
            "exporter-forms.mlir").read_text()
    text = next(c for c in text.split("// -----") if "@rms_norm_reduce_then_expand" in c)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 4, 16)).astype(np.float32)
    w = (1 + 0.1 * rng.standard_normal(16)).astype(np.float32)
    got = run_single(text, {"arg0": x, "arg1": w}, extra=("--device", device))
    xd = x.astype(np.float64)
    assert_close(got, xd / np.sqrt(np.mean(xd * xd, -1, keepdims=True) + 1e-6) * w,
                 rtol=1e-5, atol=1e-5)
