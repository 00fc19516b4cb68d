// The rlx_mir ShardingInterface models under upstream sharding-propagation
// and shard-partition: per-rank shapes and attributes, the collectives a split
// reduction needs, and located errors for splits an op cannot compute.
// RUN: rlx-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" -split-input-file -verify-diagnostics | FileCheck %s

// Attention split by heads: each rank runs its 2 query heads on its KV head.
// CHECK-LABEL: func.func @attention_heads(
// CHECK-SAME: %arg0: tensor<1x5x32xf32>, %arg1: tensor<1x5x16xf32>, %arg2: tensor<1x5x16xf32>
// CHECK: %[[A:.*]] = rlx_mir.attention %arg0, %arg1, %arg2 heads = 2, kv_heads = 1, head_dim = 16 causal : tensor<1x5x32xf32>, tensor<1x5x16xf32>, tensor<1x5x16xf32>
// CHECK: shard.all_gather %[[A]] on @g grid_axes = [0] gather_axis = 2 : tensor<1x5x32xf32> -> tensor<1x5x64xf32>
shard.grid @g(shape = 2)
func.func @attention_heads(%q: tensor<1x5x64xf32>, %k: tensor<1x5x32xf32>, %v: tensor<1x5x32xf32>) -> tensor<1x5x64xf32> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %q1 = shard.shard %q to %s annotate_for_users : tensor<1x5x64xf32>
  %k1 = shard.shard %k to %s annotate_for_users : tensor<1x5x32xf32>
  %v1 = shard.shard %v to %s annotate_for_users : tensor<1x5x32xf32>
  %a = rlx_mir.attention %q1, %k1, %v1 heads = 4, kv_heads = 2, head_dim = 16 causal : tensor<1x5x64xf32>, tensor<1x5x32xf32>, tensor<1x5x32xf32>
  %o = shard.shard %a to %r annotate_for_users : tensor<1x5x64xf32>
  return %o : tensor<1x5x64xf32>
}

// -----

// A sum over a split axis is a local sum and an all-reduce.
// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME: %arg0: tensor<4x4xf32>
// CHECK: %[[S:.*]] = rlx_mir.reduce sum %arg0 axes = [1] : tensor<4x4xf32>
// CHECK: shard.all_reduce %[[S]] on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
shard.grid @g(shape = 2)
func.func @reduce_sum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %y = rlx_mir.reduce sum %x1 axes = [1] : tensor<4x8xf32>
  %o = shard.shard %y to %r annotate_for_users : tensor<4xf32>
  return %o : tensor<4xf32>
}

// -----

// A row-parallel matmul (contraction dim split) is followed by an all-reduce.
// CHECK-LABEL: func.func @row_parallel(
// CHECK-SAME: %arg0: tensor<1x3x32xf32>, %arg1: tensor<16x32xf32>
// CHECK: %[[M:.*]] = rlx_mir.matmul %arg0, %arg1 transpose_b : tensor<1x3x32xf32>, tensor<16x32xf32>
// CHECK: %[[R:.*]] = shard.all_reduce %[[M]] on @g grid_axes = [0] : tensor<1x3x16xf32> -> tensor<1x3x16xf32>
// CHECK: return %[[R]]
shard.grid @g(shape = 2)
func.func @row_parallel(%x: tensor<1x3x64xf32>, %w: tensor<16x64xf32>) -> tensor<1x3x16xf32> {
  %sx = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %sw = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %sx annotate_for_users : tensor<1x3x64xf32>
  %w1 = shard.shard %w to %sw annotate_for_users : tensor<16x64xf32>
  %y = rlx_mir.matmul %x1, %w1 transpose_b : tensor<1x3x64xf32>, tensor<16x64xf32>
  %o = shard.shard %y to %r annotate_for_users : tensor<1x3x16xf32>
  return %o : tensor<1x3x16xf32>
}

// -----

