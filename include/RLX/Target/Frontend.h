//===- Frontend.h - From any RLX stage to planned LIR ------------*- C++ -*-===//
//
// The part every backend shares: HIR → MIR (plus TOSA/linalg raised by
// rlx-import-to-mir), fusion, specialization of symbolic dims, and MIR → LIR
// kernels with One-Shot Bufferize, the arena plan and its independent check.
// rlx-lower-to-cpu and rlx-lower-to-nvvm both start with it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_FRONTEND_H
#define RLX_TARGET_FRONTEND_H

#include "RLX/Target/CompileOptions.h"

#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::rlx {

/// The compile options with what a backend derives from them and its target.
struct FrontendOptions : CompileOptions {
  /// rlx-mir-split-kv before LIR (GPU backends): the target's SM count, or 0
  /// to leave attention unsplit (kvSplits is its kv-splits option).
  int64_t splitKVSMs = 0;
  /// The sm_90a wgmma attention kernel's tiles for the split heuristic.
  bool splitKVWgmma = false;
  /// rlx-mir-block-nvfp4-scales before fusion (targets with block-scaled
  /// FP4 MMA).
  bool blockNvfp4Scales = false;
  /// GPU backends: rlx-mir-gpu-collectives after tensor-parallel
  /// partitioning (tp > 0; primitive MIR annotated by rlx-mir-shard and
  /// partitioned by upstream's sharding-propagation and shard-partition
  /// before fusion), with `rank`.
  bool gpuCollectives = false;
  /// rlx-mir-decompose leaves the transforms with a row form whole
  /// (GPU backends: the shared-memory FFT kernel runs them).
  bool fftKernels = false;
  /// A backend's passes on the final MIR, just before MIR → LIR (the GPU
  /// path's rlx-gpu-generic-kernels).
  std::function<void(OpPassManager &)> beforeLIR;

  FrontendOptions() = default;
  explicit FrontendOptions(const CompileOptions &options) : CompileOptions(options) {}
};

void buildFrontendPipeline(OpPassManager &pm, const FrontendOptions &options);

/// Tensor parallelism over `tp` ranks on primitive MIR: rlx-mir-shard (with
/// `ep` expert-parallel groups; 0: tp), then upstream's sharding-propagation
/// and shard-partition on each function, then rlx-mir-flatten-grid.
void addTensorParallelPasses(OpPassManager &pm, int64_t tp, int64_t ep = 0);

/// Raises TOSA / linalg from exporters to MIR blocks. TOSA result types are
/// refined from their operands first (tosa-infer-shapes): a reduction whose
/// result spells a static dim as `?` otherwise crashes upstream's lowering;
/// arith/math ops on whole tensors become linalg.generic
/// (convert-elementwise-to-linalg).
/// `weightArgs`: rlx-import-to-mir's `weights` option (empty: auto).
void addImportPasses(OpPassManager &pm, ArrayRef<std::string> weightArgs = {});

} // namespace mlir::rlx

#endif // RLX_TARGET_FRONTEND_H
