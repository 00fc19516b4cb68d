// rlx-mir-stepwise-reshard: a reshard that moves several grid axes of a dim
// becomes one-axis steps (shard-partition has a partition for each): axes
// leave their dim last first, then the target's axes join in order.
// RUN: rlx-opt %s --pass-pipeline="builtin.module(func.func(rlx-mir-stepwise-reshard))" | FileCheck %s

shard.grid @tp(shape = 2x2)

// [[], [0, 1]] -> [[]]: unsplit axis 1, then axis 0.
// CHECK-LABEL: func.func @gather_both
// CHECK: %[[S0:.*]] = shard.sharding @tp split_axes = {{\[\[\], \[0, 1\]\]}}
// CHECK: %[[P:.*]] = shard.shard %arg0 to %[[S0]]
// CHECK: %[[S1:.*]] = shard.sharding @tp split_axes = {{\[\[\], \[0\]\]}}
// CHECK: %[[U1:.*]] = shard.shard %[[P]] to %[[S1]] annotate_for_users
// CHECK: %[[R1:.*]] = shard.shard %[[U1]] to %[[S1]] :
// CHECK: shard.shard %[[R1]] to %{{.*}} annotate_for_users
func.func @gather_both(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @tp split_axes = [[], [0, 1]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<4x8xf32>
  %r = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %b = shard.shard %a to %r annotate_for_users : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// [[]] -> [[0, 1]]: split over axis 0, then axis 1.
// CHECK-LABEL: func.func @slice_both
// CHECK: %[[T:.*]] = shard.sharding @tp split_axes = {{\[\[0, 1\]\]}}
// CHECK: %[[S1:.*]] = shard.sharding @tp split_axes = {{\[\[0\]\]}}
// CHECK: %[[U1:.*]] = shard.shard %{{.*}} to %[[S1]] annotate_for_users
// CHECK: %[[R1:.*]] = shard.shard %[[U1]] to %[[S1]] :
// CHECK: shard.shard %[[R1]] to %[[T]] annotate_for_users
func.func @slice_both(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<4x8xf32>
  %r = shard.sharding @tp split_axes = [[0, 1]] : !shard.sharding
  %b = shard.shard %a to %r annotate_for_users : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// One axis: left as it is.
// CHECK-LABEL: func.func @one_axis
// CHECK-COUNT-2: shard.shard %
// CHECK-NOT: shard.shard %
// CHECK: return
func.func @one_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<4x8xf32>
  %r = shard.sharding @tp split_axes = [[0, 1]] : !shard.sharding
  %b = shard.shard %a to %r annotate_for_users : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
