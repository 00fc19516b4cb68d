// rlx_mir.causal_conv1d: round trips (custom, generic), and its decomposition
// in the linalg lowering (the state before the input, one multiply-add per
// tap, SiLU, the last S raw inputs as the final state).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @decode
// LOWER-LABEL: func @decode
func.func @decode(%x: tensor<1x8x1xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>,
                  %s: tensor<1x8x4xf32>) -> (tensor<1x8x1xf32>, tensor<1x8x4xf32>) {
  // CHECK: rlx_mir.causal_conv1d %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<8xf32>) state(%{{.*}} : tensor<1x8x4xf32>) activation = "silu" : tensor<1x8x1xf32>, tensor<8x4xf32>
  // LOWER: tensor.insert_slice
  // LOWER-COUNT-4: arith.mulf
  // LOWER: math.exp
  // LOWER: tensor.extract_slice {{.*}}[0, 0, 1] [1, 8, 4] [1, 1, 1] : tensor<1x8x5xf32> to tensor<1x8x4xf32>
  // LOWER-NOT: rlx_mir.causal_conv1d
  %y, %st = rlx_mir.causal_conv1d %x, %w bias(%b : tensor<8xf32>) state(%s : tensor<1x8x4xf32>)
      activation = "silu" : tensor<1x8x1xf32>, tensor<8x4xf32>
  return %y, %st : tensor<1x8x1xf32>, tensor<1x8x4xf32>
}

// Without a state: zeros before the input, a K - 1 state out.
// CHECK-LABEL: func @prefill
// CHECK: rlx_mir.causal_conv1d %{{.*}}, %{{.*}} : tensor<2x8x16xbf16>, tensor<8x4xbf16>
func.func @prefill(%x: tensor<2x8x16xbf16>, %w: tensor<8x4xbf16>) -> tensor<2x8x3xbf16> {
  %y, %st = rlx_mir.causal_conv1d %x, %w : tensor<2x8x16xbf16>, tensor<8x4xbf16>
  return %st : tensor<2x8x3xbf16>
}
