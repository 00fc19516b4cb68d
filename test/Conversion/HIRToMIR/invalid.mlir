// HIR that convert-rlx-hir-to-mir cannot lower yet is a located error.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir -split-input-file -verify-diagnostics

func.func @dequant_linear(%x: tensor<2x32xf32>, %w: tensor<4x16xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<f32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{NVFP4 dequant_linear has no MIR lowering yet}}
  // expected-error @+1 {{failed to legalize operation 'rlx_hir.dequant_linear' that was explicitly marked illegal}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g : tensor<2x32xf32>, tensor<4x16xi8>, tensor<4x2xf8E4M3FN>, tensor<f32>
  return %0 : tensor<2x4xf32>
}
