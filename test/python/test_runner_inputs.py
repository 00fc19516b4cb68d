"""What every runner does with the values a user gives, from one test body on
`--device=cpu` and `--device=emu` (the GPU path): ids outside the table they
index are errors naming the argument, the value and the row count (the
kernels would clamp them); seeded ids are drawn below the row count; a value
converts to an argument's dtype only when every element converts exactly
(int32 -> int64, bf16 -> f32), anything lossy is an error."""
from __future__ import annotations

import pathlib
import subprocess
import tempfile

import ml_dtypes
import numpy as np
import pytest

import rlx
from harness import BUILD, run_mlir
from rlx.random import argument_values

DEVICES = ["cpu", "emu"]
RLX_RUN = BUILD / "bin" / "rlx-run"

EMBED = """
func.func @f(%ids: tensor<4xi64> {rlx.input = "input_ids"},
             %table: tensor<100x8xf32> {rlx.param = "embed_tokens.weight"})
    -> (tensor<4x8xf32> {rlx.output = "h"}) {
  %h = rlx_mir.gather %table[%ids] : tensor<100x8xf32>, tensor<4xi64>
  return %h : tensor<4x8xf32>
}"""


def rlx_run(text, inputs, device, *extra):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "m.mlir").write_text(text)
        cmd = [str(RLX_RUN), str(tmp / "m.mlir"), "--device", device, "--output-dir",
               str(tmp / "out"), *extra]
        for name, value in inputs.items():
            np.save(tmp / f"{name}.npy", value)
            cmd += ["--input", f"{name}={tmp / f'{name}.npy'}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        outs = {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}
        return proc, outs


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [100000, -7, 100])
def test_ids_outside_the_vocabulary_are_errors(device, bad):
    table = np.arange(800, dtype=np.float32).reshape(100, 8)
    ids = np.array([5, 99, bad, 0], np.int64)
    proc, _ = rlx_run(EMBED, {"input_ids": ids, "embed_tokens.weight": table}, device)
    assert proc.returncode != 0
    assert f"'input_ids' element 2 is {bad}, outside [0, 100)" in proc.stderr, proc.stderr
    assert "Stack dump" not in proc.stderr


@pytest.mark.parametrize("device", DEVICES)
def test_ids_inside_the_vocabulary_are_looked_up(device):
    table = np.arange(800, dtype=np.float32).reshape(100, 8)
    ids = np.array([5, 99, 0, 42], np.int32)  # int32 ids widen exactly to i64
    proc, out = rlx_run(EMBED, {"input_ids": ids, "embed_tokens.weight": table}, device)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(out["h"], table[ids])


@pytest.mark.parametrize("device", DEVICES)
def test_seeded_ids_are_drawn_below_the_row_count(device):
    table = np.arange(800, dtype=np.float32).reshape(100, 8)
    proc, out = rlx_run(EMBED, {"embed_tokens.weight": table}, device)
    assert proc.returncode == 0, proc.stderr
    ids = argument_values("input_ids", (4,), np.int64, index_bound=100)
    assert ids.max() < 100 and len(set(ids.tolist())) > 1
    np.testing.assert_array_equal(out["h"], table[ids])


def test_python_run_checks_ids():
    m = rlx.compile_cpu(rlx.parse(EMBED))
    table = np.ones((100, 8), np.float32)
    with pytest.raises(Exception, match=r"'input_ids' element 1 is 100, outside \[0, 100\)"):
        m.run(input_ids=np.array([1, 100, 2, 3]), **{"embed_tokens.weight": table})
    assert m.run(input_ids=np.array([1, 99, 2, 3]),
                 **{"embed_tokens.weight": table})["h"].shape == (4, 8)


SCALE = """
func.func @f(%x: tensor<4xf32> {rlx.input = "x"}) -> (tensor<4xf32> {rlx.output = "y"}) {
  %y = rlx_mir.add %x, %x : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}"""


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("given", ["f64_lossy", "i32_big", "i64_lossy"])
def test_lossy_conversions_are_errors(device, given):
    x = {"f64_lossy": np.array([0.1, 1, 2, 3], np.float64),
         "i32_big": np.array([1, 2, 3, 16777217], np.int32),
         "i64_lossy": np.array([1, 2, 3, 2**40 + 1], np.int64)}[given]
    proc, _ = rlx_run(SCALE, {"x": x}, device)
    assert proc.returncode != 0
    assert "argument 'x' is f32 but the value given is" in proc.stderr, proc.stderr
    assert "is not exactly a f32" in proc.stderr


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("given", ["f64", "i32", "bf16", "f16"])
def test_exact_conversions_are_taken(device, given):
    v = np.array([0.5, -2, 3, 1024], np.float32)
    x = {"f64": v.astype(np.float64), "i32": np.array([1, -2, 3, 1024], np.int32),
         "bf16": v.astype(ml_dtypes.bfloat16), "f16": v.astype(np.float16)}[given]
    proc, out = rlx_run(SCALE, {"x": x}, device)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(out["y"], 2 * np.asarray(x, np.float32))
