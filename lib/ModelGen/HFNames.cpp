//===- HFNames.cpp - Hugging Face architecture and activation names -------===//

#include "HFNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {

// transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES entries we build with the
// checkpoint's own parameter names.
const hf::Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", ModelFamily::Llama},
    {"MistralForCausalLM", "mistral", ModelFamily::Mistral},
    {"Qwen2ForCausalLM", "qwen2", ModelFamily::Qwen2},
    {"Qwen3ForCausalLM", "qwen3", ModelFamily::Qwen3},
    {"Phi3ForCausalLM", "phi3", ModelFamily::Phi3},
    {"GPT2LMHeadModel", "gpt2", ModelFamily::GPT2},
    {"MixtralForCausalLM", "mixtral", ModelFamily::Mixtral},
    {"Qwen2MoeForCausalLM", "qwen2_moe", ModelFamily::Qwen2Moe},
    {"Qwen3MoeForCausalLM", "qwen3_moe", ModelFamily::Qwen3Moe},
    {"OlmoeForCausalLM", "olmoe", ModelFamily::Olmoe},
    {"GptOssForCausalLM", "gpt_oss", ModelFamily::GptOss},
    {"DeepseekV3ForCausalLM", "deepseek_v3", ModelFamily::DeepseekV3},
    {"Llama4ForCausalLM", "llama4_text", ModelFamily::Llama4},
    {"MambaForCausalLM", "mamba", ModelFamily::Mamba},
    {"FalconMambaForCausalLM", "falcon_mamba", ModelFamily::FalconMamba},
    {"Mamba2ForCausalLM", "mamba2", ModelFamily::Mamba2},
    {"Qwen3NextForCausalLM", "qwen3_next", ModelFamily::Qwen3Next},
    {"BambaForCausalLM", "bamba", ModelFamily::Bamba},
    {"WhisperForConditionalGeneration", "whisper", ModelFamily::Whisper},
};

struct Activation {
  StringRef hfName, rlxName;
};

// transformers.activations.ACT2CLS keys whose definition RLX computes
// exactly. gelu_new, gelu_fast, gelu_accurate and gelu_python_tanh are the
// same tanh formula as PyTorch's gelu(approximate="tanh") (they differ only
// in rounding); gelu and gelu_python are the erf form; swish is nn.SiLU.
// Not here: quick_gelu (x·sigmoid(1.702x)), gelu_10 (clipped), relu2, relu6,
// leaky_relu, mish, laplace, linear, ... (no RLX activation computes them).
const Activation kActivations[] = {
    {"silu", "silu"},
    {"swish", "silu"},
    {"gelu", "gelu"},
    {"gelu_python", "gelu"},
    {"gelu_new", "gelu_tanh"},
    {"gelu_pytorch_tanh", "gelu_tanh"},
    {"gelu_python_tanh", "gelu_tanh"},
    {"gelu_fast", "gelu_tanh"},
    {"gelu_accurate", "gelu_tanh"},
    {"relu", "relu"},
};

} // namespace

std::string hf::supportedArchitectures() {
  std::string s;
  for (const Architecture &a : kArchitectures)
    s += (s.empty() ? "" : ", ") + a.className.str() + " (" + a.modelType.str() + ")";
  return s;
}

namespace {
/// Architectures we know and do not build yet, and what they lack: named
/// rather than listed among the unsupported.
struct Missing {
  StringRef className, modelType, what;
};
const Missing kMissing[] = {
    {"Llama4ForConditionalGeneration", "llama4",
     "its vision tower is not implemented; Llama4ForCausalLM (model_type llama4_text) builds "
     "the text model from the text_config"},
};
} // namespace


std::optional<hf::Architecture>
hf::resolveArchitecture(std::optional<StringRef> className, std::optional<StringRef> modelType,
                        std::string &error) {
  const Architecture *byClass = nullptr, *byType = nullptr;
  for (const Architecture &a : kArchitectures) {
    if (className && *className == a.className)
      byClass = &a;
    if (modelType && *modelType == a.modelType)
      byType = &a;
  }
  std::string supported = "; supported: " + supportedArchitectures();
  if (!byClass && !byType)
    for (const Missing &m : kMissing)
      if ((className && *className == m.className) || (modelType && *modelType == m.modelType)) {
        error = "architecture '" + m.className.str() + "' is not supported yet: " + m.what.str();
        return std::nullopt;
      }
  if (className && !byClass) {
    error = "architecture '" + className->str() + "' is not supported" + supported;
    return std::nullopt;
  }
  if (modelType && !byType && !byClass) {
    error = "model_type '" + modelType->str() + "' is not supported" + supported;
    return std::nullopt;
  }
  if (byClass && modelType && byType != byClass) {
    error = "architectures names " + className->str() + " (model_type '" +
            byClass->modelType.str() + "') but model_type is '" + modelType->str() + "'";
    return std::nullopt;
  }
  if (!byClass && !byType) {
    error = "the config names no architecture (neither 'architectures' nor 'model_type')" +
            supported;
    return std::nullopt;
  }
  return byClass ? *byClass : *byType;
}

std::optional<StringRef> hf::activationFromHF(StringRef name) {
  for (const Activation &a : kActivations)
    if (a.hfName == name)
      return a.rlxName;
  return std::nullopt;
}

std::string hf::supportedActivations() {
  return llvm::join(llvm::map_range(kActivations, [](const Activation &a) { return a.hfName; }),
                    ", ");
}
