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

struct GPUArtifactOptions {
  std::string chip = "sm_90a";
  std::string features;
  int optLevel = 3;
  std::vector<std::string> dims;
  /// Which unmarked arguments are weights (rlx-import-to-mir's weights).
  std::vector<std::string> weightArgs;
  /// error | warn | ignore (rlx-nvvm-assemble).
  std::string spills = "warn";
  /// Build kernels.emu.so (needs a host C compiler to link it).
  bool emulator = true;
  /// Build cubins (needs ptxas).
  bool cubin = true;
  /// rlx-mir-fuse (false: every primitive op its own kernel).
  bool fuse = true;
  /// Tensor-core kernels where they apply (false: the SIMT fallback).
  bool tensorCores = true;
  /// matmul-kernel and split-k of convert-rlx-lir-to-gpu.
  std::string matmulKernel = "auto";
  int64_t splitK = 0;
  /// attention-kernel of convert-rlx-lir-to-gpu.
  std::string attentionKernel = "auto";
  /// A matmul/attention kernel that cannot take an op is an error (else a
  /// remark and the heuristic's kernel).
  bool strictKernels = false;
  /// MIR op names sent down the generic path even with a kernel template
  /// (rlx-gpu-generic-kernels' force).
  std::vector<std::string> genericKernels;
  /// kv-splits of rlx-mir-split-kv (0: the heuristic, 1: never).
  int64_t kvSplits = 0;
  /// Tensor-parallel ranks (0: none): the artifact is the per-rank program,
  /// the same for every rank; its all-reduces are collective steps of the
  /// plan, run by the runtime's communicator (docs/gpu-artifact.md).
  int64_t tp = 0;
  /// With tp: the rank (-1: not given), which a per-rank program that looks
  /// up by rank (a vocab-parallel embedding) needs; the artifact is then
  /// that rank's.
  int64_t rank = -1;
  /// Writes the module as it leaves the kernel pipeline (GPU kernels at the
  /// NVVM level, host plans at LIR) to this file, before code generation.
  std::string emitKernelIR;
  /// The input is such a module (from emitKernelIR, possibly edited): the
  /// kernel pipeline is skipped and only code generation runs.
  bool fromKernelIR = false;
};

/// Compiles `module` (HIR, MIR or LIR) and writes the artifact into `dir`
/// (created). Diagnostics go to the module's context.
LogicalResult writeGPUArtifact(ModuleOp module, const GPUArtifactOptions &options,
                               StringRef dir);

/// Compiles the LLVM-dialect module `llvmModule` (from
/// buildEmulatorCodegenPipeline) for the host and links it as a shared
/// library at `path`.
LogicalResult buildEmulatorLibrary(ModuleOp llvmModule, StringRef path);

} // namespace mlir::rlx

#endif // RLX_TARGET_NVVM_GPUARTIFACT_H
