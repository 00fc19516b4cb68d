// rlx-mir-jvp builds @<name>_jvp next to the function: arguments plus
// t_<wrt> in, results plus t_<result> out. Elementwise ops differentiate
// through their scalar body (one rlx_mir.elementwise per op), matmul by the
// product rule, linear ops by applying themselves to the tangent.
// RUN: rlx-opt %s --rlx-mir-jvp="wrt=x function=f" | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-grad="wrt=w function=g" --rlx-mir-jvp="wrt=w function=g_grad" | FileCheck %s --check-prefix=HVP

// CHECK-LABEL: func.func @f_jvp(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<2x3xf32> {rlx.input = "x"}, %[[W:[a-z0-9]+]]: tensor<4x3xf32> {rlx.param = "w"}, %[[TX:[a-z0-9]+]]: tensor<2x3xf32> {rlx.input = "t_x"})
// CHECK-SAME:    -> (tensor<2x4xf32> {rlx.output = "y"}, tensor<2x4xf32> {rlx.output = "t_y"})
// CHECK:         %[[H:.*]] = rlx_mir.matmul %[[X]], %[[W]] transpose_b
// CHECK:         %[[E:.*]] = rlx_mir.exp %[[H]]
// The tangent of the matmul: only x has one.
// CHECK:         %[[TH:.*]] = rlx_mir.matmul %[[TX]], %[[W]] transpose_b
// d exp = exp(h) · t, from math.exp's rule in the scalar body.
// CHECK:         %[[TE:.*]] = rlx_mir.elementwise ins(%[[H]], %[[TH]] :
// CHECK:           ^bb0(%[[A:.*]]: f32, %[[T:.*]]: f32):
// CHECK-NEXT:        %[[EA:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[T]], %[[EA]] : f32
// CHECK-NEXT:        rlx_mir.yield %[[M]]
// CHECK:         return %[[E]], %[[TE]]
func.func @f(%x: tensor<2x3xf32> {rlx.input = "x"}, %w: tensor<4x3xf32> {rlx.param = "w"}) -> (tensor<2x4xf32> {rlx.output = "y"}) {
  %h = rlx_mir.matmul %x, %w transpose_b : tensor<2x3xf32>, tensor<4x3xf32>
  %e = rlx_mir.exp %h : tensor<2x4xf32>
  return %e : tensor<2x4xf32>
}


// Forward over reverse: the tangent of d_w along t_w is H·t_w.
// HVP-LABEL: func.func @g_grad_jvp(
// HVP-SAME:    {rlx.input = "d_output"}, %{{.*}}: tensor<3xf32> {rlx.input = "t_w"})
// HVP-SAME:    -> (tensor<f32> {rlx.output = "loss"}, tensor<3xf32> {rlx.output = "d_w"}, tensor<f32> {rlx.output = "t_loss"}, tensor<3xf32> {rlx.output = "t_d_w"})
func.func @g(%w: tensor<3xf32> {rlx.param = "w"}) -> (tensor<f32> {rlx.output = "loss"}) {
  %s = rlx_mir.sin %w : tensor<3xf32>
  %l = rlx_mir.reduce sum %s axes = [0] : tensor<3xf32>
  return %l : tensor<f32>
}
