// convert-rlx-hir-to-mir{fusion-policy=fusable}: every block becomes the
// primitive chain that autodiff differentiates and fusion patterns find.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir=fusion-policy=fusable --split-input-file | FileCheck %s

// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4xf32>, %[[WT:.*]]: tensor<8x4xf32>)
func.func @linear(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %wt: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[MM:.*]] = rlx_mir.matmul %[[X]], %[[W]] transpose_b
  // CHECK: %[[ADD:.*]] = rlx_mir.add %[[MM]], %[[B]]
  // CHECK: %[[ACT:.*]] = rlx_mir.gelu %[[ADD]]
  %0 = rlx_hir.linear %x, %w bias %b activation gelu : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  // in_out weights need no transpose.
  // CHECK: %[[MM2:.*]] = rlx_mir.matmul %[[X]], %[[WT]] :
  %1 = rlx_hir.linear %x, %wt layout in_out : tensor<2x8xf32>, tensor<8x4xf32>
  // CHECK: return %[[ACT]], %[[MM2]]
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @swiglu
func.func @swiglu(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>, %d: tensor<8x16xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[G:.*]] = rlx_mir.matmul %arg0, %arg1 transpose_b
  // CHECK: %[[U:.*]] = rlx_mir.matmul %arg0, %arg2 transpose_b
  // CHECK: %[[S:.*]] = rlx_mir.silu %[[G]]
  // CHECK: %[[H:.*]] = rlx_mir.mul %[[S]], %[[U]]
  // CHECK: rlx_mir.matmul %[[H]], %arg3 transpose_b
  %0 = rlx_hir.swiglu %x, gate %g, up %u, down %d : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// GQA (4 query heads on 2 kv heads), sliding window, softcap and a boolean
// mask, in packed [B, S, H*D] layout.
// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<1x5x32xf32>, %k: tensor<1x7x16xf32>, %m: tensor<1x5x7xi1>) -> tensor<1x5x32xf32> {
  // CHECK: %[[QR:.*]] = rlx_mir.reshape %arg0 [1, 5, 4, 8]
  // CHECK: %[[QT:.*]] = rlx_mir.transpose %[[QR]] [0, 2, 1, 3]
  // CHECK: %[[KR:.*]] = rlx_mir.reshape %arg1 [1, 7, 2, 8]
  // CHECK: %[[KT:.*]] = rlx_mir.transpose %[[KR]] [0, 2, 1, 3]
  // repeat_kv: each kv head serves 2 query heads.
  // CHECK: %[[K5:.*]] = rlx_mir.reshape %[[KT]] [1, 2, 1, 7, 8]
  // CHECK: %[[KB:.*]] = rlx_mir.broadcast %[[K5]] [1, 2, 2, 7, 8]
  // CHECK: %[[KH:.*]] = rlx_mir.reshape %[[KB]] [1, 4, 7, 8]
  // CHECK: %[[VH:.*]] = rlx_mir.reshape %{{.*}} [1, 4, 7, 8]
  // CHECK: %[[S:.*]] = rlx_mir.matmul %[[QT]], %[[KH]] transpose_b
  // 1/sqrt(8)
  // CHECK: %[[SC:.*]] = rlx_mir.constant dense<0.353553385> : tensor<f32>
  // CHECK: %[[S1:.*]] = rlx_mir.mul %[[S]], %[[SC]]
  // CHECK: %[[C:.*]] = rlx_mir.constant dense<3.000000e+01> : tensor<f32>
  // CHECK: %[[D:.*]] = rlx_mir.div %[[S1]], %[[C]]
  // CHECK: %[[T:.*]] = rlx_mir.tanh %[[D]]
  // CHECK: %[[S2:.*]] = rlx_mir.mul %[[T]], %[[C]]
  // CHECK: %[[S3:.*]] = rlx_mir.causal_mask %[[S2]] window = 3
  // CHECK: %[[M4:.*]] = rlx_mir.reshape %arg2 [1, 1, 5, 7]
  // CHECK: %[[NINF:.*]] = rlx_mir.constant dense<0xFF800000> : tensor<f32>
  // CHECK: %[[S4:.*]] = rlx_mir.select %[[M4]], %[[S3]], %[[NINF]]
  // CHECK: %[[P:.*]] = rlx_mir.softmax %[[S4]] axis = -1
  // CHECK: %[[O:.*]] = rlx_mir.matmul %[[P]], %[[VH]] :
  // CHECK: %[[OT:.*]] = rlx_mir.transpose %[[O]] [0, 2, 1, 3]
  // CHECK: %[[OR:.*]] = rlx_mir.reshape %[[OT]] [1, 5, 32]
  // CHECK: return %[[OR]]
  %0 = rlx_hir.attention %q, %k, %k mask(%m : tensor<1x5x7xi1>) heads = 4, kv_heads = 2, head_dim = 8 sliding_window window = 3 softcap = 30.0 : tensor<1x5x32xf32>, tensor<1x7x16xf32>, tensor<1x7x16xf32>
  return %0 : tensor<1x5x32xf32>
}

// -----

// An additive mask is added; rank-4 BHSD needs no layout change.
// CHECK-LABEL: func @attention_bhsd_additive
func.func @attention_bhsd_additive(%q: tensor<2x4x5x8xf32>, %m: tensor<5x5xf32>) -> tensor<2x4x5x8xf32> {
  // CHECK: %[[S:.*]] = rlx_mir.matmul %arg0, %arg0 transpose_b
  // CHECK: rlx_mir.mul %[[S]], %{{.*}}
  // CHECK-NOT: causal_mask
  // CHECK: %[[A:.*]] = rlx_mir.add %{{.*}}, %arg1
  // CHECK: %[[P:.*]] = rlx_mir.softmax %[[A]]
  // CHECK: %[[O:.*]] = rlx_mir.matmul %[[P]], %arg0 :
  // CHECK: return %[[O]]
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<5x5xf32>) heads = 4, kv_heads = 4, head_dim = 8 layout bhsd : tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>
  return %0 : tensor<2x4x5x8xf32>
}

// -----

// The fusable form of residual_rms_norm is the add and the norm.
// CHECK-LABEL: func @residual_rms_norm
func.func @residual_rms_norm(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>, %g: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[SUM:.*]] = rlx_mir.add %arg0, %arg1
  // CHECK: %[[N:.*]] = rlx_mir.rms_norm %[[SUM]], %arg2 eps = 1.000000e-05
  // CHECK: return %[[N]], %[[SUM]]
  %0:2 = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-05 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<2x8xf32>
}
