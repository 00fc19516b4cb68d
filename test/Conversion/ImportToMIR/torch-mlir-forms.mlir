// What torch-mlir's FX importer really writes (torch-mlir 20261001, HF
// transformers 5 layers), reduced to the piece each recognizer reads:
// SDPA's all-masked-row guard (TOSA and linalg), its split scale, x² as
// math.fpowi, aten.max.dim's (value, index) reduction, a biased linear
// flattened to rows, and frozen [1, K, N] weights merged into one constant.
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s
// RUN: rlx-opt %s --rlx-import-to-mir --rlx-mir-fuse -split-input-file | FileCheck %s --check-prefix=FUSE

// The guard where(all(s == -inf), 0, softmax(s)) is the softmax itself.
// CHECK-LABEL: func.func @tosa_softmax_guard(
// CHECK-SAME:    %[[S:.*]]: tensor<1x2x3x3xf32>
// CHECK-NOT:     tosa.
// CHECK:         %[[P:.*]] = rlx_mir.softmax %[[S]] axis = 3
// CHECK-NEXT:    return %[[P]]
func.func @tosa_softmax_guard(%s: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x2x3x3xf32>}> : () -> tensor<1x2x3x3xf32>
  %ninf = "tosa.const"() <{values = dense<0xFFF0000000000000> : tensor<1x1x1x1xf64>}> : () -> tensor<1x1x1x1xf64>
  %mx = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x1xf32>
  %d = tosa.sub %s, %mx : (tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>) -> tensor<1x2x3x3xf32>
  %e = tosa.exp %d : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>, tensor<1xi8>) -> tensor<1x2x3x3xf32>
  %w = tosa.cast %s : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf64>
  %eq = tosa.equal %w, %ninf : (tensor<1x2x3x3xf64>, tensor<1x1x1x1xf64>) -> tensor<1x2x3x3xi1>
  %all = tosa.reduce_all %eq {axis = 3 : i32} : (tensor<1x2x3x3xi1>) -> tensor<1x2x3x1xi1>
  %g = tosa.select %all, %zero, %p : (tensor<1x2x3x1xi1>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %g : tensor<1x2x3x3xf32>
}

// -----

