// rlx-cpu-matmul-to-blas: f32 linalg.matmul / batch_matmul on memrefs with a
// unit innermost stride become runtime sgemm calls; transposes come from the
// indexing maps, a zero fill right before the matmul becomes beta = 0, and
// anything else keeps its linalg form.
// RUN: rlx-opt %s --rlx-cpu-matmul-to-blas=min-flops=0 | FileCheck %s
// RUN: rlx-opt %s --rlx-cpu-matmul-to-blas | FileCheck %s --check-prefix=SMALL

// CHECK-DAG: func.func private @rlx_cpu_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @rlx_cpu_sgemm_batched(

// With the default min-flops (32768), these matmuls (at most 16384
// multiply-adds) are too small to be worth a BLAS call.
// SMALL-NOT: call @rlx_cpu_sgemm

// CHECK-LABEL: func @mm
// The fill is gone: beta = 0. rhs is [N, K]: transpose_b = 1.
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
// CHECK: call @rlx_cpu_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[F]], %[[T]], %[[ZERO]])
// CHECK-NOT: linalg.matmul
func.func @mm(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>)
  return
}

// CHECK-LABEL: func @bmm
// No fill before it: accumulate (beta = 1).
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @rlx_cpu_sgemm_batched({{.*}}, %[[ONE]])
func.func @bmm(%a: memref<4x8x16xf32>, %b: memref<4x16x32xf32>, %c: memref<4x8x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x16xf32>, memref<4x16x32xf32>) outs(%c : memref<4x8x32xf32>)
  return
}

// Not f32: stays linalg (becomes loops).
// CHECK-LABEL: func @f16
// CHECK: linalg.matmul
// CHECK-NOT: call
func.func @f16(%a: memref<8x16xf16>, %b: memref<16x32xf16>, %c: memref<8x32xf16>) {
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x32xf16>) outs(%c : memref<8x32xf16>)
  return
}

// A row slice (row stride 64, offset 16) reaches BLAS as lda through the descriptor.
// CHECK-LABEL: func @strided
// CHECK: memref.cast %arg0 : memref<8x16xf32, strided<[64, 1], offset: 16>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @rlx_cpu_sgemm
func.func @strided(%a: memref<8x16xf32, strided<[64, 1], offset: 16>>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[64, 1], offset: 16>>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// A non-unit innermost stride cannot be described to sgemm.
// CHECK-LABEL: func @inner_strided
// CHECK: linalg.matmul
// CHECK-NOT: call
func.func @inner_strided(%a: memref<8x16xf32, strided<[1, 8]>>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[1, 8]>>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}
