// RUN: rlx-opt %s --rlx-mir-grad | FileCheck %s

// Integer arguments (token ids) get no gradient; the embedding table's is
// the cotangent's rows added at the ids (scatter_add, gather's transpose).
// CHECK-LABEL: func.func @embed_grad(
// CHECK-SAME:    %{{.*}}: tensor<5x2xf32>, %[[IDS:.*]]: tensor<3xi64>,
// CHECK-SAME:    -> (tensor<f32> {rlx.output = "loss"}, tensor<5x2xf32> {rlx.output = "d_arg0"})
// CHECK:         %[[DY:.*]] = rlx_mir.broadcast %{{.*}} [3, 2]
// CHECK:         %[[Z:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<5x2xf32>
// CHECK:         %[[G:.*]] = rlx_mir.scatter_add %[[Z]][%[[IDS]]], %[[DY]] : tensor<5x2xf32>, tensor<3xi64>, tensor<3x2xf32>
// CHECK:         return %{{.*}}, %[[G]]
func.func @embed(%table: tensor<5x2xf32>, %ids: tensor<3xi64>) -> tensor<f32> {
  %e = rlx_mir.gather %table[%ids] : tensor<5x2xf32>, tensor<3xi64>
  %l = rlx_mir.reduce sum %e axes = [0, 1] : tensor<3x2xf32>
  return %l : tensor<f32>
}
