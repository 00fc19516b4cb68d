//===- ModelGen.h - HIR models from Hugging Face config.json ----*- C++ -*-===//
//
// Reads a Hugging Face `config.json` (the architectures of ModelFamily,
// with transformers' defaults and the checkpoint's parameter names) and
// builds the model in
// rlx_hir: embedding, N decoder layers, final norm and LM head (tied or
// untied), optionally with a KV cache. The same generator backs the
// `rlx-gen` tool and the Python package's `rlx.models.from_hf_config`;
// test/python/test_hf_models.py checks it against transformers itself.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_MODELGEN_MODELGEN_H
#define RLX_MODELGEN_MODELGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace mlir::rlx {

/// The architectures the generator builds (transformers' LlamaForCausalLM,
/// MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM,
/// GPT2LMHeadModel, and the mixtures of experts MixtralForCausalLM,
/// Qwen2MoeForCausalLM, Qwen3MoeForCausalLM, OlmoeForCausalLM,
/// GptOssForCausalLM, DeepseekV3ForCausalLM, Llama4ForCausalLM), the
/// state-space models (MambaForCausalLM, FalconMambaForCausalLM,
/// Mamba2ForCausalLM), the hybrids Qwen3NextForCausalLM and
/// BambaForCausalLM, and the encoder of WhisperForConditionalGeneration.
/// Anything else is an error, never a Llama look-alike.
enum class ModelFamily {
  Llama, Mistral, Qwen2, Qwen3, Phi3, GPT2, Mixtral, Qwen2Moe, Qwen3Moe, Olmoe, GptOss,
  DeepseekV3, Llama4, Mamba, FalconMamba, Mamba2, Qwen3Next, Bamba, Whisper
};

/// What the generator needs from a config.json, after transformers' defaults
/// for the architecture (its config class) and its modeling code (which
/// projections have biases, which layers use the sliding window).
struct ModelConfig {
  ModelFamily family = ModelFamily::Llama;
  std::string architecture;
  int64_t hiddenSize = 0, numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  int64_t intermediateSize = 0, vocabSize = 0, maxPositions = 0;
  double eps = 1e-6, ropeTheta = 10000.0;
  /// RLX's name: silu, gelu (erf), gelu_tanh or relu (mapped from HF's
  /// `hidden_act` / `activation_function`).
  std::string activation = "silu";
  bool tieEmbeddings = false, qkNorm = false;
  /// Biases where HF's modeling code puts them: Llama's attention_bias
  /// covers q, k, v and o, mlp_bias gate, up and down; Qwen2 has q/k/v biases
  /// only; Qwen3 follows attention_bias on q, k, v and o; Mistral has none.
  bool qkvBias = false, oProjBias = false, mlpBias = false;
  /// Sliding-window size, and the layers that use it: all (Mistral), or
  /// those HF's `layer_types` (Qwen2/Qwen3: `layer_types`, else layers from
  /// `max_window_layers` on) marks `sliding_attention`.
  std::optional<int64_t> slidingWindow;
  int64_t firstSlidingLayer = 0;
  std::vector<bool> slidingLayers; ///< From `layer_types`; empty: the rule above.
  /// GPT-2's attention scale: 1/sqrt(D) unless scale_attn_weights is false,
  /// divided by (layer + 1) with scale_attn_by_inverse_layer_idx.
  bool scaleAttnWeights = true, scaleAttnByInverseLayerIdx = false;
  // RoPE scaling (llama3 / linear / yarn), from rope_parameters or rope_scaling.
  std::string ropeScalingType;
  double ropeFactor = 1.0, ropeLowFreqFactor = 1.0, ropeHighFreqFactor = 4.0;
  int64_t ropeOriginalMaxPositions = 8192;
  /// yarn: correction betas, truncation, and the cos/sin factor as HF
  /// derives it (attention_factor, else from mscale/mscale_all_dim/factor).
  double ropeBetaFast = 32.0, ropeBetaSlow = 1.0, ropeAttentionFactor = 1.0;
  bool ropeTruncate = true;
  /// `mscale_all_dim` of rope_parameters (DeepSeek): with any rope type but
  /// the default, DeepseekV3Attention's softmax scale is multiplied by
  /// (0.1 · mscale_all_dim · ln factor + 1)² when factor > 1.
  double ropeMscaleAllDim = 0.0;
  /// gpt-oss: a learned sink logit per head in every attention layer.
  bool attentionSinks = false;

