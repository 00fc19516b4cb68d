// Softmax and GQA as buddy-mlir's BuddyNext attention kernel spells them
// (examples/BuddyNext/next-gqa-attention.mlir; the forms, written small):
// softmax through log-sum-exp, and the repeat of KV heads as an add of
// zeros of the repeated shape.
// RUN: rlx-opt %s -split-input-file --convert-elementwise-to-linalg --rlx-import-to-mir | FileCheck %s

// CHECK-LABEL: func.func @lse_softmax(
// CHECK-NEXT:    %[[S:.*]] = rlx_mir.softmax %arg0 axis = 2 : tensor<4x1x16xf32>
// CHECK-NEXT:    return %[[S]]
func.func @lse_softmax(%s: tensor<4x1x16xf32>) -> tensor<4x1x16xf32> {
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<4x1x16xf32>) -> tensor<4x1x1xf32>
  %d = tosa.sub %s, %m : (tensor<4x1x16xf32>, tensor<4x1x1xf32>) -> tensor<4x1x16xf32>
  %e = math.exp %d : tensor<4x1x16xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x1x16xf32>) -> tensor<4x1x1xf32>
  %l = tosa.log %sum : (tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %lse = tosa.add %m, %l : (tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %x = tosa.sub %s, %lse : (tensor<4x1x16xf32>, tensor<4x1x1xf32>) -> tensor<4x1x16xf32>
  %p = math.exp %x : tensor<4x1x16xf32>
  return %p : tensor<4x1x16xf32>
}

// -----

// CHECK-LABEL: func.func @gqa_repeat(
// CHECK:         rlx_mir.broadcast %{{.*}} [1, 2, 3, 16, 8] : tensor<1x2x1x16x8xf32>
// CHECK-NOT:     rlx_mir.add
func.func @gqa_repeat(%k: tensor<1x2x1x16x8xf32>) -> tensor<1x2x3x16x8xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x2x3x16x8xf32>}> : () -> tensor<1x2x3x16x8xf32>
  %r = tosa.add %k, %z : (tensor<1x2x1x16x8xf32>, tensor<1x2x3x16x8xf32>) -> tensor<1x2x3x16x8xf32>
  return %r : tensor<1x2x3x16x8xf32>
}

// -----

// rotate_half as buddy-mlir's next-rope.mlir writes it: the two halves
// inserted into a tensor.empty (they cover it along the last axis) are
// their concat.
// CHECK-LABEL: func.func @rotate_half_by_inserts(
// CHECK:         %[[N:.*]] = rlx_mir.neg
// CHECK:         rlx_mir.concat %[[N]], %{{.*}} axis = 2
// CHECK-NOT:     tensor.insert_slice
func.func @rotate_half_by_inserts(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %lo = tensor.extract_slice %x[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 4] [2, 3, 4] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %n = tosa.negate %hi, %zp, %zp : (tensor<2x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  %e = tensor.empty() : tensor<2x3x8xf32>
  %a = tensor.insert_slice %n into %e[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<2x3x8xf32>
  %b = tensor.insert_slice %lo into %a[0, 0, 4] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<2x3x8xf32>
  return %b : tensor<2x3x8xf32>
}

// -----

// Inserts that leave a gap (tensor.empty's values stay there) are not a
// concat.
// CHECK-LABEL: func.func @inserts_with_a_gap(
// CHECK-COUNT-2: tensor.insert_slice
// CHECK-NOT:     rlx_mir.concat
func.func @inserts_with_a_gap(%x: tensor<2x3xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %a = tensor.insert_slice %x into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %b = tensor.insert_slice %x into %a[0, 4] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}
