"""The GPU path from Python (rlx.gpu.compile) and rlx-run --device=emu: the
same results as the CPU path on the same inputs, errors as RlxError."""
from __future__ import annotations

import pathlib
import subprocess

import ml_dtypes
import numpy as np
import pytest

import rlx
from harness import BUILD, RLX_RUN, assert_close
from test_gpu_emulator import FAULTS

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAYER = ROOT / "examples" / "llama-3.2-1b-layer.mlir"


def test_compile_and_run_on_the_emulator():
    m = rlx.parse("""func.func @f(%x: tensor<3x37xf32> {rlx.input = "x"}, %g: tensor<37xbf16> {rlx.param = "g"}) -> tensor<3x37xbf16> {
  %c = rlx_mir.cast %x : tensor<3x37xf32> to tensor<3x37xbf16>
  %y = rlx_mir.rms_norm %c, %g eps = 1.0e-05 : tensor<3x37xbf16>, tensor<37xbf16>
  return %y : tensor<3x37xbf16>
}""")
    model = rlx.gpu.compile(m, device="emu")
    assert model.device == "emu"
    assert [a["name"] for a in model.arguments] == ["x", "g"]
    assert model.results == [{"name": "result0", "shape": [3, 37], "dtype": "bf16"}]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 37)).astype(np.float32)
    g32 = (1 + 0.1 * rng.standard_normal(37)).astype(np.float32)
    # A bf16 argument takes bf16 values (ml_dtypes, or f32 arrays holding
    # bf16 values); rounding f32 is the caller's choice, not the runner's.
    with pytest.raises(rlx.RlxError, match="'g' is bf16 but the value given is float32"):
        model.run(x=x, g=g32)
    g = g32.astype(ml_dtypes.bfloat16)
    y = model.run(x=x, g=g)["result0"]
    assert y.dtype == np.float32
    np.testing.assert_array_equal(model.run(x=x, g=g.astype(np.float32))["result0"], y)
    xb = x.astype(np.float64)
    ref = xb / np.sqrt((xb ** 2).mean(1, keepdims=True) + 1e-5) * g.astype(np.float64)
    assert_close(y, ref, "bf16")
    with pytest.raises(rlx.RlxError, match="shape"):
        model.run(x=x[:2], g=g)
    with pytest.raises(rlx.RlxError, match="not arguments"):
        model.run(x=x, g=g, h=g)


def test_llama_layer_python_gpu_matches_cpu(tmp_path):
    m = rlx.parse(LAYER.read_text())
    gpu = rlx.gpu.compile(m, device="emu", dims={"seq": 5}, artifact_dir=tmp_path / "art")
    assert (tmp_path / "art" / "manifest.json").exists()
    cpu = rlx.compile_cpu(m, dims={"seq": 5})
    rng = np.random.default_rng(1)
    values = {}
    for a in cpu.arguments:
        if a["dtype"] == "i64":
            values[a["name"]] = np.arange(5, dtype=np.int64)
        else:
            s = 0.02 if len(a["shape"]) == 2 else 1.0
            values[a["name"]] = (rng.standard_normal(a["shape"]) * s).astype(np.float32)
    assert {a["name"] for a in gpu.arguments} == set(values)
    got, want = gpu.run(values), cpu.run(values)
    for k in want:
        assert_close(got[k], want[k], atol=1e-4)
    assert gpu.time(warmup=0, iters=1)["median_ms"] > 0


def test_planted_fault_raises_with_kernel_and_thread():
    m = rlx.parse(FAULTS.replace("KERNEL", "oob").replace("BARRIER", ""))
    model = rlx.gpu.compile(m, device="emu")
    with pytest.raises(rlx.RlxError, match=r"kernel 'oob'.*thread \(63,0,0\)"):
        model.run(x=np.arange(64, dtype=np.float32))


