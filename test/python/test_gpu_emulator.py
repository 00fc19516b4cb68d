"""GPU kernels under the emulator (issue 15): the same gpu.func kernels that
go to NVVM, run on the CPU with every GPU thread a fiber, against numpy
written here (f32 1e-5, bf16 2e-2 relative) at odd sizes, and planted faults
(out of bounds, a race, a missing barrier) reported."""
from __future__ import annotations

import os
import pathlib
import subprocess
import tempfile

import numpy as np
import pytest

from gpu_harness import compile_artifact, from_bf16_bits, run_artifact, run_gpu, to_bf16_bits
from harness import assert_close

H_SIZES = [1, 17, 769, 4097]


def t(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def bf16_round(a):
    return from_bf16_bits(to_bf16_bits(a))


def g6_inputs(H):
    r, j = np.meshgrid(np.arange(7), np.arange(H), indexing="ij")
    x = ((((r * H + j) % 13) - 6) / 4).astype(np.float32)
    g = (1 + (np.arange(H) % 5) / 10).astype(np.float32)
    return x, g


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("H", H_SIZES)
def test_rms_norm_g6(H, dtype):
    x, g = g6_inputs(H)
    text = f"""func.func @f(%x: {t((7, H), dtype)} {{rlx.input = "x"}}, %g: {t((H,), dtype)} {{rlx.input = "g"}}) -> {t((7, H), dtype)} {{
  %y = rlx_mir.rms_norm %x, %g eps = 1.0e-06 : {t((7, H), dtype)}, {t((H,), dtype)}
  return %y : {t((7, H), dtype)}
}}"""
    y = run_gpu(text, {"x": x, "g": g})["result0"]
    xd = x.astype(np.float64)
    ref = xd / np.sqrt((xd ** 2).mean(1, keepdims=True) + 1e-6) * g
    assert_close(y, ref, dtype)
    if H == 769 and dtype == "f32":  # the case's independent figures
        assert_close(y[:, 0], [-1.6011145, -1.0691933, -0.5350941, 0, 0.5348949, 1.0683995,
                               1.6002997], rtol=1e-5, atol=1e-6)
        assert_close(y.sum(1), [-3.8426749, -1.6305198, -0.8026411, 0.3746356, 1.8988770,
                                2.0299591, -0.2667166], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("H", [1, 17, 769])
def test_softmax_layer_norm_elementwise(H):
    rng = np.random.default_rng(H)
    x = rng.standard_normal((5, H)).astype(np.float32) * 3
    g = rng.standard_normal(H).astype(np.float32)
    b = rng.standard_normal(H).astype(np.float32)
    text = f"""func.func @f(%x: {t((5, H))} {{rlx.input = "x"}}, %g: {t((H,))} {{rlx.input = "g"}}, %b: {t((H,))} {{rlx.input = "b"}})
    -> ({t((5, H))} {{rlx.output = "sm"}}, {t((5, H))} {{rlx.output = "ln"}}, {t((5, H))} {{rlx.output = "ew"}}) {{
  %sm = rlx_mir.softmax %x axis = 1 : {t((5, H))}
  %ln = rlx_mir.layer_norm %x weight(%g : {t((H,))}) bias(%b : {t((H,))}) eps = 1.0e-05 : {t((5, H))}
  %s = rlx_mir.silu %x : {t((5, H))}
  %ew = rlx_mir.mul %s, %g : {t((5, H))}, {t((H,))}
  return %sm, %ln, %ew : {t((5, H))}, {t((5, H))}, {t((5, H))}
}}"""
    out = run_gpu(text, {"x": x, "g": g, "b": b})
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    assert_close(out["sm"], e / e.sum(1, keepdims=True))
    mu, var = xd.mean(1, keepdims=True), xd.var(1, keepdims=True)
    assert_close(out["ln"], (xd - mu) / np.sqrt(var + 1e-5) * g + b, atol=1e-5)
    assert_close(out["ew"], xd / (1 + np.exp(-xd)) * g)


def test_softmax_n1_large_logits():
    x = np.array([[0, 1, 2, 3], [10000, 10001, 10002, 10003]], np.float32)
    text = f"""func.func @f(%x: {t((2, 4))} {{rlx.input = "x"}}) -> {t((2, 4))} {{
  %y = rlx_mir.softmax %x axis = 1 : {t((2, 4))}
  return %y : {t((2, 4))}
}}"""
    y = run_gpu(text, {"x": x})["result0"]
    assert_close(y, np.tile([0.0320586, 0.0871443, 0.2368828, 0.6439143], (2, 1)), rtol=1e-5)


@pytest.mark.parametrize("M,K,N", [(1, 45, 29), (37, 45, 29), (100, 64, 96)])
def test_matmul_bias_residual(M, K, N):
    rng = np.random.default_rng(M)
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    r = rng.standard_normal((M, N)).astype(np.float32)
    text = f"""func.func @f(%x: {t((M, K))} {{rlx.input = "x"}}, %w: {t((N, K))} {{rlx.input = "w"}}, %b: {t((N,))} {{rlx.input = "b"}}, %r: {t((M, N))} {{rlx.input = "r"}}) -> {t((M, N))} {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t((M, K))}, {t((N, K))}
  %a = rlx_mir.add %m, %b : {t((M, N))}, {t((N,))}
  %y = rlx_mir.add %a, %r : {t((M, N))}, {t((M, N))}
  return %y : {t((M, N))}
}}"""
    y = run_gpu(text, {"x": x, "w": w, "b": b, "r": r})["result0"]
    ref = x.astype(np.float64) @ w.T.astype(np.float64) + b + r
    assert_close(y, ref, rtol=1e-5, atol=1e-4)


def naive_attention(q, k, v, heads, kv_heads, causal):
    B, Sq, _ = q.shape
    Sk = k.shape[1]
    D = q.shape[2] // heads
    qh = q.reshape(B, Sq, heads, D).astype(np.float64)
    kh = k.reshape(B, Sk, kv_heads, D).astype(np.float64)
    vh = v.reshape(B, Sk, kv_heads, D).astype(np.float64)
    out = np.zeros((B, Sq, heads, D))
    for h in range(heads):
        kvh = h // (heads // kv_heads)
        s = np.einsum("bqd,bkd->bqk", qh[:, :, h], kh[:, :, kvh]) / np.sqrt(D)
        if causal:  # bottom-right aligned
            mask = np.arange(Sk)[None, :] > np.arange(Sq)[:, None] + (Sk - Sq)
            s = np.where(mask, -np.inf, s)
        p = np.exp(s - s.max(-1, keepdims=True))
        out[:, :, h] = np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), vh[:, :, kvh])
    return out.reshape(B, Sq, heads * D)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("Sq,Sk", [(1, 1), (37, 37), (100, 100), (1, 37)])
