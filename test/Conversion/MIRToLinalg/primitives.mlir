// convert-rlx-mir-to-linalg on primitive ops: broadcasting elementwise ops
// become one linalg.generic with broadcast indexing maps, data movement
// becomes tensor ops (reshape = expand/collapse_shape, no copy).
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s

// CHECK-DAG: #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: func @binary_broadcast
func.func @binary_broadcast(%a: tensor<2x3x8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[$ID3]], #[[$LAST]], #[[$ID3]]]
  // CHECK:   arith.addf
  %0 = rlx_mir.add %a, %b : tensor<2x3x8xf32>, tensor<8xf32>
  return %0 : tensor<2x3x8xf32>
}

// A group whose dynamic-in-principle dim splits ({6} -> {3, 2}) and trailing
// dims that stay: one expand_shape.
// CHECK-LABEL: func @reshape_expand
func.func @reshape_expand(%x: tensor<2x6x4xf32>) -> tensor<2x3x2x4xf32> {
  // CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3]] output_shape [2, 3, 2, 4]
  // CHECK-NOT: linalg
  %0 = rlx_mir.reshape %x [2, 3, 2, 4] : tensor<2x6x4xf32>
  return %0 : tensor<2x3x2x4xf32>
}

// CHECK-LABEL: func @reshape_regroup
func.func @reshape_regroup(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
  // No dim boundary lines up: collapse everything, then expand.
  // CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  // CHECK: tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [2, 12]
  %0 = rlx_mir.reshape %x [2, 12] : tensor<4x6xf32>
  return %0 : tensor<2x12xf32>
}

// CHECK-LABEL: func @slice_concat_transpose
func.func @slice_concat_transpose(%x: tensor<2x8xf32>, %y: tensor<2x3xf32>) -> tensor<7x2xf32> {
  // CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 1] [2, 4] [1, 2]
  // CHECK: tensor.insert_slice %[[S]] into %{{.*}}[0, 0] [2, 4] [1, 1]
  // CHECK: tensor.insert_slice %arg1 into %{{.*}}[0, 4] [2, 3] [1, 1]
  // CHECK: linalg.transpose {{.*}} permutation = [1, 0]
  %s = rlx_mir.slice %x offsets [0, 1] sizes [2, 4] strides [1, 2] : tensor<2x8xf32>
  %c = rlx_mir.concat %s, %y axis = -1 : tensor<2x4xf32>, tensor<2x3xf32>
  %t = rlx_mir.transpose %c [1, 0] : tensor<2x7xf32>
  return %t : tensor<7x2xf32>
}

// CHECK-LABEL: func @softmax_negative_axis
func.func @softmax_negative_axis(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // axis = -1 is the last axis: reductions over d1.
  // CHECK: iterator_types = ["parallel", "reduction"]
  // CHECK:   arith.maximumf
  // CHECK: iterator_types = ["parallel", "parallel"]
  // CHECK:   math.exp
  %0 = rlx_mir.softmax %x axis = -1 : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func @cast_to_f8
func.func @cast_to_f8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // Saturating: clamp to ±448 before truncf.
  // CHECK: arith.constant 4.480000e+02
  // CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
  %0 = rlx_mir.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}
