// rlx_mir.conv: the op round-trips (defaults omitted, asymmetric padding,
// groups); rlx-mir-decompose expands it into its chain (an im2col gather
// from a constant index table, one batched matmul over the groups, the
// bias). Values: test/python/test_conv.py.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: rlx-opt %s -split-input-file --rlx-mir-decompose | FileCheck %s --check-prefix=DEC

// ROUND-LABEL: func.func @patch
// ROUND: rlx_mir.conv %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<8xf32>) stride = [4, 4] : tensor<1x3x16x16xf32>, tensor<8x3x4x4xf32> -> tensor<1x8x4x4xf32>
// DEC-LABEL: func.func @patch
// DEC-NOT: rlx_mir.conv
// DEC: rlx_mir.gather
// DEC: rlx_mir.matmul {{.*}}transpose_b
// DEC: rlx_mir.add
// DEC: return
func.func @patch(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x4x4xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  %y = rlx_mir.conv %x, %w bias(%b : tensor<8xf32>) stride = [4, 4] : tensor<1x3x16x16xf32>, tensor<8x3x4x4xf32> -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}

// -----

// ROUND-LABEL: func.func @grouped
// ROUND: rlx_mir.conv %{{.*}}, %{{.*}} padding = [2, 0] dilation = [2] groups = 2 : tensor<2x4x9xf32>, tensor<6x2x3xf32> -> tensor<2x6x7xf32>
// DEC-LABEL: func.func @grouped
// DEC-NOT: rlx_mir.conv
// DEC: rlx_mir.gather
// DEC: rlx_mir.matmul
// DEC-NOT: rlx_mir.add
// DEC: return
func.func @grouped(%x: tensor<2x4x9xf32>, %w: tensor<6x2x3xf32>) -> tensor<2x6x7xf32> {
  %y = rlx_mir.conv %x, %w padding = [2, 0] dilation = [2] groups = 2 : tensor<2x4x9xf32>, tensor<6x2x3xf32> -> tensor<2x6x7xf32>
  return %y : tensor<2x6x7xf32>
}
