// convert-rlx-mir-to-linalg needs static shapes: dynamic dims are bound by
// rlx-mir-specialize first, and the error says so.
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg -split-input-file -verify-diagnostics

func.func @dynamic(%a: tensor<2x?x8xf32>, %b: tensor<8xf32>) -> tensor<2x?x8xf32> {
  // expected-error @+1 {{convert-rlx-mir-to-linalg needs static shapes, got 'tensor<2x?x8xf32>'; bind the dynamic dims first with rlx-mir-specialize{dims=<name>=<size>,...}}}
  %0 = rlx_mir.add %a, %b : tensor<2x?x8xf32>, tensor<8xf32>
  return %0 : tensor<2x?x8xf32>
}
