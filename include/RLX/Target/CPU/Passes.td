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

def CpuInlineKernels : Pass<"rlx-cpu-inline-kernels"> {
  let summary = "Put planned LIR kernels' bodies inline, on tensor views of their buffers";
  let description = [{
    The CPU backend's entry from LIR: every `rlx_lir.kernel` in buffer form
    becomes its body, reading `bufferization.to_tensor` of its input buffers
    and storing each yielded tensor with `bufferization.materialize_in_destination`
    into its output buffer; every `rlx_lir.view` becomes a `memref.view` of
    the arena at the planned byte offset. The MIR ops of the bodies then lower
    with `convert-rlx-mir-to-linalg` and One-Shot Bufferize writes the results
    straight into the planned buffers. Functions still on tensors (compiled
    without LIR) get one value per result: a value returned twice or an
    argument returned as it is is copied first.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

#endif // RLX_TARGET_CPU_PASSES_TD
