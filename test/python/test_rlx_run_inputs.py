"""rlx-run's inputs and options: every mistake is a clear error, nothing is ignored.

Malformed .npy files (negative dims, bad headers, truncated or trailing data,
unsupported dtypes) are errors naming the file and the problem; bf16 arrays
as numpy writes them with ml_dtypes ('<V2') are read as bf16. An --input
that names no argument, --dims for a dim the model does not have, and out-of-
range option values are errors instead of being silently replaced by
defaults or seeded values.
"""
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

from harness import RLX_RUN

MODEL = """
func.func @main(%x: tensor<2x3xbf16> {rlx.input = "x"}) -> tensor<2x3xf32> {
  %y = rlx_mir.cast %x : tensor<2x3xbf16> to tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
"""


def run(tmp_path, *args, model=MODEL, env=None):
    (tmp_path / "m.mlir").write_text(model)
    return subprocess.run([str(RLX_RUN), str(tmp_path / "m.mlir"), *map(str, args)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def npy_bytes(header: str, data: bytes) -> bytes:
    h = header.encode()
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


def test_bf16_from_ml_dtypes(tmp_path):
    x = np.array([[1.5, -2.25, 3.0], [0.0, 1e-3, -7.0]], ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x)
    assert np.lib.format.read_magic(open(tmp_path / "x.npy", "rb"))  # a real .npy
    proc = run(tmp_path, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "result0.npy"), x.astype(np.float32))


# The messages of the project's one .npy reader (RLX/Runtime/Npy.h), also
# rlx-gpu-run's.
BAD = {
    "negative dim": (npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", b""),
                     "'shape' holds something other than non-negative integers"),
    "missing shape": (npy_bytes("{'descr': '<f4', 'fortran_order': False, }", b""),
                      "header lacks 'shape'"),
    "bad tuple": (npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", b""),
                  "'shape' holds something other than non-negative integers"),
    "truncated": (npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 20),
                  "data is 20 bytes, but shape (2,3) of '<f4' needs 24 (truncated)"),
    "trailing": (npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 28),
                 "data is 28 bytes, but shape (2,3) of '<f4' needs 24 (trailing data)"),
    "unsupported dtype": (npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", b""),
                          "unsupported dtype '<c8'"),
    "big endian": (npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", b"\0" * 24),
                   "big-endian dtype '>f4' is not supported"),
    "fortran": (npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", b"\0" * 24),
                "Fortran-order arrays are not supported"),
    "huge shape": (npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                             "(4294967296, 4294967296, 4294967296), }", b""), "is too large"),
    "header past the end": (b"\x93NUMPY\x01\x00\xff\x7f{'descr'", "truncated .npy header"),
    "not npy": (b"hello world, not numpy", "not a .npy file"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_malformed_npy_is_an_error(tmp_path, name):
    data, message = BAD[name]
    (tmp_path / "x.npy").write_bytes(data)
    proc = run(tmp_path, "--input", f"x={tmp_path / 'x.npy'}")
    assert proc.returncode == 1, proc.stderr
    assert f"{tmp_path / 'x.npy'}: " in proc.stderr and message in proc.stderr, proc.stderr
    assert "Stack dump" not in proc.stderr


def test_shape_mismatch_names_the_given_dtype(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((3, 2), np.float32))
    proc = run(tmp_path, "--input", f"x={tmp_path / 'x.npy'}")
    assert proc.returncode == 1
    assert "argument 'x' has shape 3x2xf32, the model expects 2x3xbf16" in proc.stderr, proc.stderr


def test_input_naming_no_argument(tmp_path):
    np.save(tmp_path / "y.npy", np.zeros((2, 3), np.float32))
    proc = run(tmp_path, "--input", f"y={tmp_path / 'y.npy'}")
    assert proc.returncode == 1
    assert "--input 'y' is not an argument of the model (arguments: x)" in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--input", "x"], "bad --input 'x', expected name=file.npy"),
    (["--dims", "seq=-1"], "--dims: 'seq=-1' is not name=size"),
    (["--dims", "seq=4"], "no dim is named 'seq' (the module names no dims)"),
    (["--blas-threads", "-2"], "--blas-threads must be >= 0, got -2"),
    (["--row-tile", "0"], "--row-tile must be >= 1"),
    (["--fusion-policy", "bogus"], "--fusion-policy must be direct or fusable, got 'bogus'"),
])
def test_bad_options_are_errors(tmp_path, args, message):
    proc = run(tmp_path, *args)
    assert proc.returncode == 1, proc.stdout
    assert message in proc.stderr, proc.stderr


def test_blas_threads_takes_effect(tmp_path):
    model = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = rlx_mir.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
"""
    one = run(tmp_path, "--blas-threads", "1", model=model)
    assert one.returncode == 0, one.stderr
    assert "; 1 thread(s)" in one.stdout, one.stdout


def test_python_run_rejects_unknown_names():
    import rlx
    m = rlx.parse(MODEL)
    model = rlx.compile_cpu(m)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(model.run(x=x)["result0"], x)
    with pytest.raises(rlx.RlxError, match="'y' is not an argument of the model"):
        model.run(x=x, y=x)
