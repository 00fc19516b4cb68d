// Epilogues on slices of one packed projection (Phi-3's qkv_proj and
// gate_up_proj): RoPE on the q and k column slices becomes the rope stage
// over their heads, SwiGLU on the two halves the glu activation.
// RUN: rlx-opt %s --rlx-mir-fuse -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @packed_qkv_rope(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<1x4x16xf32>, %[[W:[^:]*]]: tensor<32x16xf32>, %[[C:[^:]*]]: tensor<4x2xf32>, %[[S:[^:]*]]: tensor<4x2xf32>
// CHECK:         %[[Y:.*]] = rlx_mir.fused_matmul %[[X]], %[[W]] transpose_b rope(%[[C]], %[[S]] : tensor<4x2xf32>, tensor<4x2xf32>) rope_heads = 6 head_dim = 4
// CHECK-DAG:     rlx_mir.slice %[[Y]] offsets [0, 0, 0] sizes [1, 4, 16]
// CHECK-DAG:     rlx_mir.slice %[[Y]] offsets [0, 0, 16] sizes [1, 4, 8]
// CHECK-DAG:     rlx_mir.slice %[[Y]] offsets [0, 0, 24] sizes [1, 4, 8]
// CHECK-NOT:     rlx_mir.rope
func.func @packed_qkv_rope(%x: tensor<1x4x16xf32>, %w: tensor<32x16xf32>, %c: tensor<4x2xf32>, %s: tensor<4x2xf32>)
    -> (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %y = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x16xf32>, tensor<32x16xf32>
  %q = rlx_mir.slice %y offsets [0, 0, 0] sizes [1, 4, 16] strides [1, 1, 1] : tensor<1x4x32xf32>
  %k = rlx_mir.slice %y offsets [0, 0, 16] sizes [1, 4, 8] strides [1, 1, 1] : tensor<1x4x32xf32>
  %v = rlx_mir.slice %y offsets [0, 0, 24] sizes [1, 4, 8] strides [1, 1, 1] : tensor<1x4x32xf32>
  %qr = rlx_mir.rope %q, %c, %s head_dim = 4 : tensor<1x4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  %kr = rlx_mir.rope %k, %c, %s head_dim = 4 : tensor<1x4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  return %qr, %kr, %v : tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// A rope on a slice that does not start where the roped prefix ends (k after
// v) is not one stage: the ropes stay.
// CHECK-LABEL: func.func @packed_rope_not_prefix(
// CHECK-COUNT-2: rlx_mir.rope
func.func @packed_rope_not_prefix(%x: tensor<1x4x16xf32>, %w: tensor<32x16xf32>, %c: tensor<4x2xf32>, %s: tensor<4x2xf32>)
    -> (tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %y = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x16xf32>, tensor<32x16xf32>
  %q = rlx_mir.slice %y offsets [0, 0, 0] sizes [1, 4, 16] strides [1, 1, 1] : tensor<1x4x32xf32>
  %v = rlx_mir.slice %y offsets [0, 0, 16] sizes [1, 4, 8] strides [1, 1, 1] : tensor<1x4x32xf32>
  %k = rlx_mir.slice %y offsets [0, 0, 24] sizes [1, 4, 8] strides [1, 1, 1] : tensor<1x4x32xf32>
  %qr = rlx_mir.rope %q, %c, %s head_dim = 4 : tensor<1x4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  %kr = rlx_mir.rope %k, %c, %s head_dim = 4 : tensor<1x4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  return %qr, %kr, %v : tensor<1x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @packed_gate_up(
// CHECK:         %[[H:.*]] = rlx_mir.fused_matmul %{{.*}}, %{{.*}} transpose_b activation silu glu : tensor<1x4x16xf32>, tensor<24x16xf32>
// CHECK-NEXT:    return %[[H]] : tensor<1x4x12xf32>
func.func @packed_gate_up(%x: tensor<1x4x16xf32>, %w: tensor<24x16xf32>) -> tensor<1x4x12xf32> {
  %y = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x16xf32>, tensor<24x16xf32>
  %g = rlx_mir.slice %y offsets [0, 0, 0] sizes [1, 4, 12] strides [1, 1, 1] : tensor<1x4x24xf32>
  %u = rlx_mir.slice %y offsets [0, 0, 12] sizes [1, 4, 12] strides [1, 1, 1] : tensor<1x4x24xf32>
  %a = rlx_mir.silu %g : tensor<1x4x12xf32>
  %h = rlx_mir.mul %a, %u : tensor<1x4x12xf32>, tensor<1x4x12xf32>
  return %h : tensor<1x4x12xf32>
}

// -----

// The halves swapped (act on the second half) are not glu's layout.
// CHECK-LABEL: func.func @packed_gate_up_swapped(
// CHECK-NOT:     glu
func.func @packed_gate_up_swapped(%x: tensor<1x4x16xf32>, %w: tensor<24x16xf32>) -> tensor<1x4x12xf32> {
  %y = rlx_mir.matmul %x, %w transpose_b : tensor<1x4x16xf32>, tensor<24x16xf32>
  %g = rlx_mir.slice %y offsets [0, 0, 12] sizes [1, 4, 12] strides [1, 1, 1] : tensor<1x4x24xf32>
  %u = rlx_mir.slice %y offsets [0, 0, 0] sizes [1, 4, 12] strides [1, 1, 1] : tensor<1x4x24xf32>
  %a = rlx_mir.silu %g : tensor<1x4x12xf32>
  %h = rlx_mir.mul %a, %u : tensor<1x4x12xf32>, tensor<1x4x12xf32>
  return %h : tensor<1x4x12xf32>
}
