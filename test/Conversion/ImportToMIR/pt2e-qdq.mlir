// PT2E's quantize / dequantize as torch-mlir's TorchToLinalg writes them
// (quantized_decomposed ops, one elementwise generic each), raised to
// rlx_mir.quantize / dequantize, and the quantized linear
// (matmul of two dequantizations) recognized as qmatmul. Bodies that compute
// something else stay linalg.
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @linear_per_tensor(
// CHECK-DAG:     %[[S:.*]] = rlx_mir.constant dense<5.000000e-02> : tensor<f32>
// CHECK-DAG:     %[[Z:.*]] = rlx_mir.constant dense<19> : tensor<i8>
// CHECK:         %[[Q:.*]] = rlx_mir.quantize %arg0, %[[S]], %[[Z]] quant_min = -127 : tensor<4x16xf32>, tensor<f32>, tensor<i8>
// CHECK:         %[[ACC:.*]] = rlx_mir.qmatmul %[[Q]], %arg1 transpose_b lhs_zero_point = 19 : tensor<4x16xi8>, tensor<8x16xi8>
// CHECK:         %[[F:.*]] = rlx_mir.cast %[[ACC]] : tensor<4x8xi32> to tensor<4x8xf32>
// CHECK:         %[[Y:.*]] = rlx_mir.mul %[[F]], %{{.*}} : tensor<4x8xf32>, tensor<f32>
// CHECK-NEXT:    return %[[Y]]
// CHECK-NOT:     linalg.
func.func @linear_per_tensor(%x: tensor<4x16xf32>, %w: tensor<8x16xi8>) -> tensor<4x8xf32> {
  %s = arith.constant 0.05 : f32
  %zf = arith.constant 19.0 : f32
  %zi = arith.constant 19 : i64
  %lo = arith.constant -127.0 : f32
  %hi = arith.constant 127.0 : f32
  %sw = arith.constant 0.002 : f32
  %e0 = tensor.empty() : tensor<4x16xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e0 : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %0 = arith.divf %in, %s : f32
    %1 = math.roundeven %0 : f32
    %2 = arith.addf %1, %zf : f32
    %3 = arith.maximumf %2, %lo : f32
    %4 = arith.minimumf %3, %hi : f32
    %5 = arith.fptosi %4 : f32 to i8
    linalg.yield %5 : i8
  } -> tensor<4x16xi8>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %dq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x16xi8>) outs(%e1 : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.extsi %in : i8 to i64
    %1 = arith.subi %0, %zi : i64
    %2 = arith.sitofp %1 : i64 to f32
    %3 = arith.mulf %2, %s : f32
    linalg.yield %3 : f32
  } -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %dw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x16xi8>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.sitofp %in : i8 to f32
    %1 = arith.mulf %0, %sw : f32
    linalg.yield %1 : f32
  } -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%dw : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%dq, %wt : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Per output channel: the scale and zero point are operands read along d0;
// uint8 activations (uitofp), the scale on the left of the product, one
// zero point for every channel (a qmatmul attribute).
// CHECK-LABEL: func.func @weight_per_channel(
// CHECK:         %[[Z:.*]] = rlx_mir.constant dense<3> : tensor<8xi8>
// CHECK:         %[[DW:.*]] = rlx_mir.dequantize %arg1, %arg2, %[[Z]] axis = 0 : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi8>
// CHECK:         rlx_mir.qmatmul %arg0, %arg1 transpose_b rhs_zero_point = 3 lhs_unsigned : tensor<4x16xi8>, tensor<8x16xi8>
// CHECK:         %[[SS:.*]] = rlx_mir.mul %arg2, %{{.*}} : tensor<8xf32>, tensor<f32>
// CHECK:         rlx_mir.mul %{{.*}}, %[[SS]] : tensor<4x8xf32>, tensor<8xf32>
func.func @weight_per_channel(%x: tensor<4x16xi8>, %w: tensor<8x16xi8>, %sw: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<8x16xf32>) {
  %zp = arith.constant dense<3> : tensor<8xi64>
  %sx = arith.constant 0.1 : f32
  %e0 = tensor.empty() : tensor<8x16xf32>
  %dw = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %sw, %zp : tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: i8, %s: f32, %z: i64, %out: f32):
    %0 = arith.extsi %in : i8 to i64
    %1 = arith.subi %0, %z : i64
    %2 = arith.sitofp %1 : i64 to f32
    %3 = arith.mulf %2, %s : f32
    linalg.yield %3 : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xi8>) outs(%e1 : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.uitofp %in : i8 to f32
    %1 = arith.mulf %sx, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  // The [N, K] weight's transpose folds into the matmul's transpose_b.
  %e3 = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.transpose ins(%dw : tensor<8x16xf32>) outs(%e3 : tensor<16x8xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%dx, %wt : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %dw : tensor<4x8xf32>, tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Not PT2E's quantize: a truncating conversion (no roundeven), x · (1/s),
// and no clamp each stay linalg (what they compute is not rlx_mir.quantize).
// CHECK-LABEL: func.func @not_quantize(
// CHECK-NOT:     rlx_mir.quantize
// CHECK-COUNT-3: linalg.generic
func.func @not_quantize(%x: tensor<4xf32>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %s = arith.constant 0.05 : f32
  %inv = arith.constant 20.0 : f32
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %e = tensor.empty() : tensor<4xi8>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xi8>) {
  ^bb0(%in: f32, %out: i8):
    %0 = arith.divf %in, %s : f32
    %1 = arith.maximumf %0, %lo : f32
    %2 = arith.minimumf %1, %hi : f32
    %3 = arith.fptosi %2 : f32 to i8
    linalg.yield %3 : i8
  } -> tensor<4xi8>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xi8>) {
  ^bb0(%in: f32, %out: i8):
    %0 = arith.mulf %in, %inv : f32
    %1 = math.roundeven %0 : f32
    %2 = arith.maximumf %1, %lo : f32
    %3 = arith.minimumf %2, %hi : f32
    %4 = arith.fptosi %3 : f32 to i8
    linalg.yield %4 : i8
  } -> tensor<4xi8>
  %c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xi8>) {
  ^bb0(%in: f32, %out: i8):
    %0 = arith.divf %in, %s : f32
    %1 = math.roundeven %0 : f32
    %2 = arith.fptosi %1 : f32 to i8
    linalg.yield %2 : i8
  } -> tensor<4xi8>
  return %a, %b, %c : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A zero point the byte cannot hold (300 for a signed i8) stays linalg: the
