// rlx-lower-to-cpu compiles HIR all the way to the LLVM dialect (fusion,
// linalg, One-Shot Bufferize, BLAS calls, loops), and mlir-runner runs it.
// Expected values (numpy): rms_norm(x) · w^T with relu; row 0
// x / sqrt(7.5), row 1 x / sqrt(1.3125).
// RUN: rlx-opt %s --rlx-lower-to-cpu=blas-min-flops=0 | FileCheck %s --check-prefix=IR
// RUN: rlx-opt %s --rlx-lower-to-cpu=blas-min-flops=0 | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so,%rlx_lib_dir/librlx_cpu_runtime.so \
// RUN:   | FileCheck %s --check-prefix=OUT
// RUN: rlx-opt %s --rlx-lower-to-cpu="blas=false approximate-math=false fusion-policy=fusable" | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN:   | FileCheck %s --check-prefix=OUT

// IR-NOT:  rlx_hir.
// IR-NOT:  rlx_mir.
// IR-NOT:  linalg.
// IR-NOT:  memref.alloc
// IR:      llvm.func @main()
// IR:      llvm.call @rlx_cpu_sgemm(

// OUT:      rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1]
// OUT-NEXT: [0.365148,   0.730296,   3.65148],
// OUT-NEXT: [0,   0.436434,   1.3093]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = rlx_mir.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]> : tensor<2x4xf32>
  %w = rlx_mir.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<3x4xf32>
  %g = rlx_mir.constant dense<1.0> : tensor<4xf32>
  %n = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<2x4xf32>, tensor<4xf32>
  %y = rlx_hir.linear %n, %w activation relu : tensor<2x4xf32>, tensor<3x4xf32>
  %u = tensor.cast %y : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
