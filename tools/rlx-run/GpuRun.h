//===- GpuRun.h - rlx-run --device=cuda|emu ---------------------*- C++ -*-===//
//
// The GPU side of rlx-run: the module compiled into a GPU artifact
// (writeGPUArtifact, in a temporary directory or --emit-artifact DIR) and run
// in-process by the GPU runtime (lib/Runtime/GPU) on the CUDA driver or the
// GPU emulator. Packed parameters are made by running their packing
// functions once, from the original parameters.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TOOLS_RLX_RUN_GPURUN_H
#define RLX_TOOLS_RLX_RUN_GPURUN_H

#include "RLX/Target/CPU/CpuRunner.h"
#include "RLX/Target/CPU/HostTensor.h"
#include "RLX/Target/NVVM/GPUArtifact.h"

#include "TensorParallelRun.h"

#include <functional>
#include <map>

namespace mlir::rlx {

struct GpuRunOptions {
  std::string device;      ///< cuda | emu | auto
  std::string artifactDir; ///< keep the artifact here ("" = temporary)
  CompileOptions artifact; ///< The Common, Gpu and GpuArtifact options.
  std::string entry;
  /// --weights CHECKPOINT, bound as on the CPU path (HostArguments.h).
  std::vector<std::string> weights;
  unsigned warmup = 0, repeat = 1;
  std::string outputDir;
  /// --trace: the timed runs' kernel timeline (rlx_gpu_set_trace) here.
  std::string tracePath;
  /// Print each kernel's ptxas resources (registers, spills, stack, shared).
  bool report = false;
  /// Tensor parallelism (mpirun -np N rlx-run --tp N): this process's rank
  /// of the job; artifact.tp is N. Each rank compiles the per-rank program,
  /// keeps its block of every whole weight and input, and runs the plan's
  /// all-reduces over the job (NCCL on "cuda", MPI on "emu"); rank 0
  /// prints and writes the outputs (split ones gathered).
  const MpiWorld *world = nullptr;
};

/// Compiles, runs and reports like the CPU path; returns the exit code.
/// Arguments without a value in `values` get `generate(argument)`.
int runOnGpu(ModuleOp module, const GpuRunOptions &options,
             std::map<std::string, HostTensor> values,
             const std::function<HostTensor(const ModelTensor &)> &generate);

} // namespace mlir::rlx

#endif // RLX_TOOLS_RLX_RUN_GPURUN_H
