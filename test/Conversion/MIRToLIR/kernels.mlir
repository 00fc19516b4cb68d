// convert-rlx-mir-to-lir: every compute op becomes one destination-style
// rlx_lir.kernel on tensors; reshape/slice become tensor views, concat
// insert_slices into tensor.empty; small constants move into the kernels.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir | FileCheck %s

// CHECK-LABEL: func @layer
func.func @layer(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %g: tensor<16xf32>, %p: tensor<1x4x32xf32>)
    -> (tensor<1x12x32xf32>, tensor<2x4x16xf32>) {
  // CHECK:     %[[E0:.*]] = tensor.empty() : tensor<8x16xf32>
  // CHECK:     %[[N:.*]] = rlx_lir.kernel "rms_norm" ins(%arg0, %arg2 : tensor<8x16xf32>, tensor<16xf32>) outs(%[[E0]] : tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>):
  // CHECK-NEXT:   %[[R:.*]] = rlx_mir.rms_norm %[[A]], %[[B]] eps
  // CHECK-NEXT:   rlx_lir.yield %[[R]] : tensor<8x16xf32>
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<8x16xf32>, tensor<16xf32>
  // The same operand twice is one kernel input.
  // CHECK:     rlx_lir.kernel "mul" ins(%[[N]] : tensor<8x16xf32>)
  // CHECK-NEXT: ^bb0(%[[M:.*]]: tensor<8x16xf32>):
  // CHECK-NEXT:   rlx_mir.mul %[[M]], %[[M]]
  %sq = rlx_mir.mul %n, %n : tensor<8x16xf32>, tensor<8x16xf32>
  // A splat constant operand lives inside the kernel.
  // CHECK:     rlx_lir.kernel "max" ins(%{{.*}} : tensor<8x16xf32>)
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   %[[C:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-NEXT:   rlx_mir.max %{{.*}}, %[[C]]
  %zero = rlx_mir.constant dense<0.0> : tensor<f32>
  %relu = rlx_mir.max %sq, %zero : tensor<8x16xf32>, tensor<f32>
  // CHECK:     %[[Y:.*]] = rlx_lir.kernel "matmul"
  %y = rlx_mir.matmul %relu, %w transpose_b : tensor<8x16xf32>, tensor<32x16xf32>
  // Views: no kernel.
  // CHECK:     %[[V:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [1, 8, 32]
  // CHECK-NOT: rlx_lir.kernel
  // CHECK:     tensor.insert_slice %arg3 into %{{.*}}[0, 0, 0] [1, 4, 32]
  // CHECK:     tensor.insert_slice %[[V]] into %{{.*}}[0, 4, 0] [1, 8, 32]
  %v = rlx_mir.reshape %y [1, 8, 32] : tensor<8x32xf32>
  %cat = rlx_mir.concat %p, %v axis = 1 : tensor<1x4x32xf32>, tensor<1x8x32xf32>
  // Broadcast materializes: a kernel.
  // CHECK:     %[[S:.*]] = tensor.extract_slice %[[N]][0, 0] [4, 16] [2, 1]
  // CHECK:     rlx_lir.kernel "broadcast" ins(%[[S]] : tensor<4x16xf32>)
  %s = rlx_mir.slice %n offsets [0, 0] sizes [4, 16] strides [2, 1] : tensor<8x16xf32>
  %b = rlx_mir.broadcast %s [2, 4, 16] : tensor<4x16xf32>
  // CHECK:     return
  return %cat, %b : tensor<1x12x32xf32>, tensor<2x4x16xf32>
}
