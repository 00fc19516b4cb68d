// rlx_mir.random_uniform and rlx_mir.sample verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @temperature(%x: tensor<2x8xf32>, %u: tensor<2xf32>) {
  // expected-error @+1 {{sample temperature must be >= 0 and finite}}
  %a = rlx_mir.sample %x, %u temperature = -0.5 : tensor<2x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @rows(%x: tensor<2x8xf32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{sample needs one uniform number per row: shape 2 for logits 2x8, got 3}}
  %a = rlx_mir.sample %x, %u : tensor<2x8xf32>, tensor<3xf32>
  return
}

// -----

func.func @top_p(%x: tensor<2x8xf32>, %u: tensor<2xf32>) {
  // expected-error @+1 {{sample top_p must be in (0, 1]}}
  %a = rlx_mir.sample %x, %u top_p = 1.5 : tensor<2x8xf32>, tensor<2xf32>
  return
}

// -----

func.func @offset(%o: tensor<2xi64>) {
  // expected-error @+2 {{random_uniform offset must be tensor<i64>, got tensor<2xi64>}}
  // expected-error @+1 {{failed to infer returned types}}
  %u = rlx_mir.random_uniform %o seed = 0 shape = [2] : tensor<2xi64> -> tensor<2xf32>
  return
}
