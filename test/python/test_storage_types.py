"""Every element type the dialects allow, through plan, checker and execution.

One definition of a type's storage size (include/RLX/Dialect/Common/IR/
StorageSize.h) serves the planner, the checker, the view op and the runtime:
an element takes LLVM's store size of its lowered type, so i1 and f4E2M1FN
take a byte each. A planner that sized i1 buffers at one bit per element put
the next buffer inside them (HF's sdpa masks, exported by torch-mlir, gave
wrong numbers with exit status 0).

Each test keeps two transient buffers of the type live at once (--no-fuse:
every cast is its own kernel), then reads both back: a buffer sized below
what its kernel writes is overwritten by its neighbour, and the result
differs from numpy.
"""
import re
import subprocess

import ml_dtypes
import numpy as np
import pytest

from harness import BUILD, run_single

RLX_OPT = BUILD / "bin" / "rlx-opt"
SHAPE = (64, 72)  # 4608 elements: bit-sized i1 buffers would be 576 bytes

# dtype -> (numpy model of rlx_mir.cast from f32, storage bytes)
TYPES = {
    "i1": (lambda x: (x != 0).astype(np.float64), 1),
    "i8": (lambda x: np.trunc(x).astype(np.int8).astype(np.float64), 1),
    "i32": (lambda x: np.trunc(x).astype(np.int32).astype(np.float64), 4),
    "i64": (lambda x: np.trunc(x).astype(np.int64).astype(np.float64), 8),
    "f8E4M3FN": (lambda x: x.astype(ml_dtypes.float8_e4m3fn).astype(np.float64), 1),
    "f4E2M1FN": (lambda x: x.astype(ml_dtypes.float4_e2m1fn).astype(np.float64), 1),
    "bf16": (lambda x: x.astype(ml_dtypes.bfloat16).astype(np.float64), 2),
    "f16": (lambda x: x.astype(np.float16).astype(np.float64), 2),
    "f32": (lambda x: x.astype(np.float64), 4),
    "f64": (lambda x: x.astype(np.float64), 8),
}


def module(dtype):
    t = "tensor<" + "x".join(map(str, SHAPE)) + "x"
    return f"""
func.func @main(%x: {t}f32> {{rlx.input = "x"}}, %y: {t}f32> {{rlx.input = "y"}}) -> {t}f32> {{
  %a = rlx_mir.cast %x : {t}f32> to {t}{dtype}>
  %b = rlx_mir.cast %y : {t}f32> to {t}{dtype}>
  %c = rlx_mir.cast %a : {t}{dtype}> to {t}f32>
  %d = rlx_mir.cast %b : {t}{dtype}> to {t}f32>
  %two = rlx_mir.constant dense<2.0> : tensor<f32>
  %e = rlx_mir.mul %d, %two : {t}f32>, tensor<f32>
  %r = rlx_mir.add %c, %e : {t}f32>, {t}f32>
  return %r : {t}f32>
}}
"""


def inputs():
    rng = np.random.default_rng(7)
    # Values every type represents after its own rounding (|x| <= 6 for f4),
    # with exact zeros so that i1 has both values.
    x = np.round(rng.uniform(-6, 6, SHAPE) * 4) / 4
    y = np.round(rng.uniform(-6, 6, SHAPE) * 4) / 4
    x[::3] = 0
    y[1::4] = 0
    return x.astype(np.float32), y.astype(np.float32)


@pytest.mark.parametrize("dtype", list(TYPES))
def test_execution_matches_numpy(dtype):
    x, y = inputs()
    got = run_single(module(dtype), {"x": x, "y": y}, fuse=False)
    cast = TYPES[dtype][0]
    ref = cast(x.astype(np.float64)) + 2 * cast(y.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=0, atol=0)


