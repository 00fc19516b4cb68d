// A grid axis of size 0 is a located error before upstream's sharding
// passes divide by it (they raised SIGFPE; found by mutating lit tests,
// reproducer 028187b9 of the third reliability audit). rlx-opt puts
// rlx-verify-shard-grids in front of any pipeline that runs them.
// RUN: not rlx-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' 2>&1 | FileCheck %s
// RUN: rlx-opt %s -split-input-file --rlx-verify-shard-grids -verify-diagnostics

// CHECK: verify-shard-grids.mlir:[[@LINE+2]]:1: error: 'shard.grid' op axis 0 of grid @g has size 0; every axis needs at least one device
// expected-error @+1 {{'shard.grid' op axis 0 of grid @g has size 0; every axis needs at least one device}}
shard.grid @g(shape = 0)
func.func @softmax_split(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %y = rlx_mir.softmax %x1 axis = -1 : tensor<4x8xf32>
  %o = shard.shard %y to %s annotate_for_users : tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// CHECK: verify-shard-grids.mlir:[[@LINE+2]]:1: error: 'shard.grid' op axis 1 of grid @g2 has size 0
// expected-error @+1 {{'shard.grid' op axis 1 of grid @g2 has size 0}}
shard.grid @g2(shape = 2x0)
func.func @add(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g2 split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %y = rlx_mir.add %x1, %x1 : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A dynamic axis and axes of size 1 pass.
shard.grid @g3(shape = 1x?)
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
