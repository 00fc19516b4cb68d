"""Compiler bugs the differential tester found (docs/difftest.md, DT-1..DT-7),
each as its minimal graph: compiled fused and unfused (and, where the bug was
on that path, without LIR), both must run and agree element-wise."""
import numpy as np
import pytest

from harness import run_mlir

CASES = {
    # A [4] producer that is also a graph output joined a [3, 4] region
    # through its reader: a region with results of two shapes.
    "DT-1": ("""
func.func @main(%x: tensor<4xf32> {rlx.input = "x"}, %y: tensor<3x4xf32> {rlx.input = "y"}) -> (tensor<4xf32>, tensor<3x4xf32>) {
  %c = rlx_mir.exp %x : tensor<4xf32>
  %a = rlx_mir.neg %c : tensor<4xf32>
  %b = rlx_mir.add %a, %y : tensor<4xf32>, tensor<3x4xf32>
  return %c, %b : tensor<4xf32>, tensor<3x4xf32>
}""", {"x": (4,), "y": (3, 4)}),
    # One matmul reading the norm is the other's residual: the norm-prologue
    # rewrite used a spec saved before the first rewrite (segfault).
    "DT-2": ("""
func.func @main(%x: tensor<2x4xf32> {rlx.input = "x"}, %w1: tensor<4x2xf32> {rlx.input = "w1"},
                %b1: tensor<2xf32> {rlx.input = "b1"}, %w2: tensor<4x2xf32> {rlx.input = "w2"}) -> tensor<2x2xf32> {
  %n = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<2x4xf32>
  %y1 = rlx_mir.matmul %n, %w1 : tensor<2x4xf32>, tensor<4x2xf32>
  %z1 = rlx_mir.add %y1, %b1 : tensor<2x2xf32>, tensor<2xf32>
  %y2 = rlx_mir.matmul %n, %w2 : tensor<2x4xf32>, tensor<4x2xf32>
  %a2 = rlx_mir.relu %y2 : tensor<2x2xf32>
  %s = rlx_mir.add %z1, %a2 : tensor<2x2xf32>, tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}""", {"x": (2, 4), "w1": (4, 2), "b1": (2,), "w2": (4, 2)}),
    # Two roped matmuls with different tables merged under a plain root: the
    # merged op applied the first table to both.
    "DT-3a": ("""
func.func @main(%x: tensor<1x2x4xf32> {rlx.input = "x"},
                %w1: tensor<2x4xf32> {rlx.input = "w1"}, %w2: tensor<2x4xf32> {rlx.input = "w2"}, %w3: tensor<2x4xf32> {rlx.input = "w3"},
                %c1: tensor<2x1xf32> {rlx.input = "c1"}, %s1: tensor<2x1xf32> {rlx.input = "s1"},
                %c2: tensor<2x1xf32> {rlx.input = "c2"}, %s2: tensor<2x1xf32> {rlx.input = "s2"})
    -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>) {
  %y1 = rlx_mir.matmul %x, %w1 transpose_b : tensor<1x2x4xf32>, tensor<2x4xf32>
  %r1 = rlx_mir.rope %y1, %c1, %s1 head_dim = 2 : tensor<1x2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  %y2 = rlx_mir.matmul %x, %w2 transpose_b : tensor<1x2x4xf32>, tensor<2x4xf32>
  %r2 = rlx_mir.rope %y2, %c2, %s2 head_dim = 2 : tensor<1x2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  %y3 = rlx_mir.matmul %x, %w3 transpose_b : tensor<1x2x4xf32>, tensor<2x4xf32>
  return %r1, %r2, %y3 : tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>
}""", {"x": (1, 2, 4), "w1": (2, 4), "w2": (2, 4), "w3": (2, 4), "c1": (2, 1), "s1": (2, 1),
       "c2": (2, 1), "s2": (2, 1)}),
    # The same with different head-norm eps.
    "DT-3b": ("""
func.func @main(%x: tensor<2x4xf32> {rlx.input = "x"},
                %w1: tensor<4x4xf32> {rlx.input = "w1"}, %w2: tensor<4x4xf32> {rlx.input = "w2"}, %w3: tensor<4x4xf32> {rlx.input = "w3"})
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y1 = rlx_mir.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32>
  %t1 = rlx_mir.reshape %y1 [2, 1, 4] : tensor<2x4xf32>
  %n1 = rlx_mir.rms_norm %t1 eps = 1.0e-05 : tensor<2x1x4xf32>
  %h1 = rlx_mir.reshape %n1 [2, 4] : tensor<2x1x4xf32>
  %y2 = rlx_mir.matmul %x, %w2 : tensor<2x4xf32>, tensor<4x4xf32>
  %t2 = rlx_mir.reshape %y2 [2, 1, 4] : tensor<2x4xf32>
  %n2 = rlx_mir.rms_norm %t2 eps = 1.0 : tensor<2x1x4xf32>
  %h2 = rlx_mir.reshape %n2 [2, 4] : tensor<2x1x4xf32>
  %y3 = rlx_mir.matmul %x, %w3 : tensor<2x4xf32>, tensor<4x4xf32>
  return %h1, %h2, %y3 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}""", {"x": (2, 4), "w1": (4, 4), "w2": (4, 4), "w3": (4, 4)}),
    # A weight with a symbolic dim was packed into a function without its
    # dim names, which then could not be bound.
    "DT-4": ("""
func.func @main(%w: tensor<?x4xf32> {rlx.param = "w", rlx.dim_names = ["seq", ""]}) -> tensor<?x4xf32> {
  %y = rlx_mir.neg %w : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}""", {"w": (3, 4)}),
    # K/V of one position broadcast along the sequence was taken for GQA's
    # repeat_kv: attention with Sk = 1 shifted the causal alignment.
    "DT-5": ("""
func.func @main(%q: tensor<1x3x8xf32> {rlx.input = "q"}, %k: tensor<1x1x4xf32> {rlx.input = "k"}, %v: tensor<1x1x4xf32> {rlx.input = "v"}) -> tensor<1x3x8xf32> {
  %q0 = rlx_mir.reshape %q [1, 3, 2, 4] : tensor<1x3x8xf32>
  %qh = rlx_mir.transpose %q0 [0, 2, 1, 3] : tensor<1x3x2x4xf32>
  %k0 = rlx_mir.reshape %k [1, 1, 1, 4] : tensor<1x1x4xf32>
  %k1 = rlx_mir.transpose %k0 [0, 2, 1, 3] : tensor<1x1x1x4xf32>
  %k2 = rlx_mir.reshape %k1 [1, 1, 1, 1, 4] : tensor<1x1x1x4xf32>
  %k3 = rlx_mir.broadcast %k2 [1, 1, 2, 3, 4] : tensor<1x1x1x1x4xf32>
  %kh = rlx_mir.reshape %k3 [1, 2, 3, 4] : tensor<1x1x2x3x4xf32>
  %v0 = rlx_mir.reshape %v [1, 1, 1, 4] : tensor<1x1x4xf32>
  %v1 = rlx_mir.transpose %v0 [0, 2, 1, 3] : tensor<1x1x1x4xf32>
  %v2 = rlx_mir.reshape %v1 [1, 1, 1, 1, 4] : tensor<1x1x1x4xf32>
  %v3 = rlx_mir.broadcast %v2 [1, 1, 2, 3, 4] : tensor<1x1x1x1x4xf32>
  %vh = rlx_mir.reshape %v3 [1, 2, 3, 4] : tensor<1x1x2x3x4xf32>
  %s = rlx_mir.matmul %qh, %kh transpose_b : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
  %c = rlx_mir.constant dense<0.5> : tensor<f32>
  %t = rlx_mir.mul %s, %c : tensor<1x2x3x3xf32>, tensor<f32>
  %m = rlx_mir.causal_mask %t : tensor<1x2x3x3xf32>
  %p = rlx_mir.softmax %m axis = -1 : tensor<1x2x3x3xf32>
  %o = rlx_mir.matmul %p, %vh : tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>
  %o1 = rlx_mir.transpose %o [0, 2, 1, 3] : tensor<1x2x3x4xf32>
  %o2 = rlx_mir.reshape %o1 [1, 3, 8] : tensor<1x3x2x4xf32>
  return %o2 : tensor<1x3x8xf32>
}""", {"q": (1, 3, 8), "k": (1, 1, 4), "v": (1, 1, 4)}),
    # Weight packing dropped a parameter nothing read; rlx-run then refused
    # its --input.
    "DT-6": ("""
func.func @main(%x: tensor<2x4xf32> {rlx.input = "x"}, %w1: tensor<3x4xf32> {rlx.param = "w1"}, %w2: tensor<3x4xf32> {rlx.param = "w2"},
                %u: tensor<4xf32> {rlx.param = "u"}) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = rlx_mir.matmul %x, %w1 transpose_b : tensor<2x4xf32>, tensor<3x4xf32>
  %b = rlx_mir.matmul %x, %w2 transpose_b : tensor<2x4xf32>, tensor<3x4xf32>
  return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}""", {"x": (2, 4), "w1": (3, 4), "w2": (3, 4), "u": (4,)}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fused_matches_unfused(name):
    text, shapes = CASES[name]
    rng = np.random.default_rng(hash(name) % 2 ** 32)
    inputs = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    fused = run_mlir(text, inputs)
    unfused = run_mlir(text, inputs, fuse=False)
    assert fused.keys() == unfused.keys()
    for k in fused:
        np.testing.assert_allclose(fused[k], unfused[k], rtol=1e-5, atol=1e-6, err_msg=k)
    if name in ("DT-6", "DT-2"):
        # DT-7: packed weights on the path without LIR (the packed_by check
        # counted the bufferized pack function's results).
        nolir = run_mlir(text, inputs, extra=("--no-lir",))
        for k in fused:
            np.testing.assert_allclose(nolir[k], unfused[k], rtol=1e-5, atol=1e-6, err_msg=k)
