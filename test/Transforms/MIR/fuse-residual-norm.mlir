// rlx-mir-fuse-residual-norm: rms_norm(add(x, r)) → residual_rms_norm.
// RUN: rlx-opt %s --rlx-mir-fuse-residual-norm=report -split-input-file -verify-diagnostics | FileCheck %s

// Other readers of the sum read the second result.
// CHECK-LABEL: func @residual_norm
func.func @residual_norm(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>, %g: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[N:.*]], %[[S:.*]] = rlx_mir.residual_rms_norm %arg0, %arg1, %arg2 eps = 1.000000e-05
  // CHECK: %[[T:.*]] = rlx_mir.tanh %[[S]]
  // CHECK: return %[[N]], %[[T]]
  %0 = rlx_mir.add %x, %r : tensor<2x8xf32>, tensor<2x8xf32>
  %1 = rlx_mir.tanh %0 : tensor<2x8xf32>
  %2 = rlx_mir.rms_norm %0, %g eps = 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>
  return %2, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A broadcasting add is not a residual: shape mismatch.
// CHECK-LABEL: func @broadcast_add
func.func @broadcast_add(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: rlx_mir.add
  // CHECK: rlx_mir.rms_norm
  %0 = rlx_mir.add %x, %b : tensor<2x8xf32>, tensor<8xf32>
  // expected-remark @+1 {{rlx_mir.rms_norm not fused: [rlx-mir-fuse-residual-norm] shape mismatch: the residual add broadcasts}}
  %1 = rlx_mir.rms_norm %0 eps = 1.0e-05 : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
