// rlx-mir-recognize-blocks on primitive MIR (what import leaves after
// raising): each spelling becomes the block op.
// RUN: rlx-opt %s --rlx-mir-recognize-blocks -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @rms_norm_mean
// CHECK-NEXT:    %[[N:.*]] = rlx_mir.rms_norm %arg0, %arg1 eps = 9.99999{{[0-9]*}}E-7 : tensor<2x8xf32>, tensor<8xf32>
// CHECK-NEXT:    return %[[N]]
func.func @rms_norm_mean(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %sq = rlx_mir.mul %x, %x : tensor<2x8xf32>, tensor<2x8xf32>
  %m = rlx_mir.reduce mean %sq axes = [1] keep_dims : tensor<2x8xf32>
  %eps = rlx_mir.constant dense<1.0e-06> : tensor<f32>
  %a = rlx_mir.add %m, %eps : tensor<2x1xf32>, tensor<f32>
  %r = rlx_mir.rsqrt %a : tensor<2x1xf32>
  %n = rlx_mir.mul %x, %r : tensor<2x8xf32>, tensor<2x1xf32>
  %y = rlx_mir.mul %n, %w : tensor<2x8xf32>, tensor<8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// pow(x, 2), sum / H: the same block.
// CHECK-LABEL: func.func @rms_norm_pow_sum
// CHECK-NEXT:    rlx_mir.rms_norm %arg0 eps = 9.99999{{[0-9]*}}E-6 : tensor<2x8xf32>
func.func @rms_norm_pow_sum(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %two = rlx_mir.constant dense<2.0> : tensor<1x1xf32>
  %sq = rlx_mir.pow %x, %two : tensor<2x8xf32>, tensor<1x1xf32>
  %s = rlx_mir.reduce sum %sq axes = [1] keep_dims : tensor<2x8xf32>
  %h = rlx_mir.constant dense<8.0> : tensor<1x1xf32>
  %m = rlx_mir.div %s, %h : tensor<2x1xf32>, tensor<1x1xf32>
  %eps = rlx_mir.constant dense<1.0e-05> : tensor<1x1xf32>
  %a = rlx_mir.add %m, %eps : tensor<2x1xf32>, tensor<1x1xf32>
  %r = rlx_mir.rsqrt %a : tensor<2x1xf32>
  %n = rlx_mir.mul %x, %r : tensor<2x8xf32>, tensor<2x1xf32>
  return %n : tensor<2x8xf32>
}

// -----

// A mean over the wrong axis is not an RMSNorm.
// CHECK-LABEL: func.func @not_rms_norm
// CHECK-NOT:     rlx_mir.rms_norm
func.func @not_rms_norm(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sq = rlx_mir.mul %x, %x : tensor<2x8xf32>, tensor<2x8xf32>
  %m = rlx_mir.reduce mean %sq axes = [0] keep_dims : tensor<2x8xf32>
  %eps = rlx_mir.constant dense<1.0e-06> : tensor<f32>
  %a = rlx_mir.add %m, %eps : tensor<1x8xf32>, tensor<f32>
  %r = rlx_mir.rsqrt %a : tensor<1x8xf32>
  %n = rlx_mir.mul %x, %r : tensor<2x8xf32>, tensor<1x8xf32>
  return %n : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_reciprocal
// CHECK-NEXT:    %[[S:.*]] = rlx_mir.softmax %arg0 axis = 1 : tensor<2x5xf32>
// CHECK-NEXT:    return %[[S]]
func.func @softmax_reciprocal(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %mx = rlx_mir.reduce max %x axes = [1] keep_dims : tensor<2x5xf32>
  %d = rlx_mir.sub %x, %mx : tensor<2x5xf32>, tensor<2x1xf32>
  %e = rlx_mir.exp %d : tensor<2x5xf32>
  %s = rlx_mir.reduce sum %e axes = [1] keep_dims : tensor<2x5xf32>
  %r = rlx_mir.reciprocal %s : tensor<2x1xf32>
  %y = rlx_mir.mul %e, %r : tensor<2x5xf32>, tensor<2x1xf32>
  return %y : tensor<2x5xf32>
}

// -----

// x / (1 + exp(-x)) spelled out, times x: silu.
// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %[[S:.*]] = rlx_mir.silu %arg0 : tensor<4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = rlx_mir.constant dense<1.0> : tensor<f32>
  %n = rlx_mir.neg %x : tensor<4xf32>
  %e = rlx_mir.exp %n : tensor<4xf32>
  %d = rlx_mir.add %one, %e : tensor<f32>, tensor<4xf32>
  %sg = rlx_mir.div %one, %d : tensor<f32>, tensor<4xf32>
  %y = rlx_mir.mul %x, %sg : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A constant sliding-window mask of 2 keys (bottom-right, HF convention).
// CHECK-LABEL: func.func @window
// CHECK-NEXT:    %[[M:.*]] = rlx_mir.causal_mask %arg0 window = 2 : tensor<1x1x3x3xf32>
func.func @window(%s: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %m = rlx_mir.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0xFF800000, 0.0, 0.0]]> : tensor<3x3xf32>
  %y = rlx_mir.add %s, %m : tensor<1x1x3x3xf32>, tensor<3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// Transposes fold into the matmul's flags.
// CHECK-LABEL: func.func @matmul_flags
// CHECK-NEXT:    %[[M:.*]] = rlx_mir.matmul %arg0, %arg1 transpose_b : tensor<2x4x8xf32>, tensor<16x8xf32>
func.func @matmul_flags(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
  %t = rlx_mir.transpose %w [1, 0] : tensor<16x8xf32>
  %y = rlx_mir.matmul %x, %t : tensor<2x4x8xf32>, tensor<8x16xf32>
  return %y : tensor<2x4x16xf32>
}
