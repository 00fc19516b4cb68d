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
    than the loops.
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
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // RLX_TARGET_CPU_PASSES_TD
