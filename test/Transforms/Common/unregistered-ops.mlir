// Ops of unregistered dialects pass through every RLX pass untouched (these
// passes dereferenced the op's null dialect).
// RUN: rlx-opt %s --allow-unregistered-dialect --rlx-mir-fuse | FileCheck %s
// RUN: rlx-opt %s --allow-unregistered-dialect --convert-rlx-mir-to-lir | FileCheck %s
// RUN: rlx-opt %s --allow-unregistered-dialect --convert-rlx-mir-to-linalg | FileCheck %s
// RUN: rlx-opt %s --allow-unregistered-dialect --rlx-mir-pack-weights | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK:         "foo.bar"
// CHECK:         "foo.baz"
func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "foo.bar"(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = rlx_mir.exp %0 : tensor<2x4xf32>
  %2 = "foo.baz"(%1) {attr = 1} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
