//===- NVVMTarget.h - NVIDIA targets: chips, PTX ISA, capabilities -*- C++ -*-===//
//
// What RLX knows about an NVIDIA target before any LLVM code generation: the
// chip (sm_80, sm_89, sm_90, sm_90a, sm_100a, ...), the PTX ISA version it is
// compiled for (chosen per chip, or given as +ptxNN), and the instructions
// the pair supports. LLVM 22's NVPTX backend aborts the process on several
// combinations MLIR's verifiers accept (wgmma below sm_90a, e2m1 conversions
// on sm_90a, a PTX version too old for the chip); the capability check
// (rlx-nvvm-check-target) and the pipeline consult this first and turn every
// such case into a located diagnostic. The target hooks that kernel templates
// query (TargetInfo in the Triton sense) live here too.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_NVVMTARGET_H
#define RLX_TARGET_NVVM_NVVMTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::rlx::nvvm {

/// One NVIDIA target: a chip and a PTX ISA version.
struct NVVMTarget {
  std::string chip; ///< e.g. "sm_90a"
  int sm = 0;       ///< compute capability × 10, e.g. 90
  char suffix = 0;  ///< 'a' (architecture-specific), 'f' (family) or 0
  int ptx = 0;      ///< PTX ISA × 10, e.g. 80 for 8.0

  /// "+ptx80": the features string of nvvm-attach-target.
  std::string features() const;
  /// "8.0"
  std::string ptxString() const;

  // Capabilities (what kernel templates and the capability check ask).
  bool hasMmaSyncBF16() const { return sm >= 80; }
  bool hasLdmatrix() const { return sm >= 75; }
  bool hasCpAsync() const { return sm >= 80; }
  bool hasTma() const { return sm >= 90; }
  bool hasWgmma() const { return sm == 90 && suffix == 'a'; }
  bool hasTcgen05() const { return (sm == 100 || sm == 101 || sm == 103) && suffix != 0; }
  /// cvt to/from e4m3/e5m2 (f8x2).
  bool hasF8Convert() const { return sm >= 89 && ptx >= 81; }
  /// cvt to/from e2m1 (f4x2); LLVM cannot select them on sm_90a.
  bool hasF4Convert() const { return sm >= 100 && suffix != 0 && ptx >= 86; }
  /// Block-scaled FP4 MMA (tcgen05.mma kind::mxf4nvf4 block16).
  bool hasBlockScaledFP4Mma() const { return hasTcgen05() && ptx >= 88; }
  int warpSize() const { return 32; }
  /// Largest dynamic + static shared memory one block may opt into.
  int64_t maxSharedMemoryPerBlock() const;
  /// SMs of the chip's largest data-center part (A100 108, A40 84, Orin 16,
  /// L40S 142, H100/H200 SXM 132, B200/B300 148, Thor 20, RTX PRO 6000 188):
  /// what tile heuristics size grids against. A smaller part of the same chip
  /// runs the same kernels with more waves.
  int smCount() const;
  /// 48 KiB: above it a kernel must opt in (cuFuncSetAttribute).
  static constexpr int64_t kDefaultSharedMemoryLimit = 48 * 1024;
};

/// The PTX ISA a target of `chip` without +ptxNN gets: the newest that the
/// chip, LLVM 22's NVPTX backend (9.0) and the installed ptxas all take,
/// else the chip's first; and the lowest LLVM accepts for the chip (older
/// ISAs do not know it: `LLVM ERROR: PTX version 6.0 does not support
/// target 'sm_90a'`).
std::optional<int> defaultPtxVersion(StringRef chip);
std::optional<int> minimumPtxVersion(StringRef chip);
/// The chips RLX compiles for, comma-separated (for diagnostics).
StringRef supportedChips();

/// Parses `chip` and `features` ("" or "+ptxNN"). On failure, `error` says
/// why: an unknown chip (naming the supported ones), a malformed feature, a
/// PTX ISA too old for the chip, or newer than the installed ptxas accepts
/// (naming both versions; case L3).
FailureOr<NVVMTarget> parseTarget(StringRef chip, StringRef features, std::string &error);

/// The ptxas RLX runs: $RLX_PTXAS, then $CUDA_ROOT/bin, $CUDA_HOME/bin,
/// /usr/local/cuda/bin, then PATH, then the PyPI wheel's in .venv that
/// scripts/setup.sh installs where no toolkit is (found at configure time).
/// Empty when there is none.
std::string findPtxas();
/// The CUDA toolkit that ptxas belongs to (the directory above its bin/),
/// where gpu-module-to-binary finds libdevice; empty without ptxas.
std::string findCudaRoot();

/// The newest PTX ISA the installed ptxas assembles (probed once by
/// assembling an empty module of each version); nullopt without ptxas.
std::optional<int> maxPtxVersionOfPtxas();

} // namespace mlir::rlx::nvvm

#endif // RLX_TARGET_NVVM_NVVMTARGET_H
