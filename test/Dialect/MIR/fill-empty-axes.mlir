// rlx-mir-fill-empty-axes: a matmul with K = 0 reads zeros of K = 1, a sum
// over an empty axis reads a zero, a mean NaN; results keep their types.
// Empty results, max over nothing (the verifier's), NVFP4 and non-empty
// operands are left alone.
// RUN: rlx-opt %s --rlx-mir-fill-empty-axes | FileCheck %s

// CHECK-LABEL: func.func @matmul_k0
// CHECK-DAG: %[[A:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<3x1xf32>
// CHECK-DAG: %[[B:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<5x1xf32>
// CHECK: rlx_mir.matmul %[[A]], %[[B]] transpose_b : tensor<3x1xf32>, tensor<5x1xf32>
func.func @matmul_k0(%a: tensor<3x0xf32>, %b: tensor<5x0xf32>) -> tensor<3x5xf32> {
  %y = rlx_mir.matmul %a, %b transpose_b : tensor<3x0xf32>, tensor<5x0xf32>
  return %y : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @reductions
// CHECK-DAG: %[[Z:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<3x1xf32>
// CHECK-DAG: %[[N:.*]] = rlx_mir.constant dense<0x7FC00000> : tensor<3x1xf32>
// CHECK-DAG: rlx_mir.reduce sum %[[Z]] axes = [1] : tensor<3x1xf32>
// CHECK-DAG: rlx_mir.reduce mean %[[N]] axes = [1] : tensor<3x1xf32>
func.func @reductions(%a: tensor<3x0xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = rlx_mir.reduce sum %a axes = [1] : tensor<3x0xf32>
  %m = rlx_mir.reduce mean %a axes = [1] : tensor<3x0xf32>
  return %s, %m : tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @untouched
// CHECK-NOT: rlx_mir.constant
// CHECK: rlx_mir.matmul %arg0, %arg1 : tensor<0x4xf32>, tensor<4x5xf32>
// CHECK: rlx_mir.reduce sum %arg2 axes = [1] : tensor<3x2xf32>
func.func @untouched(%a: tensor<0x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x2xf32>)
    -> (tensor<0x5xf32>, tensor<3xf32>) {
  %y = rlx_mir.matmul %a, %b : tensor<0x4xf32>, tensor<4x5xf32>
  %s = rlx_mir.reduce sum %c axes = [1] : tensor<3x2xf32>
  return %y, %s : tensor<0x5xf32>, tensor<3xf32>
}
