// wrt names an argument that does not exist, or one that is not a float tensor.
// RUN: rlx-opt %s --rlx-mir-grad="wrt=y" -verify-diagnostics --split-input-file

// expected-error @+1 {{rlx-mir-grad: no argument named 'y' (wrt)}}
func.func @f(%x: tensor<4xf32> {rlx.input = "x"}) -> tensor<f32> {
  %l = rlx_mir.reduce sum %x axes = [0] : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{rlx-mir-grad: argument 'y' is not a floating-point tensor}}
func.func @g(%x: tensor<4xf32> {rlx.input = "x"}, %ids: tensor<4xi64> {rlx.input = "y"}) -> tensor<f32> {
  %l = rlx_mir.reduce sum %x axes = [0] : tensor<4xf32>
  return %l : tensor<f32>
}
