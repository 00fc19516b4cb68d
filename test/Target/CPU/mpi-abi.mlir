// rlx-cpu-prepare-mpi names the MPI library a module calls (the DLTI entry
// upstream's MPI -> LLVM lowering reads for the ABI) and erases the device
// grids convert-shard-to-mpi left unreferenced; rlx-cpu-open-mpi-symbols
// gives Open MPI's predefined reduction ops the names libmpi exports
// (LLVM 22 writes ompi_mpi_max for MPI_MAX, Open MPI exports ompi_mpi_op_max).
// RUN: rlx-opt %s --split-input-file --rlx-cpu-prepare-mpi | FileCheck %s
// RUN: rlx-opt %s --split-input-file --rlx-cpu-prepare-mpi=implementation=MPICH | FileCheck %s --check-prefix=MPICH
// RUN: rlx-opt %s --split-input-file --rlx-cpu-prepare-mpi --convert-to-llvm --rlx-cpu-open-mpi-symbols | FileCheck %s --check-prefix=SYMS
// RUN: not rlx-opt %s --split-input-file --rlx-cpu-prepare-mpi=implementation=MVAPICH 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-NOT: shard.grid
// CHECK: func.func @rank
// MPICH-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// BAD: error: rlx-cpu-prepare-mpi: implementation must be OpenMPI or MPICH, got 'MVAPICH'
// SYMS-LABEL: llvm.func @rank
// SYMS: llvm.mlir.addressof @ompi_mpi_comm_world
// SYMS: llvm.call @MPI_Comm_rank
module {
  shard.grid @tp(shape = 2)
  func.func @rank() -> i32 {
    %comm = mpi.comm_world : !mpi.comm
    %rank = mpi.comm_rank(%comm) : i32
    return %rank : i32
  }
}

// -----

// A module that names its MPI already keeps it.
// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK: func.func @named
// MPICH-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @named() -> i32 {
    %comm = mpi.comm_world : !mpi.comm
    %rank = mpi.comm_rank(%comm) : i32
    return %rank : i32
  }
}

// -----

// Without mpi ops the module names no MPI, and its unused grid goes (the
// program of one rank, --tp 1, which the JIT could not translate with it).
// CHECK-LABEL: module {
// CHECK-NOT: shard.grid
// CHECK: func.func @no_mpi
module {
  shard.grid @unused(shape = 2)
  func.func @no_mpi(%x: f32) -> f32 {
    return %x : f32
  }
}

// -----

// Every predefined reduction op the module takes gets its exported name.
// SYMS-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// SYMS-DAG: llvm.mlir.global external @ompi_mpi_op_max()
// SYMS-DAG: llvm.mlir.global external @ompi_mpi_op_sum()
// SYMS-DAG: llvm.mlir.global external @ompi_mpi_float()
// SYMS-NOT: @ompi_mpi_max
// SYMS-NOT: @ompi_mpi_sum
// SYMS: llvm.mlir.addressof @ompi_mpi_op_max
// SYMS: llvm.call @MPI_Allreduce
// SYMS: llvm.mlir.addressof @ompi_mpi_op_sum
// SYMS: llvm.call @MPI_Allreduce
module {
  func.func @reduce(%a: memref<8xf32>, %b: memref<8xf32>) {
    %comm = mpi.comm_world : !mpi.comm
    mpi.allreduce(%a, %b, MPI_MAX, %comm) : memref<8xf32>, memref<8xf32>
    mpi.allreduce(%b, %a, MPI_SUM, %comm) : memref<8xf32>, memref<8xf32>
    return
  }
}
