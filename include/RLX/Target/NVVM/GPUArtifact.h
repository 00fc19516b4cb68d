//===- GPUArtifact.h - The deployable GPU artifact ---------------*- C++ -*-===//
//
// rlx-compile's output, read by lib/Runtime/GPU (docs/gpu-artifact.md): one
// directory with a cubin and the PTX per gpu.module, the same kernels built
// for the CPU emulator (kernels.emu.so), and manifest.json (kernels with
// their ptxas resources, functions with their arena size, IO buffers and the
// launch plan: kernel, grid, block, dynamic shared memory, arguments as
// arena offsets or IO buffer names).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_GPUARTIFACT_H
#define RLX_TARGET_NVVM_GPUARTIFACT_H

#include "RLX/Target/NVVM/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::rlx {

/// Compiles `module` (HIR, MIR or LIR) and writes the artifact into `dir`
/// (created) with the Common, Gpu and GpuArtifact options (CompileOptions.def).
/// Diagnostics go to the module's context.
LogicalResult writeGPUArtifact(ModuleOp module, const CompileOptions &options,
                               StringRef dir);

/// Compiles the LLVM-dialect module `llvmModule` (from
/// buildEmulatorCodegenPipeline) for the host and links it as a shared
/// library at `path`.
LogicalResult buildEmulatorLibrary(ModuleOp llvmModule, StringRef path);

} // namespace mlir::rlx

#endif // RLX_TARGET_NVVM_GPUARTIFACT_H
