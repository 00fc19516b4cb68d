// rlx_mir.qmatmul: round trips and its linalg lowering (batch dims folded
// into M, i8 widened to i32, zero points subtracted, multiply-add into a
// zero-filled i32 accumulator, tagged rlx.qmatmul for the CPU's integer
// GEMM), which rlx-cpu-matmul-to-blas turns into a runtime call on buffers.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// RUN: rlx-opt %s -split-input-file --convert-rlx-mir-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --rlx-cpu-matmul-to-blas | FileCheck %s --check-prefix=CPU

// LOWER-DAG: #[[$LHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// LOWER-DAG: #[[$RHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// LOWER-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @q
// LOWER-LABEL: func @q
func.func @q(%a: tensor<2x4x8xi8>, %b: tensor<6x8xi8>) -> tensor<2x4x6xi32> {
  // CHECK: rlx_mir.qmatmul %{{.*}}, %{{.*}} transpose_b lhs_zero_point = 3 lhs_unsigned : tensor<2x4x8xi8>, tensor<6x8xi8>
  // LOWER: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x8xi8> into tensor<8x8xi8>
  // LOWER: linalg.fill
  // LOWER: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
  // LOWER-SAME: rlx.qmatmul = array<i64: 3, 0, 1, 0>
  // LOWER: arith.extui {{.*}} : i8 to i32
  // LOWER: arith.subi
  // LOWER: arith.extsi {{.*}} : i8 to i32
  // LOWER: arith.muli
  // LOWER: arith.addi
  // LOWER: tensor.expand_shape %{{.*}} output_shape [2, 4, 6] : tensor<8x6xi32> into tensor<2x4x6xi32>
  // CPU-LABEL: func @q
  // CPU-NOT: linalg.fill
  // CPU: call @rlx_cpu_qgemm_s8(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32, %c3_i32, %c0_i32, %c1_i32, %c0_i32, %c1_i32)
  // CPU-NOT: linalg.generic
  %y = rlx_mir.qmatmul %a, %b transpose_b lhs_zero_point = 3 lhs_unsigned : tensor<2x4x8xi8>, tensor<6x8xi8>
  return %y : tensor<2x4x6xi32>
}

// -----

// CHECK-LABEL: func @plain
func.func @plain(%a: tensor<4x8xi8>, %b: tensor<8x6xi8>) -> tensor<4x6xi32> {
  // CHECK: rlx_mir.qmatmul %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8x6xi8>
  %y = rlx_mir.qmatmul %a, %b : tensor<4x8xi8>, tensor<8x6xi8>
  return %y : tensor<4x6xi32>
}
