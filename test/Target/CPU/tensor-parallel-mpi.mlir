// The per-rank program of a tensor-parallel model on the CPU path: its
// collectives become LIR kernels in the plan, then MPI calls in Open MPI's
// ABI (named in the module's DLTI): an all-reduce over the whole grid is
// MPI_Allreduce on MPI_COMM_WORLD from flat buffers (rlx-cpu-lower-collectives;
// LLVM 22's convert-shard-to-mpi splits a communicator per call and counts
// only a buffer's first dim), a shard.all_gather, which LLVM 22's mpi dialect
// cannot express, a zero-padded all-reduce of the rank's block (its rank from
// convert-shard-to-mpi), and Open MPI's reduction ops get their exported
// names (ompi_mpi_op_sum).
// RUN: rlx-opt %s --convert-rlx-mir-to-lir | FileCheck %s --check-prefix=LIR
// RUN: rlx-opt %s --rlx-lower-to-cpu | FileCheck %s --check-prefix=LLVM
// RUN: rlx-opt %s --rlx-lower-to-cpu=lir=false | FileCheck %s --check-prefix=LLVM

// LIR-LABEL: func.func @row_parallel_then_gather(
// LIR: rlx_lir.kernel "matmul"
// LIR: %[[R:.*]] = rlx_lir.kernel "all_reduce" ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>) -> tensor<4x16xf32> {
// LIR: shard.all_reduce %{{.*}} on @tp grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
// LIR: rlx_lir.kernel "all_gather" ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x16xf32>)

// LLVM: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// LLVM-NOT: shard.
// LLVM-DAG: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_op_sum()
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_float()
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_comm_world()
// LLVM-NOT: MPI_Comm_split
// LLVM: llvm.call @MPI_Allreduce
// LLVM: llvm.call @MPI_Comm_rank
// LLVM: llvm.call @MPI_Allreduce
module {
  shard.grid @tp(shape = 2)
  func.func @row_parallel_then_gather(%x: tensor<4x32xf32>, %w: tensor<16x32xf32>,
                                      %v: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %m = rlx_mir.matmul %x, %w transpose_b : tensor<4x32xf32>, tensor<16x32xf32>
    %r = shard.all_reduce %m on @tp grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
    %h = rlx_mir.matmul %r, %v transpose_b : tensor<4x16xf32>, tensor<8x16xf32>
    %g = shard.all_gather %h on @tp grid_axes = [0] gather_axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
    return %g : tensor<4x16xf32>
  }
}
