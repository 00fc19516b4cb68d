// rlx-mir-prepare-for-ad: fused ops and regions become the primitives the
// reverse-mode rules cover.
// RUN: rlx-opt %s --rlx-mir-prepare-for-ad -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fused_matmul
// CHECK-NOT:     rlx_mir.fused_matmul
// The rms_norm prologue as statistics...
// CHECK:         %[[SQ:.*]] = rlx_mir.mul %[[X:.*]], %[[X]] : tensor<3x6xf32>
// CHECK:         %[[MS:.*]] = rlx_mir.reduce {{ *}}mean %[[SQ]] axes = [1] keep_dims
// CHECK:         rlx_mir.rsqrt
// ... the matmul, the bias, the gated unit on column halves, the residual.
// CHECK:         %[[MM:.*]] = rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<3x6xf32>, tensor<8x6xf32>
// CHECK:         %[[B:.*]] = rlx_mir.add %[[MM]], %{{.*}} : tensor<3x8xf32>, tensor<8xf32>
// CHECK:         %[[G:.*]] = rlx_mir.slice %[[B]] offsets [0, 0] sizes [-1, 4]
// CHECK:         %[[A:.*]] = rlx_mir.silu %[[G]]
// CHECK:         %[[U:.*]] = rlx_mir.slice %[[B]] offsets [0, 4] sizes [-1, 4]
// CHECK:         %[[GU:.*]] = rlx_mir.mul %[[A]], %[[U]]
// CHECK:         rlx_mir.add %[[GU]], %{{.*}} : tensor<3x4xf32>, tensor<3x4xf32>
func.func @fused_matmul(%x: tensor<3x6xf32>, %w: tensor<8x6xf32>, %g: tensor<6xf32>, %b: tensor<8xf32>,
                        %r: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<6xf32>)
      bias(%b : tensor<8xf32>) activation silu glu residual(%r : tensor<3x4xf32>) : tensor<3x6xf32>, tensor<8x6xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Attention with GQA: heads split, K/V repeated by a broadcast, scores,
// causal mask, softmax, weighted sum, heads merged.
// CHECK-LABEL: func.func @attention
// CHECK-NOT:     rlx_mir.attention
// CHECK:         rlx_mir.broadcast %{{.*}} [1, 2, 2, 5, 4] : tensor<1x2x1x5x4xf32>
// CHECK:         rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>
// CHECK:         rlx_mir.causal_mask
// CHECK:         rlx_mir.softmax %{{.*}} axis = -1
// CHECK:         rlx_mir.matmul %{{.*}}, %{{.*}} : tensor<1x4x5x5xf32>, tensor<1x4x5x4xf32>
// CHECK:         rlx_mir.reshape %{{.*}} [1, 5, 16] : tensor<1x5x4x4xf32>
func.func @attention(%q: tensor<1x5x16xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> tensor<1x5x16xf32> {
  %o = rlx_mir.attention %q, %k, %v heads = 4, kv_heads = 2, head_dim = 4 causal
      : tensor<1x5x16xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>
  return %o : tensor<1x5x16xf32>
}

// -----

// An elementwise region: one MIR op per body op.
// CHECK-LABEL: func.func @region
// CHECK-NOT:     rlx_mir.elementwise
// CHECK:         %[[M:.*]] = rlx_mir.mul %arg0, %arg1 : tensor<4xf32>, tensor<4xf32>
// CHECK:         %[[C:.*]] = rlx_mir.constant dense<2.000000e+00> : tensor<f32>
// CHECK:         %[[A:.*]] = rlx_mir.add %[[M]], %[[C]]
// CHECK:         %[[T:.*]] = rlx_mir.tanh %[[A]]
// CHECK:         return %[[T]]
func.func @region(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = rlx_mir.elementwise ins(%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %z: f32):
    %m = arith.mulf %x, %z : f32
    %c = arith.constant 2.0 : f32
    %s = arith.addf %m, %c : f32
    %t = math.tanh %s : f32
    rlx_mir.yield %t : f32
  }
  return %y : tensor<4xf32>
}

// -----

// Attention over an empty sequence unfuses like any other (this aborted:
// reshape patterns rejected 0-size dims).
// CHECK-LABEL: func.func @attention_seq0(
// CHECK-NOT:     rlx_mir.attention
// CHECK:         rlx_mir.softmax
func.func @attention_seq0(%q: tensor<1x0x64xf32>, %k: tensor<1x0x32xf32>, %v: tensor<1x0x32xf32>) -> tensor<1x0x64xf32> {
  %0 = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 32 causal : tensor<1x0x64xf32>, tensor<1x0x32xf32>, tensor<1x0x32xf32>
  return %0 : tensor<1x0x64xf32>
}
