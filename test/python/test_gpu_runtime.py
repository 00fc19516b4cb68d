"""rlx-gpu-run and the GPU runtime's C API on a hand-made artifact.

The artifact is the runtime's test one: kernels.emu.so built from
lib/Runtime/GPU/EmuTestKernels.c (add_one: y = x + 1 behind a bounds guard,
add_one_oob: the same without it) with a manifest written here. Function "f"
chains two add_one launches through the arena, so y = x + 2.
"""
from __future__ import annotations

import ctypes
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from harness import BUILD

TOOL = BUILD / "bin" / "rlx-gpu-run"
KERNELS = BUILD / "lib" / "rlx-gpu-test" / "kernels.emu.so"
LIBRARY = BUILD / "lib" / "libRLXGPURuntime.so"

N = 100


def _function(name, kernel, arena_offset):
    two = arena_offset is not None
    buffers = [
        {"name": "x", "role": "input", "dtype": "f32", "shape": [N], "bytes": 4 * N},
        {"name": "n", "role": "param", "dtype": "i32", "shape": [1], "bytes": 4},
        {"name": "y", "role": "output", "dtype": "f32", "shape": [N], "bytes": 4 * N},
    ]

    def launch(src, dst):
        return {"kernel": kernel, "grid": [4, 1, 1], "block": [32, 1, 1], "dynamic_shared_bytes": 0,
                "args": [src, dst, {"buffer": "n", "offset": 0}]}

    x, y = {"buffer": "x", "offset": 0}, {"buffer": "y", "offset": 0}
    if two:
        a = {"buffer": "@arena", "offset": arena_offset}
        launches = [launch(x, a), launch(a, y)]
    else:
        launches = [launch(x, y)]
    return {"name": name, "arena_bytes": 512 if two else 0, "buffers": buffers, "launches": launches}


MANIFEST = {
    "format": "rlx-gpu-artifact", "version": 1,
    "target": {"chip": "sm_90a", "ptx_version": "8.0"},
    "modules": [{"name": "k", "cubin": "k.sm_90a.cubin", "ptx": "k.ptx"}],
    "emulator": {"library": "kernels.emu.so"},
    "kernels": [
        {"name": "add_one", "module": "k", "num_params": 3, "block": [32, 1, 1], "static_shared_bytes": 0,
         "registers": 8, "spill_bytes": 0, "stack_bytes": 0, "emu": {"symbol": "add_one__emu"}},
        {"name": "add_one_oob", "module": "k", "num_params": 3, "block": [32, 1, 1], "static_shared_bytes": 0,
         "emu": {"symbol": "add_one_oob__emu", "shared": []}},
    ],
    "entry": "f",
    "functions": [_function("f", "add_one", 64), _function("g", "add_one_oob", None)],
}


@pytest.fixture()
def artifact(tmp_path) -> pathlib.Path:
    if not TOOL.exists() or not KERNELS.exists():
        pytest.fail(f"{TOOL} or {KERNELS} is missing: build rlx-gpu-run and RLXGPURuntime")
    d = tmp_path / "artifact"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps(MANIFEST))
    # Stand-ins: the emulator reads neither; a GPU would reject them.
    (d / "k.sm_90a.cubin").write_bytes(b"not a cubin")
    (d / "k.ptx").write_text("// not PTX\n")
    (d / "kernels.emu.so").symlink_to(KERNELS)
    return d


def _inputs(tmp_path, scale=1.0):
    x = (np.arange(N, dtype=np.float32) * 0.37 - 11.0) * np.float32(scale)
    ind = tmp_path / "inputs"
    ind.mkdir(exist_ok=True)
    np.save(ind / "x.npy", x)
    np.save(ind / "n.npy", np.array([N], dtype=np.int32))
    return x, ind


