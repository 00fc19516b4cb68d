//===- Passes.h - RLX NVVM backend passes -----------------------*- C++ -*-===//
//
// Generated declarations of the NVVM passes (rlx-nvvm-check-target,
// rlx-nvvm-assemble) and the rlx-lower-to-nvvm pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_PASSES_H
#define RLX_TARGET_NVVM_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include "RLX/Target/CompileOptions.h"

namespace mlir::rlx {
#define GEN_PASS_DECL
#include "RLX/Target/NVVM/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Target/NVVM/Passes.h.inc"

/// rlx-lower-to-nvvm's options: the Common, Codegen, Gpu and GpuPipeline groups of
/// CompileOptions.def.
struct NVVMPipelineOptions : public PassPipelineOptions<NVVMPipelineOptions> {
#define RLX_SELECT_Common(...) __VA_ARGS__
#define RLX_SELECT_Codegen(...) __VA_ARGS__
#define RLX_SELECT_Cpu(...)
#define RLX_SELECT_CpuPipeline(...)
#define RLX_SELECT_CpuJit(...)
#define RLX_SELECT_Gpu(...) __VA_ARGS__
#define RLX_SELECT_GpuPipeline(...) __VA_ARGS__
#define RLX_SELECT_GpuArtifact(...)
#include "RLX/Target/CompileOptionsPipeline.inc"
};

/// From HIR/MIR/planned LIR to LIR kernels in gpu.modules, checked for the
/// target, with the kernels still in the gpu dialect (what the emulator runs).
void buildNVVMKernelPipeline(OpPassManager &pm, const CompileOptions &options);
/// From there to gpu.binary ops with cubins (gpu → nvvm → PTX → ptxas).
void buildNVVMCodegenPipeline(OpPassManager &pm, const CompileOptions &options);
/// The kernels of a module after buildNVVMKernelPipeline, for the CPU
/// emulator: outlined, lowered to the LLVM dialect for the host, with access
/// checks (when `checks`) and packed `<kernel>__emu` entries.
void buildEmulatorCodegenPipeline(OpPassManager &pm, bool checks);
/// Registers `rlx-lower-to-nvvm` and the NVVM passes.
void registerNVVMPipelines();

} // namespace mlir::rlx

#endif // RLX_TARGET_NVVM_PASSES_H
