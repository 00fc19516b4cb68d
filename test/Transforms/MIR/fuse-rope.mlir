// rlx-mir-fuse-rope: RoPE and per-head norms into the producing matmul.
// RUN: rlx-opt %s --rlx-mir-fuse-rope=report -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @rope
func.func @rope(%x: tensor<1x4x32xf32>, %w: tensor<64x32xf32>, %c: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<1x4x64xf32> {
  // 64 output columns = 4 heads of 16, all rotated.
  // CHECK: rlx_mir.fused_matmul %arg0, %arg1 transpose_b rope(%arg2, %arg3 : tensor<4x8xf32>, tensor<4x8xf32>) rope_heads = 4 head_dim = 16
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x32xf32>, tensor<64x32xf32>
  %1 = rlx_mir.rope %0, %c, %s head_dim = 16 : tensor<1x4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %1 : tensor<1x4x64xf32>
}

// -----

// Qwen3: per-head RMSNorm then RoPE, both in the epilogue.
// CHECK-LABEL: func @head_norm_then_rope
func.func @head_norm_then_rope(%x: tensor<1x4x32xf32>, %w: tensor<64x32xf32>, %g: tensor<16xf32>,
                               %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> tensor<1x4x64xf32> {
  // CHECK: %[[G:.*]] = rlx_mir.broadcast %arg2 [4, 16]
  // CHECK: rlx_mir.fused_matmul %arg0, %arg1 transpose_b head_norm(%[[G]] : tensor<4x16xf32>) head_norm_eps = 9.9999999999999995E-7 rope(%arg3, %arg4 : tensor<4x4xf32>, tensor<4x4xf32>) rope_heads = 4 rotary_dim = 8 rope_style gptj head_dim = 16
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x32xf32>, tensor<64x32xf32>
  %1 = rlx_mir.reshape %0 [1, 4, 4, 16] : tensor<1x4x64xf32>
  %2 = rlx_mir.rms_norm %1, %g eps = 1.0e-06 : tensor<1x4x4x16xf32>, tensor<16xf32>
  %3 = rlx_mir.reshape %2 [1, 4, 64] : tensor<1x4x4x16xf32>
  %4 = rlx_mir.rope %3, %c, %s head_dim = 16 rotary_dim = 8 style gptj : tensor<1x4x64xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  return %4 : tensor<1x4x64xf32>
}

// -----

// The rope input is also returned: no fusion.
// CHECK-LABEL: func @rope_graph_output
func.func @rope_graph_output(%x: tensor<1x4x32xf32>, %w: tensor<64x32xf32>, %c: tensor<4x8xf32>) -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>) {
  // CHECK: rlx_mir.matmul
  // CHECK: rlx_mir.rope
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x32xf32>, tensor<64x32xf32>
  // expected-remark @+1 {{rlx_mir.rope not fused: [rlx-mir-fuse-rope] graph output}}
  %1 = rlx_mir.rope %0, %c, %c head_dim = 16 : tensor<1x4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %0, %1 : tensor<1x4x64xf32>, tensor<1x4x64xf32>
}

// -----

// A residual already in the epilogue comes after rope: rope cannot follow it.
// CHECK-LABEL: func @rope_after_residual
func.func @rope_after_residual(%x: tensor<1x4x32xf32>, %w: tensor<64x32xf32>, %r: tensor<1x4x64xf32>, %c: tensor<4x8xf32>) -> tensor<1x4x64xf32> {
  // CHECK: rlx_mir.fused_matmul {{.*}} residual
  // CHECK: rlx_mir.rope
  %0 = rlx_mir.fused_matmul %x, %w transpose_b residual(%r : tensor<1x4x64xf32>) : tensor<1x4x32xf32>, tensor<64x32xf32>
  // expected-remark @+1 {{rlx_mir.rope not fused: [rlx-mir-fuse-rope] unsupported epilogue: rope after a rope or residual stage}}
  %1 = rlx_mir.rope %0, %c, %c head_dim = 16 : tensor<1x4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return %1 : tensor<1x4x64xf32>
}

// -----

// The head norm's head size disagrees with an existing head stage.
// CHECK-LABEL: func @head_dim_mismatch
func.func @head_dim_mismatch(%x: tensor<1x4x32xf32>, %w: tensor<64x32xf32>, %c: tensor<4x8xf32>, %g: tensor<32xf32>) -> tensor<1x4x64xf32> {
  // CHECK: rlx_mir.fused_matmul {{.*}} rope
  // CHECK: rlx_mir.rms_norm
  %0 = rlx_mir.fused_matmul %x, %w transpose_b rope(%c, %c : tensor<4x8xf32>, tensor<4x8xf32>) rope_heads = 4 head_dim = 16 : tensor<1x4x32xf32>, tensor<64x32xf32>
  %1 = rlx_mir.reshape %0 [1, 4, 2, 32] : tensor<1x4x64xf32>
  %2 = rlx_mir.rms_norm %1, %g eps = 1.0e-06 : tensor<1x4x2x32xf32>, tensor<32xf32>
  // expected-remark @+1 {{rlx_mir.reshape not fused: [rlx-mir-fuse-rope] unsupported epilogue: a head norm after rope or residual stages}}
  %3 = rlx_mir.reshape %2 [1, 4, 64] : tensor<1x4x2x32xf32>
  return %3 : tensor<1x4x64xf32>
}
