// TOSA reductions whose result spells a static dim as `?` (valid TOSA: the
// types are compatible) crashed upstream's tosa-to-linalg with a stack
// overflow (reproducers feb2740d and 74eff4b7 of the third reliability
// audit, from mutated lit tests). RLX refines TOSA result types from their
// operands (tosa-infer-shapes) before raising and lowering them.
// RUN: rlx-opt %s -split-input-file --rlx-lower-to-cpu | FileCheck %s
// RUN: not rlx-opt %s -split-input-file --rlx-lower-to-cpu=dims=seq=8 2>&1 | FileCheck %s --check-prefix=DIMS

// DIMS: error: rlx-mir-specialize: no dim is named 'seq' (the module names no dims)

// CHECK-LABEL: llvm.func @softmax(
func.func @softmax(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %t1 = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x2x4x4xf32>) -> tensor<?x2x4x1xf32>
  %t2 = tosa.sub %s, %t1 : (tensor<1x2x4x4xf32>, tensor<?x2x4x1xf32>) -> tensor<1x2x4x4xf32>
  %t3 = tosa.exp %t2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t4 = tosa.reduce_sum %t3 {axis = 3 : i32} : (tensor<1x2x4x4xf32>) -> tensor<?x2x4x1xf32>
  %t5 = tosa.reciprocal %t4 : (tensor<?x2x4x1xf32>) -> tensor<?x2x4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t6 = tosa.mul %t3, %t5, %shift : (tensor<1x2x4x4xf32>, tensor<?x2x4x1xf32>, tensor<1xi8>) -> tensor<1x2x4x4xf32>
  return %t6 : tensor<1x2x4x4xf32>
}

// -----

// CHECK-LABEL: llvm.func @softmax_guard(
func.func @softmax_guard(%s: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x2x3x3xf32>}> : () -> tensor<1x2x3x3xf32>
  %ninf = "tosa.const"() <{values = dense<0xFFF0000000000000> : tensor<1x1x1x1xf64>}> : () -> tensor<1x1x1x1xf64>
  %mx = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x?xf32>
  %d = tosa.sub %s, %mx : (tensor<1x2x3x3xf32>, tensor<1x2x3x?xf32>) -> tensor<1x2x3x3xf32>
  %e = tosa.exp %d : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x?xf32>
  %r = tosa.reciprocal %sum : (tensor<1x2x3x?xf32>) -> tensor<1x2x3x?xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<1x2x3x3xf32>, tensor<1x2x3x?xf32>, tensor<1xi8>) -> tensor<1x2x3x3xf32>
  %w = tosa.cast %s : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf64>
  %eq = tosa.equal %w, %ninf : (tensor<1x2x3x3xf64>, tensor<1x1x1x1xf64>) -> tensor<1x2x3x3xi1>
  %all = tosa.reduce_all %eq {axis = 3 : i32} : (tensor<1x2x3x3xi1>) -> tensor<1x2x3x1xi1>
  %g = tosa.select %all, %p, %zero : (tensor<1x2x3x1xi1>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %g : tensor<1x2x3x3xf32>
}