def run(*args):
    return subprocess.run([str(TOOL), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_emu_end_to_end(artifact, tmp_path):
    x, ind = _inputs(tmp_path)
    out = tmp_path / "out"
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--output-dir", out)
    assert p.returncode == 0, p.stderr
    y = np.load(out / "y.npy")
    assert y.dtype == np.float32 and y.shape == (N,)
    np.testing.assert_allclose(y, x + 2, rtol=1e-6, atol=1e-6)


def test_emu_input_flag_timing_and_json(artifact, tmp_path):
    x, ind = _inputs(tmp_path, scale=3.0)
    out = tmp_path / "out"
    p = run(artifact, "--device", "emu", "--input", f"x={ind / 'x.npy'}", "--input", f"n={ind / 'n.npy'}",
            "--output-dir", out, "--time", 3, "--warmup", 1, "--json")
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout.strip().splitlines()[-1])
    assert line["device"] == "emu" and line["function"] == "f" and line["iters"] == 3
    assert 0 <= line["min_ms"] <= line["median_ms"]
    assert [o["name"] for o in line["outputs"]] == ["y"]
    np.testing.assert_allclose(np.load(out / "y.npy"), x + 2, rtol=1e-6, atol=1e-6)
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--time", 2)
    assert p.returncode == 0, p.stderr
    assert "time: median" in p.stdout and "over 2 iterations (emu)" in p.stdout
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--repeat", 5, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["repeat"] == 5
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--repeat", 3)
    assert p.returncode == 0 and "repeat: 3 runs, outputs identical (emu)" in p.stdout
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--repeat", 0)
    assert p.returncode == 1 and "--repeat expects an integer >= 1, got '0'" in p.stderr


def test_missing_and_bad_inputs_are_named(artifact, tmp_path):
    x, ind = _inputs(tmp_path)
    p = run(artifact, "--device", "emu", "--input", f"x={ind / 'x.npy'}")
    assert p.returncode == 1
    assert "missing inputs of function 'f': n (param)" in p.stderr
    np.save(ind / "bad.npy", np.zeros(N, dtype=np.float64))
    p = run(artifact, "--device", "emu", "--input", f"x={ind / 'bad.npy'}", "--inputs-dir", ind)
    assert p.returncode == 1
    assert "buffer 'x' (f32): .npy dtype '<f8' does not match (expected '<f4')" in p.stderr
    p = run(artifact, "--device", "emu", "--input", f"z={ind / 'x.npy'}", "--inputs-dir", ind)
    assert p.returncode == 1 and "has no buffer 'z'" in p.stderr
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--function", "h")
    assert p.returncode == 1 and "no function 'h'" in p.stderr


def test_out_of_bounds_is_reported(artifact, tmp_path):
    _, ind = _inputs(tmp_path)
    p = run(artifact, "--device", "emu", "--inputs-dir", ind, "--function", "g")
    assert p.returncode == 1
    assert "kernel 'add_one_oob' block (3,0,0) thread (4,0,0)" in p.stderr, p.stderr


def test_bad_manifest_is_named(artifact):
    m = json.loads((artifact / "manifest.json").read_text())
    m["functions"][0]["launches"][1]["args"][0]["offset"] = 512
    (artifact / "manifest.json").write_text(json.dumps(m))
    p = run(artifact, "--device", "emu")
    assert p.returncode == 1
    assert "functions[0].launches[1].args[0].offset: 512 is past the end of '@arena' (512 bytes)" in p.stderr


def test_info(artifact):
    p = run("--info", artifact)
    assert p.returncode == 0, p.stderr
    assert "add_one (k): block [32,1,1], 3 params, registers 8, spill 0 B, stack 0 B, static shared 0 B" in p.stdout
    assert "input  x: f32[100] (400 B)" in p.stdout
    assert "function f: arena 512 B, 2 launches" in p.stdout


def _libcuda_loadable() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def test_cuda_without_driver(artifact, tmp_path):
    _, ind = _inputs(tmp_path)
    p = run(artifact, "--device", "cuda", "--inputs-dir", ind)
    if _libcuda_loadable():
        pytest.skip("libcuda.so.1 is loadable here")
    assert p.returncode == 1
    assert "no CUDA driver (libcuda.so.1 not found)" in p.stderr
    # auto falls back to the emulator.
    p = run(artifact, "--device", "auto", "--inputs-dir", ind, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["device"] == "emu"


def test_ctypes_c_api(artifact):
    """The C API from Python (ctypes loads RTLD_LOCAL: the runtime must make
    its emulator hooks global itself), in a process of its own: this one may
    already hold the Python package's copy of the library (rlx.gpu), and two
    copies of one library in a process are an ODR violation to ASan."""
    here = pathlib.Path(__file__).parent
    proc = subprocess.run(
        [sys.executable, "-c", f"import test_gpu_runtime as t; t.c_api_check({str(artifact)!r})"],
        cwd=here, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(here)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def c_api_check(artifact):
    lib = ctypes.CDLL(str(LIBRARY))
    lib.rlx_gpu_open.restype = ctypes.c_void_p
    lib.rlx_gpu_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rlx_gpu_last_error.restype = ctypes.c_char_p
    lib.rlx_gpu_last_error.argtypes = [ctypes.c_void_p]
    for f in ("rlx_gpu_set_buffer", "rlx_gpu_get_buffer"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                    ctypes.c_size_t]
    lib.rlx_gpu_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.rlx_gpu_close.argtypes = [ctypes.c_void_p]
    lib.rlx_gpu_buffer_info.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                        *[ctypes.POINTER(ctypes.c_char_p)] * 3, ctypes.POINTER(ctypes.c_int),
                                        ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
                                        ctypes.POINTER(ctypes.c_uint64)]
    err = ctypes.create_string_buffer(1024)
    h = lib.rlx_gpu_open(str(artifact).encode(), b"emu", err, len(err))
    assert h, err.value.decode()
    try:
        name, role, dtype = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        rank, shape, nbytes = ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
        assert lib.rlx_gpu_buffer_info(h, b"f", 2, ctypes.byref(name), ctypes.byref(role), ctypes.byref(dtype),
                                       ctypes.byref(rank), ctypes.byref(shape), ctypes.byref(nbytes)) == 0
        assert (name.value, role.value, dtype.value) == (b"y", b"output", b"f32")
        assert [shape[i] for i in range(rank.value)] == [N] and nbytes.value == 4 * N
        x = np.linspace(-5, 5, N, dtype=np.float32)
        n = np.array([N], dtype=np.int32)
        y = np.zeros(N, dtype=np.float32)
        assert lib.rlx_gpu_set_buffer(h, b"f", b"x", x.ctypes.data, x.nbytes) == 0
        assert lib.rlx_gpu_set_buffer(h, b"f", b"n", n.ctypes.data, n.nbytes) == 0
        assert lib.rlx_gpu_run(h, b"f") == 0, lib.rlx_gpu_last_error(h)
        assert lib.rlx_gpu_get_buffer(h, b"f", b"y", y.ctypes.data, y.nbytes) == 0
        np.testing.assert_allclose(y, x + 2, rtol=1e-6, atol=1e-6)
    finally:
        lib.rlx_gpu_close(h)
