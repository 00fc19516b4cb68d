// What rlx-import-to-mir must leave alone: look-alikes of the blocks it
// recognizes that compute something else, and ops MIR cannot express
// exactly. Each stays as it is (no crash, no rewrite).
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s

// Masks that are not causal stay additions: a key-padding mask broadcast
// over the queries, a window that is not the same for every row, a column
// mask.
// CHECK-LABEL: func.func @pad(
// CHECK-NOT:     causal_mask
// CHECK:         rlx_mir.add
// A key-padding mask [1,1,1,4] (first key padded) broadcast over 4 queries.
func.func @pad(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %m = rlx_mir.constant dense<[[[[0xFF800000, 0.0, 0.0, 0.0]]]]> : tensor<1x1x1x4xf32>
  %r = rlx_mir.add %s, %m : tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @win(
// CHECK-NOT:     causal_mask
// CHECK:         rlx_mir.add
// rows 0..2 causal from key 0 (window unconstrained), row 3 window 2
func.func @win(%s: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = rlx_mir.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000],[0.0, 0.0, 0xFF800000, 0xFF800000],[0.0, 0.0, 0.0, 0xFF800000],[0xFF800000, 0xFF800000, 0.0, 0.0]]> : tensor<4x4xf32>
  %r = rlx_mir.add %s, %m : tensor<1x1x4x4xf32>, tensor<4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @col(
// CHECK-NOT:     causal_mask
// CHECK:         rlx_mir.add
// column mask [4,1]: only the last query sees anything
func.func @col(%s: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = rlx_mir.constant dense<[[0xFF800000],[0xFF800000],[0xFF800000],[0.0]]> : tensor<4x1xf32>
  %r = rlx_mir.add %s, %m : tensor<1x1x4x4xf32>, tensor<4x1xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

// Heads [B, H, S, D] transposed from any [B, S, H, D] value are RoPE on its
// packed [B, S, H·D] view (here a reshape that does not split a projection).
// CHECK-LABEL: func.func @rope_from_reshaped_heads(
// CHECK:         %[[P:.*]] = rlx_mir.reshape %{{.*}} [1, 2, 16] : tensor<2x2x8xf32>
// CHECK:         rlx_mir.rope %[[P]]
func.func @rope_from_reshaped_heads(%p: tensor<2x2x8xf32>, %f: tensor<2x2xf32>) -> tensor<1x4x2x4xf32> {
  %r = rlx_mir.reshape %p [1, 2, 4, 4] : tensor<2x2x8xf32>
  %x = rlx_mir.transpose %r [0, 2, 1, 3] : tensor<1x2x4x4xf32>
  %ff = rlx_mir.concat %f, %f axis = -1 : tensor<2x2xf32>, tensor<2x2xf32>
  %c = rlx_mir.cos %ff : tensor<2x4xf32>
  %s = rlx_mir.sin %ff : tensor<2x4xf32>
  %hi = rlx_mir.slice %x offsets [0, 0, 0, 2] sizes [1, 4, 2, 2] strides [1, 1, 1, 1] : tensor<1x4x2x4xf32>
  %lo = rlx_mir.slice %x offsets [0, 0, 0, 0] sizes [1, 4, 2, 2] strides [1, 1, 1, 1] : tensor<1x4x2x4xf32>
  %n = rlx_mir.neg %hi : tensor<1x4x2x2xf32>
  %rot = rlx_mir.concat %n, %lo axis = 3 : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
  %a = rlx_mir.mul %x, %c : tensor<1x4x2x4xf32>, tensor<2x4xf32>
  %b = rlx_mir.mul %rot, %s : tensor<1x4x2x4xf32>, tensor<2x4xf32>
  %o = rlx_mir.add %a, %b : tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>
  return %o : tensor<1x4x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @rope_per_head_table(
// CHECK-NOT:     rlx_mir.rope
func.func @rope_per_head_table(%p: tensor<1x2x8xf32>, %f: tensor<2x2xf32>) -> tensor<1x2x2x4xf32> {
  %r = rlx_mir.reshape %p [1, 2, 2, 4] : tensor<1x2x8xf32>
  %x = rlx_mir.transpose %r [0, 2, 1, 3] : tensor<1x2x2x4xf32>
  %ff = rlx_mir.concat %f, %f axis = -1 : tensor<2x2xf32>, tensor<2x2xf32>
  %c0 = rlx_mir.cos %ff : tensor<2x4xf32>
  %s0 = rlx_mir.sin %ff : tensor<2x4xf32>
  %c = rlx_mir.reshape %c0 [2, 1, 4] : tensor<2x4xf32>
  %s = rlx_mir.reshape %s0 [2, 1, 4] : tensor<2x4xf32>
  %hi = rlx_mir.slice %x offsets [0, 0, 0, 2] sizes [1, 2, 2, 2] strides [1, 1, 1, 1] : tensor<1x2x2x4xf32>
  %lo = rlx_mir.slice %x offsets [0, 0, 0, 0] sizes [1, 2, 2, 2] strides [1, 1, 1, 1] : tensor<1x2x2x4xf32>
  %n = rlx_mir.neg %hi : tensor<1x2x2x2xf32>
  %rot = rlx_mir.concat %n, %lo axis = 3 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  %a = rlx_mir.mul %x, %c : tensor<1x2x2x4xf32>, tensor<2x1x4xf32>
  %b = rlx_mir.mul %rot, %s : tensor<1x2x2x4xf32>, tensor<2x1x4xf32>
  %o = rlx_mir.add %a, %b : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>
  return %o : tensor<1x2x2x4xf32>
}

// -----

// A 3-D matmul whose lhs is broadcast over the batch is not a split 4-D one.
// CHECK-LABEL: func.func @mm_broadcast_batch(
// CHECK:         rlx_mir.matmul %{{.*}}, %{{.*}} : tensor<1x3x8xf32>, tensor<4x8x4xf32>
func.func @mm_broadcast_batch(%a: tensor<3x8xf32>, %b: tensor<2x2x8x4xf32>) -> tensor<2x2x3x4xf32> {
  %ra = rlx_mir.reshape %a [1, 3, 8] : tensor<3x8xf32>
  %rb = rlx_mir.reshape %b [4, 8, 4] : tensor<2x2x8x4xf32>
  %m = rlx_mir.matmul %ra, %rb : tensor<1x3x8xf32>, tensor<4x8x4xf32>
  %o = rlx_mir.reshape %m [2, 2, 3, 4] : tensor<4x3x4xf32>
  return %o : tensor<2x2x3x4xf32>
}

// -----

// linalg.matmul whose output map transposes, whose lhs map broadcasts, or
// whose element types differ stays linalg.
// CHECK-LABEL: func.func @mm_out_transposed(
// CHECK:         linalg.matmul
#ta = affine_map<(d0, d1, d2) -> (d0, d2)>
#tb = affine_map<(d0, d1, d2) -> (d2, d1)>
#tc = affine_map<(d0, d1, d2) -> (d1, d0)>
func.func @mm_out_transposed(%a: tensor<3x8xf32>, %b: tensor<8x3xf32>) -> tensor<3x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  %r = linalg.matmul indexing_maps = [#ta, #tb, #tc] ins(%a, %b : tensor<3x8xf32>, tensor<8x3xf32>) outs(%f : tensor<3x3xf32>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @mm_lhs_broadcast(
// CHECK:         linalg.matmul
#bba = affine_map<(d0, d1, d2) -> (d2)>
#bb = affine_map<(d0, d1, d2) -> (d2, d1)>
#bc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @mm_lhs_broadcast(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<3x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.matmul indexing_maps = [#bba, #bb, #bc] ins(%a, %b : tensor<8xf32>, tensor<8x4xf32>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @mm_mixed(
// CHECK:         linalg.matmul
func.func @mm_mixed(%a: tensor<3x8xbf16>, %b: tensor<8x4xbf16>) -> tensor<3x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x8xbf16>, tensor<8x4xbf16>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// TOSA rounds float → int to nearest even, MIR's cast truncates.
// CHECK-LABEL: func.func @cast_to_int(
// CHECK:         tosa.cast
func.func @cast_to_int(%x: tensor<4xf32>) -> tensor<4xi32> {
  %y = tosa.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

// Unranked tensors and NaN-ignoring TOSA ops stay.
// CHECK-LABEL: func.func @unranked(
// CHECK:         tosa.cast
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf16> {
  %y = tosa.cast %x : (tensor<*xf32>) -> tensor<*xf16>
  return %y : tensor<*xf16>
}

// -----

// CHECK-LABEL: func.func @max_ignore_nan(
// CHECK:         tosa.maximum
func.func @max_ignore_nan(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = tosa.maximum %a, %b {nan_mode = IGNORE} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Input the MIR ops' shape rules reject stays as it is (this aborted with
// "Failed to infer result type(s)"): a reshape from a dynamic to a static
// shape, a negative-stride slice, a broadcast into a 0-size dim.
// CHECK-LABEL: func.func @reshape_dynamic_to_static(
// CHECK:         tosa.reshape
func.func @reshape_dynamic_to_static(%x: tensor<?x4xf32>) -> tensor<2x4xf32> {
  %s = tosa.const_shape {values = dense<[2, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %x, %s : (tensor<?x4xf32>, !tosa.shape<2>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_stride(
// CHECK:         tensor.extract_slice
func.func @negative_stride(%x: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %y = tensor.extract_slice %x[6, 0] [2, 4] [-2, 1] : tensor<8x4xf32> to tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_into_zero(
// CHECK-NOT:     linalg.broadcast
// CHECK:         rlx_mir.broadcast {{.*}} [0, 4]
func.func @broadcast_into_zero(%x: tensor<4xf32>) -> tensor<0x4xf32> {
  %e = tensor.empty() : tensor<0x4xf32>
  %y = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e : tensor<0x4xf32>) dimensions = [0]
  return %y : tensor<0x4xf32>
}
