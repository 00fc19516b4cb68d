// With `report`, rlx-import-to-mir names what stayed outside rlx_mir (each
// its own kernel) and primitives outside any recognized block; rlx-mir-fuse's
// compute-op count includes the former and names them.
// RUN: rlx-opt %s --pass-pipeline='builtin.module(rlx-import-to-mir{report},rlx-mir-fuse{report})' -o /dev/null 2>&1 | FileCheck %s
// CHECK-DAG: remark: rlx-import-to-mir: 'tosa.greater' was not raised to rlx_mir; it runs as its own kernel
// CHECK-DAG: remark: rlx-import-to-mir: 'rlx_mir.exp' is not part of a recognized block (softmax, silu); it runs as primitive math
// CHECK-DAG: remark: fusion of @report: {{.*}}; compute ops 2 -> 2 (not rlx_mir: 'tosa.greater' x1)
func.func @report(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi1>) {
  %e = tosa.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = tosa.greater %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  return %e, %g : tensor<2x4xf32>, tensor<2x4xi1>
}
