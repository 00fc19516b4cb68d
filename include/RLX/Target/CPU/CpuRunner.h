//===- CpuRunner.h - JIT-compile and run RLX models on the CPU --*- C++ -*-===//
//
// Compiles a module (HIR, MIR or LIR) with the CPU pipeline through MLIR's
// ExecutionEngine, binding the model's symbolic dims from the shapes of the
// inputs it is given, and runs it on host arrays. Parameters that
// rlx-mir-pack-weights packed are computed once by the module's pack
// functions, the first time the model runs. Used by rlx-run and the Python
// package.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_CPURUNNER_H
#define RLX_TARGET_CPU_CPURUNNER_H

#include "RLX/Target/CPU/HostTensor.h"
#include "RLX/Target/CPU/JitCpu.h"
#include "RLX/Target/CPU/Safetensors.h"
#include "RLX/Target/CompileOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace mlir {
class ExecutionEngine;
}

namespace mlir::rlx {

/// The compile options (the Common, Cpu and CpuJit groups of
/// CompileOptions.def) and what only the runner needs.
struct CpuRunnerOptions : CompileOptions {
  std::string entry; ///< Default: the first public function.
  /// Directory of librlx_cpu_runtime.so (default: ../lib next to the tool).
  std::string runtimeDir;
  /// Called with (stage name, module) after each stage, to dump IR.
  std::function<void(StringRef, ModuleOp)> onStage;
};

/// One tensor the caller supplies or receives.
struct ModelTensor {
  std::string name;
  bool isParam = false;
  std::vector<int64_t> shape; ///< Static after compilation.
  std::string dtype;
  /// Dynamic dims of the source signature, by name ("" when static).
  std::vector<std::string> dimNames;
  /// Rows of the table an integer argument indexes (rlx.index_bound; 0: none).
  int64_t indexBound = 0;
};

/// A value for no argument is a misspelled name, not something to ignore:
/// fails naming it (`what` before it, e.g. "--input ") and the arguments.
LogicalResult checkArgumentNames(const std::map<std::string, HostTensor> &values,
                                 ArrayRef<ModelTensor> arguments, StringRef what,
                                 std::string &error);

/// The `rlx.param` names of every function of `module` (a checkpoint's
/// tensors that one of them reads belong to the module, Whisper's @encoder
/// and @decoder sharing one checkpoint).
std::set<std::string> moduleParamNames(ModuleOp module);

class CpuModel {
public:
  ~CpuModel();

  /// Compiles `module`. `inputShapes` (by argument name) binds symbolic dims
  /// of the arguments that carry rlx.dim_names.
  static FailureOr<std::unique_ptr<CpuModel>>
  compile(OwningOpRef<ModuleOp> module, const CpuRunnerOptions &options,
          const std::map<std::string, std::vector<int64_t>> &inputShapes, std::string &error);

  /// What the caller passes: the entry's inputs and parameters, with packed
  /// parameters replaced by the original ones their pack function reads.
  const std::vector<ModelTensor> &arguments() const { return args; }
  /// The parameters of the module's other entry points that this one does
  /// not read (loadWeights skips their checkpoint tensors).
  std::vector<std::string> otherParameters() const {
    std::vector<std::string> names;
    for (const std::string &name : otherParams)
      if (llvm::none_of(args, [&](const ModelTensor &a) { return a.name == name; }))
        names.push_back(name);
    return names;
  }
  const std::vector<ModelTensor> &results() const { return outs; }

  /// Runs the model. `inputs` maps every argument name to its array (dtypes
  /// are converted as needed); `outputs` receives one array per result (arrays
  /// of a previous call with the same shape and dtype are reused, overwritten).
  LogicalResult run(const std::map<std::string, HostTensor> &inputs,
                    std::vector<HostTensor> &outputs, std::string &error);

  /// Forgets packed parameters (call when parameters change between runs;
  /// after releasePackedSources the next run needs the originals again).
  void invalidatePackedParams() { packed.clear(); }

  /// Packs the parameters now (the pack functions, once) and erases from
  /// `params` the originals that only the pack functions read: the packed
  /// copies (merged q|k|v and gate|up, [K, N] forms) replace them, so the
  /// weights are held once. Returns the bytes released.
  FailureOr<int64_t> releasePackedSources(std::map<std::string, HostTensor> &params,
                                          std::string &error);
  /// The parameters only the pack functions read: once packed (after the
  /// first run), runs need them no more.
  std::vector<std::string> packedSources() const;
  /// The bytes of the packed parameters held (0 before the first pack).
  int64_t packedBytes() const;
  /// Reads every parameter from the safetensors checkpoint at `path` (a
  /// file or a directory, as readSafetensors) into the model, which then
  /// holds its weights: runs take only the inputs (a value given to run
  /// still wins). Each tensor is read once into its place; the sources of
  /// packed parameters (PackedConcat) straight into them, so the weights
  /// are held once. A missing, extra or mis-shaped tensor is an error
  /// naming it. Returns the bytes held.
  FailureOr<int64_t> loadWeights(StringRef path, std::string &error);
  /// Holds `params` (parameter arguments by name, converted to their
  /// dtypes once) as loadWeights holds a checkpoint's: runs take only the
  /// inputs, without copying the weights on every call. A name that is no
  /// parameter, or a shape unlike its argument's, is an error naming it;
  /// parameters left out must then come with each run. Packed parameters
  /// are recomputed from the new values. Returns the bytes held.
  FailureOr<int64_t> holdWeights(std::map<std::string, HostTensor> params, std::string &error);

