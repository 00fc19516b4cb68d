// rlx_mir.gated_delta_rule: round trips (custom, generic), and its chunked
// decomposition in the linalg lowering (the chunks' [C, C] products as
// batched matmuls, no op left).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @layer
// LOWER-LABEL: func @layer
func.func @layer(%q: tensor<1x6x4x8xf32>, %k: tensor<1x6x4x8xf32>, %v: tensor<1x6x4x16xf32>,
                 %g: tensor<1x6x4xf32>, %beta: tensor<1x6x4xf32>, %s: tensor<1x4x8x16xf32>)
    -> (tensor<1x6x4x16xf32>, tensor<1x4x8x16xf32>) {
  // CHECK: rlx_mir.gated_delta_rule %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} state(%{{.*}} : tensor<1x4x8x16xf32>) use_qk_l2norm scale = 2.500000e-01 chunk_size = 4 : tensor<1x6x4x8xf32>, tensor<1x6x4x8xf32>, tensor<1x6x4x16xf32>, tensor<1x6x4xf32>, tensor<1x6x4xf32>
  // Two chunks of 4 over 6 steps (padded to 8): [1, 4, 2, 4, 4] products.
  // LOWER: tensor<1x4x2x4x4xf32>
  // LOWER-NOT: rlx_mir.gated_delta_rule
  %o, %st = rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta state(%s : tensor<1x4x8x16xf32>)
      use_qk_l2norm scale = 0.25 chunk_size = 4 : tensor<1x6x4x8xf32>, tensor<1x6x4x8xf32>,
      tensor<1x6x4x16xf32>, tensor<1x6x4xf32>, tensor<1x6x4xf32>
  return %o, %st : tensor<1x6x4x16xf32>, tensor<1x4x8x16xf32>
}

// The bare form: no state (zeros), no normalization, the default scale and chunk.
// CHECK-LABEL: func @bare
// CHECK: rlx_mir.gated_delta_rule %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x9x2x4xbf16>
func.func @bare(%q: tensor<2x9x2x4xbf16>, %g: tensor<2x9x2xbf16>) -> tensor<2x2x4x4xbf16> {
  %o, %st = rlx_mir.gated_delta_rule %q, %q, %q, %g, %g : tensor<2x9x2x4xbf16>,
      tensor<2x9x2x4xbf16>, tensor<2x9x2x4xbf16>, tensor<2x9x2xbf16>, tensor<2x9x2xbf16>
  return %st : tensor<2x2x4x4xbf16>
}
