//===- HFNames.h - Hugging Face names the generator accepts -----*- C++ -*-===//
//
// The architectures (`architectures[0]` / `model_type`) and activation names
// (`hidden_act` / `activation_function`, transformers' ACT2FN keys) that
// HFConfig.cpp maps onto RLX. Anything not in these tables is an error that
// lists what is, never a guess: a config of another architecture built as
// Llama, or an unknown activation replaced by GELU, would run and produce
// wrong numbers.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_MODELGEN_HFNAMES_H
#define RLX_LIB_MODELGEN_HFNAMES_H

#include "RLX/ModelGen/ModelGen.h"

#include <optional>
#include <string>

namespace mlir::rlx::hf {

/// One supported architecture: the class name in `architectures`, the
/// `model_type` transformers files it under, and the family we build.
struct Architecture {
  StringRef className, modelType;
  ModelFamily family;
};

/// The architecture named by the first entry of `architectures` (or by
/// `model_type` when `architectures` is absent); the two must agree when
/// both are given. Sets `error` (listing the supported ones) on failure.
std::optional<Architecture> resolveArchitecture(std::optional<StringRef> className,
                                                std::optional<StringRef> modelType,
                                                std::string &error);

/// "LlamaForCausalLM (llama), ..." for diagnostics.
std::string supportedArchitectures();

/// RLX's activation (silu, gelu, gelu_tanh, relu) for a transformers ACT2FN
/// name, or nullopt for a name RLX does not implement exactly.
std::optional<StringRef> activationFromHF(StringRef name);

/// The ACT2FN names activationFromHF accepts, for diagnostics.
std::string supportedActivations();

} // namespace mlir::rlx::hf

#endif // RLX_LIB_MODELGEN_HFNAMES_H
