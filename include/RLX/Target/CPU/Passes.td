//===- Passes.td - RLX CPU backend passes -------------------*- tablegen -*-===//

#ifndef RLX_TARGET_CPU_PASSES_TD
#define RLX_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CpuMatmulToBlas : Pass<"rlx-cpu-matmul-to-blas"> {
  let summary = "Call BLAS sgemm for f32 linalg.matmul / batch_matmul on buffers";
  let description = [{
    After bufferization, every `linalg.matmul` and `linalg.batch_matmul` on
    f32 memrefs whose innermost dims are contiguous (row strides may be
    anything, so head slices of packed activations qualify) becomes a call to
    the RLX CPU runtime (`rlx_cpu_sgemm`, `rlx_cpu_sgemm_batched`), which calls
    the system BLAS (OpenBLAS on Debian). Transposes come from the indexing
    maps; a zero fill of the output right before the matmul becomes beta = 0.
    Other matmuls keep their linalg form (and become loops), and so do tiny
    ones (fewer than `min-flops` multiply-adds, e.g. one decode query against
    one head's keys): a BLAS call, which may wake its thread pool, costs more
    than the loops. The generic of a 2-D `rlx_mir.qmatmul` (tagged
    `rlx.qmatmul`, into a zero fill) becomes a call of the runtime's integer
    GEMM, `rlx_cpu_qgemm_s8` (i8 × i8 with zero points, exact i32
    accumulation; no BLAS involved).
  }];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"32768",
           "matmuls with fewer multiply-adds (static shapes) stay loops">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuOutlineKernels : Pass<"rlx-cpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Make every planned LIR kernel a private function on its buffers";
  let description = [{
    The CPU backend's entry from LIR: every `rlx_lir.kernel` in buffer form
    becomes a call, in plan order, of a private function
    `@<fn>__<kernel name>_<n>` whose arguments are the distinct buffers the
    kernel touches (an in-place output and the input it reuses are one
    argument). The function reads `bufferization.to_tensor ... restrict` of
    its inputs, holds the kernel's body and stores each yielded tensor with
    `bufferization.materialize_in_destination` into its output buffer; every
    `rlx_lir.view` becomes a `memref.view` of the arena at the planned byte
    offset. The MIR ops of the bodies then lower with
    `convert-rlx-mir-to-linalg`, One-Shot Bufferize writes the results
    straight into the planned buffers, and LLVM inlines the calls back.

    Why functions: `restrict` promises that no other tensor in the IR
    reaches the buffer or an alias of it. Arena views of the same bytes at
    different times (and in-place pairs) do alias; within one kernel's
    function they cannot (the plan keeps buffers that are live at one kernel
    apart), so the promise holds. Functions still on tensors (compiled
    without LIR) get one value per result: a value returned twice or an
    argument returned as it is is copied first.

    With `trace`, each kernel call is wrapped in calls of
    `rlx_trace_kernel_begin(i64 id)` and `rlx_trace_kernel_end(i64 id)`
    (external functions the runner provides) and the module gets
    `rlx.trace_kernels`: entry `id` is `{name, locations}`, the kernel
    function's name and the source positions of the ops it computes
    (`rlx-run --trace`).
  }];
  let options = [Option<"trace", "trace", "bool", "false",
                        "wrap each kernel call in rlx_trace_kernel_begin/end calls">];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def CpuExpandAllGather : Pass<"rlx-cpu-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "shard collectives over the whole grid as MPI_COMM_WORLD calls (before convert-shard-to-mpi)";
  let description = [{
    An all-reduce (sum, max, min, product) over a 1-D grid of static
    tensors becomes `mpi.allreduce` from the input's buffer into a new one
    on `mpi.comm_world`. LLVM 22's `convert-shard-to-mpi` would split a
    communicator on every call (a collective itself, never freed) and, with
    Open MPI, read the new communicator back as a 32-bit int; other
    all-reduces are left to it.

    LLVM 22's `mpi` dialect has an all-reduce but no all-gather, so
    `convert-shard-to-mpi` cannot lower `shard.all_gather` (the vocab-parallel
    LM head's logits). Before it runs, each `shard.all_gather` over a 1-D
    grid becomes: a zero tensor of the gathered shape, the rank's block
    inserted at `rank · block` along the gather axis
    (`shard.process_linear_index`), and a sum `shard.all_reduce`: the same
    values, with tp× the bytes of an all-gather on the wire. A multi-axis
    grid or a dynamic shape is an error naming the op.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::shard::ShardDialect",
                           "::mlir::mpi::MPIDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def CpuPrepareMPI : Pass<"rlx-cpu-prepare-mpi", "::mlir::ModuleOp"> {
  let summary = "Name the MPI ABI for the MPI calls of a tensor-parallel module";
  let description = [{
    Runs after `convert-shard-to-mpi`, before `mpi` lowers to LLVM. In a
    module holding `mpi` ops it sets the DLTI entry
    `"MPI:Implementation" = <implementation>` that upstream's MPI → LLVM
    lowering reads for the ABI (`OpenMPI`, the MPI that Debian ships and
    `mpirun` runs, or `MPICH`), unless the module names one already. In
    every module it erases the `shard.grid` symbols, which nothing
    references once the collectives are MPI calls (a grid still referenced
    is an error naming its user); a program of one rank (`--tp 1`) has a
    grid and no `mpi` op.
  }];
  let options = [
    Option<"implementation", "implementation", "std::string", /*default=*/"\"OpenMPI\"",
           "the MPI library the module will call: OpenMPI or MPICH">
  ];
  let dependentDialects = ["::mlir::DLTIDialect"];
}

def CpuOpenMPISymbols : Pass<"rlx-cpu-open-mpi-symbols", "::mlir::ModuleOp"> {
  let summary = "Correct the Open MPI reduction-op symbols of LLVM 22's MPI lowering";
  let description = [{
    LLVM 22's MPI → LLVM lowering names Open MPI's predefined reduction
    ops `ompi_mpi_<op>` (e.g. `ompi_mpi_sum`), but Open MPI exports them as
    `ompi_mpi_op_<op>` (`MPI_SUM` is `&ompi_mpi_op_sum`), so the program
    would not link. Runs after that lowering and renames each external
    global `ompi_mpi_{sum,max,min,prod,land,band,lor,bor,lxor,bxor,maxloc,
    minloc,replace,no_op}` and its uses. Other modules are left alone.
  }];
}

def CpuCheckLLVM : Pass<"rlx-cpu-check-llvm", "::mlir::ModuleOp"> {
  let summary = "Fail on any op the CPU pipeline left outside the LLVM dialect";
  let description = [{
    The last step of `rlx-lower-to-cpu`: an op that is not in the `llvm`
    dialect (or `builtin.module`) is a located error naming it, instead of a
    module that exits 0 here and that mlir-runner or the JIT then rejects
    (an unlowered `vector.print` did).
  }];
}


def CpuTopkCumsum : Pass<"rlx-cpu-topk-cumsum"> {
  let summary = "topk and cumsum on buffers as calls of the CPU runtime's sort and running sum";
  let description = [{
    After bufferization, the `linalg.generic` ops that `rlx_mir.topk` and
    `rlx_mir.cumsum` lower to (marked `rlx.topk` / `rlx.topk_ranks` and
    `rlx.cumsum`: a rank and a masked sum per element, quadratic in the
    axis) on f32 or f64 buffers become calls of the CPU runtime
    (`rlx_cpu_topk_f32|f64`: a partial sort per row, O(V log k);
    `rlx_cpu_cumsum_f32|f64`: a running sum, O(V)), with the buffers as
    unranked memrefs. topk's ranks are then dead and erased. topk's results
    and a forward cumsum's are the linalg forms' bit for bit (the order and
    its ties; sums in index order), so the CPU and the GPU path (which runs
    the linalg forms) sample the same tokens. A reverse cumsum (also
    cumsum's gradient) adds from the end, while the linalg form adds each
    output's terms in index order: the two round differently. Other element
    types keep their loops.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def CpuKernelScratch : Pass<"rlx-cpu-kernel-scratch", "::mlir::ModuleOp"> {
  let summary = "Kernels' temporary buffers in the arena of the function that calls them";
  let description = [{
    After bufferization, an outlined kernel still allocates its own
    temporaries (a matmul's product before its epilogue, a norm's row
    statistics): a `malloc` and a `free` per call, outside the arena plan,
    so the planned bytes understate what a run holds. This pass gives every
    private function whose every caller has an arena (`rlx_lir.arena`) a
    trailing scratch argument `memref<S x i8>` and turns its entry block's
    static `memref.alloc` ops into `memref.view`s of it (each 64-byte
    aligned, all live for the whole kernel: S is their sum). The callers
    pass a view of their arena past its planned bytes; kernels run one
    after another, so the arena grows by the largest S of its kernels once.
    The plan records it (`rlx_lir.plan`'s `scratch_bytes`; `arena_bytes`
    stays the planner's). Allocations in loops, of dynamic shape or
    returned, functions with a caller without an arena, and functions with
    an arena of their own keep theirs.

    Example: a fused gate|up matmul with SwiGLU at 128 rows allocated its
    13 MiB of temporaries on every call; now they are the arena's last
    13 MiB, reused by every kernel.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

#endif // RLX_TARGET_CPU_PASSES_TD
