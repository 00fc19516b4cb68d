//===- HFConfigMamba.cpp - The state-space models' config.json ------------===//
//
// MambaConfig, FalconMambaConfig, Mamba2Config and BambaConfig's mixer keys
// with transformers' defaults (see HFConfig.cpp).
//
//===----------------------------------------------------------------------===//

#include "HFConfigReader.h"
#include "HFNames.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::hfconfig;

/// HF's ACT2FN name -> RLX's activation, or an error listing the names.
std::string hfconfig::activation(Reader &r, StringRef key, StringRef def) {
  std::string name = r.string(key, def);
  if (std::optional<StringRef> act = hf::activationFromHF(name))
    return act->str();
  r.fail(key + " '" + name + "' is not supported; supported (transformers ACT2FN names): " +
         hf::supportedActivations());
  return "";
}

/// A list of integers (`mlp_only_layers`); absent or null is empty.
std::vector<int64_t> hfconfig::integers(Reader &r, const llvm::json::Object &root, StringRef key) {
  std::vector<int64_t> out;
  if (!r.has(key))
    return out;
  const llvm::json::Array *list = root.getArray(key);
  if (!list) {
    r.wrongType(key, "a list of integers");
    return out;
  }
  for (const llvm::json::Value &v : *list) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i) {
      r.wrongType(key, "a list of integers");
      return {};
    }
    out.push_back(*i);
  }
  return out;
}

/// The checks and time_step_limit that Mamba2Config and BambaConfig share
/// (their own key names in the messages): heads × head_dim must be the
/// mixer's width, which it views as [heads, head_dim], in groups of heads.
static void readSsdMixer(Reader &r, ModelConfig::Mamba &m, int64_t width, StringRef heads,
                         StringRef headDim, StringRef groups, StringRef expand) {
  int64_t product;
  if (llvm::MulOverflow(m.numHeads, m.headDim, product) || product != width)
    r.fail(heads + " * " + headDim + " must equal " + expand + " * hidden_size (" +
           Twine(width) + "): Mamba2Mixer views its intermediate states as [" + heads + ", " +
           headDim + "]");
  else if (m.numHeads % m.nGroups != 0 || width % m.nGroups != 0)
    r.fail(heads + " (" + Twine(m.numHeads) + ") must be a multiple of " + groups + " (" +
           Twine(m.nGroups) + ")");
  if (m.chunkSize > 65536)
    r.fail("chunk_size " + Twine(m.chunkSize) + " is more than 65536");
  if (const llvm::json::Value *v = r.obj.get("time_step_limit");
      v && v->kind() != llvm::json::Value::Null) {
    const llvm::json::Array *a = v->getAsArray();
    std::optional<double> lo = a && a->size() == 2 ? Reader::asNumber((*a)[0]) : std::nullopt;
    std::optional<double> hi = a && a->size() == 2 ? Reader::asNumber((*a)[1]) : std::nullopt;
    double inf = std::numeric_limits<double>::infinity();
    if (!lo || !hi || std::isnan(*lo) || std::isnan(*hi) || *lo > *hi || *lo == inf ||
        *hi == -inf) {
      r.fail("time_step_limit must be [min, max] with min <= max (finite, or -inf / inf for no "
             "bound)");
      return;
    }
    // softplus(dt) > 0, so a lower bound of 0 or less never binds.
    if (*lo > 0)
      m.dtMin = *lo;
    if (*hi != std::numeric_limits<double>::infinity())
      m.dtMax = *hi;
  }
}

/// Mamba2Config's own keys and defaults (time_step_rank is read but unused,
/// as in Mamba2Mixer).
static void readMamba2(Reader &r, ModelConfig &c) {
  ModelConfig::Mamba &m = c.mamba;
  c.tieEmbeddings = r.boolean("tie_word_embeddings", false);
  m.numHeads = r.integer("num_heads", 128);
  m.headDim = r.integer("head_dim", 64);
  m.nGroups = r.integer("n_groups", 8);
  m.chunkSize = r.integer("chunk_size", 256);
  if (m.numHeads <= 0 || m.headDim <= 0 || m.nGroups <= 0 || m.chunkSize <= 0) {
    r.fail("num_heads, head_dim, n_groups and chunk_size must be positive");
    return;
  }
  readSsdMixer(r, m, c.intermediateSize, "num_heads", "head_dim", "n_groups", "expand");
}

