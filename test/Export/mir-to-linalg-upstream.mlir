// Export: RLX's MIR lowered to linalg on tensors (convert-rlx-mir-to-linalg)
// is plain upstream IR, which Debian's mlir-opt-22 bufferizes and lowers to
// LLVM, and mlir-runner runs, without RLX loaded.
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg \
// RUN:   | mlir-opt-22 --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops \
// RUN:       --scf-forall-to-for --convert-scf-to-cf --expand-strided-metadata --lower-affine \
// RUN:       --finalize-memref-to-llvm --convert-math-to-llvm --convert-arith-to-llvm \
// RUN:       --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN:   | FileCheck %s --check-prefix=OUT

// LINALG-NOT: rlx_
// LINALG: scf.forall
// LINALG: linalg.matmul

// rms_norm(x) · w^T with SiLU, fused into one fused_matmul; expected (numpy):
// [[0.215542, 0.492855, 3.559113], [-0.257197, 0.265094, 1.03094]].
// OUT: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1]
// OUT-NEXT: [0.21554{{[0-9]*}},   0.49285{{[0-9]*}},   3.55911{{[0-9]*}}],
// OUT-NEXT: [-0.25719{{[0-9]*}},   0.26509{{[0-9]*}},   1.03094{{[0-9]*}}]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = rlx_mir.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]> : tensor<2x4xf32>
  %w = rlx_mir.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<3x4xf32>
  %g = rlx_mir.constant dense<1.0> : tensor<4xf32>
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<4xf32>)
      activation silu : tensor<2x4xf32>, tensor<3x4xf32>
  %u = tensor.cast %y : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
