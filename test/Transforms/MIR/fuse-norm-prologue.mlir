// rlx-mir-fuse-norm-prologue: a norm read only by matmul lhs operands moves
// into their prologues.
// RUN: rlx-opt %s --rlx-mir-fuse-norm-prologue=report -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @prologue
func.func @prologue(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x4xf32>)
    -> (tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) {
  // CHECK: rlx_mir.fused_matmul %arg0, %arg3 transpose_b norm rms_norm eps = 1.000000e-05 norm_weight(%arg1 : tensor<8xf32>) :
  // CHECK: rlx_mir.fused_matmul %arg0, %arg4 norm rms_norm eps = 1.000000e-05 norm_weight(%arg1 : tensor<8xf32>) activation gelu
  // CHECK-NOT: rlx_mir.rms_norm
  %0 = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x4x8xf32>, tensor<8xf32>
  %1 = rlx_mir.matmul %0, %w1 transpose_b : tensor<1x4x8xf32>, tensor<16x8xf32>
  %2 = rlx_mir.fused_matmul %0, %w2 activation gelu : tensor<1x4x8xf32>, tensor<8x4xf32>
  // LayerNorm with weight and bias (GPT-2).
  // CHECK: rlx_mir.fused_matmul %arg0, %arg4 norm layer_norm eps = 1.000000e-05 norm_weight(%arg1 : tensor<8xf32>) norm_bias(%arg2 : tensor<8xf32>) :
  %3 = rlx_mir.layer_norm %x weight(%g : tensor<8xf32>) bias(%b : tensor<8xf32>) eps = 1.0e-05 : tensor<1x4x8xf32>
  %4 = rlx_mir.matmul %3, %w2 : tensor<1x4x8xf32>, tensor<8x4xf32>
  return %1, %2, %4 : tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
}

// -----

// CHECK-LABEL: func @graph_output
func.func @graph_output(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: rlx_mir.rms_norm
  // expected-remark @+1 {{rlx_mir.rms_norm not fused: [rlx-mir-fuse-norm-prologue] graph output: the normalized value is returned}}
  %0 = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<2x8xf32>
  %1 = rlx_mir.matmul %0, %w : tensor<2x8xf32>, tensor<8x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The norm feeds a matmul's rhs, not its lhs.
// CHECK-LABEL: func @norm_as_rhs
func.func @norm_as_rhs(%x: tensor<8x8xf32>, %y: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: rlx_mir.rms_norm
  // expected-remark @+1 {{rlx_mir.rms_norm not fused: [rlx-mir-fuse-norm-prologue] multi-use: the normalized value is also read by rlx_mir.matmul}}
  %0 = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<8x8xf32>
  %1 = rlx_mir.matmul %y, %0 : tensor<2x8xf32>, tensor<8x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// A matmul that already has a prologue cannot take a second one.
// CHECK-LABEL: func @double_prologue
func.func @double_prologue(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
  // CHECK: rlx_mir.rms_norm
  // expected-remark @+1 {{rlx_mir.rms_norm not fused: [rlx-mir-fuse-norm-prologue] unsupported epilogue: the matmul already has a prologue}}
  %0 = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<2x8xf32>
  %1 = rlx_mir.fused_matmul %0, %w norm rms_norm eps = 1.0e-06 : tensor<2x8xf32>, tensor<8x8xf32>
  return %1 : tensor<2x8xf32>
}