  /// DeepSeek-V3's multi-head latent attention (DeepseekV3Attention):
  /// q = q_b_proj(rms(q_a_proj(x))) (or q_proj(x) when q_lora_rank is null),
  /// [k_latent | k_rot] = kv_a_proj_with_mqa(x), k_nope | v from
  /// kv_b_proj(rms(k_latent)) per head, the rotary part (qk_rope_head_dim,
  /// one key head shared by all query heads; pairs interleaved when
  /// rope_interleave) rotated, softmax scale qk_head_dim^-0.5 (times the
  /// yarn mscale², above). The KV cache holds what transformers' does: the
  /// normalized latent [B, S, kv_lora_rank] as `key` and the rotated k_rot
  /// [B, S, qk_rope_head_dim] as `value` (with rope_interleave its rotated
  /// pairs stay interleaved where transformers writes them de-interleaved:
  /// a fixed permutation of its cache's last dim; q·k is the same).
  struct Mla {
    int64_t qLoraRank = 0; ///< 0: q_proj (q_lora_rank null)
    int64_t kvLoraRank = 0, qkNopeHeadDim = 0, qkRopeHeadDim = 0, vHeadDim = 0;
    bool ropeInterleave = true;
    bool enabled() const { return kvLoraRank > 0; }
    int64_t qkHeadDim() const { return qkNopeHeadDim + qkRopeHeadDim; }
  } mla;

  /// Sparse MoE blocks (numExperts > 0): the router picks `topK` of
  /// `numExperts` SwiGLU experts of `intermediateSize` per token
  /// (`num_local_experts`/`num_experts`, `num_experts_per_tok`,
  /// `moe_intermediate_size`, or `intermediate_size` for Mixtral/OLMoE).
  /// Qwen2-MoE adds a sigmoid-gated shared expert; Qwen2/3-MoE put dense
  /// MLPs (`intermediate_size`) on `mlp_only_layers` and on the layers that
  /// `decoder_sparse_step` skips.
  struct Moe {
    int64_t numExperts = 0, topK = 0, intermediateSize = 0, sharedIntermediateSize = 0;
    int64_t sparseStep = 1;
    bool normTopkProb = false;
    /// gpt-oss: router with a bias, top-k then softmax over the k; experts
    /// with biases and the clamped SwiGLU (swiglu_alpha, swiglu_limit).
    bool gptOss = false;
    double swigluAlpha = 1.702, swigluLimit = 7.0;
    /// gpt-oss's hub checkpoints (quantization_config quant_method mxfp4):
    /// the experts' projections as MXFP4 `<proj>_blocks` [E, R, K/32, 16]
    /// and `<proj>_scales` [E, R, K/32] bytes, dequantized from parameters
    /// only (so once, at load) with rlx_mir.mxfp4_dequantize.
    bool mxfp4 = false;
    std::vector<int64_t> mlpOnlyLayers;
    /// DeepSeek-V3 (DeepseekV3TopkRouter, noaux_tc): sigmoid scores, a
    /// selection-only `e_score_correction_bias`, group-limited top-k
    /// (n_group, topk_group), routed_scaling_factor; shared experts without
    /// a gate (sharedIntermediateSize = n_shared_experts ·
    /// moe_intermediate_size); dense MLPs below first_k_dense_replace.
    bool noauxTc = false;
    int64_t numGroups = 1, topkGroups = 1, firstSparseLayer = 0;
    double routedScalingFactor = 1.0;
    /// Llama-4: the MoE layers by index (`moe_layers`, else every
    /// interleave_moe_layer_step-th); the router's top-k sigmoid scores
    /// scale the experts' inputs; one shared expert, always on.
    std::optional<std::vector<int64_t>> moeLayers;
  } moe;

