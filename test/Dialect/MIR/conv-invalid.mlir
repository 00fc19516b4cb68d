// rlx_mir.conv's located errors: the verifier (located at the op, the
// parser then reports the inference failure) and what rlx-mir-decompose
// refuses instead of building (an im2col index table over 2^26 entries).
// RUN: rlx-opt %s -split-input-file --rlx-mir-decompose -verify-diagnostics

func.func @groups(%x: tensor<1x4x8xf32>, %w: tensor<3x4x3xf32>) -> tensor<1x3x6xf32> {
  // expected-error @+2 {{conv needs groups >= 1 dividing C_in = 4, got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.conv %x, %w groups = 3 : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> tensor<1x3x6xf32>
  return %y : tensor<1x3x6xf32>
}

// -----

func.func @bias(%x: tensor<1x4x8xf32>, %w: tensor<3x4x3xf32>, %b: tensor<4xf32>) -> tensor<1x3x6xf32> {
  // expected-error @+2 {{conv bias must be [C_out] = [3], got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.conv %x, %w bias(%b : tensor<4xf32>) : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> tensor<1x3x6xf32>
  return %y : tensor<1x3x6xf32>
}

// -----

func.func @table(%x: tensor<1x1x32768x32768xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x32768x32768xf32> {
  // expected-error @+1 {{conv: 1073741824 output positions of 1 kernel taps make an index table over 2^26 entries}}
  %y = rlx_mir.conv %x, %w : tensor<1x1x32768x32768xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x32768x32768xf32>
  return %y : tensor<1x1x32768x32768xf32>
}

// -----

// Padded sizes whose product passes 2^63 (it must not wrap past the bound).
func.func @padded_overflow(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x8388608x1099511627776xf32> {
  // expected-error @+2 {{conv sizes out of range (spatial dim 1): positions, padded positions, kernel taps and the dilated kernel must stay below 2^40}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.conv %x, %w padding = [4194304, 4194303, 549755813888, 549755813887] : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x8388608x1099511627776xf32>
  return %y : tensor<1x1x8388608x1099511627776xf32>
}

// -----

// A dilated kernel of 2^40 · 2^24 samples (it must not wrap to 0).
func.func @dilation_overflow(%x: tensor<1x1x3xf32>, %w: tensor<1x1x16777217xf32>) -> tensor<1x1x3xf32> {
  // expected-error @+2 {{conv sizes out of range (spatial dim 0): positions, padded positions, kernel taps and the dilated kernel must stay below 2^40}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.conv %x, %w dilation = [1099511627776] : tensor<1x1x3xf32>, tensor<1x1x16777217xf32> -> tensor<1x1x3xf32>
  return %y : tensor<1x1x3xf32>
}
