//===- HostArguments.h - rlx-run's one host front end -----------*- C++ -*-===//
//
// What rlx-run gives a compiled model, on every device: the values of its
// arguments from --input files (each name checked against the model's
// arguments), --weights (a safetensors checkpoint bound to the parameters by
// name, whole tensors under --tp), and seeded values for the rest; under
// --tp each rank then keeps its block of every whole tensor. The CPU path
// (CpuModel::arguments) and the GPU path (the artifact's entry arguments,
// with packed parameters replaced by what their packing functions take)
// both call bindArguments, so a route works the same on --device=cpu,
// emu and cuda.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TOOLS_RLX_RUN_HOSTARGUMENTS_H
#define RLX_TOOLS_RLX_RUN_HOSTARGUMENTS_H

#include "RLX/Target/CPU/CpuRunner.h"
#include "RLX/Target/CPU/HostTensor.h"

#include "TensorParallelRun.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace mlir::rlx {

struct ArgumentSources {
  /// --weights CHECKPOINT... (none: empty), bound as one checkpoint.
  std::vector<std::string> weights;
  /// The parameters of every function of the module (Whisper's @encoder and
  /// @decoder share one checkpoint): a checkpoint tensor that another
  /// function reads is skipped, not an error, when the entry does not read it.
  std::set<std::string> moduleParams;
  /// Tensor parallelism: this rank's world, tp, and the named tensors'
  /// unsharded shapes (wholeShapes of the module before compiling).
  const MpiWorld *world = nullptr;
  int64_t tp = 0;
  std::map<std::string, std::vector<int64_t>> whole;
  /// With --weights and no --tp: the packed parameters whose sources are
  /// read from the checkpoint straight into their slices (PackedConcat),
  /// into `packed` by name; those sources get no entry in `values`.
  std::vector<PackedConcat> concats;
  std::map<std::string, HostTensor> *packed = nullptr;
  /// Seeded values of an argument nothing else gives (its whole shape).
  std::function<HostTensor(const ModelTensor &)> generate;
};


/// Completes `values` (the --input tensors, by name) for `arguments`: an
/// --input naming no argument, a parameter given by --input and --weights,
/// and a checkpoint that does not fit are errors; returns how many
/// arguments were generated.
FailureOr<unsigned> bindArguments(ArrayRef<ModelTensor> arguments, const ArgumentSources &sources,
                                  std::map<std::string, HostTensor> &values, std::string &error);

/// The process's peak resident set so far, in bytes (getrusage's ru_maxrss;
/// none where the system does not keep it).
std::optional<int64_t> peakRssBytes();

/// Prints "output NAME: SHAPExDTYPE, mean |x| .., max |x| .." and, with an
/// output directory, writes NAME.npy there ('/' in names as '_'): every
/// device's outputs the same way.
LogicalResult reportOutput(StringRef name, const HostTensor &t, StringRef outputDir,
                           std::string &error);

} // namespace mlir::rlx

#endif // RLX_TOOLS_RLX_RUN_HOSTARGUMENTS_H
