//===- HFConfig.cpp - Reading Hugging Face config.json --------------------===//
//
// The defaults are transformers' (its config classes and modeling code), so
// that a config.json means here what it means to transformers: a key that is
// absent takes the architecture's default, a key of the wrong type is an
// error rather than a silent default.
//
//===----------------------------------------------------------------------===//

#include "HFConfigReader.h"
#include "HFNames.h"
#include "RLX/ModelGen/ModelGen.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;

namespace {
using namespace mlir::rlx::hfconfig;

void readGPT2(Reader &r, ModelConfig &c) {
  // GPT2Config's attribute_map lets the generic names stand for n_*.
  c.hiddenSize = r.integerOf({"n_embd", "hidden_size"});
  c.numLayers = r.integerOf({"n_layer", "num_hidden_layers"});
  c.numHeads = r.integerOf({"n_head", "num_attention_heads"});
  c.numKvHeads = c.numHeads;
  c.headDim = c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0;
  if (c.numHeads > 0 && c.hiddenSize % c.numHeads != 0)
    r.fail("n_embd must be divisible by n_head");
  // n_inner's default from an untrusted n_embd: the product is checked.
  int64_t inner = 0;
  if (llvm::MulOverflow(int64_t(4), c.hiddenSize, inner) && !r.has("n_inner"))
    r.fail("n_embd is too large: 4 * n_embd (the default n_inner) overflows");
  c.intermediateSize = r.integer("n_inner", inner);
  c.vocabSize = r.integer("vocab_size", 50257);
  c.maxPositions = r.integerOf({"n_positions", "max_position_embeddings"}, 1024);
  c.eps = r.number("layer_norm_epsilon", 1e-5);
  c.activation = activation(r, "activation_function", "gelu_new");
  c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
  c.qkvBias = c.oProjBias = c.mlpBias = true;
  c.scaleAttnWeights = r.boolean("scale_attn_weights", true);
  c.scaleAttnByInverseLayerIdx = r.boolean("scale_attn_by_inverse_layer_idx", false);
  // reorder_and_upcast_attn only changes bf16/f16 rounding: the f32 result
  // is the same. Cross-attention adds parameters the model has no input for.
  if (r.boolean("add_cross_attention", false))
    r.fail("add_cross_attention is not supported");
}

/// transformers' standardize_rope_params for llama3 and yarn: a top-level
/// `original_max_position_embeddings` (Phi-3's) wins over the one in the
/// rope dict, which defaults to max_position_embeddings.
int64_t originalMaxPositions(Reader &r, Reader &s, const ModelConfig &c) {
  if (r.has("original_max_position_embeddings"))
    return r.integer("original_max_position_embeddings");
  return s.integer("original_max_position_embeddings", c.maxPositions);
}

/// HF `_compute_yarn_parameters`' reading of the yarn keys; the attention
/// factor is resolved here (mscale and mscale_all_dim are DeepSeek's).
void readYarn(Reader &r, Reader &s, ModelConfig &c) {
  c.ropeOriginalMaxPositions = originalMaxPositions(r, s, c);
  if (!r.error.empty())
    return;
  if (c.ropeOriginalMaxPositions <= 0) {
    r.fail("original_max_position_embeddings must be positive");
    return;
  }
  // A null factor is max_position_embeddings / original.
  c.ropeFactor = s.has("factor") ? s.number("factor", 1.0)
                                 : static_cast<double>(c.maxPositions) /
                                       static_cast<double>(c.ropeOriginalMaxPositions);
  // `or 32` / `or 1`: a zero or null beta is the default.
  double fast = s.number("beta_fast", 32.0), slow = s.number("beta_slow", 1.0);
  c.ropeBetaFast = fast != 0.0 ? fast : 32.0;
  c.ropeBetaSlow = slow != 0.0 ? slow : 1.0;
  c.ropeTruncate = s.boolean("truncate", true);
  auto mscale = [&](double scale, double m) {
    return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
  };
  double m = s.number("mscale", 0.0), mAll = s.number("mscale_all_dim", 0.0);
  if (s.has("attention_factor"))
    c.ropeAttentionFactor = s.number("attention_factor", 1.0);
  else if (m != 0.0 && mAll != 0.0)
    c.ropeAttentionFactor = mscale(c.ropeFactor, m) / mscale(c.ropeFactor, mAll);
  else
    c.ropeAttentionFactor = mscale(c.ropeFactor, 1.0);
  if (!(c.ropeAttentionFactor > 0.0))
    r.fail("yarn attention_factor must be positive");
}

/// rope_theta and the scaling: transformers >= 5 writes `rope_parameters`
/// (theta inside); older configs `rope_theta` and `rope_scaling`.
void readRope(Reader &r, const llvm::json::Object &root, ModelConfig &c, double defaultTheta) {
  c.ropeTheta = r.number("rope_theta", defaultTheta);
  const llvm::json::Object *rs = root.getObject("rope_parameters");
  if (!rs)
    rs = root.getObject("rope_scaling");
  else if (root.getObject("rope_scaling"))
    r.fail("both rope_parameters and rope_scaling are given");
  if (!rs) {
    if (r.has("rope_scaling") || r.has("rope_parameters"))
      r.fail("rope_scaling / rope_parameters must be an object");
    // GptOssConfig's default when neither is given.
    if (c.family == ModelFamily::GptOss) {
      c.ropeScalingType = "yarn";
      c.ropeFactor = 32.0;
      c.ropeOriginalMaxPositions = 4096;
      c.ropeTruncate = false;
      c.ropeAttentionFactor = 0.1 * std::log(32.0) + 1.0;
    }
    return;
  }
  Reader s{*rs, r.error};
  c.ropeTheta = s.number("rope_theta", c.ropeTheta);
  std::string type = s.string("rope_type", s.string("type", "default"));
  if (type == "default")
    return;
  if (type != "llama3" && type != "linear" && type != "yarn") {
    r.fail("rope type '" + type + "' is not supported; supported: default, llama3, linear, yarn");
    return;
  }
  c.ropeScalingType = type;
  c.ropeMscaleAllDim = s.number("mscale_all_dim", 0.0);
  if (type == "yarn") {
    readYarn(r, s, c);
    return;
  }
  c.ropeFactor = s.number("factor", 1.0);
  c.ropeLowFreqFactor = s.number("low_freq_factor", 1.0);
  c.ropeHighFreqFactor = s.number("high_freq_factor", 4.0);
  c.ropeOriginalMaxPositions = originalMaxPositions(r, s, c);
}

/// `sliding_window` as Mistral/Qwen2/Qwen3's config classes read it: 4096
/// when the key is absent, no window when it is null.
std::optional<int64_t> windowOrDefault(Reader &r, const llvm::json::Object &root) {
  const llvm::json::Value *w = root.get("sliding_window");
  if (!w)
    return 4096;
  if (w->kind() == llvm::json::Value::Null)
    return std::nullopt;
  return r.integer("sliding_window");
}

void readLayerTypes(Reader &r, const llvm::json::Object &root, std::vector<bool> &marked,
                    StringRef kind = "sliding_attention");

/// Which layers slide, as Qwen2Config/Qwen3Config decide: only with
/// use_sliding_window, then `layer_types` or layers >= max_window_layers.
void readQwenWindow(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  if (!r.boolean("use_sliding_window", false))
    return;
  c.slidingWindow = windowOrDefault(r, root);
  if (!c.slidingWindow)
    return;
  c.firstSlidingLayer = r.integer("max_window_layers", 28);
  readLayerTypes(r, root, c.slidingLayers);
}

/// `layer_types`, when given: which layers are `kind` (sliding_attention,
/// or Llama-4's chunked_attention); the others must be full_attention.
void readLayerTypes(Reader &r, const llvm::json::Object &root, std::vector<bool> &marked,
                    StringRef kind) {
  if (!r.has("layer_types"))
    return;
  const llvm::json::Array *types = root.getArray("layer_types");
  if (!types) {
    r.wrongType("layer_types", "a list of strings");
    return;
  }
  for (const llvm::json::Value &t : *types) {
    std::optional<StringRef> s = t.getAsString();
    if (!s || (*s != kind && *s != "full_attention")) {
      r.fail("layer_types entries must be '" + kind + "' or 'full_attention'");
      return;
    }
    marked.push_back(*s == kind);
  }
}

/// The sparse MoE block's sizes as each config class names and defaults
/// them (MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig, OlmoeConfig;
/// transformers 5 writes `num_local_experts` where older configs have
/// `num_experts`, and maps one name onto the other).
void readMoe(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  ModelConfig::Moe &m = c.moe;
  switch (c.family) {
  case ModelFamily::Mixtral:
    // MixtralTopKRouter always renormalizes; the experts are intermediate_size wide.
    m.numExperts = r.integerOf({"num_local_experts", "num_experts"}, 8);
    m.topK = r.integer("num_experts_per_tok", 2);
    m.intermediateSize = c.intermediateSize;
    m.normTopkProb = true;
    break;
  case ModelFamily::Olmoe:
    m.numExperts = r.integerOf({"num_local_experts", "num_experts"}, 64);
    m.topK = r.integer("num_experts_per_tok", 8);
    m.intermediateSize = c.intermediateSize;
    m.normTopkProb = r.boolean("norm_topk_prob", false);
    break;
  case ModelFamily::GptOss:
    // GptOssTopKRouter: linear with bias, top-k, softmax over the k;
    // GptOssExperts: intermediate_size wide, with biases and the clamp.
    m.numExperts = r.integerOf({"num_local_experts", "num_experts"}, 128);
    m.topK = r.integer("num_experts_per_tok", 4);
    m.intermediateSize = c.intermediateSize;
    m.gptOss = true;
    m.swigluAlpha = r.number("swiglu_alpha", 1.702);
    m.swigluLimit = r.number("swiglu_limit", 7.0);
    if (!(m.swigluLimit > 0.0))
      r.fail("swiglu_limit must be positive");
    break;
  case ModelFamily::Llama4: {
    // Llama4TextMoe: experts and the shared expert intermediate_size wide;
    // MoE layers from moe_layers, else every interleave_moe_layer_step-th.
    m.numExperts = r.integer("num_local_experts", 16);
    m.topK = r.integer("num_experts_per_tok", 1);
    m.intermediateSize = m.sharedIntermediateSize = c.intermediateSize;
    if (r.has("moe_layers")) {
      m.moeLayers = integers(r, root, "moe_layers");
    } else {
      int64_t step = r.integer("interleave_moe_layer_step", 1);
      if (step <= 0) {
        r.fail("interleave_moe_layer_step must be positive");
        break;
      }
      m.moeLayers.emplace();
      for (int64_t i = step - 1; i < std::min<int64_t>(c.numLayers, 4096); i += step)
        m.moeLayers->push_back(i);
    }
    break;
  }
  case ModelFamily::DeepseekV3: {
    // DeepseekV3TopkRouter (noaux_tc) and DeepseekV3MoE: shared experts
    // n_shared_experts · moe_intermediate_size wide, no gate; dense MLPs
    // (intermediate_size) below first_k_dense_replace.
    m.numExperts = r.integerOf({"n_routed_experts", "num_local_experts"}, 256);
    m.topK = r.integer("num_experts_per_tok", 8);
    m.intermediateSize = r.integer("moe_intermediate_size", 2048);
    m.normTopkProb = !root.get("norm_topk_prob") || r.boolean("norm_topk_prob", false);
    m.noauxTc = true;
    m.numGroups = r.integer("n_group", 8);
    m.topkGroups = r.integer("topk_group", 4);
    m.routedScalingFactor = r.number("routed_scaling_factor", 2.5);
    m.firstSparseLayer = r.integer("first_k_dense_replace", 3);
    int64_t shared = r.integer("n_shared_experts", 1);
    if (shared < 0 || shared > 64)
      r.fail("n_shared_experts must be in [0, 64], got " + std::to_string(shared));
    else
      m.sharedIntermediateSize = shared * m.intermediateSize;
    if (m.numGroups < 1 || m.numExperts % m.numGroups != 0 || m.numExperts / m.numGroups < 2)
      r.fail("n_group must divide n_routed_experts into groups of at least 2 experts "
             "(DeepseekV3TopkRouter scores a group by its top 2)");
    else if (m.topkGroups < 1 || m.topkGroups > m.numGroups)
      r.fail("topk_group must be in [1, n_group]");
    else if (m.topK > m.topkGroups * (m.numExperts / m.numGroups))
      r.fail("num_experts_per_tok is more than the experts in topk_group groups");
    if (!(m.routedScalingFactor > 0.0) || !std::isfinite(m.routedScalingFactor))
      r.fail("routed_scaling_factor must be positive");
    if (m.firstSparseLayer < 0)
      r.fail("first_k_dense_replace must be non-negative");
    break;
  }
  case ModelFamily::Qwen2Moe:
  case ModelFamily::Qwen3Moe:
  case ModelFamily::Qwen3Next: {
    // Qwen3NextSparseMoeBlock is Qwen2-MoE's (a gated shared expert).
    bool qwen2 = c.family == ModelFamily::Qwen2Moe, next = c.family == ModelFamily::Qwen3Next;
    m.numExperts = r.integerOf({"num_local_experts", "num_experts"}, qwen2 ? 60
                                                                     : next ? 512
                                                                            : 128);
    m.topK = r.integer("num_experts_per_tok", qwen2 ? 4 : next ? 10 : 8);
    m.intermediateSize = r.integer("moe_intermediate_size", qwen2 ? 1408 : next ? 512 : 768);
    m.normTopkProb = r.boolean("norm_topk_prob", next);
    m.sparseStep = r.integer("decoder_sparse_step", 1);
    m.mlpOnlyLayers = integers(r, root, "mlp_only_layers");
    if (qwen2 || next)
      m.sharedIntermediateSize = r.integer("shared_expert_intermediate_size", next ? 512 : 5632);
    break;
  }
  default:
    return;
  }
  if (!r.error.empty())
    return;
  // Qwen2/3-MoE with no experts are dense models (every layer an MLP).
  bool gatedShared = c.family == ModelFamily::Qwen2Moe || c.family == ModelFamily::Qwen3Next;
  if (m.numExperts == 0 && (gatedShared || c.family == ModelFamily::Qwen3Moe))
    return;
  if (m.numExperts <= 0 || m.intermediateSize <= 0 || m.sparseStep <= 0 ||
      (gatedShared && m.sharedIntermediateSize <= 0))
    r.fail("the number of experts, their intermediate sizes and decoder_sparse_step must be "
           "positive");
  else if (m.numExperts > 4096)
    r.fail("the number of experts is " + std::to_string(m.numExperts) +
           ", more than 4096 (released models have at most a few hundred)");
  else if (m.topK < 1 || m.topK > m.numExperts)
    r.fail("num_experts_per_tok must be in [1, " + std::to_string(m.numExperts) + "], got " +
           std::to_string(m.topK));
}

/// `quantization_config`: gpt-oss's MXFP4 experts are read as such; NVIDIA
/// ModelOpt's checkpoints take --nvfp4-weights; other methods are refused
/// rather than read as dense weights that are not in the checkpoint.
void readQuantization(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  if (!r.has("quantization_config"))
    return;
  const llvm::json::Object *q = root.getObject("quantization_config");
  if (!q) {
    r.wrongType("quantization_config", "an object");
    return;
  }
  Reader qr{*q, r.error};
  std::string method = qr.string("quant_method", "");
  if (method == "mxfp4" && c.moe.gptOss) {
    c.moe.mxfp4 = true;
    if (c.hiddenSize % 32 != 0 || c.moe.intermediateSize % 32 != 0)
      r.fail("MXFP4 experts need hidden_size and intermediate_size divisible by 32 (its blocks)");
    return;
  }
  if (method == "modelopt")
    return;
  r.fail("quantization_config quant_method '" + method +
         "' is not supported; supported: mxfp4 (gpt-oss's experts), modelopt (NVFP4, with "
         "--nvfp4-weights)");
}

/// DeepseekV3Attention's sizes (DeepseekV3Config's defaults). Every query
/// head gets its own key from kv_b_proj, so num_key_value_heads must be
/// num_attention_heads (transformers' eager attention would fail to
/// broadcast otherwise); head_dim is qk_rope_head_dim, as the config sets it.
void readMla(Reader &r, ModelConfig &c) {
  ModelConfig::Mla &m = c.mla;
  m.qLoraRank = r.has("q_lora_rank") ? r.integer("q_lora_rank") : 0;
  if (!r.obj.get("q_lora_rank"))
    m.qLoraRank = 1536; // absent: the default; null: q_proj
  m.kvLoraRank = r.integer("kv_lora_rank", 512);
  m.qkNopeHeadDim = r.integer("qk_nope_head_dim", 128);
  m.qkRopeHeadDim = r.integer("qk_rope_head_dim", 64);
  m.vHeadDim = r.integer("v_head_dim", 128);
  // bool | None in DeepseekV3Config: null is off.
  m.ropeInterleave = !r.obj.get("rope_interleave") || r.boolean("rope_interleave", false);
  // attention_bias: q_a_proj, kv_a_proj_with_mqa and o_proj.
  c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
  c.headDim = m.qkRopeHeadDim;
  if (!r.error.empty())
    return;
  if (m.qLoraRank < 0 || m.kvLoraRank <= 0 || m.qkNopeHeadDim <= 0 || m.qkRopeHeadDim <= 0 ||
      m.vHeadDim <= 0 || m.qLoraRank > (1 << 20) || m.kvLoraRank > (1 << 20) ||
      m.qkNopeHeadDim > 4096 || m.qkRopeHeadDim > 4096 || m.vHeadDim > 4096)
    r.fail("q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim must "
           "be positive (q_lora_rank may be null) and at most 2^20 (ranks) or 4096 (head dims)");
  else if (m.qkRopeHeadDim % 2 != 0)
    r.fail("qk_rope_head_dim must be even (rotary pairs), got " +
           std::to_string(m.qkRopeHeadDim));
  else if (c.numKvHeads != c.numHeads)
    r.fail("num_key_value_heads (" + std::to_string(c.numKvHeads) +
           ") must equal num_attention_heads (" + std::to_string(c.numHeads) +
           "): DeepseekV3Attention's kv_b_proj gives every head its own key");
}

/// Llama4TextConfig's attention and MLP keys (see ModelConfig::Llama4).
void readLlama4(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  ModelConfig::Llama4 &l = c.llama4;
  l.enabled = true;
  c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
  l.denseIntermediateSize = r.integer("intermediate_size_mlp", 16384);
  l.qkL2Norm = r.boolean("use_qk_norm", true);
  l.temperatureTuning = r.boolean("attn_temperature_tuning", true);
  l.attnScale = r.number("attn_scale", 0.1);
  double floorScale = r.number("floor_scale", 8192.0);
  if (!(floorScale >= 1.0) || floorScale != std::floor(floorScale) || floorScale > 1e15)
    r.fail("floor_scale must be a positive integer");
  l.floorScale = static_cast<int64_t>(floorScale > 0 && floorScale <= 1e15 ? floorScale : 1);
  if (!std::isfinite(l.attnScale))
    r.fail("attn_scale must be finite");
  // An absent attention_chunk_size is the default; null is none.
  if (!root.get("attention_chunk_size"))
    l.chunkSize = 8192;
  else if (r.has("attention_chunk_size"))
    l.chunkSize = r.integer("attention_chunk_size");
  if (l.chunkSize < 0 || l.denseIntermediateSize <= 0)
    r.fail("attention_chunk_size and intermediate_size_mlp must be positive");
  if (!r.error.empty() || c.numLayers <= 0 || c.numLayers > 4096)
    return; // the layer count's own error comes later
  std::vector<int64_t> rope = integers(r, root, "no_rope_layers");
  int64_t interval = r.integer("no_rope_layer_interval", 4);
  if (rope.empty() && interval <= 0)
    r.fail("no_rope_layer_interval must be positive");
  for (int64_t i = 0; i < c.numLayers && r.error.empty(); ++i) {
    if (rope.empty())
      l.ropeLayers.push_back((i + 1) % interval != 0);
    else if (i >= static_cast<int64_t>(rope.size()) || (rope[i] != 0 && rope[i] != 1))
      r.fail("no_rope_layers must hold a 0 or 1 for each of the " +
             std::to_string(c.numLayers) + " layers");
    else
      l.ropeLayers.push_back(rope[i] == 1);
  }
  readLayerTypes(r, root, l.chunkedLayers, "chunked_attention");
  if (!r.has("layer_types"))
    for (bool rotates : l.ropeLayers)
      l.chunkedLayers.push_back(rotates && l.chunkSize > 0);
  if (static_cast<int64_t>(l.chunkedLayers.size()) < c.numLayers)
    r.fail("layer_types names " + std::to_string(l.chunkedLayers.size()) + " layers, fewer than " +
           std::to_string(c.numLayers));
  else if (llvm::is_contained(l.chunkedLayers, true) && l.chunkSize <= 0)
    r.fail("chunked_attention layers need an attention_chunk_size");
}

/// Qwen3NextConfig's linear-attention keys and layer pattern (see
/// ModelConfig::LinearAttention): layer_types, else every
/// full_attention_interval-th layer is full attention.
void readQwen3Next(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  ModelConfig::LinearAttention &l = c.linearAttention;
  c.qkNorm = c.zeroCenteredNorms = true;
  c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
  l.convKernel = r.integer("linear_conv_kernel_dim", 4);
  l.keyHeadDim = r.integer("linear_key_head_dim", 128);
  l.valueHeadDim = r.integer("linear_value_head_dim", 128);
  l.numKeyHeads = r.integer("linear_num_key_heads", 16);
  l.numValueHeads = r.integer("linear_num_value_heads", 32);
  // The conv's activation is hidden_act (Qwen3NextGatedDeltaNet); RLX's
  // causal conv1d has SiLU only.
  if (c.activation != "silu")
    r.fail("hidden_act '" + r.string("hidden_act", "") +
           "' is not supported for Qwen3-Next: its Gated DeltaNet conv1d supports silu");
  auto inRange = [](int64_t v) { return v > 0 && v <= 4096; };
  if (!inRange(l.convKernel) || !inRange(l.keyHeadDim) || !inRange(l.valueHeadDim) ||
      !inRange(l.numKeyHeads) || !inRange(l.numValueHeads))
    r.fail("linear_conv_kernel_dim and the linear heads and head dims must be positive (at "
           "most 4096)");
  else if (l.numValueHeads % l.numKeyHeads != 0)
    r.fail("linear_num_value_heads (" + std::to_string(l.numValueHeads) +
           ") must be a multiple of linear_num_key_heads (" + std::to_string(l.numKeyHeads) +
           "): each key head serves a group of value heads");
  if (!r.error.empty() || c.numLayers <= 0 || c.numLayers > 4096)
    return; // the layer count's own error comes later
  readLayerTypes(r, root, l.linearLayers, "linear_attention");
  if (!r.has("layer_types")) {
    int64_t interval = r.integer("full_attention_interval", 4);
    if (interval <= 0)
      r.fail("full_attention_interval must be positive");
    for (int64_t i = 0; i < c.numLayers && interval > 0; ++i)
      l.linearLayers.push_back((i + 1) % interval != 0);
  }
  if (r.error.empty() && static_cast<int64_t>(l.linearLayers.size()) < c.numLayers)
    r.fail("layer_types names " + std::to_string(l.linearLayers.size()) +
           " layers, fewer than " + std::to_string(c.numLayers));
}

/// partial_rotary_factor (in rope_parameters or at the top level): only
/// Qwen3-Next rotates part of each head (its default is 0.25); for the
/// others anything but 1 is refused rather than rotating every dim.
void readPartialRotary(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  const llvm::json::Object *rope = root.getObject("rope_parameters");
  if (!rope)
    rope = root.getObject("rope_scaling");
  if (c.family == ModelFamily::Bamba) {
    // BambaConfig sets partial_rotary_factor = 0.5 whatever the config says.
    c.rotaryDim = static_cast<int64_t>(std::trunc(static_cast<double>(c.headDim) * 0.5));
    if (c.rotaryDim < 2 || c.rotaryDim % 2 != 0)
      r.fail("Bamba rotates half of head_dim (" + std::to_string(c.headDim) +
             "): it must be an even, positive number of dims");
    return;
  }
  bool qwen3Next = c.family == ModelFamily::Qwen3Next;
  // Qwen3NextConfig's setdefault keeps an explicit null: full rotation.
  auto given = [](const llvm::json::Object &o) {
    const llvm::json::Value *v = o.get("partial_rotary_factor");
    return v != nullptr;
  };
  double factor = qwen3Next && !given(root) && !(rope && given(*rope)) ? 0.25 : 1.0;
  factor = r.number("partial_rotary_factor", factor);
  if (rope) {
    Reader s{*rope, r.error};
    factor = s.number("partial_rotary_factor", factor);
  }
  if (factor == 1.0 || !r.error.empty())
    return;
  if (!qwen3Next) {
    r.fail("partial_rotary_factor " + std::to_string(factor) +
           " is not supported (every dim of a head is rotated)");
    return;
  }
  // transformers: int(head_dim * partial_rotary_factor) dims, in pairs.
  double dims = std::trunc(static_cast<double>(c.headDim) * factor);
  if (!(factor > 0.0 && factor <= 1.0) || dims < 2 || static_cast<int64_t>(dims) % 2 != 0)
    r.fail("partial_rotary_factor " + std::to_string(factor) + " of head_dim " +
           std::to_string(c.headDim) + " must rotate an even, positive number of dims");
  else
    c.rotaryDim = static_cast<int64_t>(dims);
}

void readLlamaFamily(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  c.hiddenSize = r.integer("hidden_size");
  c.numLayers = r.integer("num_hidden_layers");
  c.numHeads = r.integer("num_attention_heads");
  // GptOssConfig and Llama4TextConfig default the KV heads to 8, the others
  // to the heads (a null is the heads for Llama-4, as its __post_init__ makes it).
  bool eightKv = c.family == ModelFamily::GptOss ||
                 ((c.family == ModelFamily::Llama4 || c.family == ModelFamily::Bamba) &&
                  !root.get("num_key_value_heads"));
  c.numKvHeads = r.integer("num_key_value_heads", eightKv                               ? 8
                                                  : c.family == ModelFamily::Qwen3Next ? 2
                                                                                       : c.numHeads);
  // Qwen3Config defaults head_dim to 128; the others derive it.
  std::optional<int64_t> derived;
  if (c.family == ModelFamily::Qwen3)
    derived = 128;
  else if (c.family == ModelFamily::Qwen3Next && !root.get("head_dim"))
    derived = 256; // Qwen3NextConfig's
  else if (c.family == ModelFamily::GptOss && !root.get("head_dim"))
    derived = 64; // GptOssConfig's default; an explicit null derives it
  else if (c.family == ModelFamily::Llama4 && !root.get("head_dim"))
    derived = 128; // Llama4TextConfig's
  else if (c.numHeads > 0)
    derived = c.hiddenSize / c.numHeads;
  c.headDim = r.integer("head_dim", derived);
  c.intermediateSize = r.integer("intermediate_size", c.family == ModelFamily::Qwen3Next
                                                         ? std::optional<int64_t>(5632)
                                                         : std::nullopt);
  c.vocabSize = r.integer("vocab_size");
  c.maxPositions = r.integer("max_position_embeddings",
                             c.family == ModelFamily::GptOss ||
                                     c.family == ModelFamily::Llama4
                                 ? 131072
                             : c.family == ModelFamily::DeepseekV3 ? 4096
                             : c.family == ModelFamily::Qwen3Next  ? 32768
                                                                   : 2048);
  // MixtralConfig, OlmoeConfig and GptOssConfig default eps to 1e-5;
  // Mixtral's theta is 1e6, gpt-oss's 150000.
  bool eps5 = c.family == ModelFamily::Mixtral || c.family == ModelFamily::Olmoe ||
              c.family == ModelFamily::GptOss || c.family == ModelFamily::Llama4 ||
              c.family == ModelFamily::Bamba;
  c.eps = r.number("rms_norm_eps", eps5 ? 1e-5 : 1e-6);
  c.activation = activation(r, "hidden_act", "silu");
  c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
  readRope(r, root, c,
           c.family == ModelFamily::Mixtral  ? 1e6
           : c.family == ModelFamily::GptOss ? 150000.0
           : c.family == ModelFamily::Llama4 ? 500000.0
                                             : 10000.0);
  switch (c.family) {
  case ModelFamily::Llama:
    // LlamaAttention: bias=attention_bias on q, k, v and o; LlamaMLP:
    // bias=mlp_bias on gate, up and down. No sliding window.
    c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
    c.mlpBias = r.boolean("mlp_bias", false);
    break;
  case ModelFamily::Mistral:
    // No biases anywhere; every layer slides (MistralConfig's window is
    // 4096 when the key is absent, none when it is null).
    c.slidingWindow = windowOrDefault(r, root);
    break;
  case ModelFamily::Qwen2:
    // Qwen2Attention hard-codes bias=True on q/k/v and none on o.
    c.qkvBias = true;
    readQwenWindow(r, root, c);
    break;
  case ModelFamily::Qwen3:
    c.qkNorm = true;
    c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
    readQwenWindow(r, root, c);
    break;
  case ModelFamily::Phi3:
    // Phi3Attention: packed qkv_proj, Phi3MLP: packed gate_up_proj (gate
    // first), no biases; a window only when sliding_window is given.
    if (const llvm::json::Value *w = root.get("sliding_window");
        w && w->kind() != llvm::json::Value::Null)
      c.slidingWindow = r.integer("sliding_window");
    break;
  case ModelFamily::Mixtral:
    // Mistral's attention; a window on every layer only when one is given
    // (MixtralConfig's default is none).
    if (const llvm::json::Value *w = root.get("sliding_window");
        w && w->kind() != llvm::json::Value::Null)
      c.slidingWindow = r.integer("sliding_window");
    break;
  case ModelFamily::Qwen2Moe:
    // Qwen2MoeAttention: bias=qkv_bias on q/k/v, none on o.
    c.qkvBias = r.boolean("qkv_bias", true);
    readQwenWindow(r, root, c);
    // Without layer_types, Qwen2MoeConfig slides the even-numbered layers
    // (0, 2, ...) below max_window_layers, not Qwen2's layers above it.
    if (c.slidingWindow && c.slidingLayers.empty() && c.numLayers > 0 && c.numLayers <= 4096)
      for (int64_t i = 0; i < c.numLayers; ++i)
        c.slidingLayers.push_back((i + 1) % 2 != 0 && i < c.firstSlidingLayer);
    break;
  case ModelFamily::Qwen3Moe:
    // Qwen3's attention (per-head q/k norms); every layer slides when
    // use_sliding_window is on.
    c.qkNorm = true;
    c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
    if (r.boolean("use_sliding_window", false))
      c.slidingWindow = windowOrDefault(r, root);
    break;
  case ModelFamily::Olmoe:
    // OlmoeAttention: q_norm/k_norm over the whole projections,
    // attention_bias on q, k, v and o; clip_qkv's clamps are not built.
    c.fullWidthQkNorm = true;
    c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
    if (r.has("clip_qkv"))
      r.fail("clip_qkv is not supported (OLMoE's clamp of q, k and v)");
    break;
  case ModelFamily::GptOss:
    // GptOssAttention: bias=attention_bias (default true) on q, k, v and o,
    // a sink per head; GptOssConfig alternates sliding (even) and full
    // layers when layer_types is absent, with a window of 128.
    c.qkvBias = c.oProjBias = r.boolean("attention_bias", true);
    c.attentionSinks = true;
    if (const llvm::json::Value *w = root.get("sliding_window");
        !w || w->kind() != llvm::json::Value::Null)
      c.slidingWindow = r.integer("sliding_window", 128);
    if (c.slidingWindow) {
      readLayerTypes(r, root, c.slidingLayers);
      if (c.slidingLayers.empty() && c.numLayers > 0 && c.numLayers <= 4096)
        for (int64_t i = 0; i < c.numLayers; ++i)
          c.slidingLayers.push_back((i + 1) % 2 != 0);
    }
    break;
  case ModelFamily::DeepseekV3:
    readMla(r, c);
    break;
  case ModelFamily::Llama4:
    readLlama4(r, root, c);
    break;
  case ModelFamily::Qwen3Next:
    readQwen3Next(r, root, c);
    break;
  case ModelFamily::Bamba:
    readBamba(r, root, c);
    break;
  case ModelFamily::GPT2:
  case ModelFamily::Mamba:
  case ModelFamily::FalconMamba:
  case ModelFamily::Mamba2:
  case ModelFamily::Whisper:
    break; // read by readGPT2, readMamba, readWhisper
  }
  readMoe(r, root, c);
  readQuantization(r, root, c);
  readPartialRotary(r, root, c);
}

/// Python's json writes ∞ and NaN as the bare tokens Infinity, -Infinity and
/// NaN (Mamba2Config's time_step_limit is [0.0, Infinity]), which JSON and
/// llvm::json do not accept: outside strings they become the strings
/// "Infinity", "-Infinity" and "NaN", which Reader::number reads back.
std::string quoteNonFinite(StringRef json) {
  std::string out;
  out.reserve(json.size());
  bool inString = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char ch = json[i];
    if (inString) {
      out += ch;
      if (ch == '\\' && i + 1 < json.size())
        out += json[++i];
      else if (ch == '"')
        inString = false;
      continue;
    }
    if (ch == '"')
      inString = true;
    bool matched = false;
    for (StringRef token : {"-Infinity", "Infinity", "NaN"})
      if (json.substr(i).starts_with(token)) {
        out += "\"" + token.str() + "\"";
        i += token.size() - 1;
        matched = true;
        break;
      }
    if (!matched)
      out += ch;
  }
  return out;
}

