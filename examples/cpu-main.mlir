// An entry point for upstream's mlir-runner: @main takes no arguments, so
// rlx-lower-to-cpu gives it its own arena, and prints its result with the
// runner utils' printMemrefF32. y = silu(rms_norm(x) · wᵀ) on constants.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = rlx_mir.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]> : tensor<2x4xf32>
  %g = rlx_mir.constant dense<1.0> : tensor<4xf32>
  %w = rlx_mir.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<3x4xf32>
  %n = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<2x4xf32>, tensor<4xf32>
  %y = rlx_hir.linear %n, %w activation silu : tensor<2x4xf32>, tensor<3x4xf32>
  %u = tensor.cast %y : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
