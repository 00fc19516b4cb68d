// A Phi-3 decoder layer written in HIR with its packed projections
// (qkv_proj, gate_up_proj) sliced on the activations by rlx_mir.slice, as
// a user writes it from the checkpoint: fuses to the 6 compute ops of the
// exported layer (rope and SwiGLU on the packed slices, norms as prologues,
// residuals as epilogues).
// RUN: rlx-opt %s -split-input-file --convert-rlx-hir-to-mir --rlx-mir-fuse | FileCheck %s
// RUN: rlx-opt %s -split-input-file --convert-rlx-hir-to-mir --rlx-mir-fuse=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: rlx-opt %s -split-input-file --convert-rlx-hir-to-mir --rlx-mir-fuse-swiglu=report=true 2>&1 >/dev/null | FileCheck %s --check-prefix=SWIGLU

// REPORT: remark: fusion of @layer: {{.*}} compute ops 20 -> 6
// CHECK-LABEL: func.func @layer(
// CHECK:         %[[QKV:.*]] = rlx_mir.fused_matmul %arg0, %arg3 transpose_b norm rms_norm {{.*}} rope({{.*}}) rope_heads = 8 head_dim = 8
// CHECK:         %[[A:.*]] = rlx_mir.attention
// CHECK:         %[[O:.*]] = rlx_mir.fused_matmul %[[A]], %arg4 transpose_b residual(%arg0
// CHECK:         %[[H:.*]] = rlx_mir.fused_matmul %[[O]], %arg6 transpose_b norm rms_norm {{.*}} activation silu glu
// CHECK:         rlx_mir.fused_matmul %[[H]], %arg7 transpose_b residual(%[[O]]
func.func @layer(%x: tensor<1x4x32xf32>, %pos: tensor<4xi64>, %ln1: tensor<32xf32>, %wqkv: tensor<96x32xf32>, %wo: tensor<32x32xf32>, %ln2: tensor<32xf32>, %wgu: tensor<128x32xf32>, %wd: tensor<32x64xf32>) -> tensor<1x4x32xf32> {
  %h = rlx_hir.rms_norm %x, %ln1 eps = 1.0e-05 : tensor<1x4x32xf32>, tensor<32xf32>
  %qkv = rlx_hir.linear %h, %wqkv : tensor<1x4x32xf32>, tensor<96x32xf32>
  %q = rlx_mir.slice %qkv offsets [0, 0, 0] sizes [1, 4, 32] strides [1, 1, 1] : tensor<1x4x96xf32>
  %k = rlx_mir.slice %qkv offsets [0, 0, 32] sizes [1, 4, 32] strides [1, 1, 1] : tensor<1x4x96xf32>
  %v = rlx_mir.slice %qkv offsets [0, 0, 64] sizes [1, 4, 32] strides [1, 1, 1] : tensor<1x4x96xf32>
  %qr = rlx_hir.rope %q positions(%pos : tensor<4xi64>) head_dim = 8 : tensor<1x4x32xf32>
  %kr = rlx_hir.rope %k positions(%pos : tensor<4xi64>) head_dim = 8 : tensor<1x4x32xf32>
  %a = rlx_hir.attention %qr, %kr, %v heads = 4, kv_heads = 4, head_dim = 8 causal : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>
  %o = rlx_hir.linear %a, %wo : tensor<1x4x32xf32>, tensor<32x32xf32>
  %r:2 = rlx_hir.residual_rms_norm %o, %x, %ln2 eps = 1.0e-05 : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>
  %gu = rlx_hir.linear %r#0, %wgu : tensor<1x4x32xf32>, tensor<128x32xf32>
  %g = rlx_mir.slice %gu offsets [0, 0, 0] sizes [1, 4, 64] strides [1, 1, 1] : tensor<1x4x128xf32>
  %u = rlx_mir.slice %gu offsets [0, 0, 64] sizes [1, 4, 64] strides [1, 1, 1] : tensor<1x4x128xf32>
  %gs = rlx_mir.silu %g : tensor<1x4x64xf32>
  %m = rlx_mir.mul %gs, %u : tensor<1x4x64xf32>, tensor<1x4x64xf32>
  %d = rlx_hir.linear %m, %wd : tensor<1x4x64xf32>, tensor<32x64xf32>
  %y = rlx_mir.add %d, %r#1 : tensor<1x4x32xf32>, tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

// -----

// Halves swapped (up first, as some checkpoints store them): not the glu
// stage, and the SwiGLU family's report says why (rlx-mir-fuse then fuses
// the silu and the product as one elementwise kernel).
// REPORT: remark: fusion of @up_first: {{.*}} compute ops 3 -> 2
// SWIGLU: remark: rlx_mir.mul not fused: [rlx-mir-fuse-swiglu] shape mismatch: the gate and up slices are not the first and second halves
// CHECK-LABEL: func.func @up_first(
// CHECK-NOT:     glu
// CHECK:         rlx_mir.elementwise
func.func @up_first(%x: tensor<1x4x32xf32>, %wgu: tensor<128x32xf32>) -> tensor<1x4x64xf32> {
  %gu = rlx_mir.matmul %x, %wgu transpose_b : tensor<1x4x32xf32>, tensor<128x32xf32>
  %u = rlx_mir.slice %gu offsets [0, 0, 0] sizes [1, 4, 64] strides [1, 1, 1] : tensor<1x4x128xf32>
  %g = rlx_mir.slice %gu offsets [0, 0, 64] sizes [1, 4, 64] strides [1, 1, 1] : tensor<1x4x128xf32>
  %gs = rlx_mir.silu %g : tensor<1x4x64xf32>
  %m = rlx_mir.mul %gs, %u : tensor<1x4x64xf32>, tensor<1x4x64xf32>
  return %m : tensor<1x4x64xf32>
}
