// rlx-mir-shard{ep} and rlx-mir-flatten-grid refuse what they cannot split
// or flatten, with located errors.
// RUN: not rlx-opt %s -split-input-file --pass-pipeline="builtin.module(rlx-mir-shard{tp=4 ep=3})" 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not rlx-opt %s -split-input-file --pass-pipeline="builtin.module(rlx-mir-shard{tp=4 ep=2})" 2>&1 | FileCheck %s --check-prefix=EP2
// RUN: not rlx-opt %s -split-input-file --pass-pipeline="builtin.module(rlx-mir-flatten-grid)" 2>&1 | FileCheck %s --check-prefix=FLAT

// DIVIDE: error: rlx-mir-shard: ep = 3 must divide tp = 4 (expert-parallel groups of tp/ep ranks; 0: tp)

// An intermediate size of 3 over groups of 2 ranks.
// EP2: shard-experts-ep-invalid.mlir:[[# @LINE + 2]]:{{.*}}: error: rlx-mir-shard: tp/ep = 2 does not divide the intermediate size (3) of 'model.layers.0.mlp.experts.gate_up_proj' (dim 1, gate|up)
func.func @odd(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
               %gu: tensor<4x6x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
               %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x6xf32> {
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x6x8xf32>, tensor<6xi64>
  return %h : tensor<6x6xf32>
}

// -----

// Gate|up rows returned as they are: split by column, nothing sums them.
func.func @rows_escape(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                       %gu: tensor<4x16x8xf32> {rlx.param = "model.layers.0.mlp.experts.gate_up_proj"},
                       %ids: tensor<6xi64> {rlx.input = "ids"}) -> tensor<6x16xf32> {
  // EP2: shard-experts-ep-invalid.mlir:[[# @LINE + 1]]:{{.*}}: error: rlx-mir-shard: the gate|up rows of 'model.layers.0.mlp.experts.gate_up_proj' reach more than the down projection
  %h = rlx_mir.grouped_matmul %x, %gu, %ids : tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>
  return %h : tensor<6x16xf32>
}

// -----

// ep on a dense model: nothing to split by expert.
// EP2: error: rlx-mir-shard: ep = 2 < tp = 4 splits stacked MoE experts
func.func @dense(%x: tensor<6x8xf32> {rlx.input = "hidden_states"},
                 %w: tensor<16x8xf32> {rlx.param = "model.layers.0.mlp.up_proj.weight"}) -> tensor<6x16xf32> {
  %y = rlx_mir.matmul %x, %w transpose_b : tensor<6x8xf32>, tensor<16x8xf32>
  return %y : tensor<6x16xf32>
}

// -----

// A collective over one axis of a [2, 2] grid: a sub-group, which the
// runtimes do not run. (An axis of size 1 groups nobody: [1] of [1, 4] is
// every rank.)
shard.grid @tp(shape = 2x2)
func.func @sub_group(%x: tensor<4xf32>) -> tensor<4xf32> {
  // FLAT: shard-experts-ep-invalid.mlir:[[# @LINE + 1]]:{{.*}}: error: rlx-mir-flatten-grid: this collective runs over grid axes [0] of @tp (2 axes)
  %r = shard.all_reduce %x on @tp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// FLAT-LABEL: shard.grid @wide(shape = 4)
// FLAT: shard.all_reduce %{{.*}} on @wide grid_axes = [0]
shard.grid @wide(shape = 1x4)
func.func @size_one_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = shard.all_reduce %x on @wide grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}
