// rlx_mir.causal_conv1d verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{causal_conv1d needs an input [B, D, L], got 2x3}}
  %y, %s = rlx_mir.causal_conv1d %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @weight(%x: tensor<2x3x5xf32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{causal_conv1d weight must be [D, K] = [3, K] with a static K >= 1, got 4x4}}
  %y, %s = rlx_mir.causal_conv1d %x, %w : tensor<2x3x5xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @state(%x: tensor<2x3x5xf32>, %w: tensor<3x4xf32>, %st: tensor<2x3x2xf32>) {
  // expected-error @+1 {{causal_conv1d state must be [B, D, S] = [2, 3, S] with a static S >= K - 1 = 3, got 2x3x2}}
  %y, %s = rlx_mir.causal_conv1d %x, %w state(%st : tensor<2x3x2xf32>) : tensor<2x3x5xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @types(%x: tensor<2x3x5xf32>, %w: tensor<3x4xf16>) {
  // expected-error @+1 {{}}
  %y, %s = rlx_mir.causal_conv1d %x, %w : tensor<2x3x5xf32>, tensor<3x4xf16>
  return
}

// -----

func.func @activation(%x: tensor<2x3x5xf32>, %w: tensor<3x4xf32>) {
  // expected-error @+1 {{causal_conv1d activation must be "silu" (or absent), got "gelu"}}
  %y, %s = rlx_mir.causal_conv1d %x, %w activation = "gelu" : tensor<2x3x5xf32>, tensor<3x4xf32>
  return
}
