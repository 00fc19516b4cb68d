// rlx-cpu-topk-cumsum: topk's and cumsum's linalg forms (quadratic in the
// axis) on f32/f64 buffers become calls of the CPU runtime's sort and running
// sum, on unranked memrefs; topk's ranks generic and its fill are erased;
// a cumsum of bf16 (f32 sums) keeps its loops.
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --rlx-cpu-topk-cumsum | FileCheck %s

// CHECK-DAG: func.func private @rlx_cpu_topk_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @rlx_cpu_cumsum_f64(memref<*xf64>, memref<*xf64>, i64, i32, i32) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @topk
// CHECK-NOT: linalg.generic
// CHECK: call @rlx_cpu_topk_f32(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xi64>) -> ()
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @topk(%x: tensor<3x10xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>) {
  %v, %i = rlx_mir.topk %x k = 4 : tensor<3x10xf32>
  return %v, %i : tensor<3x4xf32>, tensor<3x4xi64>
}

// Axis 0, exclusive and reverse: the flags as (axis, exclusive, reverse).
// CHECK-LABEL: func.func @cumsum
// CHECK-DAG: %[[AXIS:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: call @rlx_cpu_cumsum_f64(%{{.*}}, %{{.*}}, %[[AXIS]], %[[ONE]], %[[ONE]])
// CHECK-NOT: linalg.generic
func.func @cumsum(%x: tensor<5x3xf64>) -> tensor<5x3xf64> {
  %c = rlx_mir.cumsum %x axis = 0 exclusive reverse : tensor<5x3xf64>
  return %c : tensor<5x3xf64>
}

// CHECK-LABEL: func.func @bf16
// CHECK-NOT: call @rlx_cpu_cumsum
// CHECK: linalg.generic
func.func @bf16(%x: tensor<2x6xbf16>) -> tensor<2x6xbf16> {
  %c = rlx_mir.cumsum %x axis = 1 : tensor<2x6xbf16>
  return %c : tensor<2x6xbf16>
}