def test_attention_gqa_a6(Sq, Sk, dtype):
    heads, kv, D = 14, 2, 16
    rng = np.random.default_rng(Sq * 1000 + Sk)
    q = rng.standard_normal((1, Sq, heads * D)).astype(np.float32)
    k = rng.standard_normal((1, Sk, kv * D)).astype(np.float32)
    v = rng.standard_normal((1, Sk, kv * D)).astype(np.float32)
    if dtype == "bf16":
        q, k, v = bf16_round(q), bf16_round(k), bf16_round(v)
    qt, kt = t((1, Sq, heads * D), dtype), t((1, Sk, kv * D), dtype)
    text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> {qt} {{
  %o = rlx_mir.attention %q, %k, %v heads = {heads}, kv_heads = {kv}, head_dim = {D} causal : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""
    y = run_gpu(text, {"q": q, "k": k, "v": v})["result0"]
    assert_close(y, naive_attention(q, k, v, heads, kv, True), dtype, atol=2e-5 if dtype == "f32" else None)


def test_f8_round_trip_in_a_kernel_l1():
    """L1: f32 → f8E4M3FN → f32 inside a GPU kernel (saturating cast)."""
    x = np.array([1.0, 0.3, -2.7, 448.0, 1000.0, 0.001, -0.0, 3.0e-3], np.float32)
    expect = np.array([1.0, 0.3125, -2.75, 448.0, 448.0, 2.0 ** -9, -0.0, 2.0 ** -8])
    text = f"""func.func @f(%x: {t((8,))} {{rlx.input = "x"}}) -> {t((8,))} {{
  %c = rlx_mir.cast %x : {t((8,))} to {t((8,), "f8E4M3FN")}
  %y = rlx_mir.cast %c : {t((8,), "f8E4M3FN")} to {t((8,))}
  return %y : {t((8,))}
}}"""
    y = run_gpu(text, {"x": x})["result0"]
    np.testing.assert_array_equal(y, expect.astype(np.float32))
    ml_dtypes = pytest.importorskip("ml_dtypes")
    ref = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(y, ref)


# Planted faults: kernels written by hand in the gpu dialect, launched by a
# planned function, through the same rlx-compile / emulator path.
FAULTS = """
module attributes {gpu.container_module} {
  func.func @f(%arena: memref<1024xi8> {rlx_lir.arena}, %x: memref<64xf32> {rlx.input = "x"},
               %y: memref<64xf32> {rlx.output = "y"})
      attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 1024 : i64}} {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @faults::@KERNEL blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%x : memref<64xf32>, %y : memref<64xf32>)
    return
  }
  gpu.module @faults {
    // y[i] = x[i + 1]: the last thread reads one past the end.
    gpu.func @oob(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %j = arith.addi %i, %c1 : index
      %v = memref.load %x[%j] : memref<64xf32>
      memref.store %v, %y[%i] : memref<64xf32>
      gpu.return
    }
    // Every thread writes s[0]: a write/write race.
    gpu.func @race(%x: memref<64xf32>, %y: memref<64xf32>)
        workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %s[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
    // A 270,000-byte private array: more than a 256 KiB fiber stack holds.
    gpu.func @deep(%x: memref<64xf32>, %y: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %p = memref.alloca() : memref<67500xf32>
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %p[%i] : memref<67500xf32>
      %w = memref.load %p[%i] : memref<67500xf32>
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
    // y[i] = s[63 - i] after s[i] = x[i]: needs a barrier between (BARRIER).
    gpu.func @reverse(%x: memref<64xf32>, %y: memref<64xf32>)
        workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %c63 = arith.constant 63 : index
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
      BARRIER
      %r = arith.subi %c63, %i : index
      %w = memref.load %s[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
}
"""


def run_fault(kernel, barrier=""):
    text = FAULTS.replace("KERNEL", kernel).replace("BARRIER", barrier)
    x = np.arange(64, dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        compile_artifact(text, art)
        try:
            return run_artifact(art, "f", {"x": x})["y"], ""
        except RuntimeError as e:
            return None, str(e)


def test_planted_out_of_bounds_is_reported():
    y, report = run_fault("oob")
    assert y is None
    assert "kernel 'oob'" in report and "thread (63,0,0)" in report, report
    assert "out of bounds" in report or "past" in report, report


@pytest.mark.skipif("ASAN_OPTIONS" in os.environ,
                    reason="under AddressSanitizer its own SIGSEGV handler reports stack overflows")
def test_fiber_stack_overflow_is_a_finding_not_a_crash(monkeypatch):
    """A kernel whose frame outgrows its fiber's stack runs into the guard
    below it: a finding naming the kernel, the thread and the limit (the
    process lives on); a larger RLX_EMU_STACK_KIB runs it."""
    y, report = run_fault("deep")
    assert y is None
    assert "kernel 'deep' block (0,0,0) thread (0,0,0): stack overflow: its frames exceed the " \
           "256 KiB fiber stack (RLX_EMU_STACK_KIB raises it)" in report, report
    monkeypatch.setenv("RLX_EMU_STACK_KIB", "512")
    y, report = run_fault("deep")
    assert report == ""
    np.testing.assert_array_equal(y, np.arange(64, dtype=np.float32))


def test_planted_shared_race_is_reported():
    y, report = run_fault("race")
    assert y is None and "race" in report and "kernel 'race'" in report, report


def test_missing_barrier_is_reported_and_the_barrier_fixes_it():
    y, report = run_fault("reverse")
    assert y is None and "race" in report and "kernel 'reverse'" in report, report
    y, report = run_fault("reverse", "gpu.barrier")
    assert report == ""
    np.testing.assert_array_equal(y, np.arange(64, dtype=np.float32)[::-1])


def model_inputs(text, dims, seed):
    from harness import signature
    rng = np.random.default_rng(seed)
    values = {}
    for a in signature(text):
        shape = [dims[d] if isinstance(d, str) else d for d in a["shape"]]
        if a["dtype"] == "i64":
            values[a["name"]] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        else:
            scale = 0.02 if a["param"] and len(shape) == 2 else 1.0
            v = rng.standard_normal(shape).astype(np.float32) * scale
            if a["param"] and len(shape) == 1:
                v = 1.0 + 0.1 * v  # norm weights near 1
            values[a["name"]] = v
    return values


def compare_with_cpu(text, dims, dtype="f32", seed=0, flags=()):
    from harness import run_mlir
    inputs = model_inputs(text, dims, seed)
    if dtype == "bf16":
        inputs = {k: bf16_round(v) if v.dtype == np.float32 else v for k, v in inputs.items()}
    gpu = run_gpu(text, inputs, dims=dims, flags=list(flags))
    cpu = run_mlir(text, inputs, dims=dims)
    assert gpu.keys() == cpu.keys()
    for name in cpu:
        assert_close(gpu[name], cpu[name], dtype, atol=1e-4 if dtype == "f32" else 2e-2)


def test_llama_example_layer_matches_cpu_path():
    """The whole Llama-3.2-1B example layer (seq 5) on the emulator vs the CPU path."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "examples" /
            "llama-3.2-1b-layer.mlir").read_text()
    compare_with_cpu(text, {"seq": 5})


@pytest.mark.parametrize("mode", ["prefill", "decode"])
def test_two_layer_model_matches_cpu_path(mode):
    """A 2-layer Llama-3.2-1B-shaped model (hidden size reduced for time)."""
    from harness import gen_model, shared_dir
    config = (shared_dir() / "models" / "llama-3.2-1b.json") if shared_dir() else None
    if config is None or not config.exists():
        pytest.skip("../shared/models not present")
    sets = ["hidden_size=256", "intermediate_size=512", "num_attention_heads=8",
            "num_key_value_heads=2", "head_dim=32", "vocab_size=512"]
    args = ["--layers", "2"] + [a for s in sets for a in ("--set", s)]
    if mode == "prefill":
        args += ["--seq", "37"]
    else:
        args += ["--kv-cache", "--seq", "1", "--past", "16"]
    compare_with_cpu(gen_model(config, *args), {})


@pytest.mark.parametrize("H", [1, 17, 769])
def test_reductions_transpose_gather(H):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5, H)).astype(np.float32)
    table = rng.standard_normal((11, H)).astype(np.float32)
    ids = np.array([[3, 0, 10, 3]], np.int64)
    text = f"""func.func @f(%x: {t((3, 5, H))} {{rlx.input = "x"}}, %e: {t((11, H))} {{rlx.input = "e"}}, %ids: {t((1, 4), "i64")} {{rlx.input = "ids"}})
    -> ({t((3, 5, 1))} {{rlx.output = "mean"}}, {t((5,))} {{rlx.output = "max"}}, {t((5, 3, H))} {{rlx.output = "tr"}}, {t((1, 4, H))} {{rlx.output = "emb"}}) {{
  %m = rlx_mir.reduce mean %x axes = [-1] keep_dims : {t((3, 5, H))}
  %mx = rlx_mir.reduce max %x axes = [0, 2] : {t((3, 5, H))}
  %tr = rlx_mir.transpose %x [1, 0, 2] : {t((3, 5, H))}
  %emb = rlx_mir.gather %e[%ids] : {t((11, H))}, {t((1, 4), "i64")}
  return %m, %mx, %tr, %emb : {t((3, 5, 1))}, {t((5,))}, {t((5, 3, H))}, {t((1, 4, H))}
}}"""
    out = run_gpu(text, {"x": x, "e": table, "ids": ids})
    assert_close(out["mean"], x.astype(np.float64).mean(-1, keepdims=True), atol=1e-6)
    np.testing.assert_array_equal(out["max"], x.max(axis=(0, 2)))
    np.testing.assert_array_equal(out["tr"], x.transpose(1, 0, 2))
    np.testing.assert_array_equal(out["emb"], table[ids])
