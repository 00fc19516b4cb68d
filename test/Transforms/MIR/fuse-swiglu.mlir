// rlx-mir-fuse-swiglu: act(x·Wg) · (x·Wu) → one gated matmul.
// RUN: rlx-opt %s --rlx-mir-fuse-swiglu=report -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @swiglu
func.func @swiglu(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // CHECK: %[[W:.*]] = rlx_mir.concat %arg1, %arg2 axis = 0
  // CHECK: %[[Y:.*]] = rlx_mir.fused_matmul %arg0, %[[W]] transpose_b activation silu glu
  // CHECK-NEXT: return %[[Y]]
  %0 = rlx_mir.matmul %x, %g transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %1 = rlx_mir.matmul %x, %u transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %2 = rlx_mir.silu %0 : tensor<2x16xf32>
  %3 = rlx_mir.mul %1, %2 : tensor<2x16xf32>, tensor<2x16xf32>
  return %3 : tensor<2x16xf32>
}

// -----

// The gate activation may already sit in the gate matmul's epilogue (GeGLU).
// CHECK-LABEL: func @geglu_fused_gate
func.func @geglu_fused_gate(%x: tensor<2x8xf32>, %g: tensor<8x16xf32>, %u: tensor<8x16xf32>) -> tensor<2x16xf32> {
  // CHECK: %[[W:.*]] = rlx_mir.concat %arg1, %arg2 axis = 1
  // CHECK: rlx_mir.fused_matmul %arg0, %[[W]] activation gelu_tanh glu
  %0 = rlx_mir.fused_matmul %x, %g activation gelu_tanh : tensor<2x8xf32>, tensor<8x16xf32>
  %1 = rlx_mir.matmul %x, %u : tensor<2x8xf32>, tensor<8x16xf32>
  %2 = rlx_mir.mul %0, %1 : tensor<2x16xf32>, tensor<2x16xf32>
  return %2 : tensor<2x16xf32>
}

// -----

// Wrong activation: tanh is not a gating activation.
// CHECK-LABEL: func @wrong_activation
func.func @wrong_activation(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // CHECK-COUNT-2: rlx_mir.matmul
  // CHECK: rlx_mir.tanh
  // CHECK: rlx_mir.mul
  %0 = rlx_mir.matmul %x, %g transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %1 = rlx_mir.matmul %x, %u transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %2 = rlx_mir.tanh %0 : tensor<2x16xf32>
  %3 = rlx_mir.mul %2, %1 : tensor<2x16xf32>, tensor<2x16xf32>
  return %3 : tensor<2x16xf32>
}

// -----

// Gate and up read different inputs.
// CHECK-LABEL: func @different_inputs
func.func @different_inputs(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>, %g: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // CHECK-NOT: glu
  %0 = rlx_mir.matmul %x, %g transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %1 = rlx_mir.matmul %y, %g transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %2 = rlx_mir.silu %0 : tensor<2x16xf32>
  // expected-remark @+1 {{rlx_mir.mul not fused: [rlx-mir-fuse-swiglu] shape mismatch: gate and up matmuls differ in input, layout or prologue}}
  %3 = rlx_mir.mul %2, %1 : tensor<2x16xf32>, tensor<2x16xf32>
  return %3 : tensor<2x16xf32>
}

// -----

// The up projection is also read elsewhere: multi-use.
// CHECK-LABEL: func @up_multi_use
func.func @up_multi_use(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  // CHECK-NOT: glu
  %0 = rlx_mir.matmul %x, %g transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %1 = rlx_mir.matmul %x, %u transpose_b : tensor<2x8xf32>, tensor<16x8xf32>
  %2 = rlx_mir.silu %0 : tensor<2x16xf32>
  // expected-remark @+1 {{rlx_mir.mul not fused: [rlx-mir-fuse-swiglu] graph output}}
  %3 = rlx_mir.mul %2, %1 : tensor<2x16xf32>, tensor<2x16xf32>
  return %3, %1 : tensor<2x16xf32>, tensor<2x16xf32>
}
