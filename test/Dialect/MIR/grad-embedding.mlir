// RUN: rlx-opt %s --rlx-mir-grad | FileCheck %s

// Integer arguments (token ids) get no gradient; the embedding table's comes
// from one-hot rows of an identity.
// CHECK-LABEL: func.func @embed_grad(
// CHECK-SAME:    -> (tensor<f32> {rlx.output = "loss"}, tensor<5x2xf32> {rlx.output = "d_arg0"})
// CHECK:         rlx_mir.constant dense<{{.*}}> : tensor<5x5xf32>
// CHECK:         %[[OH:.*]] = rlx_mir.gather
// CHECK:         rlx_mir.matmul %{{.*}}, %{{.*}} transpose_a : tensor<3x5xf32>, tensor<3x2xf32>
func.func @embed(%table: tensor<5x2xf32>, %ids: tensor<3xi64>) -> tensor<f32> {
  %e = rlx_mir.gather %table[%ids] : tensor<5x2xf32>, tensor<3xi64>
  %l = rlx_mir.reduce sum %e axes = [0, 1] : tensor<3x2xf32>
  return %l : tensor<f32>
}
