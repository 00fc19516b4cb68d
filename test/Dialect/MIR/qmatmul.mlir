// rlx_mir.qmatmul: round trips and its linalg lowering (i8 widened to i32,
// zero points subtracted, multiply-add into a zero-filled i32 accumulator).
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=LOWER

// LOWER-DAG: #[[$LHS:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// LOWER-DAG: #[[$RHS:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// LOWER-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @q
// LOWER-LABEL: func @q
func.func @q(%a: tensor<2x4x8xi8>, %b: tensor<6x8xi8>) -> tensor<2x4x6xi32> {
  // CHECK: rlx_mir.qmatmul %{{.*}}, %{{.*}} transpose_b lhs_zero_point = 3 lhs_unsigned : tensor<2x4x8xi8>, tensor<6x8xi8>
  // LOWER: linalg.fill
  // LOWER: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
  // LOWER: arith.extui {{.*}} : i8 to i32
  // LOWER: arith.subi
  // LOWER: arith.extsi {{.*}} : i8 to i32
  // LOWER: arith.muli
  // LOWER: arith.addi
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
