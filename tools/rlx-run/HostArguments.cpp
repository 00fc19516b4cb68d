//===- HostArguments.cpp - rlx-run's one host front end -------------------===//

#include "HostArguments.h"

#include "RLX/Target/CPU/Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sys/resource.h>

using namespace mlir;
using namespace mlir::rlx;

std::optional<int64_t> mlir::rlx::peakRssBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0 || usage.ru_maxrss <= 0)
    return std::nullopt;
#ifdef __APPLE__
  return static_cast<int64_t>(usage.ru_maxrss); // bytes on macOS
#else
  return static_cast<int64_t>(usage.ru_maxrss) * 1024; // KiB on Linux
#endif
}

LogicalResult mlir::rlx::reportOutput(StringRef name, const HostTensor &t, StringRef outputDir,
                                      std::string &error) {
  double sumAbs = 0, maxAbs = 0;
  for (int64_t k = 0; k < t.numElements(); ++k) {
    double v = std::fabs(t.at(k));
    sumAbs += v;
    maxAbs = std::max(maxAbs, v);
  }
  std::string shape;
  for (int64_t d : t.shape)
    shape += std::to_string(d) + "x";
  llvm::outs() << "output " << name << ": " << shape << t.dtype
               << llvm::format(", mean |x| %.6g, max |x| %.6g",
                               sumAbs / std::max<int64_t>(1, t.numElements()), maxAbs)
               << "\n";
  if (outputDir.empty())
    return success();
  llvm::sys::fs::create_directories(outputDir);
  std::string file = name.str();
  std::replace(file.begin(), file.end(), '/', '_');
  return writeNpy((outputDir + "/" + file + ".npy").str(), t, error);
}

FailureOr<unsigned> mlir::rlx::bindArguments(ArrayRef<ModelTensor> arguments,
                                             const ArgumentSources &sources,
                                             std::map<std::string, HostTensor> &values,
                                             std::string &error) {
  // An --input that names no argument would be ignored and the argument
  // seeded instead: an error, with the names there are.
  if (failed(checkArgumentNames(values, arguments, "--input ", error)))
    return failure();
  auto wholeShape = [&](const ModelTensor &a) {
    return sources.world ? globalShape(a.name, a.shape, sources.tp, sources.whole) : a.shape;
  };
  std::set<std::string> placed;
  if (!sources.weights.empty()) {
    std::set<std::string> entryParams;
    for (const ModelTensor &a : arguments)
      if (a.isParam)
        entryParams.insert(a.name);
    // Several checkpoints (a base model and an adapter) bind as one; a
    // tensor named in two would leave it open which one is meant.
    FailureOr<CheckpointIndex> checkpoint = CheckpointIndex();
    for (const std::string &entry : sources.weights) {
      // NAME=PATH: one of several LoRA adapters (rlx-gen --lora NAME=DIR),
      // its tensors under PEFT's in-memory names (lora_A.NAME.weight).
      std::string path = entry, adapter;
      if (size_t eq = entry.find('=');
          eq != std::string::npos && !llvm::sys::fs::exists(entry)) {
        adapter = entry.substr(0, eq);
        path = entry.substr(eq + 1);
      }
      auto one = indexSafetensors(path, error);
      if (failed(one)) {
        error = "--weights " + entry + ": " + error;
        return failure();
      }
      for (auto &[name, tensor] : *one) {
        if (adapter.empty() && sources.moduleParams.count(name) && !entryParams.count(name))
          continue; // another function's parameter
        std::string bound = name;
        if (!adapter.empty()) {
          StringRef n(name);
          StringRef kind = n.ends_with(".lora_A.weight")   ? ".lora_A."
                           : n.ends_with(".lora_B.weight") ? ".lora_B."
                                                           : "";
          if (kind.empty()) {
            error = "--weights " + entry + ": tensor '" + name +
                    "' is not a LoRA adapter's lora_A/lora_B weight";
            return failure();
          }
          bound = (n.drop_back(strlen(".lora_A.weight")) + kind + adapter + ".weight").str();
        }
        if (!checkpoint->emplace(bound, tensor).second) {
          error = "--weights " + entry + ": tensor '" + bound +
                  "' is also in an earlier --weights checkpoint";
          return failure();
        }
      }
    }
    std::vector<ParamSpec> params;
    for (const ModelTensor &a : arguments) {
      if (!a.isParam)
        continue;
      if (values.count(a.name)) {
        error = "parameter '" + a.name + "' is given by --input and by --weights";
        return failure();
      }
      params.push_back({a.name, a.dtype, wholeShape(a)});
    }
    // Merged projections laid out here: each source read into its slice.
    if (sources.packed && !sources.world)
      placed = placeConcats(sources.concats, params, *sources.packed);
    if (failed(bindCheckpoint(*checkpoint, params, values, error))) {
      error = "--weights " + llvm::join(sources.weights, ", ") + ": " + error;
      return failure();
    }
  }
  unsigned generated = 0;
  for (const ModelTensor &a : arguments)
    if (!values.count(a.name) && !placed.count(a.name)) {
      ModelTensor wholeArg = a;
      wholeArg.shape = wholeShape(a);
      values[a.name] = sources.generate(wholeArg);
      ++generated;
    }
  // Each rank keeps its block of every whole tensor (the same function of
  // the name that split the model); one its program takes whole stays.
  if (sources.world)
    for (const ModelTensor &a : arguments) {
      if (values[a.name].shape == a.shape)
        continue;
      auto block = rankBlock(a.name, values[a.name], a.shape, sources.world->rank, sources.tp,
                             error);
      if (failed(block))
        return failure();
      values[a.name] = std::move(*block);
    }
  return generated;
}