  /// Llama-4's attention (Llama4TextAttention): layers that rotate
  /// (`no_rope_layers`, 1 = rotates, transformers' naming; else every
  /// no_rope_layer_interval-th layer is NoPE), rotary pairs interleaved
  /// (its complex rotation), chunked attention of `attention_chunk_size` on
  /// the `chunked_attention` layers of `layer_types`, a weightless RMS
  /// ("L2") norm of each q/k head after the rotation with use_qk_norm, and
  /// on NoPE layers with attn_temperature_tuning the queries scaled by
  /// log1p(⌊(pos + 1) / floor_scale⌋)·attn_scale + 1. Dense layers use
  /// intermediate_size_mlp.
  struct Llama4 {
    bool enabled = false;
    std::vector<bool> ropeLayers, chunkedLayers;
    int64_t chunkSize = 0, floorScale = 8192, denseIntermediateSize = 0;
    bool qkL2Norm = true, temperatureTuning = true;
    double attnScale = 0.1;
  } llama4;
  /// Mamba-1 (MambaForCausalLM, FalconMambaForCausalLM): no attention;
  /// each layer is RMSNorm then the mixer (in_proj to x|z of
  /// `intermediate_size` = expand · hidden_size, causal conv1d of
  /// `conv_kernel` with SiLU, x_proj to dt (time_step_rank) | B | C of
  /// `state_size`, dt_proj, the selective scan with A = −exp(A_log), D and
  /// the SiLU(z) gate, out_proj) plus the residual. FalconMamba normalizes
  /// dt, B and C with a weightless RMSNorm (mixer_rms_eps) first.
  /// Mamba-2 (Mamba2ForCausalLM, `numHeads` > 0): in_proj to z | x B C | dt
  /// (`numHeads` heads of `headDim`, B and C in `nGroups` groups), the causal
  /// conv1d with SiLU over x B C, rlx_mir.ssd_scan (A = −exp(A_log) per
  /// head, dt_bias, softplus, time_step_limit, D), the gated RMSNorm
  /// (MambaRMSNormGated: y · SiLU(z), normalized per group), out_proj.
  struct Mamba {
    int64_t stateSize = 0, convKernel = 4, timeStepRank = 0;
    int64_t numHeads = 0, headDim = 0, nGroups = 1, chunkSize = 256;
    /// time_step_limit's bounds where they bind (not 0 and ∞).
    std::optional<double> dtMin, dtMax;
    bool useBias = false, useConvBias = true;
    double mixerRmsEps = 0.0; ///< > 0: FalconMamba's norms on dt, B, C
    /// The residual stream in f32 between layers (bf16/f16 models).
    bool residualInFp32 = true;
    bool enabled() const { return stateSize > 0; }
    /// Bamba (BambaForCausalLM): the Mamba-2 mixer's width (mamba_expand ·
    /// hidden_size; `intermediateSize` is the MLP's) and the layers that
    /// have the mixer (the others attention).
    int64_t width = 0;
    std::vector<bool> mixerLayers;
  } mamba;
  /// Qwen3-Next (Qwen3NextForCausalLM): `linearLayers` marks its Gated
  /// DeltaNet layers (layer_types' linear_attention): in_proj_qkvz and
  /// in_proj_ba (grouped per key head), a causal conv1d with SiLU over
  /// q | k | v (no bias), beta = sigmoid(b), g = −exp(A_log)·softplus(a +
  /// dt_bias), rlx_mir.gated_delta_rule with l2-normalized q and k (each
  /// key head serving num_value_heads / num_key_heads value heads), the
  /// gated RMSNorm per value head, out_proj. The other layers are
  /// Qwen3NextAttention: q_proj gives each head its query and an output
  /// gate (sigmoid), per-head q/k norms, RoPE on `rotaryDim` dims.
  struct LinearAttention {
    std::vector<bool> linearLayers;
    int64_t convKernel = 4, keyHeadDim = 128, valueHeadDim = 128;
    int64_t numKeyHeads = 16, numValueHeads = 32;
    bool enabled() const { return !linearLayers.empty(); }
    bool isLinear(int64_t layer) const {
      return layer < static_cast<int64_t>(linearLayers.size()) && linearLayers[layer];
    }
  } linearAttention;
  /// Whisper (WhisperConfig): `hiddenSize` is d_model, `numLayers`,
  /// `numHeads` and `intermediateSize` the encoder's (encoder_layers,
  /// encoder_attention_heads, encoder_ffn_dim); the log-mel input has
  /// `numMelBins` channels and 2 · `maxSourcePositions` frames (the stem's
  /// second conv has stride 2).
  struct Whisper {
    int64_t numMelBins = 80, maxSourcePositions = 1500;
    int64_t decoderLayers = 0, decoderHeads = 0, decoderFfnDim = 0;
    bool enabled() const { return maxSourcePositions > 0 && numMelBins > 0; }
  } whisper;
  /// RoPE on the first `rotaryDim` dims of each head (partial_rotary_factor
  /// · head_dim); 0 rotates all of them.
  int64_t rotaryDim = 0;
  /// Qwen3NextRMSNorm: the norms scale by 1 + weight (zero-initialized).
  bool zeroCenteredNorms = false;
  /// OLMoE's q_norm/k_norm: RMSNorm over the whole q (k) projection, not
  /// per head (Qwen3's qkNorm).
  bool fullWidthQkNorm = false;

