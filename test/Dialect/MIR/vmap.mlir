// rlx-mir-vmap builds @<name>_vmap: the batched arguments (default: the
// non-parameters) get a leading axis; each op reading a batched value is
// rewritten by its batching rule, the rest is copied.
// RUN: rlx-opt %s --rlx-mir-vmap="batch-size=5" | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-vmap="batch-size=5 axis=1" | FileCheck %s --check-prefix=AXIS
// RUN: rlx-opt %s --rlx-mir-vmap="batch-size=5" --rlx-mir-fuse --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --rlx-lir-verify-plan | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @f_vmap(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<5x2x3xf32> {rlx.input = "x"}, %[[W:[a-z0-9]+]]: tensor<4x3xf32> {rlx.param = "w"}, %[[B:[a-z0-9]+]]: tensor<4xf32> {rlx.param = "b"})
// CHECK-SAME:    -> (tensor<5x2xf32> {rlx.output = "y"})
// A shared rank-2 weight: the matmul takes the batch as one more batch axis.
// CHECK:         %[[H:.*]] = rlx_mir.matmul %[[X]], %[[W]] transpose_b : tensor<5x2x3xf32>, tensor<4x3xf32>
// CHECK:         %[[HB:.*]] = rlx_mir.add %[[H]], %[[B]] : tensor<5x2x4xf32>, tensor<4xf32>
// Reductions and softmax shift their axes past the batch.
// CHECK:         %[[P:.*]] = rlx_mir.softmax %[[HB]] axis = 2 : tensor<5x2x4xf32>
// CHECK:         %[[R:.*]] = rlx_mir.reduce {{ *}}max %[[P]] axes = [2] : tensor<5x2x4xf32>
// CHECK:         return %[[R]] : tensor<5x2xf32>

// AXIS-LABEL: func.func @f_vmap(
// AXIS-SAME:    tensor<2x5x3xf32> {rlx.input = "x"}
// AXIS-SAME:    -> (tensor<2x5xf32> {rlx.output = "y"})
// AXIS:         rlx_mir.transpose %{{.*}} [1, 0, 2] : tensor<2x5x3xf32>
// AXIS:         rlx_mir.transpose %{{.*}} [1, 0] : tensor<5x2xf32>

// PLAN-LABEL: func.func @f_vmap(
// PLAN-SAME:    rlx_lir.plan = {alignment = 64 : i64
func.func @f(%x: tensor<2x3xf32> {rlx.input = "x"}, %w: tensor<4x3xf32> {rlx.param = "w"}, %b: tensor<4xf32> {rlx.param = "b"}) -> (tensor<2xf32> {rlx.output = "y"}) {
  %h = rlx_mir.matmul %x, %w transpose_b : tensor<2x3xf32>, tensor<4x3xf32>
  %hb = rlx_mir.add %h, %b : tensor<2x4xf32>, tensor<4xf32>
  %p = rlx_mir.softmax %hb axis = -1 : tensor<2x4xf32>
  %r = rlx_mir.reduce max %p axes = [-1] : tensor<2x4xf32>
  return %r : tensor<2xf32>
}