  /// Which result of which pack function a packed parameter is.
  struct PackResult {
    std::string fn;
    unsigned index;
  };
  /// The packed parameters a loader may lay out itself (PackedConcat).
  const std::vector<PackedConcat> &packedConcats() const { return concats; }
  /// Gives packed parameter `name` (one of packedConcats(), its sources
  /// already in place); a pack function whose every result is given is not
  /// run. Fails on another name or a shape or dtype that does not match.
  LogicalResult setPacked(const std::string &name, HostTensor t, std::string &error);

  /// Statistics of the compilation.
  double fuseMs = 0, lowerMs = 0, jitMs = 0, packMs = 0;
  unsigned opsBeforeFusion = 0, opsAfterFusion = 0, computeOpsBefore = 0,
           computeOpsAfter = 0, kernels = 0;
  /// The entry's arena plan (-1 without LIR).
  int64_t arenaBytes = -1, arenaLowerBound = -1, arenaSumBytes = -1;
  /// The kernels' temporaries the arena holds past the plan
  /// (rlx-cpu-kernel-scratch; 0 when none).
  int64_t scratchBytes = 0;
  /// The BLAS thread count in effect (0 when the BLAS cannot tell).
  int blasThreads = 0;
  /// The BLAS the runtime opened: its configuration (for OpenBLAS: version,
  /// build options and the core type it picked for this CPU) and file.
  std::string blasInfo;
  /// What the JIT compiled for (the host, or --cpu / --mattr).
  JitCpu cpu;
  /// With options.trace: the traced kernels (index = id), and one record
  /// per kernel run (microseconds from the model's compilation) for every
  /// run since; the caller may clear `trace`.
  struct TracedKernel {
    std::string name;                   ///< the kernel's function
    std::vector<std::string> locations; ///< its ops' file:line:col
  };
  struct KernelRun {
    int64_t id = 0;
    double startUs = 0, durationUs = 0;
  };
  std::vector<TracedKernel> tracedKernels;
  std::vector<KernelRun> trace;

private:
  struct Signature {
    std::string name;                     ///< Function symbol.
    std::vector<std::string> argNames;    ///< Names for each memref argument.
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::string> dtypes;
    unsigned numInputs = 0;               ///< The rest are out-parameters.
  };
  /// The name under which a function's arena argument is looked up.
  static std::string arenaName(StringRef fn) { return "__arena:" + fn.str(); }
  CpuModel() = default;
  LogicalResult invoke(const Signature &sig, std::vector<const HostTensor *> in,
                       std::vector<HostTensor> &out, std::string &error);
  /// The array for argument `name` (an input, a packed parameter or an
  /// arena), converted to `dtype` into `converted` when needed; null with
  /// `error` set when missing or mis-shaped.
  const HostTensor *lookup(const std::map<std::string, HostTensor> &inputs,
                           std::vector<std::unique_ptr<HostTensor>> &converted,
                           const std::string &name, const std::vector<int64_t> &shape,
                           const std::string &dtype, std::string &error);
  /// Runs the pack functions once (their results cached in `packed`).
  LogicalResult packParams(const std::map<std::string, HostTensor> &inputs,
                           std::vector<std::unique_ptr<HostTensor>> &converted,
                           std::string &error);


  std::unique_ptr<ExecutionEngine> engine;
  Signature entry;
  std::vector<Signature> packFns;
  std::map<std::string, PackResult> packedBy; ///< Packed param name → source.
  std::map<std::string, HostTensor> packed;   ///< Computed packed params.
  std::map<std::string, HostTensor> weights;  ///< Parameters loadWeights read.
  std::vector<PackedConcat> concats;          ///< Packed params a loader may lay out.
  /// The parameters of every function of the module (the others are not
  /// compiled here): loadWeights skips the checkpoint's tensors among them
  /// that the entry does not read.
  std::set<std::string> otherParams;
  std::map<std::string, HostTensor> arenas;   ///< One per function, reused by every run.
  std::vector<ModelTensor> args, outs;
  /// When each traced kernel began (rlx_trace_kernel_begin).
  std::chrono::steady_clock::time_point traceStart;
  std::vector<std::chrono::steady_clock::time_point> traceBegun;
  friend void traceKernelBegin(int64_t);
  friend void traceKernelEnd(int64_t);
};

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_CPURUNNER_H
