// rlx_mir.ssd_scan: round trips (custom, generic), and its chunked SSD
// decomposition in the linalg lowering (the chunks' cumulative decay, the
// [Q, Q] scores of each chunk as batched matmuls, no op left).
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @mixer
// LOWER-LABEL: func @mixer
func.func @mixer(%x: tensor<1x6x4x3xf32>, %dt: tensor<1x6x4xf32>, %a: tensor<4xf32>,
                 %b: tensor<1x6x2x5xf32>, %c: tensor<1x6x2x5xf32>, %d: tensor<4xf32>,
                 %db: tensor<4xf32>, %s: tensor<1x4x3x5xf32>)
    -> (tensor<1x6x4x3xf32>, tensor<1x4x3x5xf32>) {
  // CHECK: rlx_mir.ssd_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} D(%{{.*}} : tensor<4xf32>) dt_bias(%{{.*}} : tensor<4xf32>) state(%{{.*}} : tensor<1x4x3x5xf32>) dt_softplus dt_min = 1.000000e-03 dt_max = 1.000000e+01 chunk_size = 4 : tensor<1x6x4x3xf32>, tensor<1x6x4xf32>, tensor<4xf32>, tensor<1x6x2x5xf32>, tensor<1x6x2x5xf32>
  // Two chunks of 4 over 6 steps (padded to 8): scores [1, 4, 2, 4, 4].
  // LOWER: tensor<1x4x2x4x4xf32>
  // LOWER: math.exp
  // LOWER-NOT: rlx_mir.ssd_scan
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %c D(%d : tensor<4xf32>) dt_bias(%db : tensor<4xf32>)
      state(%s : tensor<1x4x3x5xf32>) dt_softplus dt_min = 1.0e-3 dt_max = 10.0 chunk_size = 4
      : tensor<1x6x4x3xf32>, tensor<1x6x4xf32>, tensor<4xf32>, tensor<1x6x2x5xf32>,
        tensor<1x6x2x5xf32>
  return %y, %h : tensor<1x6x4x3xf32>, tensor<1x4x3x5xf32>
}

// The bare form: no D, bias or state (zeros), the default chunk; one group.
// CHECK-LABEL: func @bare
// CHECK: rlx_mir.ssd_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16x8x4xbf16>
func.func @bare(%x: tensor<2x16x8x4xbf16>, %dt: tensor<2x16x8xbf16>, %a: tensor<8xbf16>,
                %b: tensor<2x16x1x6xbf16>) -> tensor<2x8x4x6xbf16> {
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b : tensor<2x16x8x4xbf16>, tensor<2x16x8xbf16>,
      tensor<8xbf16>, tensor<2x16x1x6xbf16>, tensor<2x16x1x6xbf16>
  return %h : tensor<2x8x4x6xbf16>
}
