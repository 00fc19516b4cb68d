// rlx-mir-fuse-attention: the primitive attention chain (as the fusable
// lowering and HF's eager attention write it) becomes one rlx_mir.attention.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir=fusion-policy=fusable --rlx-mir-fuse-attention=report -split-input-file -verify-diagnostics | FileCheck %s

// Round trips through the fusable lowering: every attribute comes back.
// CHECK-LABEL: func @gqa_causal
func.func @gqa_causal(%q: tensor<1x?x896xf32>, %k: tensor<1x?x128xf32>) -> tensor<1x?x896xf32> {
  // CHECK: %[[A:.*]] = rlx_mir.attention %arg0, %arg1, %arg1 heads = 14, kv_heads = 2, head_dim = 64 causal : tensor<1x?x896xf32>, tensor<1x?x128xf32>, tensor<1x?x128xf32>
  // CHECK-NEXT: return %[[A]]
  %0 = rlx_hir.attention %q, %k, %k heads = 14, kv_heads = 2, head_dim = 64 causal : tensor<1x?x896xf32>, tensor<1x?x128xf32>, tensor<1x?x128xf32>
  return %0 : tensor<1x?x896xf32>
}

// -----

// CHECK-LABEL: func @window_softcap_bool_mask
func.func @window_softcap_bool_mask(%q: tensor<2x5x32xf32>, %k: tensor<2x7x16xf32>, %m: tensor<2x5x7xi1>) -> tensor<2x5x32xf32> {
  // CHECK: rlx_mir.attention %arg0, %arg1, %arg1 mask(%arg2 : tensor<2x5x7xi1>) heads = 4, kv_heads = 2, head_dim = 8 sliding_window window = 3 softcap = 3.000000e+01 :
  // CHECK-NOT: rlx_mir.softmax
  %0 = rlx_hir.attention %q, %k, %k mask(%m : tensor<2x5x7xi1>) heads = 4, kv_heads = 2, head_dim = 8 sliding_window window = 3 softcap = 30.0 : tensor<2x5x32xf32>, tensor<2x7x16xf32>, tensor<2x7x16xf32>
  return %0 : tensor<2x5x32xf32>
}

// -----

// CHECK-LABEL: func @bshd_additive_scale
func.func @bshd_additive_scale(%q: tensor<1x5x4x8xf32>, %m: tensor<1x4x5x5xf32>) -> tensor<1x5x4x8xf32> {
  // CHECK: rlx_mir.attention %arg0, %arg0, %arg0 mask(%arg1 : tensor<1x4x5x5xf32>) heads = 4, kv_heads = 4, head_dim = 8 scale = 5.000000e-01 layout bshd
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<1x4x5x5xf32>) heads = 4, kv_heads = 4, head_dim = 8 scale = 0.5 layout bshd : tensor<1x5x4x8xf32>, tensor<1x5x4x8xf32>, tensor<1x5x4x8xf32>
  return %0 : tensor<1x5x4x8xf32>
}

// -----

// HF eager attention in BHSD: division by sqrt(head_dim), no mask.
// CHECK-LABEL: func @hf_eager_bhsd
func.func @hf_eager_bhsd(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x5x16xf32>, %v: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  // CHECK: %[[A:.*]] = rlx_mir.attention %arg0, %arg1, %arg2 heads = 2, kv_heads = 2, head_dim = 16 layout bhsd
  // CHECK-NEXT: return %[[A]]
  %s = rlx_mir.matmul %q, %k transpose_b : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  %c = rlx_mir.constant dense<4.0> : tensor<f32>
  %d = rlx_mir.div %s, %c : tensor<1x2x5x5xf32>, tensor<f32>
  %p = rlx_mir.softmax %d axis = -1 : tensor<1x2x5x5xf32>
  %o = rlx_mir.matmul %p, %v : tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// The probabilities are also returned: the chain must stay.
// CHECK-LABEL: func @probs_returned
func.func @probs_returned(%q: tensor<1x2x5x16xf32>) -> (tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>) {
  // CHECK: rlx_mir.softmax
  // CHECK-NOT: rlx_mir.attention
  %s = rlx_mir.matmul %q, %q transpose_b : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  %p = rlx_mir.softmax %s axis = -1 : tensor<1x2x5x5xf32>
  // expected-remark @+1 {{rlx_mir.matmul not fused: [rlx-mir-fuse-attention] graph output}}
  %o = rlx_mir.matmul %p, %q : tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>
  return %o, %p : tensor<1x2x5x16xf32>, tensor<1x2x5x5xf32>
}

// -----

// Softmax over the wrong axis is not attention.
// CHECK-LABEL: func @wrong_axis
func.func @wrong_axis(%q: tensor<1x2x5x16xf32>) -> tensor<1x2x5x16xf32> {
  // CHECK-NOT: rlx_mir.attention
  %s = rlx_mir.matmul %q, %q transpose_b : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  %p = rlx_mir.softmax %s axis = 2 : tensor<1x2x5x5xf32>
  %o = rlx_mir.matmul %p, %q : tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

// Q in packed layout but K already in BHSD: layouts differ, so every
// operand is taken in BHSD (q through its views) and the output's views stay.
// CHECK-LABEL: func @mixed_layouts
// CHECK:         %[[QT:.*]] = rlx_mir.transpose {{.*}} [0, 2, 1, 3]
// CHECK:         %[[A:.*]] = rlx_mir.attention %[[QT]], %arg1, %arg1 {{.*}} layout bhsd
// CHECK:         rlx_mir.transpose %[[A]] [0, 2, 1, 3]
func.func @mixed_layouts(%q: tensor<1x5x32xf32>, %k: tensor<1x2x5x16xf32>) -> tensor<1x5x32xf32> {
  %qr = rlx_mir.reshape %q [1, 5, 2, 16] : tensor<1x5x32xf32>
  %qt = rlx_mir.transpose %qr [0, 2, 1, 3] : tensor<1x5x2x16xf32>
  %s = rlx_mir.matmul %qt, %k transpose_b : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  %p = rlx_mir.softmax %s axis = -1 : tensor<1x2x5x5xf32>
  %o = rlx_mir.matmul %p, %k : tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>
  %ot = rlx_mir.transpose %o [0, 2, 1, 3] : tensor<1x2x5x16xf32>
  %or = rlx_mir.reshape %ot [1, 5, 32] : tensor<1x5x2x16xf32>
  return %or : tensor<1x5x32xf32>
}

// -----

// Q, K and V through one shared view: each dead view is erased once (it was
// erased once per use, a use-after-free; and the BHSD root twice).
// CHECK-LABEL: func @shared_view
func.func @shared_view(%x: tensor<1x5x2x16xf32>) -> tensor<1x5x2x16xf32> {
  // CHECK: %[[A:.*]] = rlx_mir.attention %arg0, %arg0, %arg0 heads = 2, kv_heads = 2, head_dim = 16 scale = 1.000000e+00 layout bshd
  // CHECK-NEXT: return %[[A]]
  %t = rlx_mir.transpose %x [0, 2, 1, 3] : tensor<1x5x2x16xf32>
  %s = rlx_mir.matmul %t, %t transpose_b : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>
  %p = rlx_mir.softmax %s axis = -1 : tensor<1x2x5x5xf32>
  %o = rlx_mir.matmul %p, %t : tensor<1x2x5x5xf32>, tensor<1x2x5x16xf32>
  %r = rlx_mir.transpose %o [0, 2, 1, 3] : tensor<1x2x5x16xf32>
  return %r : tensor<1x5x2x16xf32>
}
