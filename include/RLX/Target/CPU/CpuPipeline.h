//===- CpuPipeline.h - RLX's CPU backend --------------------------*- C++ -*-===//
//
// The CPU path: from any RLX stage (HIR, MIR, LIR) through fusion, MIR → LIR
// (kernels, One-Shot Bufferize, the arena plan and its check), the kernels'
// bodies inlined on their buffers and lowered through linalg, BLAS calls for
// matmuls and generated loops for the rest, down to the LLVM dialect.
// Registered as the `rlx-lower-to-cpu` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_CPUPIPELINE_H
#define RLX_TARGET_CPU_CPUPIPELINE_H

#include "RLX/Target/CompileOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::rlx {

/// rlx-lower-to-cpu's options: the Common, Cpu and CpuPipeline groups of
/// CompileOptions.def.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
#define RLX_SELECT_Common(...) __VA_ARGS__
#define RLX_SELECT_Codegen(...)
#define RLX_SELECT_Cpu(...) __VA_ARGS__
#define RLX_SELECT_CpuPipeline(...) __VA_ARGS__
#define RLX_SELECT_CpuJit(...)
#define RLX_SELECT_Gpu(...)
#define RLX_SELECT_GpuPipeline(...)
#define RLX_SELECT_GpuArtifact(...)
#include "RLX/Target/CompileOptionsPipeline.inc"
};

/// Adds the whole CPU pipeline to `pm` (a module pass manager).
void buildCpuPipeline(OpPassManager &pm, const CompileOptions &options);

/// The part up to bufferized, BLAS-calling code on memrefs (before LLVM).
void buildCpuBufferPipeline(OpPassManager &pm, const CompileOptions &options);
/// The rest: loops, math, low-precision floats, LLVM dialect.
void buildCpuLLVMPipeline(OpPassManager &pm, const CompileOptions &options);

/// Registers `rlx-lower-to-cpu` and the CPU passes.
void registerCpuPipelines();

/// Memory effects for upstream's MPI collectives (read the send buffer, write
/// the receive buffer), which buffer deallocation needs to see.
void registerMPIMemoryEffectModels(DialectRegistry &registry);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_CPUPIPELINE_H