// A broadcast operand keeps its size-1 dim whole while the result is split.
// CHECK-LABEL: func.func @broadcast_mul(
// CHECK-SAME: %arg0: tensor<4x1xf32>, %arg1: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: rlx_mir.mul %arg0, %arg1 : tensor<4x1xf32>, tensor<8xf32>
shard.grid @g(shape = 2)
func.func @broadcast_mul(%a: tensor<8x1xf32>, %b: tensor<8xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s annotate_for_users : tensor<8x1xf32>
  %y = rlx_mir.mul %a1, %b : tensor<8x1xf32>, tensor<8xf32>
  %o = shard.shard %y to %s annotate_for_users : tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

// Reshape moves the split to the lead dim of its group (heads), keeping the
// dynamic sequence; transposes permute it.
// CHECK-LABEL: func.func @reshape_heads(
// CHECK-SAME: %arg0: tensor<2x?x32xf32>) -> tensor<2x?x2x16xf32>
// CHECK: %[[R:.*]] = rlx_mir.reshape %arg0 [2, -1, 2, 16] : tensor<2x?x32xf32>
// CHECK: rlx_mir.transpose %[[R]] [0, 2, 1, 3] : tensor<2x?x2x16xf32>
shard.grid @g(shape = 2)
func.func @reshape_heads(%x: tensor<2x?x64xf32>) -> tensor<2x?x4x16xf32> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<2x?x64xf32>
  %y = rlx_mir.reshape %x1 [2, -1, 4, 16] : tensor<2x?x64xf32>
  %t = rlx_mir.transpose %y [0, 2, 1, 3] : tensor<2x?x4x16xf32>
  %u = rlx_mir.transpose %t [0, 2, 1, 3] : tensor<2x4x?x16xf32>
  %o = shard.shard %u to %s annotate_for_users : tensor<2x?x4x16xf32>
  return %o : tensor<2x?x4x16xf32>
}

// -----

