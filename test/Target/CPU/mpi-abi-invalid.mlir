// rlx-cpu-prepare-mpi runs after convert-shard-to-mpi: a collective that
// pass did not lower still references its device grid, a located error.
// RUN: rlx-opt %s --rlx-cpu-prepare-mpi --verify-diagnostics

module {
  shard.grid @tp(shape = 2)
  func.func @unlowered(%x: tensor<4xf32>) -> tensor<4xf32> {
    %comm = mpi.comm_world : !mpi.comm
    // expected-error @+1 {{rlx-cpu-prepare-mpi: 'shard.all_reduce' still uses the device grid @tp after convert-shard-to-mpi (a collective it does not lower)}}
    %r = shard.all_reduce %x on @tp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
