// QAT observers at MIR: round trips (custom, generic), the decomposition the
// linalg lowering uses (reductions, then one elementwise op for the moving
// average; one for the scale and zero point), and autodiff keeping the ops
// (no gradient flows through them).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER
// RUN: rlx-opt %s --rlx-mir-grad="wrt=x" | FileCheck %s --check-prefix=GRAD

// CHECK-LABEL: func @ema
// LOWER-LABEL: func @ema
func.func @ema(%x: tensor<4x6xf32>, %lo: tensor<6xf32>, %hi: tensor<6xf32>)
    -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xi8>) {
  // CHECK: rlx_mir.observe_minmax %{{.*}} running(%{{.*}}, %{{.*}} : tensor<6xf32>, tensor<6xf32>) axis = 1 averaging_constant = 1.000000e-02 : tensor<4x6xf32>
  // LOWER: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
  // LOWER: arith.minimumf
  // LOWER: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
  // LOWER: arith.maximumf
  // LOWER: linalg.generic
  // LOWER: arith.cmpf oeq
  // LOWER: arith.select
  %a, %b = rlx_mir.observe_minmax %x running(%lo, %hi : tensor<6xf32>, tensor<6xf32>) axis = 1
      averaging_constant = 1.000000e-02 : tensor<4x6xf32>
  // CHECK: rlx_mir.choose_qparams %{{.*}}, %{{.*}} quant_min = 0 quant_max = 15 unsigned symmetric : tensor<6xf32>
  // LOWER: linalg.generic
  // LOWER: arith.maximumf
  // LOWER: arith.fptoui
  %s, %z = rlx_mir.choose_qparams %a, %b quant_min = 0 quant_max = 15 unsigned symmetric
      : tensor<6xf32>
  return %a, %b, %s, %z : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xi8>
}

// The step PyTorch's FakeQuantize takes: the scale from the batch's range,
// the straight-through estimator to the input. The observers stay in the
// gradient function; no cotangent comes out of them.
// GRAD-LABEL: func @f_grad
// GRAD: rlx_mir.observe_minmax
// GRAD: rlx_mir.choose_qparams
// GRAD-NOT: rlx_mir.reduce min
func.func @f(%x: tensor<4x6xf32> {rlx.input = "x"}) -> tensor<f32> {
  %a, %b = rlx_mir.observe_minmax %x : tensor<4x6xf32>
  %s, %z = rlx_mir.choose_qparams %a, %b : tensor<f32>
  %y = rlx_mir.fake_quantize %x, %s, %z : tensor<4x6xf32>, tensor<f32>, tensor<i8>
  %l = rlx_mir.reduce sum %y axes = [0, 1] : tensor<4x6xf32>
  return %l : tensor<f32>
}
