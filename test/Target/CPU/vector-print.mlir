// An @main that prints with vector.print (as buddy-mlir's examples do):
// rlx-lower-to-cpu lowers the vector ops (it left vector.print in the
// output, exit 0, and mlir-runner failed), and anything it cannot lower is a
// located error (rlx-cpu-check-llvm). exp(1..4) from numpy.
// RUN: rlx-opt %s --rlx-lower-to-cpu | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so | FileCheck %s
// RUN: rlx-opt %s --rlx-lower-to-cpu | FileCheck %s --check-prefix=IR

// IR-NOT: vector.
// CHECK: ( 1, 2, 3 )
// CHECK: ( ( 2.71828, 7.38906 ), ( 20.0855, 54.5981 ) )
func.func @main() {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : vector<3xf32>
  vector.print %c : vector<3xf32>
  %t = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %e = math.exp %t : tensor<2x2xf32>
  %i = arith.constant 0 : index
  %p = arith.constant 0.0 : f32
  %v = vector.transfer_read %e[%i, %i], %p : tensor<2x2xf32>, vector<2x2xf32>
  vector.print %v : vector<2x2xf32>
  return
}
