// Integer quantize/dequantize at MIR: round trips (custom, generic), and the
// linalg lowering (round half to even, the zero point, then saturation).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// LOWER-DAG: #[[$SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// LOWER-DAG: #[[$ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// LOWER-DAG: #[[$GROUP:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>
// CHECK-LABEL: func @ops
// LOWER-LABEL: func @ops
func.func @ops(%x: tensor<4x6xf16>, %s: tensor<f32>, %z: tensor<i8>, %sa: tensor<4xf32>,
               %sg: tensor<4x2xf32>, %zg: tensor<4x2xi8>) -> (tensor<4x6xi8>, tensor<4x6xi8>, tensor<4x6xf32>) {
  // CHECK: rlx_mir.quantize %{{.*}}, %{{.*}}, %{{.*}} unsigned : tensor<4x6xf16>, tensor<f32>, tensor<i8>
  // LOWER: linalg.generic {indexing_maps = [#{{.*}}, #[[$SCALAR]], #[[$SCALAR]], #{{.*}}]
  // LOWER: arith.extui
  // LOWER: arith.extf
  // LOWER: arith.divf
  // LOWER: math.roundeven
  // LOWER: arith.addf
  // LOWER: arith.maxnumf
  // LOWER: arith.minnumf
  // LOWER: arith.select
  // LOWER: arith.fptosi
  %q = rlx_mir.quantize %x, %s, %z unsigned : tensor<4x6xf16>, tensor<f32>, tensor<i8>
  // CHECK: rlx_mir.quantize %{{.*}}, %{{.*}} axis = 0 quant_min = -127 : tensor<4x6xf16>, tensor<4xf32>
  // LOWER: linalg.generic {indexing_maps = [#{{.*}}, #[[$ROW]], #{{.*}}]
  %qa = rlx_mir.quantize %x, %sa axis = 0 quant_min = -127 : tensor<4x6xf16>, tensor<4xf32>
  // CHECK: rlx_mir.dequantize %{{.*}}, %{{.*}}, %{{.*}} axis = 1 group_size = 4 quant_min = -8 quant_max = 7 : tensor<4x6xi8>, tensor<4x2xf32>, tensor<4x2xi8>
  // LOWER: linalg.generic {indexing_maps = [#{{.*}}, #[[$GROUP]], #[[$GROUP]], #{{.*}}]
  // LOWER: arith.extsi
  // LOWER: arith.subi
  // LOWER: arith.sitofp
  // LOWER: arith.mulf
  %d = rlx_mir.dequantize %qa, %sg, %zg axis = 1 group_size = 4 quant_min = -8 quant_max = 7 : tensor<4x6xi8>, tensor<4x2xf32>, tensor<4x2xi8>
  // CHECK: rlx_mir.fake_quantize %{{.*}}, %{{.*}} axis = 0 ste = "identity" scale_grad = 5.000000e-01 : tensor<4x6xf16>, tensor<4xf32>
  // LOWER: math.roundeven
  // LOWER: arith.subf
  // LOWER: arith.truncf {{.*}} f32 to f16
  %f = rlx_mir.fake_quantize %x, %sa axis = 0 ste = "identity" scale_grad = 0.5 : tensor<4x6xf16>, tensor<4xf32>
  return %q, %qa, %d : tensor<4x6xi8>, tensor<4x6xi8>, tensor<4x6xf32>
}
