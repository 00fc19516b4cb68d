// rlx-mir-merge-matmuls: matmuls sharing their input become one matmul over
// concatenated weights plus slices (views) of its output.
// RUN: rlx-opt %s --rlx-mir-merge-matmuls=report -split-input-file -verify-diagnostics | FileCheck %s

// QKV with RoPE on q and k: roped heads lead, v follows (order q, k, v).
// CHECK-LABEL: func @qkv
func.func @qkv(%x: tensor<1x4x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>, %wv: tensor<16x32xf32>,
               %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) {
  // CHECK: %[[W:.*]] = rlx_mir.concat %arg1, %arg2, %arg3 axis = 0
  // CHECK: %[[Y:.*]] = rlx_mir.fused_matmul %arg0, %[[W]] transpose_b rope(%arg4, %arg5 : tensor<4x4xf32>, tensor<4x4xf32>) rope_heads = 6 head_dim = 8
  // CHECK: %[[Q:.*]] = rlx_mir.slice %[[Y]] offsets [0, 0, 0] sizes [-1, -1, 32]
  // CHECK: %[[K:.*]] = rlx_mir.slice %[[Y]] offsets [0, 0, 32] sizes [-1, -1, 16]
  // CHECK: %[[V:.*]] = rlx_mir.slice %[[Y]] offsets [0, 0, 48] sizes [-1, -1, 16]
  // CHECK: return %[[Q]], %[[K]], %[[V]]
  %v = rlx_mir.matmul %x, %wv transpose_b : tensor<1x4x32xf32>, tensor<16x32xf32>
  %q = rlx_mir.fused_matmul %x, %wq transpose_b rope(%c, %s : tensor<4x4xf32>, tensor<4x4xf32>) rope_heads = 4 head_dim = 8 : tensor<1x4x32xf32>, tensor<32x32xf32>
  %k = rlx_mir.fused_matmul %x, %wk transpose_b rope(%c, %s : tensor<4x4xf32>, tensor<4x4xf32>) rope_heads = 2 head_dim = 8 : tensor<1x4x32xf32>, tensor<16x32xf32>
  return %q, %k, %v : tensor<1x4x32xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>
}

// -----

// Biases are concatenated like the weights; [in, out] weights along axis 1.
// CHECK-LABEL: func @biased_in_out
func.func @biased_in_out(%x: tensor<2x8xf32>, %a: tensor<8x4xf32>, %b: tensor<8x6xf32>, %ba: tensor<4xf32>, %bb: tensor<6xf32>) -> (tensor<2x4xf32>, tensor<2x6xf32>) {
  // CHECK: %[[W:.*]] = rlx_mir.concat %arg1, %arg2 axis = 1
  // CHECK: %[[B:.*]] = rlx_mir.concat %arg3, %arg4 axis = 0
  // CHECK: rlx_mir.fused_matmul %arg0, %[[W]] bias(%[[B]] : tensor<10xf32>)
  %0 = rlx_mir.fused_matmul %x, %a bias(%ba : tensor<4xf32>) : tensor<2x8xf32>, tensor<8x4xf32>
  %1 = rlx_mir.fused_matmul %x, %b bias(%bb : tensor<6xf32>) : tensor<2x8xf32>, tensor<8x6xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x6xf32>
}

// -----

// Different activations cannot share one epilogue.
// CHECK-LABEL: func @different_activations
func.func @different_activations(%x: tensor<2x8xf32>, %a: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NOT: concat
  %0 = rlx_mir.fused_matmul %x, %a activation relu : tensor<2x8xf32>, tensor<8x4xf32>
  // expected-remark @+1 {{rlx_mir.fused_matmul not fused: [rlx-mir-merge-matmuls] unsupported epilogue: activations or bias presence differ}}
  %1 = rlx_mir.fused_matmul %x, %a activation gelu : tensor<2x8xf32>, tensor<8x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Incompatible shapes: the weights disagree on the layout.
// CHECK-LABEL: func @different_layouts
func.func @different_layouts(%x: tensor<2x8xf32>, %a: tensor<8x4xf32>, %b: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NOT: concat
  %0 = rlx_mir.matmul %x, %a : tensor<2x8xf32>, tensor<8x4xf32>
  // expected-remark @+1 {{rlx_mir.matmul not fused: [rlx-mir-merge-matmuls] shape mismatch: weight layout, K or prologue differ}}
  %1 = rlx_mir.matmul %x, %b transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A head-normed matmul after a roped-only one cannot give leading blocks.
// CHECK-LABEL: func @head_blocks
func.func @head_blocks(%x: tensor<1x4x32xf32>, %w: tensor<16x32xf32>, %c: tensor<4x4xf32>, %g: tensor<2x8xf32>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>) {
  // CHECK-NOT: concat
  // expected-remark @+1 {{rlx_mir.fused_matmul not fused: [rlx-mir-merge-matmuls] unsupported epilogue: head-norm and rope heads do not form leading blocks of the merged output}}
  %0 = rlx_mir.fused_matmul %x, %w transpose_b rope(%c, %c : tensor<4x4xf32>, tensor<4x4xf32>) rope_heads = 2 head_dim = 8 : tensor<1x4x32xf32>, tensor<16x32xf32>
  %1 = rlx_mir.fused_matmul %x, %w transpose_b head_norm(%g : tensor<2x8xf32>) head_norm_eps = 1.0e-06 head_dim = 8 : tensor<1x4x32xf32>, tensor<16x32xf32>
  return %0, %1 : tensor<1x4x16xf32>, tensor<1x4x16xf32>
}
