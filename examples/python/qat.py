#!/usr/bin/env python3
"""Quantization-aware training with rlx_mir.fake_quantize: a linear layer's
weight fake-quantized to 4 bits per output channel, its scales learned with
LSQ (the scale's gradient of the straight-through estimator, times LSQ's
g = 1/sqrt(K * quant_max)), fitted to a teacher by plain SGD on the mean
squared error. rlx-mir-grad derives the step; the CPU path runs it.

    python examples/python/qat.py [--steps 50]

Needs the rlx package (``PYTHONPATH=build/python_packages`` after a CMake
build). Prints the loss every 10 steps and returns the losses from train().
"""
import argparse

import numpy as np

import rlx

B, K, N, QMAX = 32, 16, 8, 7


def step_function():
    g = 1.0 / np.sqrt(K * QMAX)
    text = f"""func.func @f(%x: tensor<{B}x{K}xf32> {{rlx.input = "x"}},
      %t: tensor<{B}x{N}xf32> {{rlx.input = "t"}}, %w: tensor<{N}x{K}xf32> {{rlx.input = "w"}},
      %s: tensor<{N}xf32> {{rlx.input = "s"}}) -> (tensor<f32> {{rlx.output = "loss"}}) {{
  %wq = rlx_mir.fake_quantize %w, %s axis = 0 quant_min = -8 quant_max = {QMAX} scale_grad = {g}
      : tensor<{N}x{K}xf32>, tensor<{N}xf32>
  %y = rlx_mir.matmul %x, %wq transpose_b : tensor<{B}x{K}xf32>, tensor<{N}x{K}xf32>
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
    x = rng.standard_normal((B, K)).astype(np.float32)
    t = (x @ teacher.T).astype(np.float32)
    w = (teacher + 0.3 * rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32)
    s = (np.abs(w).max(axis=1) / QMAX).astype(np.float32)
    step = step_function()
    losses = []
    for i in range(steps):
        step.invalidate_packed_params()  # w and s change every step
        out = step.run(x=x, t=t, w=w, s=s, d_output=np.array(1.0, np.float32))
        losses.append(float(out["loss"]))
        w = (w - lr * out["d_w"]).astype(np.float32)
        s = np.maximum(s - lr * out["d_s"], 1e-4).astype(np.float32)
        if i % 10 == 0 or i == steps - 1:
            log(f"step {i:3d}: loss {losses[-1]:.6f}, mean scale {s.mean():.5f}")
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    train(ap.parse_args().steps)
