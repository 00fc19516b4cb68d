// A SwiGLU MLP's activation between RLX ops: rlx-mir-fuse makes the scale,
// the demo op and the residual add one fused elementwise kernel.
func.func @f(%gate: tensor<4x8xf32> {rlx.input = "gate"}, %up: tensor<4x8xf32> {rlx.input = "up"},
             %x: tensor<4x8xf32> {rlx.input = "x"}) -> tensor<4x8xf32> {
  %c = rlx_mir.constant dense<1.5> : tensor<f32>
  %g = rlx_mir.mul %gate, %c : tensor<4x8xf32>, tensor<f32>
  %s = demo.swish_gate %g, %up : tensor<4x8xf32>, tensor<4x8xf32>
  %y = rlx_mir.add %s, %x : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
