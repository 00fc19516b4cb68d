// rlx-mir-grad builds @<name>_grad next to the forward function: forward
// arguments plus d_output in, loss and d_<wrt> out; gradients of a value with
// several uses are summed, a broadcast operand's gradient is summed back to
// its shape, and the result is ordinary MIR that fuses and plans.
// RUN: rlx-opt %s --rlx-mir-grad="wrt=x,b" -split-input-file | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-grad -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: rlx-opt %s --rlx-mir-grad="wrt=x,b" -split-input-file \
// RUN:   | rlx-opt --rlx-mir-fuse --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --rlx-lir-verify-plan -split-input-file \
// RUN:   | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x3xf32> {rlx.input = "x"}, %[[B:[a-z0-9]+]]: tensor<3xf32> {rlx.param = "b"}, %[[D:[a-z0-9]+]]: tensor<f32> {rlx.input = "d_output"})
// CHECK-SAME:    -> (tensor<f32> {rlx.output = "loss"}, tensor<4x3xf32> {rlx.output = "d_x"}, tensor<3xf32> {rlx.output = "d_b"})
// The forward pass, recomputed.
// CHECK:         %[[S:.*]] = rlx_mir.add %[[X]], %[[B]]
// CHECK:         %[[P:.*]] = rlx_mir.mul %[[S]], %[[S]]
// CHECK:         %[[L:.*]] = rlx_mir.reduce {{ *}}sum %[[P]] axes = [0, 1]
// The loss cotangent spread over the reduced axes.
// CHECK:         %[[DR:.*]] = rlx_mir.reshape %[[D]] [1, 1] : tensor<f32>
// CHECK:         %[[DP:.*]] = rlx_mir.broadcast %[[DR]] [4, 3]
// d(s·s) = dp·s + dp·s: the mul's default (elementwise) rule, one region with
// a result per operand; the two uses of %s are summed.
// CHECK:         %[[G:.*]]:2 = rlx_mir.elementwise ins(%[[S]], %[[S]], %[[DP]] :
// CHECK:           ^bb0(%[[A:.*]]: f32, %[[B2:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:        %[[M1:.*]] = arith.mulf %[[C]], %[[B2]] : f32
// CHECK-NEXT:        %[[M2:.*]] = arith.mulf %[[C]], %[[A]] : f32
// CHECK-NEXT:        rlx_mir.yield %[[M1]], %[[M2]]
// CHECK:         %[[DS:.*]] = rlx_mir.add %[[G]]#0, %[[G]]#1
// The add passes the cotangent through to both operands.
// CHECK-NOT:     rlx_mir.elementwise
// b was broadcast over rows: its gradient is summed over them.
// CHECK:         %[[DB:.*]] = rlx_mir.reduce {{ *}}sum %[[DS]] axes = [0] keep_dims
// CHECK:         %[[DB1:.*]] = rlx_mir.reshape %[[DB]] [3] : tensor<1x3xf32>
// CHECK:         return %[[L]], %[[DS]], %[[DB1]]

// Without wrt every floating-point argument is differentiated.
// ALL-LABEL: func.func @f_grad(
// ALL-SAME:    -> (tensor<f32> {rlx.output = "loss"}, tensor<4x3xf32> {rlx.output = "d_x"}, tensor<3xf32> {rlx.output = "d_b"})

// PLAN-LABEL: func.func @f_grad(
// PLAN-SAME:    rlx_lir.plan = {alignment = 64 : i64
func.func @f(%x: tensor<4x3xf32> {rlx.input = "x"}, %b: tensor<3xf32> {rlx.param = "b"}) -> (tensor<f32> {rlx.output = "loss"}) {
  %s = rlx_mir.add %x, %b : tensor<4x3xf32>, tensor<3xf32>
  %p = rlx_mir.mul %s, %s : tensor<4x3xf32>, tensor<4x3xf32>
  %l = rlx_mir.reduce sum %p axes = [0, 1] : tensor<4x3xf32>
  return %l : tensor<f32>
}

// -----

// A 0-size input (this aborted building the gradient): the sum's gradient is
// the cotangent broadcast to the input's empty shape.
// CHECK-LABEL: func.func @empty_f_grad(
// CHECK:         %[[R:.*]] = rlx_mir.reshape %arg2 [1, 1]
// CHECK:         %[[G:.*]] = rlx_mir.broadcast %[[R]] [0, 4]
// CHECK:         return %{{.*}}, %[[G]]
// ALL-LABEL: func.func @empty_f_grad(
// PLAN-LABEL: func.func @empty_f_grad(
func.func @empty_f(%x: tensor<0x4xf32> {rlx.input = "x"}, %b: tensor<4xf32> {rlx.input = "b"}) -> tensor<f32> {
  %y = rlx_mir.add %x, %b : tensor<0x4xf32>, tensor<4xf32>
  %l = rlx_mir.reduce sum %y axes = [0, 1] : tensor<0x4xf32>
  return %l : tensor<f32>
}
