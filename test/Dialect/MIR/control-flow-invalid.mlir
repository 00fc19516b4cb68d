// rlx_mir.while without max_iterations: neither unrolled (the GPU path,
// vmap) nor differentiated.
// RUN: rlx-opt %s -split-input-file --rlx-mir-unroll-control-flow -verify-diagnostics
// RUN: not rlx-opt %s -split-input-file --rlx-mir-grad 2>&1 | FileCheck %s

// CHECK: error: rlx-mir-grad: an rlx_mir.while without max_iterations (unbounded trips) cannot be differentiated; give it a trip cap
func.func @uncapped(%x0: tensor<f32>) -> tensor<f32> {
  // expected-error @below {{rlx_mir.while without max_iterations: its unrolled form (the GPU path, rlx-mir-vmap) needs a trip cap}}
  %x, %trips = rlx_mir.while ins(%x0 : tensor<f32>) -> tensor<f32>, tensor<i64> cond {
  ^bb0(%a: tensor<f32>):
    %t = rlx_mir.constant dense<true> : tensor<i1>
    rlx_mir.yield %t : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    %s = rlx_mir.sin %a : tensor<f32>
    rlx_mir.yield %s : tensor<f32>
  }
  return %x : tensor<f32>
}
