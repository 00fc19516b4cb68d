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

// -----

// tosa.identity is its operand; linalg.negf (an elementwise named op) is
// raised as its generic would be.
// CHECK-LABEL: func.func @identity_and_named_negf(
// CHECK-NEXT:    %[[N:.*]] = rlx_mir.neg %arg0 : tensor<2x4xf32>
// CHECK-NEXT:    return %[[N]]
func.func @identity_and_named_negf(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %i = tosa.identity %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %n = linalg.negf ins(%i : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

// -----

// RoPE whose tables are cos/sin of the frequencies repeated along a new axis
// and merged (broadcast of [S, 1, h] to [S, 2, h], reshaped to [S, 2h]: the
// concat(f, f) of HF's rotary embedding, as buddy-mlir's DeepSeek-R1 import
// writes it): one rlx_mir.rope on the packed projection.
// CHECK-LABEL: func.func @rope_tables_by_broadcast(
// CHECK:         rlx_mir.rope {{.*}} head_dim = 8
// CHECK-NOT:     rlx_mir.concat
func.func @rope_tables_by_broadcast(%x: tensor<1x4x16xf32>, %f: tensor<1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s0 = tosa.const_shape {values = dense<[1, 4, 2, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %xr = tosa.reshape %x, %s0 : (tensor<1x4x16xf32>, !tosa.shape<4>) -> tensor<1x4x2x8xf32>
  %xh = tosa.transpose %xr {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  %s1 = tosa.const_shape {values = dense<[1, 4, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %f4 = tosa.reshape %f, %s1 : (tensor<1x4x4xf32>, !tosa.shape<4>) -> tensor<1x4x1x4xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x4x2x4xf32>}> : () -> tensor<1x4x2x4xf32>
  %ff = tosa.add %f4, %z : (tensor<1x4x1x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  %s2 = tosa.const_shape {values = dense<[1, 1, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %emb = tosa.reshape %ff, %s2 : (tensor<1x4x2x4xf32>, !tosa.shape<4>) -> tensor<1x1x4x8xf32>
  %cos = tosa.cos %emb : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %sin = tosa.sin %emb : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = tosa.mul %xh, %cos, %shift : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1xi8>) -> tensor<1x2x4x8xf32>
  %lo = tensor.extract_slice %xh[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %hi = tensor.extract_slice %xh[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %n = tosa.negate %hi, %zp, %zp : (tensor<1x2x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  %rot = tosa.concat %n, %lo {axis = 3 : i32} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %r = tosa.mul %rot, %sin, %shift : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1xi8>) -> tensor<1x2x4x8xf32>
  %y = tosa.add %c, %r : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// RMSNorm whose sum of squares drops the reduced axis (a linalg reduction)
// and is expanded again before the normalization: the reduce keeps its dims,
// and the norm is recognized.
// CHECK-LABEL: func.func @rms_norm_reduce_then_expand(
// CHECK-NEXT:    %[[N:.*]] = rlx_mir.rms_norm %arg0, %arg1 eps = 9.99{{.*}}E-7
// CHECK-NEXT:    return %[[N]]
func.func @rms_norm_reduce_then_expand(%x: tensor<1x4x16xf32>, %w: tensor<16xf32>) -> tensor<1x4x16xf32> {
  %e = tensor.empty() : tensor<1x4x16xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x16xf32>) outs(%e : tensor<1x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x4x16xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<1x4x16xf32>) outs(%f : tensor<1x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x4xf32>
  %s3 = tensor.expand_shape %s [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xf32> into tensor<1x4x1xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s3, %w : tensor<1x4x16xf32>, tensor<1x4x1xf32>, tensor<16xf32>) outs(%e : tensor<1x4x16xf32>) {
  ^bb0(%in: f32, %ss: f32, %ww: f32, %out: f32):
    %n = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-6 : f32
    %mean = arith.divf %ss, %n : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %t = arith.mulf %in, %r : f32
    %o = arith.mulf %t, %ww : f32
    linalg.yield %o : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// Integer casts rlx_mir.cast takes are raised (i64 → i32 ids); those it
// does not (to i16) stay TOSA for upstream's lowering.
// CHECK-LABEL: func.func @int_casts(
// CHECK:         rlx_mir.cast %arg0 : tensor<4xi64> to tensor<4xi32>
// CHECK:         tosa.cast %arg0 : (tensor<4xi64>) -> tensor<4xi16>
func.func @int_casts(%x: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xi16>) {
  %a = tosa.cast %x : (tensor<4xi64>) -> tensor<4xi32>
  %b = tosa.cast %x : (tensor<4xi64>) -> tensor<4xi16>
  return %a, %b : tensor<4xi32>, tensor<4xi16>
}
