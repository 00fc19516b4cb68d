// rlx_mir.selective_scan verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @rank(%u: tensor<2x3xf32>, %a: tensor<3x2xf32>, %b: tensor<2x2x5xf32>) {
  // expected-error @+1 {{selective_scan needs u [B, D, L], got 2x3}}
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b : tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<3x2xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
  return
}

// -----

func.func @b_layout(%u: tensor<2x3x5xf32>, %a: tensor<3x2xf32>, %b: tensor<2x5x2xf32>) {
  // expected-error @+1 {{selective_scan B must be [B, N, L] = [2, 2, 5], got [2, 5, 2]}}
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b : tensor<2x3x5xf32>, tensor<2x3x5xf32>,
      tensor<3x2xf32>, tensor<2x5x2xf32>, tensor<2x5x2xf32>
  return
}

// -----

func.func @state(%u: tensor<2x3x5xf32>, %a: tensor<3x2xf32>, %b: tensor<2x2x5xf32>,
                 %s: tensor<2x2x3xf32>) {
  // expected-error @+1 {{selective_scan state must be [B, D, N] = [2, 3, 2], got [2, 2, 3]}}
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b state(%s : tensor<2x2x3xf32>)
      : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x2xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
  return
}

// -----

func.func @types(%u: tensor<2x3x5xf32>, %a: tensor<3x2xf16>, %b: tensor<2x2x5xf32>) {
  // expected-error @+1 {{element type}}
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b : tensor<2x3x5xf32>, tensor<2x3x5xf32>,
      tensor<3x2xf16>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
  return
}

// -----

func.func @chunk(%u: tensor<2x3x5xf32>, %a: tensor<3x2xf32>, %b: tensor<2x2x5xf32>) {
  // expected-error @+1 {{selective_scan chunk_size must be >= 1, got 0}}
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b chunk_size = 0
      : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3x2xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
  return
}
