// Decode attention with the heads folded into the batch of rank-3 matmuls,
// as buddy-mlir's BuddyNext kernel writes it
// (examples/BuddyNext/next-gqa-attention.mlir; the form, written small):
// q [1, H, 1, D] → [H, 1, D]; K/V [1, Hkv, S, D] repeated to
// [1, Hkv, G, S, D] and merged to [H, S, D]; scores · scale + a [1, 1, S]
// mask; softmax; · V; the output reshaped back to [1, H, 1, D].
// RUN: rlx-opt %s -split-input-file --convert-elementwise-to-linalg --rlx-import-to-mir --rlx-mir-fuse | FileCheck %s

// CHECK-LABEL: func.func @gqa_decode(
// CHECK:         %[[M:.*]] = rlx_mir.reshape %arg3 [1, 1, 8]
// CHECK-NEXT:    %[[A:.*]] = rlx_mir.attention %arg0, %arg1, %arg2 mask(%[[M]] : tensor<1x1x8xf32>) heads = 4, kv_heads = 2, head_dim = 4 {{.*}}bhsd
// CHECK-NEXT:    return %[[A]] : tensor<1x4x1x4xf32>
func.func @gqa_decode(%q: tensor<1x4x1x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %mask: tensor<1x1x1x8xf32>) -> tensor<1x4x1x4xf32> {
  %s5 = tosa.const_shape {values = dense<[1, 2, 1, 8, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s3 = tosa.const_shape {values = dense<[4, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x2x2x8x4xf32>}> : () -> tensor<1x2x2x8x4xf32>
  %k5 = tosa.reshape %k, %s5 : (tensor<1x2x8x4xf32>, !tosa.shape<5>) -> tensor<1x2x1x8x4xf32>
  %kr = tosa.add %k5, %z : (tensor<1x2x1x8x4xf32>, tensor<1x2x2x8x4xf32>) -> tensor<1x2x2x8x4xf32>
  %kh = tosa.reshape %kr, %s3 : (tensor<1x2x2x8x4xf32>, !tosa.shape<3>) -> tensor<4x8x4xf32>
  %v5 = tosa.reshape %v, %s5 : (tensor<1x2x8x4xf32>, !tosa.shape<5>) -> tensor<1x2x1x8x4xf32>
  %vr = tosa.add %v5, %z : (tensor<1x2x1x8x4xf32>, tensor<1x2x2x8x4xf32>) -> tensor<1x2x2x8x4xf32>
  %vh = tosa.reshape %vr, %s3 : (tensor<1x2x2x8x4xf32>, !tosa.shape<3>) -> tensor<4x8x4xf32>
  %sq = tosa.const_shape {values = dense<[4, 1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %qh = tosa.reshape %q, %sq : (tensor<1x4x1x4xf32>, !tosa.shape<3>) -> tensor<4x1x4xf32>
  %acc = arith.constant dense<0.0> : tensor<4x1x8xf32>
  %qk = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%qh, %kh : tensor<4x1x4xf32>, tensor<4x8x4xf32>) outs(%acc : tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %c = arith.constant 0.5 : f32
  %cs = tensor.splat %c : tensor<4x1x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sc = tosa.mul %qk, %cs, %shift : (tensor<4x1x8xf32>, tensor<4x1x8xf32>, tensor<1xi8>) -> tensor<4x1x8xf32>
  %sm = tosa.const_shape {values = dense<[1, 1, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m = tosa.reshape %mask, %sm : (tensor<1x1x1x8xf32>, !tosa.shape<3>) -> tensor<1x1x8xf32>
  %s = tosa.add %sc, %m : (tensor<4x1x8xf32>, tensor<1x1x8xf32>) -> tensor<4x1x8xf32>
  %mx = tosa.reduce_max %s {axis = 2 : i32} : (tensor<4x1x8xf32>) -> tensor<4x1x1xf32>
  %d = tosa.sub %s, %mx : (tensor<4x1x8xf32>, tensor<4x1x1xf32>) -> tensor<4x1x8xf32>
  %e = tosa.exp %d : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x1x8xf32>) -> tensor<4x1x1xf32>
  %p = tosa.reciprocal %sum : (tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %pr = tosa.mul %e, %p, %shift : (tensor<4x1x8xf32>, tensor<4x1x1xf32>, tensor<1xi8>) -> tensor<4x1x8xf32>
  %za = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %o = tosa.matmul %pr, %vh, %za, %za : (tensor<4x1x8xf32>, tensor<4x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 4, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o4 = tosa.reshape %o, %s4 : (tensor<4x1x4xf32>, !tosa.shape<4>) -> tensor<1x4x1x4xf32>
  return %o4 : tensor<1x4x1x4xf32>
}

// -----

// A per-head [H, 1, S] mask that is no view of [B, H, 1, S]: not raised
// (attention takes masks per batch or per head of [B, H, Sq, Sk]).
// CHECK-LABEL: func.func @per_head_mask(
// CHECK-NOT:     rlx_mir.attention
// CHECK:         rlx_mir.softmax
func.func @per_head_mask(%q: tensor<1x4x1x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x4x8x4xf32>, %mask: tensor<4x1x8xf32>) -> tensor<1x4x1x4xf32> {
  %s3 = tosa.const_shape {values = dense<[4, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %kh = tosa.reshape %k, %s3 : (tensor<1x4x8x4xf32>, !tosa.shape<3>) -> tensor<4x8x4xf32>
  %vh = tosa.reshape %v, %s3 : (tensor<1x4x8x4xf32>, !tosa.shape<3>) -> tensor<4x8x4xf32>
  %sq = tosa.const_shape {values = dense<[4, 1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %qh = tosa.reshape %q, %sq : (tensor<1x4x1x4xf32>, !tosa.shape<3>) -> tensor<4x1x4xf32>
  %acc = arith.constant dense<0.0> : tensor<4x1x8xf32>
  %qk = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%qh, %kh : tensor<4x1x4xf32>, tensor<4x8x4xf32>) outs(%acc : tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %s = tosa.add %qk, %mask : (tensor<4x1x8xf32>, tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %mx = tosa.reduce_max %s {axis = 2 : i32} : (tensor<4x1x8xf32>) -> tensor<4x1x1xf32>
  %d = tosa.sub %s, %mx : (tensor<4x1x8xf32>, tensor<4x1x1xf32>) -> tensor<4x1x8xf32>
  %e = tosa.exp %d : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x1x8xf32>) -> tensor<4x1x1xf32>
  %p = tosa.reciprocal %sum : (tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %pr = tosa.mul %e, %p, %shift : (tensor<4x1x8xf32>, tensor<4x1x1xf32>, tensor<1xi8>) -> tensor<4x1x8xf32>
  %za = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %o = tosa.matmul %pr, %vh, %za, %za : (tensor<4x1x8xf32>, tensor<4x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 4, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o4 = tosa.reshape %o, %s4 : (tensor<4x1x4xf32>, !tosa.shape<4>) -> tensor<1x4x1x4xf32>
  return %o4 : tensor<1x4x1x4xf32>
}

// -----

// Prefill with Kᵀ written as its own transpose ([B, H, D, S] merged to
// [B·H, D, S]) and a plain matmul, as buddy-mlir's DeepSeek-R1 import writes
// it.
// CHECK-LABEL: func.func @k_transposed(
// CHECK:         rlx_mir.attention %arg0, %arg1, %arg2 {{.*}}heads = 2, kv_heads = 2, head_dim = 4
// CHECK-NOT:     rlx_mir.matmul
func.func @k_transposed(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sk = tosa.const_shape {values = dense<[2, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q3 = tosa.reshape %q, %s3 : (tensor<1x2x3x4xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %k3 = tosa.reshape %kt, %sk : (tensor<1x2x4x3xf32>, !tosa.shape<3>) -> tensor<2x4x3xf32>
  %v3 = tosa.reshape %v, %s3 : (tensor<1x2x3x4xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q3, %k3, %z, %z : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %mx = tosa.reduce_max %s {axis = 2 : i32} : (tensor<2x3x3xf32>) -> tensor<2x3x1xf32>
  %d = tosa.sub %s, %mx : (tensor<2x3x3xf32>, tensor<2x3x1xf32>) -> tensor<2x3x3xf32>
  %e = tosa.exp %d : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x3x3xf32>) -> tensor<2x3x1xf32>
  %r = tosa.reciprocal %sum : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<2x3x3xf32>, tensor<2x3x1xf32>, tensor<1xi8>) -> tensor<2x3x3xf32>
  %o = tosa.matmul %p, %v3, %z, %z : (tensor<2x3x3xf32>, tensor<2x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 2, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o4 = tosa.reshape %o, %s4 : (tensor<2x3x4xf32>, !tosa.shape<4>) -> tensor<1x2x3x4xf32>
  return %o4 : tensor<1x2x3x4xf32>
}
