//===- HFConfig.cpp - Reading Hugging Face config.json --------------------===//

#include "RLX/ModelGen/ModelGen.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {
/// Typed access to a config object with defaults and error collection.
struct Reader {
  const llvm::json::Object &obj;
  std::string &error;

  bool has(StringRef key) const {
    const llvm::json::Value *v = obj.get(key);
    return v && v->kind() != llvm::json::Value::Null;
  }
  int64_t integer(StringRef key, std::optional<int64_t> def = std::nullopt) {
    if (has(key))
      if (auto v = obj.getInteger(key))
        return *v;
    if (def)
      return *def;
    if (error.empty())
      error = ("config.json: missing integer '" + key + "'").str();
    return 0;
  }
  double number(StringRef key, double def) {
    if (has(key))
      if (auto v = obj.getNumber(key))
        return *v;
    return def;
  }
  bool boolean(StringRef key, bool def) {
    if (has(key))
      if (auto v = obj.getBoolean(key))
        return *v;
    return def;
  }
  std::string string(StringRef key, StringRef def) {
    if (has(key))
      if (auto v = obj.getString(key))
        return v->str();
    return def.str();
  }
};
} // namespace

FailureOr<ModelConfig> mlir::rlx::parseHFConfig(StringRef json,
                                                ArrayRef<std::string> overrides,
                                                std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    error = "config.json: " + llvm::toString(parsed.takeError());
    return failure();
  }
  llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "config.json: the top level must be an object";
    return failure();
  }
  for (const std::string &o : overrides) {
    auto [key, value] = StringRef(o).split('=');
    if (key.empty() || value.empty()) {
      error = "bad override '" + o + "', expected key=value";
      return failure();
    }
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(value);
    if (v)
      (*root)[key] = std::move(*v);
    else {
      llvm::consumeError(v.takeError());
      (*root)[key] = value.str();
    }
  }
  Reader r{*root, error};
  ModelConfig c;
  if (const llvm::json::Array *archs = root->getArray("architectures"))
    if (!archs->empty())
      if (auto a = (*archs)[0].getAsString())
        c.architecture = a->str();
  std::string modelType = r.string("model_type", "");
  StringRef arch = c.architecture;
  if (arch.contains("GPT2") || modelType == "gpt2") {
    c.family = ModelFamily::GPT2;
    c.hiddenSize = r.integer("n_embd");
    c.numLayers = r.integer("n_layer");
    c.numHeads = r.integer("n_head");
    c.numKvHeads = c.numHeads;
    c.intermediateSize = r.integer("n_inner", 4 * c.hiddenSize);
    c.vocabSize = r.integer("vocab_size");
    c.maxPositions = r.integer("n_positions", 1024);
    c.eps = r.number("layer_norm_epsilon", 1e-5);
    std::string act = r.string("activation_function", "gelu_new");
    c.activation = act == "gelu" ? "gelu" : act == "relu" ? "relu" : "gelu_tanh";
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.attentionBias = c.mlpBias = true;
  } else {
    c.family = (arch.contains("Qwen3") || modelType == "qwen3") ? ModelFamily::Qwen3
                                                               : ModelFamily::Llama;
    c.qkNorm = c.family == ModelFamily::Qwen3;
    c.hiddenSize = r.integer("hidden_size");
    c.numLayers = r.integer("num_hidden_layers");
    c.numHeads = r.integer("num_attention_heads");
    c.numKvHeads = r.integer("num_key_value_heads", c.numHeads);
    c.intermediateSize = r.integer("intermediate_size");
    c.vocabSize = r.integer("vocab_size");
    c.maxPositions = r.integer("max_position_embeddings", 2048);
    c.eps = r.number("rms_norm_eps", 1e-6);
    c.ropeTheta = r.number("rope_theta", 10000.0);
    c.activation = r.string("hidden_act", "silu");
    c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
    // Qwen2 puts biases on q/k/v without saying so in the config.
    bool qwen2 = arch.contains("Qwen2") || modelType == "qwen2";
    c.attentionBias = r.boolean("attention_bias", qwen2);
    c.mlpBias = r.boolean("mlp_bias", false);
    if (r.has("sliding_window") && r.boolean("use_sliding_window", true))
      c.slidingWindow = r.integer("sliding_window");
    if (const llvm::json::Object *rs = root->getObject("rope_scaling")) {
      Reader s{*rs, error};
      c.ropeScalingType = s.string("rope_type", s.string("type", ""));
      c.ropeFactor = s.number("factor", 1.0);
      c.ropeLowFreqFactor = s.number("low_freq_factor", 1.0);
      c.ropeHighFreqFactor = s.number("high_freq_factor", 4.0);
      c.ropeOriginalMaxPositions = s.integer("original_max_position_embeddings", 8192);
      if (c.ropeScalingType != "llama3" && c.ropeScalingType != "linear" &&
          c.ropeScalingType != "default" && error.empty())
        error = "config.json: rope_scaling type '" + c.ropeScalingType +
                "' is not supported (llama3, linear)";
    }
  }
  if (!error.empty())
    return failure();
  c.headDim = r.integer("head_dim", c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0);
  if (c.hiddenSize <= 0 || c.numLayers <= 0 || c.numHeads <= 0 || c.numKvHeads <= 0 ||
      c.headDim <= 0 || c.intermediateSize <= 0 || c.vocabSize <= 0) {
    error = "config.json: sizes must be positive";
    return failure();
  }
  if (c.numHeads % c.numKvHeads != 0) {
    error = "config.json: num_attention_heads must be a multiple of num_key_value_heads";
    return failure();
  }
  if (c.activation != "silu" && c.activation != "gelu" && c.activation != "gelu_tanh" &&
      c.activation != "relu") {
    error = "config.json: activation '" + c.activation + "' is not supported";
    return failure();
  }
  return c;
}
