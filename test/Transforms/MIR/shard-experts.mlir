// Expert parallelism under rlx-mir-shard: stacked experts are split by
// expert, each rank runs its experts' rows (ids of other ranks' experts
// become -1, a grouped_matmul with zero_out_of_range skips them), and the
// gate|up rows that reach only the down projection (same ids) stay on their
// rank: one all-reduce, after the down projection. A grouped_matmul whose
// rows reach anything else is all-reduced itself.
// RUN: rlx-opt %s --pass-pipeline="builtin.module(rlx-mir-shard{tp=2},func.func(sharding-propagation,shard-partition))" -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @experts(
// CHECK-SAME: %arg1: tensor<2x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"}
// CHECK-SAME: %arg2: tensor<2x8x8xf32> {rlx.param = "model.layers.0.mlp.experts.down_proj"}
// Rank r's experts are [2r, 2r + 2): id - 2r there, -1 elsewhere (after the
// op's clamp to [0, 4)).
// CHECK: %[[R:.*]] = shard.process_linear_index on @tp
// CHECK: rlx_mir.elementwise ins(%arg3,
// CHECK: ^bb0(%[[ID:.*]]: i64, %[[RANK:.*]]: i64):
// CHECK: %[[LO:.*]] = arith.maxsi %[[ID]], %c0_i64
// CHECK: %[[C:.*]] = arith.minsi %[[LO]], %c3_i64
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %c2_i64
// CHECK: %[[E:.*]] = arith.subi %[[C]], %[[FIRST]]
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[E]], %c0_i64
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[E]], %c2_i64
// CHECK: %[[MINE:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: arith.select %[[MINE]], %[[E]], %c-1_i64
// CHECK: %[[GU:.*]] = rlx_mir.grouped_matmul %arg0, %arg1, %{{.*}} zero_out_of_range : tensor<6x8xf32>, tensor<2x16x8xf32>, tensor<6xi64>
// CHECK-NOT: shard.all_reduce %[[GU]]
// CHECK: %[[D:.*]] = rlx_mir.grouped_matmul %{{.*}}, %arg2, %{{.*}} zero_out_of_range : tensor<6x8xf32>, tensor<2x8x8xf32>, tensor<6xi64>
// CHECK: shard.all_reduce %[[D]] on @tp grid_axes = [0]
// CHECK-NEXT: return
func.func @experts(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                   %gu: tensor<4x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
                   %down: tensor<4x8x8xf32> {rlx.param = "model.layers.0.mlp.experts.down_proj"},
                   %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x8xf32> {
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  %g = rlx_mir.slice %h offsets [0, 0] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %u = rlx_mir.slice %h offsets [0, 8] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %a = rlx_mir.silu %g : tensor<6x8xf32>
  %m = rlx_mir.mul %a, %u : tensor<6x8xf32>, tensor<6x8xf32>
  %y = rlx_mir.grouped_matmul %m, %down, %ids : tensor<6x8xf32>, tensor<4x8x8xf32>, tensor<6xi64>
  return %y : tensor<6x8xf32>
}

// -----

// The gate|up rows also reach the output: summed where they are made.
// CHECK-LABEL: func.func @rows_escape(
// CHECK: %[[GU:.*]] = rlx_mir.grouped_matmul %arg0, %arg1, %{{.*}} zero_out_of_range
// CHECK: shard.all_reduce %[[GU]]
func.func @rows_escape(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                       %gu: tensor<4x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
                       %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x16xf32> {
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  return %h : tensor<6x16xf32>
}
