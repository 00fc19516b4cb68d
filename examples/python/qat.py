#!/usr/bin/env python3
"""Quantization-aware training with rlx_mir.fake_quantize: a linear layer's
weight fake-quantized to 4 bits per output channel, its scales learned with
LSQ (the scale's gradient of the straight-through estimator, times LSQ's
g = 1/sqrt(K * quant_max)), and its input fake-quantized to 8 bits with the
scale PyTorch's default QAT activation observer would give it (the moving
average of the batches' ranges, rlx_mir.observe_minmax + choose_qparams,
its running range carried from step to step), fitted to a teacher by plain
SGD on the mean squared error. rlx-mir-grad derives the step; the CPU path
runs it.

    python examples/python/qat.py [--steps 50]

Needs the rlx package (``PYTHONPATH=build/python_packages`` after a CMake
build). Prints the loss every 10 steps and returns the losses from train().
"""
import argparse

import numpy as np

import rlx

B, K, N, QMAX = 32, 16, 8, 7


def observer_function():
    """The activation observer's step: the running range's moving average
    (PyTorch's MovingAverageMinMaxObserver, averaging constant 0.01) and the
    affine int8 scale and zero point it gives."""
    text = f"""func.func @observe(%x: tensor<{B}x{K}xf32> {{rlx.input = "x"}},
      %lo: tensor<f32> {{rlx.input = "lo"}}, %hi: tensor<f32> {{rlx.input = "hi"}})
      -> (tensor<f32> {{rlx.output = "lo"}}, tensor<f32> {{rlx.output = "hi"}},
          tensor<f32> {{rlx.output = "scale"}}, tensor<i8> {{rlx.output = "zero_point"}}) {{
  %a, %b = rlx_mir.observe_minmax %x running(%lo, %hi : tensor<f32>, tensor<f32>)
      averaging_constant = 1.000000e-02 : tensor<{B}x{K}xf32>
  %s, %z = rlx_mir.choose_qparams %a, %b : tensor<f32>
  return %a, %b, %s, %z : tensor<f32>, tensor<f32>, tensor<f32>, tensor<i8>
}}"""
    return rlx.compile_cpu(rlx.parse(text))


def step_function():
    g = 1.0 / np.sqrt(K * QMAX)
    text = f"""func.func @f(%x: tensor<{B}x{K}xf32> {{rlx.input = "x"}},
      %t: tensor<{B}x{N}xf32> {{rlx.input = "t"}}, %w: tensor<{N}x{K}xf32> {{rlx.input = "w"}},
      %s: tensor<{N}xf32> {{rlx.input = "s"}}, %xs: tensor<f32> {{rlx.input = "x_scale"}},
      %xz: tensor<i8> {{rlx.input = "x_zero_point"}}) -> (tensor<f32> {{rlx.output = "loss"}}) {{
  %xq = rlx_mir.fake_quantize %x, %xs, %xz : tensor<{B}x{K}xf32>, tensor<f32>, tensor<i8>
  %wq = rlx_mir.fake_quantize %w, %s axis = 0 quant_min = -8 quant_max = {QMAX} scale_grad = {g}
      : tensor<{N}x{K}xf32>, tensor<{N}xf32>
  %y = rlx_mir.matmul %xq, %wq transpose_b : tensor<{B}x{K}xf32>, tensor<{N}x{K}xf32>
  %e = rlx_mir.sub %y, %t : tensor<{B}x{N}xf32>, tensor<{B}x{N}xf32>
  %e2 = rlx_mir.mul %e, %e : tensor<{B}x{N}xf32>, tensor<{B}x{N}xf32>
  %sum = rlx_mir.reduce sum %e2 axes = [0, 1] : tensor<{B}x{N}xf32>
  %inv = rlx_mir.constant dense<{1.0 / (B * N)}> : tensor<f32>
  %loss = rlx_mir.mul %sum, %inv : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}}"""
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-grad{wrt=w,s}")
    return rlx.compile_cpu(m, entry="f_grad")


def train(steps=50, lr=0.05, seed=0, log=print):
    rng = np.random.default_rng(seed)
    teacher = rng.standard_normal((N, K)).astype(np.float32) / np.sqrt(K)
    w = (teacher + 0.3 * rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32)
    s = (np.abs(w).max(axis=1) / QMAX).astype(np.float32)
    step, observe = step_function(), observer_function()
    lo, hi = np.float32(np.inf), np.float32(-np.inf)  # nothing observed yet
    losses = []
    for i in range(steps):
        x = rng.standard_normal((B, K)).astype(np.float32)  # a fresh batch each step
        t = (x @ teacher.T).astype(np.float32)
        obs = observe.run(x=x, lo=lo, hi=hi)
        lo, hi = obs["lo"], obs["hi"]
        step.invalidate_packed_params()  # w and s change every step
        out = step.run(x=x, t=t, w=w, s=s, x_scale=obs["scale"], x_zero_point=obs["zero_point"],
                       d_output=np.array(1.0, np.float32))
        losses.append(float(out["loss"]))
        w = (w - lr * out["d_w"]).astype(np.float32)
        s = np.maximum(s - lr * out["d_s"], 1e-4).astype(np.float32)
        if i % 10 == 0 or i == steps - 1:
            log(f"step {i:3d}: loss {losses[-1]:.6f}, mean scale {s.mean():.5f}, "
                f"input range [{float(lo):.3f}, {float(hi):.3f}]")
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    train(ap.parse_args().steps)