// A guard over another axis than the softmax's is not the softmax: it stays.
// CHECK-LABEL: func.func @tosa_guard_other_axis(
// CHECK:         tosa.reduce_all
// CHECK:         rlx_mir.select
func.func @tosa_guard_other_axis(%s: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x2x3x3xf32>}> : () -> tensor<1x2x3x3xf32>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %mx = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x1xf32>
  %d = tosa.sub %s, %mx : (tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>) -> tensor<1x2x3x3xf32>
  %e = tosa.exp %d : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x2x3x1xf32>) -> tensor<1x2x3x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<1x2x3x3xf32>, tensor<1x2x3x1xf32>, tensor<1xi8>) -> tensor<1x2x3x3xf32>
  %eq = tosa.equal %s, %ninf : (tensor<1x2x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x3x3xi1>
  %all = tosa.reduce_all %eq {axis = 2 : i32} : (tensor<1x2x3x3xi1>) -> tensor<1x2x1x3xi1>
  %g = tosa.select %all, %zero, %p : (tensor<1x2x1x3xi1>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %g : tensor<1x2x3x3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#kept = affine_map<(d0, d1) -> (d0, 0)>
// linalg: max with an unused argmax, x - max, the softmax, then the guard as
// cmpf oeq (extf) / andi reduction / select generics.
// CHECK-LABEL: func.func @linalg_softmax_guard(
// CHECK-SAME:    %[[S:.*]]: tensor<2x3xf32>
// CHECK-NOT:     linalg.
// CHECK:         %[[P:.*]] = rlx_mir.softmax %[[S]] axis = 1
// CHECK-NEXT:    return %[[P]]
func.func @linalg_softmax_guard(%s: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %ninf64 = arith.constant 0xFFF0000000000000 : f64
  %true = arith.constant true
  %zeros = arith.constant dense<0.0> : tensor<2x3xf32>
  %ei = tensor.empty() : tensor<2xi64>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  %ef = tensor.empty() : tensor<2xf32>
  %ff = linalg.fill ins(%ninf : f32) outs(%ef : tensor<2xf32>) -> tensor<2xf32>
  %mx:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<2x3xf32>) outs(%ff, %fi : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %out: f32, %idx: i64):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ii, %idx : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  %mk = tensor.expand_shape %mx#0 [[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  %e0 = tensor.empty() : tensor<2x3xf32>
  %ex = linalg.generic {indexing_maps = [#id, #kept, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mk : tensor<2x3xf32>, tensor<2x1xf32>) outs(%e0 : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<2x3xf32>
  %zs = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x1xf32>
  %fs = linalg.fill ins(%zs : f32) outs(%es : tensor<2x1xf32>) -> tensor<2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<2x3xf32>) outs(%fs : tensor<2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2x1xf32>
  %p = linalg.generic {indexing_maps = [#id, #kept, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x3xf32>, tensor<2x1xf32>) outs(%e0 : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %eb = tensor.empty() : tensor<2x3xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<2x3xf32>) outs(%eb : tensor<2x3xi1>) {
  ^bb0(%a: f32, %o: i1):
    %w = arith.extf %a : f32 to f64
    %c = arith.cmpf oeq, %w, %ninf64 : f64
    linalg.yield %c : i1
  } -> tensor<2x3xi1>
  %ea = tensor.empty() : tensor<2x1xi1>
  %fa = linalg.fill ins(%true : i1) outs(%ea : tensor<2x1xi1>) -> tensor<2x1xi1>
  %all = linalg.generic {indexing_maps = [#id, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%isinf : tensor<2x3xi1>) outs(%fa : tensor<2x1xi1>) {
  ^bb0(%a: i1, %o: i1):
    %r = arith.andi %a, %o : i1
    linalg.yield %r : i1
  } -> tensor<2x1xi1>
  %g = linalg.generic {indexing_maps = [#kept, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%all, %zeros, %p : tensor<2x1xi1>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%e0 : tensor<2x3xf32>) {
  ^bb0(%c: i1, %z: f32, %v: f32, %o: f32):
    %r = arith.select %c, %z, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// x² and x³ as math.fpowi by the integer 2 or 3 are x·x and x·x·x; another
// exponent stays linalg.
// CHECK-LABEL: func.func @fpowi(
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x4xf32>
// CHECK:         %[[SQ:.*]] = rlx_mir.mul %[[X]], %[[X]]
// CHECK:         %[[SQ2:.*]] = rlx_mir.mul %[[X]], %[[X]]
// CHECK:         %[[CU:.*]] = rlx_mir.mul %[[SQ2]], %[[X]]
// CHECK:         linalg.generic
// CHECK:         math.fpowi %{{.*}}, %{{.*}} : f32, i64
// CHECK:         return %[[SQ]], %[[CU]], %{{.*}}
func.func @fpowi(%x: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %e = tensor.empty() : tensor<1x2x4xf32>
  %sq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4xf32>) outs(%e : tensor<1x2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.fpowi %in, %c2 : f32, i64
    linalg.yield %r : f32
  } -> tensor<1x2x4xf32>
  %cu = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4xf32>) outs(%e : tensor<1x2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.fpowi %in, %c3 : f32, i64
    linalg.yield %r : f32
  } -> tensor<1x2x4xf32>
  %q = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4xf32>) outs(%e : tensor<1x2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.fpowi %in, %c4 : f32, i64
    linalg.yield %r : f32
  } -> tensor<1x2x4xf32>
  return %sq, %cu, %q : tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// A biased linear flattened to rows: the bias moves onto the matmul's own
// [B, S, N] result.
// CHECK-LABEL: func.func @bias_on_rows(
// CHECK-SAME:    %[[X:.*]]: tensor<1x3x4xf32>, %[[W:.*]]: tensor<1x4x6xf32>, %[[B:.*]]: tensor<6xf32>
// CHECK:         %[[M:.*]] = rlx_mir.matmul %[[X]], %[[W]] : tensor<1x3x4xf32>, tensor<1x4x6xf32>
// CHECK:         %[[A:.*]] = rlx_mir.add %[[M]], %[[B]] : tensor<1x3x6xf32>, tensor<6xf32>
// CHECK:         rlx_mir.reshape %[[A]] [1, 3, 2, 3]
func.func @bias_on_rows(%x: tensor<1x3x4xf32>, %w: tensor<1x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x3x2x3xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %x, %w, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x6xf32>
  %s2 = tosa.const_shape {values = dense<[3, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %m, %s2 : (tensor<1x3x6xf32>, !tosa.shape<2>) -> tensor<3x6xf32>
  %sb = tosa.const_shape {values = dense<[1, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b2 = tosa.reshape %b, %sb : (tensor<6xf32>, !tosa.shape<2>) -> tensor<1x6xf32>
  %a = tosa.add %r, %b2 : (tensor<3x6xf32>, tensor<1x6xf32>) -> tensor<3x6xf32>
  %s4 = tosa.const_shape {values = dense<[1, 3, 2, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %h = tosa.reshape %a, %s4 : (tensor<3x6xf32>, !tosa.shape<4>) -> tensor<1x3x2x3xf32>
  return %h : tensor<1x3x2x3xf32>
}

// -----

// Weights frozen as constants already shaped [1, K, N] are read as [K, N];
// two of them on one input merge (rlx-mir-fuse) into one folded constant.
// FUSE-LABEL: func.func @frozen_weights(
// FUSE:         %[[W:.*]] = rlx_mir.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// FUSE-NOT:     rlx_mir.concat
// FUSE:         rlx_mir.matmul %{{.*}}, %[[W]] : tensor<1x2x2xf32>, tensor<2x3xf32>
func.func @frozen_weights(%x: tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<1x2x1xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %w1 = "tosa.const"() <{values = dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[[5.0], [6.0]]]> : tensor<1x2x1xf32>}> : () -> tensor<1x2x1xf32>
  %a = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  %b = tosa.matmul %x, %w2, %zp, %zp : (tensor<1x2x2xf32>, tensor<1x2x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x1xf32>
  return %a, %b : tensor<1x2x2xf32>, tensor<1x2x1xf32>
}

// -----

// GPT-2's LayerNorm as torch-mlir decomposes it (the variance in f64, the
// mean in f32), with its affine weight and bias, and gelu_new written out.
// CHECK-LABEL: func.func @layer_norm_gelu_new(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<1x3x4xf32>, %[[W:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<4xf32>
// CHECK:         %[[N:.*]] = rlx_mir.layer_norm %[[X]] weight(%[[W]] : tensor<4xf32>) bias(%[[B]] : tensor<4xf32>) eps = 9.99999974{{.*}}E-6
// CHECK-NEXT:    %[[G:.*]] = rlx_mir.gelu_tanh %[[N]]
// CHECK-NEXT:    return %[[G]]
func.func @layer_norm_gelu_new(%x: tensor<1x3x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x3x4xf32> {
  %q64 = rlx_mir.constant dense<2.5e-01> : tensor<1x1x1xf64>
  %q = rlx_mir.constant dense<2.5e-01> : tensor<1x1x1xf32>
  %eps = rlx_mir.constant dense<9.99999974E-6> : tensor<1x1x1xf32>
  %x64 = rlx_mir.cast %x : tensor<1x3x4xf32> to tensor<1x3x4xf64>
  %s64 = rlx_mir.reduce sum %x64 axes = [2] keep_dims : tensor<1x3x4xf64>
  %m64 = rlx_mir.mul %s64, %q64 : tensor<1x3x1xf64>, tensor<1x1x1xf64>
  %d64 = rlx_mir.sub %x64, %m64 : tensor<1x3x4xf64>, tensor<1x3x1xf64>
  %sq = rlx_mir.mul %d64, %d64 : tensor<1x3x4xf64>, tensor<1x3x4xf64>
  %ss = rlx_mir.reduce sum %sq axes = [2] keep_dims : tensor<1x3x4xf64>
  %v64 = rlx_mir.mul %ss, %q64 : tensor<1x3x1xf64>, tensor<1x1x1xf64>
  %v = rlx_mir.cast %v64 : tensor<1x3x1xf64> to tensor<1x3x1xf32>
  %s = rlx_mir.reduce sum %x axes = [2] keep_dims : tensor<1x3x4xf32>
  %m = rlx_mir.mul %s, %q : tensor<1x3x1xf32>, tensor<1x1x1xf32>
  %ve = rlx_mir.add %v, %eps : tensor<1x3x1xf32>, tensor<1x1x1xf32>
  %r = rlx_mir.rsqrt %ve : tensor<1x3x1xf32>
  %d = rlx_mir.sub %x, %m : tensor<1x3x4xf32>, tensor<1x3x1xf32>
  %n = rlx_mir.mul %d, %r : tensor<1x3x4xf32>, tensor<1x3x1xf32>
  %w3 = rlx_mir.reshape %w [1, 1, 4] : tensor<4xf32>
  %nw = rlx_mir.mul %n, %w3 : tensor<1x3x4xf32>, tensor<1x1x4xf32>
  %b3 = rlx_mir.reshape %b [1, 1, 4] : tensor<4xf32>
  %y = rlx_mir.add %nw, %b3 : tensor<1x3x4xf32>, tensor<1x1x4xf32>
  %half = rlx_mir.constant dense<5.000000e-01> : tensor<1x1x1xf32>
  %three = rlx_mir.constant dense<3.000000e+00> : tensor<1x1x1xf32>
  %a = rlx_mir.constant dense<4.471500e-02> : tensor<1x1x1xf32>
  %c = rlx_mir.constant dense<0.797884583> : tensor<1x1x1xf32>
  %one = rlx_mir.constant dense<1.000000e+00> : tensor<1x1x1xf32>
  %h = rlx_mir.mul %y, %half : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %cu = rlx_mir.pow %y, %three : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %ac = rlx_mir.mul %cu, %a : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %in = rlx_mir.add %y, %ac : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  %sc = rlx_mir.mul %in, %c : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %t = rlx_mir.tanh %sc : tensor<1x3x4xf32>
  %op = rlx_mir.add %t, %one : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %g = rlx_mir.mul %h, %op : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  return %g : tensor<1x3x4xf32>
}

// -----

// A different constant than gelu_new's (0.05 for 0.044715) is not gelu_tanh.
// CHECK-LABEL: func.func @not_gelu_new(
// CHECK-NOT:     gelu_tanh
func.func @not_gelu_new(%y: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %half = rlx_mir.constant dense<5.000000e-01> : tensor<1x1x1xf32>
  %three = rlx_mir.constant dense<3.000000e+00> : tensor<1x1x1xf32>
  %a = rlx_mir.constant dense<5.000000e-02> : tensor<1x1x1xf32>
  %c = rlx_mir.constant dense<0.797884583> : tensor<1x1x1xf32>
  %one = rlx_mir.constant dense<1.000000e+00> : tensor<1x1x1xf32>
  %h = rlx_mir.mul %y, %half : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %cu = rlx_mir.pow %y, %three : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %ac = rlx_mir.mul %cu, %a : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %in = rlx_mir.add %y, %ac : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  %sc = rlx_mir.mul %in, %c : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %t = rlx_mir.tanh %sc : tensor<1x3x4xf32>
  %op = rlx_mir.add %t, %one : tensor<1x3x4xf32>, tensor<1x1x1xf32>
  %g = rlx_mir.mul %h, %op : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  return %g : tensor<1x3x4xf32>
}

// -----

// kᵀ taken straight from [B, S, H, D] by a [0, 2, 3, 1] transpose (GPT-2)
// is the head split with transpose_b.
// CHECK-LABEL: func.func @scores_from_bshd_kt(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x2x3x4xf32>, %[[K:[^:]*]]: tensor<1x3x2x4xf32>
// CHECK:         %[[KH:.*]] = rlx_mir.transpose %[[K]] [0, 2, 1, 3]
// CHECK:         rlx_mir.matmul %[[Q]], %[[KH]] transpose_b
func.func @scores_from_bshd_kt(%q: tensor<1x2x3x4xf32>, %k: tensor<1x3x2x4xf32>) -> tensor<1x2x3x3xf32> {
  %kt = rlx_mir.transpose %k [0, 2, 3, 1] : tensor<1x3x2x4xf32>
  %s = rlx_mir.matmul %q, %kt : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>
  return %s : tensor<1x2x3x3xf32>
}

// -----

// SDPA's split scale: q·c and kᵀ·c become one scale c² on the scores (f32);
// in f16 the split stays (it keeps the scores in range).
// CHECK-LABEL: func.func @split_scale(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x2x3x4xf32>, %[[K:[^:]*]]: tensor<1x2x3x4xf32>
// CHECK:         %[[C:.*]] = rlx_mir.constant dense<2.500000e-01> : tensor<1x1x1x1xf32>
// CHECK:         %[[S:.*]] = rlx_mir.matmul %[[Q]], %[[K]] transpose_b
// CHECK-NEXT:    rlx_mir.mul %[[S]], %[[C]]
func.func @split_scale(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf32> {
  %c = rlx_mir.constant dense<5.000000e-01> : tensor<1x1x1x1xf32>
  %qs = rlx_mir.mul %q, %c : tensor<1x2x3x4xf32>, tensor<1x1x1x1xf32>
  %kt = rlx_mir.transpose %k [0, 1, 3, 2] : tensor<1x2x3x4xf32>
  %ks = rlx_mir.mul %kt, %c : tensor<1x2x4x3xf32>, tensor<1x1x1x1xf32>
  %s = rlx_mir.matmul %qs, %ks : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>
  return %s : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @split_scale_f16(
// CHECK:         %[[QS:.*]] = rlx_mir.mul
// CHECK:         %[[KS:.*]] = rlx_mir.mul
// CHECK:         rlx_mir.matmul %[[QS]], %[[KS]]
func.func @split_scale_f16(%q: tensor<1x2x3x4xf16>, %k: tensor<1x2x4x3xf16>) -> tensor<1x2x3x3xf16> {
  %c = rlx_mir.constant dense<5.000000e-01> : tensor<1x1x1x1xf16>
  %qs = rlx_mir.mul %q, %c : tensor<1x2x3x4xf16>, tensor<1x1x1x1xf16>
  %ks = rlx_mir.mul %k, %c : tensor<1x2x4x3xf16>, tensor<1x1x1x1xf16>
  %s = rlx_mir.matmul %qs, %ks : tensor<1x2x3x4xf16>, tensor<1x2x4x3xf16>
  return %s : tensor<1x2x3x3xf16>
}

// -----

#m4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#m2 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// A select on a softmax whose condition is not the kept-axis all(-inf) (here
// a 2-D mask broadcast over batch and heads) is not the guard: it stays.
// CHECK-LABEL: func.func @select_not_guard(
// CHECK:         linalg.generic
// CHECK:         arith.select
func.func @select_not_guard(%s: tensor<1x2x3x3xf32>, %c: tensor<3x3xi1>) -> tensor<1x2x3x3xf32> {
  %p = rlx_mir.softmax %s axis = 3 : tensor<1x2x3x3xf32>
  %zeros = arith.constant dense<0.0> : tensor<1x2x3x3xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %g = linalg.generic {indexing_maps = [#m2, #m4, #m4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %zeros, %p : tensor<3x3xi1>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) outs(%e : tensor<1x2x3x3xf32>) {
  ^bb0(%b: i1, %z: f32, %v: f32, %o: f32):
    %r = arith.select %b, %z, %v : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x3xf32>
  return %g : tensor<1x2x3x3xf32>
}