  bool isMoeLayer(int64_t layer) const {
    if (moe.moeLayers)
      return moe.numExperts > 0 && llvm::is_contained(*moe.moeLayers, layer);
    return moe.numExperts > 0 && layer >= moe.firstSparseLayer &&
           (layer + 1) % moe.sparseStep == 0 &&
           llvm::find(moe.mlpOnlyLayers, layer) == moe.mlpOnlyLayers.end();
  }
  /// Whether decoder layer `layer` attends through the sliding window.
  bool usesSlidingWindow(int64_t layer) const {
    if (!slidingWindow)
      return false;
    if (!slidingLayers.empty())
      return layer < static_cast<int64_t>(slidingLayers.size()) && slidingLayers[layer];
    return layer >= firstSlidingLayer;
  }
};

/// Parses config.json text. `overrides` are `key=value` pairs applied on top
/// of the JSON (same keys as config.json, e.g. hidden_size=256; the value is
/// JSON, or a string when it does not parse; `null` means what None means to
/// transformers), so tests can shrink a real config while keeping its
/// structure. An unsupported architecture, activation or RoPE type, or a key
/// of the wrong type, is an error naming what is supported.
FailureOr<ModelConfig> parseHFConfig(StringRef json, ArrayRef<std::string> overrides,
                                     std::string &error);

/// What to build.
/// A PEFT LoRA adapter (`adapter_config.json`, peft_type "LORA") as the
/// generator applies it: which linear layers it targets, and each one's rank
/// and scale (lora_alpha / r, or lora_alpha / √r with use_rslora, after
/// rank_pattern / alpha_pattern).
struct LoraAdapterConfig {
  int64_t r = 8;
  double alpha = 8;
  bool rslora = false;
  /// target_modules: a list (a module whose name is an entry or ends with
  /// "." + entry), a regular expression (matched against the whole name), or
  /// "all-linear" (every linear layer but the LM head).
  std::vector<std::string> targets;
  std::optional<std::string> targetRegex;
  bool allLinear = false;
  /// rank_pattern / alpha_pattern: a key matches a module whose name is the
  /// key or ends with "." + a match of it as a regular expression.
  std::vector<std::pair<std::string, int64_t>> rankPattern;
  std::vector<std::pair<std::string, double>> alphaPattern;

  struct Module {
    int64_t r;
    double scale;
  };
  /// The rank and scale of the linear layer `name` (its module name in the
  /// transformers model, e.g. "model.layers.0.self_attn.q_proj"), nullopt
  /// when the adapter does not target it; an error when two patterns that
  /// disagree both match it.
  FailureOr<std::optional<Module>> forModule(StringRef name, bool isLmHead,
                                             std::string &error) const;
};

/// Parses an adapter_config.json. Refuses (with `error`) what the generator
/// would otherwise get wrong silently: another peft_type, DoRA, LoRA biases,
/// fan_in_fan_out, layers_to_transform, modules_to_save, target_parameters,
/// and invalid patterns.
FailureOr<LoraAdapterConfig> parseLoraConfig(StringRef json, std::string &error);

