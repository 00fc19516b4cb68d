// rlx-mir-index-bounds: an integer argument that reaches a gather's indices
// (directly or through reshape/cast/...) gets rlx.index_bound = the table's
// rows (the smallest when it indexes several); one that is computed on, or
// no index, gets none.
// RUN: rlx-opt %s --rlx-mir-index-bounds | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %arg0: tensor<4xi64> {rlx.index_bound = 100 : i64, rlx.input = "ids"}
// CHECK-SAME:    %arg1: tensor<2x2xi32> {rlx.index_bound = 16 : i64, rlx.input = "pos"}
// CHECK-SAME:    %arg2: tensor<4xi64> {rlx.input = "computed"}
// CHECK-SAME:    %arg3: tensor<4xi64> {rlx.input = "unused"}
func.func @f(%ids: tensor<4xi64> {rlx.input = "ids"}, %pos: tensor<2x2xi32> {rlx.input = "pos"},
             %computed: tensor<4xi64> {rlx.input = "computed"}, %unused: tensor<4xi64> {rlx.input = "unused"},
             %table: tensor<100x8xf32>, %small: tensor<16x8xf32>, %big: tensor<32x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = rlx_mir.gather %table[%ids] : tensor<100x8xf32>, tensor<4xi64>
  %r = rlx_mir.reshape %pos [4] : tensor<2x2xi32>
  %b = rlx_mir.gather %small[%r] : tensor<16x8xf32>, tensor<4xi32>
  %c = rlx_mir.gather %big[%r] : tensor<32x8xf32>, tensor<4xi32>
  %s = rlx_mir.add %computed, %computed : tensor<4xi64>, tensor<4xi64>
  %d = rlx_mir.gather %table[%s] : tensor<100x8xf32>, tensor<4xi64>
  return %a, %b, %c, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