// GQA's KV expansion (reshape, broadcast over the group, reshape) keeps each
// rank's KV heads next to its query heads.
// CHECK-LABEL: func.func @gqa_expand(
// CHECK-SAME: %arg0: tensor<1x1x8x16xf32>) -> tensor<1x2x8x16xf32>
// CHECK: rlx_mir.reshape %arg0 [1, 1, 1, 8, 16]
// CHECK: rlx_mir.broadcast %{{.*}} [1, 1, 2, 8, 16] : tensor<1x1x1x8x16xf32>
// CHECK: rlx_mir.reshape %{{.*}} [1, 2, 8, 16] : tensor<1x1x2x8x16xf32>
shard.grid @g(shape = 2)
func.func @gqa_expand(%k: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %k1 = shard.shard %k to %s annotate_for_users : tensor<1x2x8x16xf32>
  %a = rlx_mir.reshape %k1 [1, 2, 1, 8, 16] : tensor<1x2x8x16xf32>
  %b = rlx_mir.broadcast %a [1, 2, 2, 8, 16] : tensor<1x2x1x8x16xf32>
  %c = rlx_mir.reshape %b [1, 4, 8, 16] : tensor<1x2x2x8x16xf32>
  %o = shard.shard %c to %s annotate_for_users : tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @glu_split(%x: tensor<1x5x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x5x128xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %w1 = shard.shard %w to %s annotate_for_users : tensor<256x64xf32>
  %x1 = shard.shard %x to %r annotate_for_users : tensor<1x5x64xf32>
  // expected-error @+1 {{cannot be partitioned over the device grid: a gated (glu) fused_matmul's output features are split; shard before fusion}}
  %y = rlx_mir.fused_matmul %x1, %w1 transpose_b activation silu glu : tensor<1x5x64xf32>, tensor<256x64xf32>
  %o = shard.shard %y to %r annotate_for_users : tensor<1x5x128xf32>
  return %o : tensor<1x5x128xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @softmax_split(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  // expected-error @+1 {{cannot be partitioned over the device grid: the softmax axis is split}}
  %y = rlx_mir.softmax %x1 axis = -1 : tensor<4x8xf32>
  %o = shard.shard %y to %s annotate_for_users : tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// A vocab-parallel embedding: each rank looks up the ids in its block of
// rows (ids clamped to the whole vocabulary first, as gather does), zeros the
// others with a select, and a sum all-reduce gives every rank the rows.
// CHECK-LABEL: func.func @vocab_gather(
// CHECK-SAME: %arg0: tensor<48x8xf32>, %arg1: tensor<1x3xi64>) -> tensor<1x3x8xf32>
// CHECK: %[[RANK:.*]] = shard.process_linear_index on @g : index
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : index to i64
// CHECK: %[[RT:.*]] = tensor.from_elements %[[R]] : tensor<i64>
// CHECK: %[[L:.*]]:2 = rlx_mir.elementwise ins(%arg1, %[[RT]] : tensor<1x3xi64>, tensor<i64>) -> tensor<1x3xi64>, tensor<1x3xi1>
// CHECK: arith.constant 95 : i64
// CHECK: %[[G:.*]] = rlx_mir.gather %arg0[%[[L]]#0] : tensor<48x8xf32>, tensor<1x3xi64>
// CHECK: %[[M:.*]] = rlx_mir.reshape %[[L]]#1 [1, 3, 1] : tensor<1x3xi1>
// CHECK: %[[S:.*]] = rlx_mir.select %[[M]], %[[G]], %{{.*}} : tensor<1x3x1xi1>, tensor<1x3x8xf32>, tensor<f32>
// CHECK: shard.all_reduce %[[S]] on @g grid_axes = [0] : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
shard.grid @g(shape = 2)
func.func @vocab_gather(%t: tensor<96x8xf32>, %i: tensor<1x3xi64>) -> tensor<1x3x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %t1 = shard.shard %t to %s annotate_for_users : tensor<96x8xf32>
  %i1 = shard.shard %i to %r annotate_for_users : tensor<1x3xi64>
  %y = rlx_mir.gather %t1[%i1] : tensor<96x8xf32>, tensor<1x3xi64>
  %o = shard.shard %y to %r annotate_for_users : tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @attention_kv_heads(%q: tensor<1x5x64xf32>, %k: tensor<1x5x32xf32>) -> tensor<1x5x64xf32> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s annotate_for_users : tensor<1x5x64xf32>
  %k1 = shard.shard %k to %s annotate_for_users : tensor<1x5x32xf32>
  // expected-error @+1 {{4 ranks do not divide num_heads = 4 and num_kv_heads = 2}}
  %a = rlx_mir.attention %q1, %k1, %k1 heads = 4, kv_heads = 2, head_dim = 16 : tensor<1x5x64xf32>, tensor<1x5x32xf32>, tensor<1x5x32xf32>
  %o = shard.shard %a to %s annotate_for_users : tensor<1x5x64xf32>
  return %o : tensor<1x5x64xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @reshape_not_divisible(%x: tensor<2x8x24xf32>) -> tensor<2x8x2x12xf32> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<2x8x24xf32>
  // expected-error @+1 {{cannot be partitioned: 4 ranks do not divide input dim 2 (size 24) and output dim 2 (size 2)}}
  %y = rlx_mir.reshape %x1 [2, 8, 2, 12] : tensor<2x8x24xf32>
  %o = shard.shard %y to %s annotate_for_users : tensor<2x8x2x12xf32>
  return %o : tensor<2x8x2x12xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @causal_mask_keys(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %s = shard.sharding @g split_axes = [[], [], [], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<1x2x4x4xf32>
  // expected-error @+1 {{a query or key dim is split (their positions would shift)}}
  %y = rlx_mir.causal_mask %x1 : tensor<1x2x4x4xf32>
  %o = shard.shard %y to %s annotate_for_users : tensor<1x2x4x4xf32>
  return %o : tensor<1x2x4x4xf32>
}
