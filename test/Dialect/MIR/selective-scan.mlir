// rlx_mir.selective_scan: round trips (custom, generic), and its chunked
// decomposition in the linalg lowering (exp(dt·A), the doubling steps
// within a chunk, the sum over the state for the output, no op left).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @mixer
// LOWER-LABEL: func @mixer
func.func @mixer(%u: tensor<1x8x6xf32>, %dt: tensor<1x8x6xf32>, %a: tensor<8x4xf32>,
                 %b: tensor<1x4x6xf32>, %c: tensor<1x4x6xf32>, %d: tensor<8xf32>,
                 %z: tensor<1x8x6xf32>, %db: tensor<8xf32>, %s: tensor<1x8x4xf32>)
    -> (tensor<1x8x6xf32>, tensor<1x8x4xf32>) {
  // CHECK: rlx_mir.selective_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} D(%{{.*}} : tensor<8xf32>) z(%{{.*}} : tensor<1x8x6xf32>) delta_bias(%{{.*}} : tensor<8xf32>) state(%{{.*}} : tensor<1x8x4xf32>) delta_softplus chunk_size = 4 : tensor<1x8x6xf32>, tensor<1x8x6xf32>, tensor<8x4xf32>, tensor<1x4x6xf32>, tensor<1x4x6xf32>
  // Two chunks of 4 over 6 steps (padded to 8), two doubling steps each.
  // LOWER: math.exp
  // LOWER: tensor.expand_shape {{.*}} into tensor<1x8x2x4x4xf32>
  // LOWER: math.exp
  // LOWER-NOT: rlx_mir.selective_scan
  %y, %h = rlx_mir.selective_scan %u, %dt, %a, %b, %c D(%d : tensor<8xf32>)
      z(%z : tensor<1x8x6xf32>) delta_bias(%db : tensor<8xf32>) state(%s : tensor<1x8x4xf32>)
      delta_softplus chunk_size = 4 : tensor<1x8x6xf32>, tensor<1x8x6xf32>, tensor<8x4xf32>,
      tensor<1x4x6xf32>, tensor<1x4x6xf32>
  return %y, %h : tensor<1x8x6xf32>, tensor<1x8x4xf32>
}

// The bare form: no D, z, bias or state (zeros), the default chunk.
// CHECK-LABEL: func @bare
// CHECK: rlx_mir.selective_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x16xbf16>
func.func @bare(%u: tensor<2x8x16xbf16>, %a: tensor<8x4xbf16>, %b: tensor<2x4x16xbf16>)
    -> tensor<2x8x4xbf16> {
  %y, %h = rlx_mir.selective_scan %u, %u, %a, %b, %b : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>,
      tensor<8x4xbf16>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>
  return %h : tensor<2x8x4xbf16>
}