void hfconfig::readBamba(Reader &r, const llvm::json::Object &root, ModelConfig &c) {
  ModelConfig::Mamba &m = c.mamba;
  c.qkvBias = c.oProjBias = r.boolean("attention_bias", false);
  c.mlpBias = r.boolean("mlp_bias", false);
  if (c.activation != "silu")
    r.fail("hidden_act '" + r.string("hidden_act", "") +
           "' is not supported for Bamba: its causal conv1d supports silu");
  m.numHeads = r.integer("mamba_n_heads", 128);
  int64_t expand = r.integer("mamba_expand", 2);
  m.nGroups = r.integer("mamba_n_groups", 1);
  m.stateSize = r.integer("mamba_d_state", 256);
  m.convKernel = r.integer("mamba_d_conv", 4);
  m.chunkSize = r.integer("mamba_chunk_size", 256);
  m.useConvBias = r.boolean("mamba_conv_bias", true);
  m.useBias = r.boolean("mamba_proj_bias", false);
  if (!r.error.empty())
    return;
  if (m.numHeads <= 0 || m.numHeads > 65536 || expand <= 0 || m.nGroups <= 0 ||
      m.stateSize <= 0 || m.stateSize > 65536 || m.convKernel <= 0 || m.convKernel > 1024 ||
      m.chunkSize <= 0 || c.hiddenSize <= 0 || llvm::MulOverflow(expand, c.hiddenSize, m.width)) {
    r.fail("mamba_n_heads (at most 65536), mamba_expand, mamba_n_groups, mamba_d_state (at "
           "most 65536), mamba_d_conv (at most 1024) and mamba_chunk_size must be positive");
    return;
  }
  // mamba_d_head "auto" (or absent) is the width over the heads.
  if (r.obj.getString("mamba_d_head")) {
    if (r.string("mamba_d_head", "auto") != "auto")
      r.fail("'mamba_d_head' must be an integer or \"auto\"");
    m.headDim = m.width / m.numHeads;
  } else {
    m.headDim = r.integer("mamba_d_head", m.width / m.numHeads);
  }
  if (m.headDim <= 0)
    r.fail("mamba_d_head must be positive");
  readSsdMixer(r, m, m.width, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_expand");
  if (!r.error.empty())
    return;
  // Each mixer weight's f32 elements below 2^46, as the Mamba models'.
  constexpr int64_t kMaxElements = int64_t(1) << 46;
  int64_t convDim, rows, elements;
  if (llvm::MulOverflow(m.nGroups, 2 * m.stateSize, convDim) ||
      llvm::AddOverflow(convDim, m.width, convDim) || llvm::AddOverflow(convDim, m.width, rows) ||
      llvm::AddOverflow(rows, m.numHeads, rows) ||
      llvm::MulOverflow(rows, c.hiddenSize, elements) || elements > kMaxElements ||
      llvm::MulOverflow(m.width, m.stateSize, elements) || elements > kMaxElements) {
    r.fail("a mixer weight or state of this config would take more than 2^48 bytes (256 TiB) "
           "in f32");
    return;
  }
  // BambaConfig.layers_block_type: attention on attn_layer_indices, the
  // mixer on every other layer.
  std::vector<int64_t> attention = integers(r, root, "attn_layer_indices");
  if (c.numLayers <= 0 || c.numLayers > 4096)
    return; // the layer count's own error comes later
  for (int64_t i = 0; i < c.numLayers; ++i)
    m.mixerLayers.push_back(!llvm::is_contained(attention, i));
}

/// MambaConfig / FalconMambaConfig with transformers' defaults:
/// intermediate_size = expand · hidden_size, time_step_rank "auto" =
/// ⌈hidden_size / 16⌉.
void hfconfig::readMamba(Reader &r, ModelConfig &c) {
  bool v2 = c.family == ModelFamily::Mamba2;
  c.hiddenSize = r.integer("hidden_size", v2 ? 4096 : 768);
  c.numLayers = r.integer("num_hidden_layers", v2 ? 64 : 32);
  c.vocabSize = r.integer("vocab_size", v2 ? 32768 : 50280);
  c.eps = r.number("layer_norm_epsilon", 1e-5);
  c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
  // The conv's activation is hidden_act; the gate is SiLU regardless.
  c.activation = activation(r, "hidden_act", "silu");
  if (!c.activation.empty() && c.activation != "silu")
    r.fail("hidden_act '" + r.string("hidden_act", "") +
           "' is not supported for Mamba: its causal conv1d supports silu");
  ModelConfig::Mamba &m = c.mamba;
  m.stateSize = r.integer("state_size", v2 ? 128 : 16);
  m.convKernel = r.integer("conv_kernel", 4);
  int64_t expand = r.integer("expand", 2);
  if (llvm::MulOverflow(expand, c.hiddenSize, c.intermediateSize))
    r.fail("expand * hidden_size overflows");
  if (r.obj.getString("time_step_rank")) {
    if (r.string("time_step_rank", "auto") != "auto")
      r.fail("'time_step_rank' must be an integer or \"auto\"");
    m.timeStepRank = c.hiddenSize > 0 ? llvm::divideCeil(c.hiddenSize, 16) : 0;
  } else {
    m.timeStepRank = r.integer("time_step_rank", c.hiddenSize > 0 ? llvm::divideCeil(c.hiddenSize, 16) : 0);
  }
  m.useBias = r.boolean("use_bias", false);
  m.useConvBias = r.boolean("use_conv_bias", true);
  m.residualInFp32 = r.boolean("residual_in_fp32", true);
  if (v2 && r.error.empty() && c.hiddenSize > 0 && expand > 0)
    readMamba2(r, c);
  if (c.family == ModelFamily::FalconMamba) {
    m.mixerRmsEps = r.number("mixer_rms_eps", 1e-6);
    if (!(m.mixerRmsEps > 0))
      r.fail("mixer_rms_eps must be positive");
  }
  // Sizes an untrusted config may get wrong: positive, and every weight's
  // f32 bytes below 2^48 (as the attention models' check below).
  if (r.error.empty() &&
      (c.hiddenSize <= 0 || c.numLayers <= 0 || c.vocabSize <= 0 || m.stateSize <= 0 ||
       m.convKernel <= 0 || m.timeStepRank <= 0 || expand <= 0))
    r.fail("sizes must be positive");
  if (c.numLayers > 4096)
    r.fail("num_hidden_layers = " + Twine(c.numLayers) + " is more than 4096");
  // The conv's taps and the state are unrolled or materialized per step:
  // far beyond any released model (conv 4, state 16-128) is an error.
  if (m.convKernel > 1024 || m.stateSize > 65536 || m.timeStepRank > (int64_t(1) << 24))
    r.fail("conv_kernel (at most 1024), state_size (at most 65536) or time_step_rank (at most "
           "2^24) is out of range");
  if (!r.error.empty())
    return;
  // Each weight's f32 elements below 2^46, the layers' together below 2^46.
  constexpr int64_t kMaxElements = int64_t(1) << 46;
  int64_t layer = 0, elements;
  // Mamba-2: in_proj [I + conv + H, hidden] with conv = I + 2·G·N channels.
  int64_t groupsBC, convDim, inRows;
  if (llvm::MulOverflow(m.nGroups, 2 * m.stateSize, groupsBC) ||
      llvm::AddOverflow(c.intermediateSize, groupsBC, convDim) ||
      llvm::AddOverflow(convDim, m.numHeads, inRows)) {
    r.fail("a weight of this config would take more than 2^48 bytes (256 TiB) in f32");
    return;
  }
  for (auto [x, y] : {std::pair{c.intermediateSize, 2 * c.hiddenSize},
                      std::pair{inRows, c.hiddenSize},
                      std::pair{convDim, m.convKernel},
                      std::pair{c.intermediateSize, m.timeStepRank + 2 * m.stateSize},
                      std::pair{c.intermediateSize, m.stateSize},
                      std::pair{c.intermediateSize, m.convKernel}})
    if (llvm::MulOverflow(x, y, elements) || elements > kMaxElements ||
        llvm::AddOverflow(layer, elements, layer)) {
      r.fail("a weight of this config would take more than 2^48 bytes (256 TiB) in f32");
      return;
    }
  if (llvm::MulOverflow(c.vocabSize, c.hiddenSize, elements) || elements > kMaxElements ||
      llvm::MulOverflow(layer, c.numLayers, layer) || layer > kMaxElements)
    r.fail("the model would take more than 2^48 bytes (256 TiB) in f32");
}