/// `key=value` overrides on top of the JSON.
LogicalResult applyOverrides(llvm::json::Object &root, ArrayRef<std::string> overrides,
                             std::string &error) {
  for (const std::string &o : overrides) {
    auto [key, value] = StringRef(o).split('=');
    if (key.empty() || value.empty()) {
      error = "bad override '" + o + "', expected key=value";
      return failure();
    }
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(quoteNonFinite(value));
    if (v) {
      root[key] = std::move(*v);
    } else {
      llvm::consumeError(v.takeError());
      root[key] = value.str();
    }
  }
  return success();
}
} // namespace

FailureOr<ModelConfig> mlir::rlx::parseHFConfig(StringRef json,
                                                ArrayRef<std::string> overrides,
                                                std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(quoteNonFinite(json));
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return failure();
  }
  llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "the top level must be an object";
    return failure();
  }
  if (failed(applyOverrides(*root, overrides, error)))
    return failure();
  Reader r{*root, error};
  std::optional<StringRef> className;
  if (r.has("architectures")) {
    const llvm::json::Array *archs = root->getArray("architectures");
    if (!archs || archs->empty() || !(*archs)[0].getAsString()) {
      error = "'architectures' must be a non-empty list of class names";
      return failure();
    }
    className = *(*archs)[0].getAsString();
  }
  std::optional<hf::Architecture> arch =
      hf::resolveArchitecture(className, r.optString("model_type"), error);
  if (!arch)
    return failure();
  ModelConfig c;
  c.family = arch->family;
  c.architecture = arch->className.str();
  if (c.family == ModelFamily::Mamba || c.family == ModelFamily::FalconMamba ||
      c.family == ModelFamily::Mamba2) {
    readMamba(r, c);
    readQuantization(r, *root, c);
    if (!error.empty())
      return failure();
    return c;
  }
  if (c.family == ModelFamily::Whisper) {
    readWhisper(r, c);
    if (!error.empty())
      return failure();
    return c;
  }
  if (c.family == ModelFamily::GPT2)
    readGPT2(r, c);
  else
    readLlamaFamily(r, *root, c);
  if (!error.empty())
    return failure();
  if (c.hiddenSize <= 0 || c.numLayers <= 0 || c.numHeads <= 0 || c.numKvHeads <= 0 ||
      c.headDim <= 0 || c.intermediateSize <= 0 || c.vocabSize <= 0 || c.maxPositions <= 0) {
    error = "sizes must be positive";
    return failure();
  }
  if (c.numHeads % c.numKvHeads != 0) {
    error = "num_attention_heads must be a multiple of num_key_value_heads";
    return failure();
  }
  // Sizes no machine holds are errors here, not hours of IR or an abort
  // when a runner allocates them: every weight's f32 bytes, and the model's,
  // below 2^48 (256 TiB; Llama-3.1-405B is under 2^41), layers <= 4096.
  if (c.numLayers > 4096) {
    error = "num_hidden_layers = " + std::to_string(c.numLayers) +
            " is more than 4096 (the largest released models have under 200)";
    return failure();
  }
  constexpr uint64_t kMaxBytes = uint64_t(1) << 48;
  auto product = [](std::initializer_list<int64_t> dims) -> uint64_t {
    uint64_t n = 4; // f32 bytes
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, uint64_t(d), &n) || n > kMaxBytes)
        return kMaxBytes + 1;
    return n;
  };
  struct Weight {
    const char *name;
    uint64_t bytes;
  } weights[] = {
      {"the embedding (vocab_size x hidden_size)", product({c.vocabSize, c.hiddenSize})},
      {"q_proj (num_attention_heads x head_dim x hidden_size)",
       product({c.numHeads, c.headDim, c.hiddenSize})},
      {"the MLP (intermediate_size x hidden_size)", product({c.intermediateSize, c.hiddenSize})},
      {"the position tables (max_position_embeddings x head_dim)",
       product({c.maxPositions, c.headDim})},
      {"the experts (3 x num_experts x their intermediate size x hidden_size)",
       product({3, c.moe.numExperts, c.moe.intermediateSize, c.hiddenSize})},
      {"the shared experts (3 x their intermediate size x hidden_size)",
       product({3, c.moe.sharedIntermediateSize, c.hiddenSize})},
      {"the dense MLP (3 x intermediate_size_mlp x hidden_size)",
       product({3, c.llama4.denseIntermediateSize, c.hiddenSize})},
      {"MLA's q projection (num_attention_heads x qk_head_dim x q_lora_rank or hidden_size)",
       product({c.numHeads, c.mla.qkHeadDim(),
                c.mla.qLoraRank > 0 ? c.mla.qLoraRank : c.hiddenSize})},
      {"MLA's kv_b_proj (num_attention_heads x (qk_nope_head_dim + v_head_dim) x "
       "kv_lora_rank)",
       product({c.numHeads, c.mla.qkNopeHeadDim + c.mla.vHeadDim, c.mla.kvLoraRank})},
      {"MLA's o_proj (hidden_size x num_attention_heads x v_head_dim)",
       product({c.hiddenSize, c.numHeads, c.mla.vHeadDim})},
      {"Qwen3-Next's gated q_proj (2 x num_attention_heads x head_dim x hidden_size)",
       product({c.family == ModelFamily::Qwen3Next ? 2 : 0, c.numHeads, c.headDim,
                c.hiddenSize})},
      {"Qwen3-Next's recurrent state (linear_num_value_heads x linear_key_head_dim x "
       "linear_value_head_dim)",
       product({c.linearAttention.enabled() ? c.linearAttention.numValueHeads : 0,
                c.linearAttention.keyHeadDim, c.linearAttention.valueHeadDim})},
      {"in_proj_qkvz's q and k (2 x linear_num_key_heads x linear_key_head_dim x hidden_size)",
       product({2, c.linearAttention.enabled() ? c.linearAttention.numKeyHeads : 0,
                c.linearAttention.keyHeadDim, c.hiddenSize})},
      {"in_proj_qkvz's v and z (2 x linear_num_value_heads x linear_value_head_dim x "
       "hidden_size)",
       product({2, c.linearAttention.enabled() ? c.linearAttention.numValueHeads : 0,
                c.linearAttention.valueHeadDim, c.hiddenSize})},
  };
  uint64_t total = 0;
  for (const Weight &w : weights) {
    if (w.bytes > kMaxBytes) {
      error = std::string(w.name) + " would take more than 2^48 bytes (256 TiB) in f32";
      return failure();
    }
    total += w.bytes;
  }
  uint64_t model;
  if (__builtin_mul_overflow(total, uint64_t(c.numLayers), &model) || model > kMaxBytes) {
    error = "the model (" + std::to_string(c.numLayers) +
            " layers) would take more than 2^48 bytes (256 TiB) in f32";
    return failure();
  }
  if (c.slidingWindow && *c.slidingWindow <= 0) {
    error = "sliding_window must be positive";
    return failure();
  }
  return c;
}
