// Folders and canonicalizations of trivial MIR ops.
// RUN: rlx-opt %s --canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @reshape_of_reshape
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  // CHECK: %[[R:.*]] = rlx_mir.reshape %arg0 [6, 4] : tensor<2x3x4xf32>
  // CHECK-NEXT: return %[[R]]
  %0 = rlx_mir.reshape %x [24] : tensor<2x3x4xf32>
  %1 = rlx_mir.reshape %0 [6, 4] : tensor<24xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func @identity_reshape
func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %arg0
  %0 = rlx_mir.reshape %x [2, 3] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @transpose_of_transpose
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  // Inverse permutations cancel; others compose.
  // CHECK: %[[T:.*]] = rlx_mir.transpose %arg0 [2, 0, 1] : tensor<2x3x4xf32>
  // CHECK-NEXT: return %arg0, %[[T]]
  %0 = rlx_mir.transpose %x [1, 0, 2] : tensor<2x3x4xf32>
  %1 = rlx_mir.transpose %0 [1, 0, 2] : tensor<3x2x4xf32>
  %2 = rlx_mir.transpose %0 [2, 1, 0] : tensor<3x2x4xf32>
  return %1, %2 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func @identity_slice_broadcast_concat
func.func @identity_slice_broadcast_concat(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %arg0
  %0 = rlx_mir.slice %x offsets [0, 0] sizes [-1, 3] strides [1, 1] : tensor<2x3xf32>
  %1 = rlx_mir.broadcast %0 [2, 3] : tensor<2x3xf32>
  %2 = rlx_mir.concat %1 axis = 0 : tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// Slices that tile their source along the axis, in order, concatenate back
// to it (a packed q|k|v split and merged again); a gap, a different order
// or a partial other dim keeps the concat.
// CHECK-LABEL: func @concat_of_tiling_slices
func.func @concat_of_tiling_slices(%x: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x4xf32>, tensor<6x2xf32>) {
  // CHECK: %[[SWAP:.*]] = rlx_mir.concat
  // CHECK: %[[GAP:.*]] = rlx_mir.concat
  // CHECK: %[[PART:.*]] = rlx_mir.concat
  // CHECK: return %arg0, %[[SWAP]], %[[GAP]], %[[PART]]
  %q = rlx_mir.slice %x offsets [0, 0] sizes [2, 4] strides [1, 1] : tensor<6x4xf32>
  %k = rlx_mir.slice %x offsets [2, 0] sizes [1, 4] strides [1, 1] : tensor<6x4xf32>
  %v = rlx_mir.slice %x offsets [3, 0] sizes [-1, 4] strides [1, 1] : tensor<6x4xf32>
  %whole = rlx_mir.concat %q, %k, %v axis = 0 : tensor<2x4xf32>, tensor<1x4xf32>, tensor<3x4xf32>
  %swap = rlx_mir.concat %q, %v, %k axis = 0 : tensor<2x4xf32>, tensor<3x4xf32>, tensor<1x4xf32>
  %gap = rlx_mir.concat %q, %k, %k axis = 0 : tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  %a = rlx_mir.slice %x offsets [0, 0] sizes [3, 2] strides [1, 1] : tensor<6x4xf32>
  %b = rlx_mir.slice %x offsets [3, 0] sizes [3, 2] strides [1, 1] : tensor<6x4xf32>
  %part = rlx_mir.concat %a, %b axis = 0 : tensor<3x2xf32>, tensor<3x2xf32>
  return %whole, %swap, %gap, %part : tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x4xf32>, tensor<6x2xf32>
}

// -----

// CHECK-LABEL: func @add_zero_mul_one
func.func @add_zero_mul_one(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  // CHECK-NEXT: return %arg0, %arg1
  %z = rlx_mir.constant dense<0.0> : tensor<3xf32>
  %o = rlx_mir.constant dense<1.0> : tensor<f32>
  %0 = rlx_mir.add %z, %x : tensor<3xf32>, tensor<2x3xf32>
  %1 = rlx_mir.mul %0, %o : tensor<2x3xf32>, tensor<f32>
  %zi = rlx_mir.constant dense<0> : tensor<4xi32>
  %2 = rlx_mir.add %i, %zi : tensor<4xi32>, tensor<4xi32>
  return %1, %2 : tensor<2x3xf32>, tensor<4xi32>
}

// -----

// Adding zero that would broadcast the other operand is not an identity.
// CHECK-LABEL: func @add_zero_broadcasts
func.func @add_zero_broadcasts(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: rlx_mir.add
  %z = rlx_mir.constant dense<0.0> : tensor<2x3xf32>
  %0 = rlx_mir.add %x, %z : tensor<3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @cast_same_type
func.func @cast_same_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: return %arg0
  %0 = rlx_mir.cast %x : tensor<2xf32> to tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Constants fold through reshape and splat broadcasts.
// CHECK-LABEL: func @constant_folds
func.func @constant_folds() -> (tensor<2x2xf32>, tensor<3x2xf32>) {
  // CHECK-DAG: rlx_mir.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  // CHECK-DAG: rlx_mir.constant dense<5.000000e+00> : tensor<3x2xf32>
  // CHECK-NOT: reshape
  // CHECK-NOT: broadcast
  %c = rlx_mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = rlx_mir.reshape %c [2, 2] : tensor<4xf32>
  %s = rlx_mir.constant dense<5.0> : tensor<2xf32>
  %1 = rlx_mir.broadcast %s [3, 2] : tensor<2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<3x2xf32>
}