struct ModelGenOptions {
  std::optional<int64_t> numLayers;    ///< Override num_hidden_layers.
  std::string dtype = "f32";           ///< f32, f16 or bf16.
  int64_t batch = 1;
  std::optional<int64_t> seqLen;       ///< Static sequence length (default `seq`, dynamic).
  bool kvCache = false;                ///< Past K/V inputs and present K/V outputs.
  std::optional<int64_t> pastLen;      ///< Static past length (default `past_seq`).
  /// An input `attention_mask` [batch, past_seq + seq] (i64; with a KV cache
  /// its length is the dim `total_seq`, without one `seq`): transformers'
  /// padding mask, 1 for a position to attend, 0 for padding. Attention
  /// stays causal by cache slot and the RoPE positions are `position_ids`,
  /// as in transformers, so a history left-padded to a fixed length (a
  /// decode step compiled once) gives the unpadded logits (`position_ids`
  /// is one [seq] for the batch: its rows are padded alike). Llama-4's
  /// chunked layers take their chunks from the key positions the mask
  /// implies (its cumulative sum − 1: the cache must hold every position
  /// from 0, as generate.py's does).
  bool attentionMask = false;
  bool layerOnly = false;              ///< One decoder layer on hidden states.
  /// Every decoder-layer linear weight as NVFP4 (rlx_hir.dequant_linear with
  /// ModelOpt's parameter names: <name>.weight [N, K/2] i8, .weight_scale
  /// [N, K/16] f8E4M3FN, .weight_scale_2 f32); embeddings, norms and the LM
  /// head stay in `dtype`.
  bool nvfp4Weights = false;
  /// MoE expert weights under transformers 5's in-memory names, stacked:
  /// `<mlp>.experts.gate_up_proj` [E, 2I, H] and `<mlp>.experts.down_proj`
  /// [E, H, I] (named_parameters()). Default: the per-expert names that
  /// save_pretrained writes and checkpoints hold (`experts.<e>.gate_proj`,
  /// Mixtral's `experts.<e>.w1`/`w3`/`w2`), stacked in the graph from
  /// parameters only, so weight packing does it once at load.
  bool stackedExperts = false;
  std::string funcName = "forward";
  /// LoRA adapters on the linear layers they target. One: parameters
  /// `base_model.model.<module>.lora_A.weight` [r, in] and `.lora_B.weight`
  /// [out, r] (the names PEFT's save_pretrained writes), applied with
  /// rlx_mir.lora_matmul, or with `loraMerge` merged into the weight
  /// (W + s·B·A, a product of parameters computed once at load). Several
  /// (each named): PEFT's in-memory names `...lora_A.<name>.weight`, stacked
  /// (zero-padded to the largest rank) once at load, and an input
  /// `adapter_ids` [batch] (i64: the index of each sequence's adapter in
  /// this list, −1 for the base model alone) selects one per sequence.
  struct LoraAdapter {
    std::string name;
    LoraAdapterConfig config;
  };
  std::vector<LoraAdapter> loras;
  bool loraMerge = false;
};

/// A `preprocessor_config.json` of transformers' `WhisperFeatureExtractor`
/// (its `__init__` arguments): the log-mel front end's parameters.
struct FeatureExtractorConfig {
  int64_t featureSize = 80;   ///< n_mels
  int64_t samplingRate = 16000;
  int64_t hopLength = 160;
  int64_t chunkLength = 30;   ///< seconds; n_samples = chunk_length · sampling_rate
  int64_t nFft = 400;
  int64_t nSamples() const { return chunkLength * samplingRate; }
};

/// True when `json` is a feature extractor's config (it names a
/// `feature_extractor_type`), not a model's.
bool isFeatureExtractorConfig(StringRef json);

/// Reads a WhisperFeatureExtractor config; any other extractor, a
/// `padding_value` other than 0 or a `dither` other than 0 (random noise) is
/// an error naming what is supported.
FailureOr<FeatureExtractorConfig> parseFeatureExtractorConfig(StringRef json,
                                                              std::string &error);

/// The front end as a HIR function `options.funcName`: input `audio`
/// [batch, seq] (seq = `options.seqLen`, default n_samples; batch =
/// `options.batch`) in `options.dtype`, output `input_features` [batch,
/// feature_size, frames] (rlx_hir.log_mel_spectrogram; frames =
/// n_samples / hop_length for an even n_fft).
OwningOpRef<ModuleOp> buildFeatureExtractor(MLIRContext *ctx, const FeatureExtractorConfig &config,
                                            const ModelGenOptions &options);

/// Builds the model as a HIR module; emits a diagnostic and returns null on
/// an inconsistent config.
OwningOpRef<ModuleOp> buildModel(MLIRContext *ctx, const ModelConfig &config,
                                 const ModelGenOptions &options);

} // namespace mlir::rlx

#endif // RLX_MODELGEN_MODELGEN_H
