//===- Ptxas.h - Assemble PTX with the installed ptxas -----------*- C++ -*-===//
//
// RLX runs ptxas itself (gpu-module-to-binary{format=bin} discards ptxas's -v
// report): PTX in, cubin out, plus each kernel's resources (registers,
// spills, stack frame, shared memory, barriers), which the NVVM pipeline
// attaches to the kernels and tests hold at 0 spills and 0 stack.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_PTXAS_H
#define RLX_TARGET_NVVM_PTXAS_H

#include "RLX/Target/NVVM/NVVMTarget.h"

#include <string>
#include <vector>

namespace mlir::rlx::nvvm {

/// What `ptxas -v` says about one kernel.
struct KernelResources {
  std::string kernel;
  int registers = 0, barriers = 0;
  int64_t stackBytes = 0, spillStoreBytes = 0, spillLoadBytes = 0, sharedBytes = 0;
  /// ptxas's warnings and performance notes about it ("(C7519) Potential
  /// Performance Loss: wgmma.mma_async instructions are serialized ..."),
  /// as ptxas wrote them.
  std::vector<std::string> warnings;
};

/// Parses ptxas's -v report (stderr) into one entry per function.
std::vector<KernelResources> parsePtxasReport(StringRef report);

/// Assembles `ptx` for `target`; the cubin's bytes on success, else failure
/// with ptxas's diagnostics in `error`. `resources` gets the -v report.
FailureOr<std::string> assemblePtx(StringRef ptx, const NVVMTarget &target, int optLevel,
                                   std::vector<KernelResources> &resources, std::string &error);

} // namespace mlir::rlx::nvvm

#endif // RLX_TARGET_NVVM_PTXAS_H