// generic subtracts it in i64, rlx_mir.dequantize could not.
// CHECK-LABEL: func.func @zero_point_out_of_range(
// CHECK-NOT:     rlx_mir.dequantize
// CHECK:         linalg.generic
func.func @zero_point_out_of_range(%q: tensor<4xi8>) -> tensor<4xf32> {
  %z = arith.constant 300 : i64
  %s = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%q : tensor<4xi8>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.extsi %in : i8 to i64
    %1 = arith.subi %0, %z : i64
    %2 = arith.sitofp %1 : i64 to f32
    %3 = arith.mulf %2, %s : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A weight whose per-channel scale runs along K does not factor out of the
// sum: the matmul stays in float.
// CHECK-LABEL: func.func @scale_along_k(
// CHECK-NOT:     rlx_mir.qmatmul
// CHECK:         rlx_mir.matmul
func.func @scale_along_k(%x: tensor<4x16xi8>, %w: tensor<8x16xi8>, %s: tensor<f32>, %sk: tensor<16xf32>) -> tensor<4x8xf32> {
  %dx = rlx_mir.dequantize %x, %s : tensor<4x16xi8>, tensor<f32>
  %dw = rlx_mir.dequantize %w, %sk axis = 1 : tensor<8x16xi8>, tensor<16xf32>
  %y = rlx_mir.matmul %dx, %dw transpose_b : tensor<4x16xf32>, tensor<8x16xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// uint8 activations quantized with fptoui (range [0, 255], zero point 200,
// stored as the byte 0xC8) and dequantized with extui: both raise, and the
// product reads the zero point back as 200.
// CHECK-LABEL: func.func @uint8_activations(
// CHECK-DAG:     %[[Z:.*]] = rlx_mir.constant dense<-56> : tensor<i8>
// CHECK:         %[[Q:.*]] = rlx_mir.quantize %arg0, %{{.*}}, %[[Z]] unsigned : tensor<4x16xf32>, tensor<f32>, tensor<i8>
// CHECK:         rlx_mir.qmatmul %[[Q]], %arg1 transpose_b lhs_zero_point = 200 lhs_unsigned : tensor<4x16xi8>, tensor<8x16xi8>
func.func @uint8_activations(%x: tensor<4x16xf32>, %w: tensor<8x16xi8>, %sw: tensor<f32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.05 : f32
  %zf = arith.constant 200.0 : f32
  %zi = arith.constant 200 : i32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %e0 = tensor.empty() : tensor<4x16xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e0 : tensor<4x16xi8>) {
  ^bb0(%in: f32, %out: i8):
    %0 = arith.divf %in, %s : f32
    %1 = math.roundeven %0 : f32
    %2 = arith.addf %zf, %1 : f32
    %3 = arith.minimumf %2, %hi : f32
    %4 = arith.maximumf %3, %lo : f32
    %5 = arith.fptoui %4 : f32 to i8
    linalg.yield %5 : i8
  } -> tensor<4x16xi8>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %dq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x16xi8>) outs(%e1 : tensor<4x16xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.extui %in : i8 to i32
    %1 = arith.subi %0, %zi : i32
    %2 = arith.sitofp %1 : i32 to f32
    %3 = arith.mulf %2, %s : f32
    linalg.yield %3 : f32
  } -> tensor<4x16xf32>
  %dw = rlx_mir.dequantize %w, %sw : tensor<8x16xi8>, tensor<f32>
  %y = rlx_mir.matmul %dq, %dw transpose_b : tensor<4x16xf32>, tensor<8x16xf32>
  return %y : tensor<4x8xf32>
}