def test_compile_error_is_a_located_rlx_error():
    m = rlx.parse(LAYER.read_text())
    with pytest.raises(rlx.RlxError, match=r"needs static shapes"):
        rlx.gpu.compile(m, device="emu")
    with pytest.raises(rlx.RlxError, match="unknown NVIDIA chip 'sm_42'"):
        rlx.gpu.compile(m, device="emu", chip="sm_42", dims={"seq": 5})


def test_rlx_run_device_emu_matches_cpu(tmp_path):
    outs = {}
    for device in ("cpu", "emu"):
        p = subprocess.run([str(RLX_RUN), str(LAYER), "--dims", "seq=5", "--device", device,
                            "--output-dir", str(tmp_path / device)],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        outs[device] = np.load(tmp_path / device / "result0.npy")
        if device == "emu":
            assert "device: emu (sm_90a)" in p.stdout and "weight packing" in p.stdout
    assert_close(outs["emu"], outs["cpu"], atol=1e-4)


def test_rlx_run_device_cuda_without_a_driver(tmp_path):
    p = subprocess.run([str(RLX_RUN), str(LAYER), "--dims", "seq=5", "--device", "cuda",
                        "--emit-artifact", str(tmp_path / "art")],
                       capture_output=True, text=True, timeout=600)
    if p.returncode == 0:
        pytest.skip("a CUDA driver and GPU are present")
    assert "no CUDA driver" in p.stderr or "no CUDA device" in p.stderr, p.stderr
    # The artifact was still written, cubins included.
    assert list((tmp_path / "art").glob("*.sm_90a.cubin"))


def test_packed_originals_leave_the_device_after_packing():
    """Two matmuls of one input merge into one (their weights packed into
    one [16, 32] tensor by the pack function): the packed parameter is the
    pack function's output buffer, the originals are freed once packed, and
    set again they are allocated again; one of them alone is an error
    naming the released other."""
    m = rlx.parse("""func.func @f(%x: tensor<4x32xf32> {rlx.input = "x"}, %wq: tensor<8x32xf32> {rlx.param = "wq"}, %wk: tensor<8x32xf32> {rlx.param = "wk"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %q = rlx_mir.matmul %x, %wq transpose_b : tensor<4x32xf32>, tensor<8x32xf32>
  %k = rlx_mir.matmul %x, %wk transpose_b : tensor<4x32xf32>, tensor<8x32xf32>
  return %q, %k : tensor<4x8xf32>, tensor<4x8xf32>
}""")
    model = rlx.gpu.compile(m, device="emu")
    assert any("packed_by" in b for b in model.manifest["functions"][0]["buffers"]
               + model.manifest["functions"][-1]["buffers"])
    rng = np.random.default_rng(3)
    x, x2 = (rng.standard_normal((4, 32)).astype(np.float32) for _ in range(2))
    wq, wk, wq2, wk2 = (rng.standard_normal((8, 32)).astype(np.float32) for _ in range(4))

    def check(out, x, wq, wk):
        assert_close(out["result0"], x.astype(np.float64) @ wq.T.astype(np.float64), "f32")
        assert_close(out["result1"], x.astype(np.float64) @ wk.T.astype(np.float64), "f32")

    before = model.device_bytes
    # Every function's arena and buffers, the packed parameter not twice.
    fns = model.manifest["functions"]
    assert before == (sum(f["arena_bytes"] for f in fns) +
                      sum(b["bytes"] for f in fns for b in f["buffers"] if "packed_by" not in b))
    check(model.run(x=x, wq=wq, wk=wk), x, wq, wk)
    assert before - model.device_bytes == wq.nbytes + wk.nbytes
    check(model.run(x=x2), x2, wq, wk)  # the packed weights stay
    model.invalidate_packed_params()
    check(model.run(x=x, wq=wq2, wk=wk2), x, wq2, wk2)
    assert before - model.device_bytes == wq.nbytes + wk.nbytes
    model.invalidate_packed_params()
    with pytest.raises(rlx.RlxError, match="'wk' .*released after packing"):
        model.run(x=x, wq=wq)