def planned(dtype):
    proc = subprocess.run(
        [str(RLX_OPT), "-", "--convert-rlx-mir-to-lir", "--rlx-lir-bufferize",
         "--rlx-lir-plan-buffers", "--rlx-lir-verify-plan"],
        input=module(dtype), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


VIEW = re.compile(r"rlx_lir\.view %arg0\[(\d+)\] : memref<\d+xi8> to memref<([0-9x]+)x(\w+)>")


@pytest.mark.parametrize("dtype", [t for t in TYPES if t != "f32"])  # f32 → f32 folds away
def test_plan_sizes_buffers_as_stored(dtype):
    text = planned(dtype)
    typed = sorted(int(o) for o, _, t in VIEW.findall(text) if t == dtype)
    assert len(typed) == 2, text
    elements = SHAPE[0] * SHAPE[1]
    # The two buffers of `dtype` are live together: at least one element's
    # storage apart per element.
    assert typed[1] - typed[0] >= elements * TYPES[dtype][1], text
    arena = int(re.search(r"arena_bytes = (\d+)", text).group(1))
    assert arena >= 2 * elements * TYPES[dtype][1]


@pytest.mark.parametrize("dtype", ["i1", "f4E2M1FN", "bf16"])
def test_checker_rejects_buffers_smaller_than_the_kernel_writes(dtype):
    """The plan an undersizing planner made: the second buffer starts where a
    bit- or nibble-sized first one would end. The checker sizes views by what
    the kernels store and must reject it."""
    text = planned(dtype)
    offsets = sorted({int(o) for o, _, t in VIEW.findall(text) if t == dtype})
    assert len(offsets) == 2
    bits = {"i1": 1, "f4E2M1FN": 4, "bf16": 8}[dtype]  # bf16: pretend 1 byte
    short = offsets[0] + (SHAPE[0] * SHAPE[1] * bits + 7) // 8
    short = (short + 63) // 64 * 64
    bad = text.replace(f"rlx_lir.view %arg0[{offsets[1]}]", f"rlx_lir.view %arg0[{short}]")
    assert bad != text
    proc = subprocess.run([str(RLX_OPT), "-", "--rlx-lir-verify-plan"], input=bad,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "overlap" in proc.stderr, proc.stderr


def test_sdpa_guard_from_tosa():
    """The all-masked-row guard of torch-mlir's SDPA decomposition
    (equal → reduce_all → select) on i1 tensors: it corrupted the heap."""
    text = """
func.func @f(%a: tensor<16x512xf32>, %b: tensor<16x512xf32>, %x: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %e = tosa.equal %a, %b : (tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xi1>
  %r = tosa.reduce_all %e {axis = 1 : i32} : (tensor<16x512xi1>) -> tensor<16x1xi1>
  %z = "tosa.const"() {values = dense<0.0> : tensor<16x512xf32>} : () -> tensor<16x512xf32>
  %s = tosa.select %r, %z, %x : (tensor<16x1xi1>, tensor<16x512xf32>, tensor<16x512xf32>) -> tensor<16x512xf32>
  return %s : tensor<16x512xf32>
}
"""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, (16, 512)).astype(np.float32)
    b = a.copy()
    b[::2, 5] += 1  # even rows differ somewhere, odd rows are all equal
    x = rng.standard_normal((16, 512)).astype(np.float32)
    got = run_single(text, {"arg0": a, "arg1": b, "arg2": x}, entry="f")
    ref = np.where((a == b).all(axis=1, keepdims=True), 0.0, x)
    np.testing.assert_array_equal(got, ref)


def cast_chain(a, b):
    t = "tensor<4x24x"
    return f"""
func.func @main(%x: {t}f32> {{rlx.input = "x"}}) -> {t}f32> {{
  %a = rlx_mir.cast %x : {t}f32> to {t}{a}>
  %b = rlx_mir.cast %a : {t}{a}> to {t}{b}>
  %r = rlx_mir.cast %b : {t}{b}> to {t}f32>
  return %r : {t}f32>
}}
"""


@pytest.mark.parametrize("b", list(TYPES))
@pytest.mark.parametrize("a", list(TYPES))
def test_cast_between_every_pair(a, b):
    """f32 → a → b → f32 for every pair (f16 ↔ bf16 and f8 → f4 did not
    compile), fused into one kernel, against numpy's conversions."""
    rng = np.random.default_rng(3)
    x = (np.round(rng.uniform(-6, 6, (4, 24)) * 8) / 8).astype(np.float32)
    x[0, :4] = 0
    got = run_single(cast_chain(a, b), {"x": x})
    ref = TYPES[b][0](TYPES[a][0](x.astype(np.float64)))
    np.testing.assert_array_equal(got, ref)
