// Expert tensor parallelism: rlx-mir-shard{tp=4 ep=2} puts the experts on a
// [2, 2] grid: experts over axis 0, each expert's intermediate dim over
// axis 1 (gate|up by output feature, part by part, so a rank holds block s
// of gate and of up side by side; down by input feature), everything else
// over both axes. Rank r = 2g + s owns experts [2g, 2g + 2): the owned-id
// test divides the linear index by the group's 2 ranks. The gate|up rows
// stay on their rank; the down projection's partial rows (other experts'
// zeros, this block of the intermediate dim) are summed over every rank,
// which rlx-mir-flatten-grid writes over the 1-D grid of 4.
// RUN: rlx-opt %s --pass-pipeline="builtin.module(rlx-mir-shard{tp=4 ep=2},func.func(sharding-propagation,rlx-mir-stepwise-reshard,shard-partition),rlx-mir-flatten-grid)" -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: shard.grid @tp(shape = 4)
// CHECK-LABEL: func.func @experts(
// CHECK-SAME: %arg1: tensor<2x8x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"}
// CHECK-SAME: %arg2: tensor<2x8x4xf32> {rlx.param = "model.layers.0.mlp.experts.down_proj"}
// CHECK: %[[R:.*]] = shard.process_linear_index on @tp
// CHECK: ^bb0(%[[ID:.*]]: i64, %[[RANK:.*]]: i64):
// CHECK: %[[G:.*]] = arith.divsi %[[RANK]], %c2_i64
// CHECK: arith.muli %[[G]], %c2_i64
// CHECK: %[[GU:.*]] = rlx_mir.grouped_matmul %arg0, %arg1, %{{.*}} zero_out_of_range : tensor<6x8xf32>, tensor<2x8x8xf32>, tensor<6xi64>
// CHECK-NOT: shard.all_reduce
// Gate is [0, 4) of the rank's 8 columns, up [4, 8).
// CHECK: %[[GS:.*]] = rlx_mir.reshape %[[GU]] [6, 1, 8]
// CHECK: rlx_mir.slice %[[GS]] offsets [0, 0, 0] sizes [-1, -1, 4]
// CHECK: %[[US:.*]] = rlx_mir.reshape %[[GU]] [6, 1, 8]
// CHECK: rlx_mir.slice %[[US]] offsets [0, 0, 4] sizes [-1, -1, 4]
// CHECK: %[[D:.*]] = rlx_mir.grouped_matmul %{{.*}}, %arg2, %{{.*}} zero_out_of_range : tensor<6x4xf32>, tensor<2x8x4xf32>, tensor<6xi64>
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

// Llama-4's layout: gate_up [E, H, 2I] and down [E, I, H], transposed to
// the grouped_matmuls' [E, N, K]: the intermediate dims (2 of gate_up, 1 of
// down) are found through the transposes, and the grouped_matmuls read the
// weights split by expert (not gathered whole).
// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: %arg1: tensor<2x8x8xf32> {rlx.param = "model.layers.0.feed_forward.experts.gate_up_proj"}
// CHECK-SAME: %arg2: tensor<2x4x8xf32> {rlx.param = "model.layers.0.feed_forward.experts.down_proj"}
// CHECK-NOT: shard.all_gather
// CHECK: rlx_mir.grouped_matmul {{.*}} : tensor<6x8xf32>, tensor<2x8x8xf32>, tensor<6xi64>
// CHECK: rlx_mir.grouped_matmul {{.*}} : tensor<6x4xf32>, tensor<2x8x4xf32>, tensor<6xi64>
func.func @transposed(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                      %gu: tensor<4x8x16xf32> {rlx.param = "model.layers.0.feed_forward.experts.gate_up_proj"},
                      %down: tensor<4x8x8xf32> {rlx.param = "model.layers.0.feed_forward.experts.down_proj"},
                      %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x8xf32> {
  %gut = rlx_mir.transpose %gu [0, 2, 1] : tensor<4x8x16xf32>
  %dt = rlx_mir.transpose %down [0, 2, 1] : tensor<4x8x8xf32>
  %h = rlx_mir.grouped_matmul %x, %gut, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  %g = rlx_mir.slice %h offsets [0, 0] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %u = rlx_mir.slice %h offsets [0, 8] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %a = rlx_mir.silu %g : tensor<6x8xf32>
  %m = rlx_mir.mul %a, %u : tensor<6x8xf32>, tensor<6x8xf32>
  %y = rlx_mir.grouped_matmul %m, %dt, %ids : tensor<6x8xf32>, tensor<4x8x8xf32>, tensor<6xi64>
  return %y : tensor<6x8xf32>
}

// -----

// A vocab-parallel LM head's logits, returned whole: split over both axes,
// gathered in one-axis steps (axis 1, then axis 0), joined into one
// all-gather over the 1-D grid.
// CHECK-LABEL: func.func @logits(
// CHECK-SAME: %arg1: tensor<4x8xf32> {rlx.param = "lm_head.weight"}
// CHECK: %[[L:.*]] = rlx_mir.matmul
// CHECK-NEXT: shard.all_gather %[[L]] on @tp grid_axes = [0] gather_axis = 1 : tensor<6x4xf32> -> tensor<6x16xf32>
// CHECK-NOT: shard.all_gather
func.func @logits(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                  %w: tensor<16x8xf32> {rlx.param = "lm_head.weight"},
                  %gu: tensor<4x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
                  %down: tensor<4x8x8xf32> {rlx.param = "model.layers.0.mlp.experts.down_proj"},
                  %ids: tensor<6xi64> {rlx.input = "ids"}) -> (tensor<6x16xf32>, tensor<6x8xf32>) {
  %l = rlx_mir.matmul %x, %w transpose_b : tensor<6x8xf32>, tensor<16x8xf32>
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  %g = rlx_mir.slice %h offsets [0, 0] sizes [-1, 8] strides [1, 1] : tensor<6x16xf32>
  %y = rlx_mir.grouped_matmul %g, %down, %ids : tensor<6x8xf32>, tensor<4x8x8xf32>, tensor<6xi64>
  return %l, %y : tensor<6x16xf32>, tensor<6x8xf32>
}
