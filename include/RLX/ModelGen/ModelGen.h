//===- ModelGen.h - HIR models from Hugging Face config.json ----*- C++ -*-===//
//
// Reads a Hugging Face `config.json` (Llama, Mistral, Qwen2/Qwen3 and GPT-2
// families) and builds the model in rlx_hir: embedding, N decoder layers,
// final norm and LM head (tied or untied), optionally with a KV cache. The
// same generator backs the `rlx-gen` tool and the Python package's
// `rlx.models.from_hf_config`.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_MODELGEN_MODELGEN_H
#define RLX_MODELGEN_MODELGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace mlir::rlx {

/// The architecture families the generator knows.
enum class ModelFamily { Llama, Qwen3, GPT2 };

/// What the generator needs from a config.json, after defaults.
struct ModelConfig {
  ModelFamily family = ModelFamily::Llama;
  std::string architecture;
  int64_t hiddenSize = 0, numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  int64_t intermediateSize = 0, vocabSize = 0, maxPositions = 0;
  double eps = 1e-5, ropeTheta = 10000.0;
  std::string activation = "silu";
  bool tieEmbeddings = false, attentionBias = false, mlpBias = false, qkNorm = false;
  std::optional<int64_t> slidingWindow;
  // rope_scaling (llama3 / linear).
  std::string ropeScalingType;
  double ropeFactor = 1.0, ropeLowFreqFactor = 1.0, ropeHighFreqFactor = 4.0;
  int64_t ropeOriginalMaxPositions = 8192;
};

/// Parses config.json text. `overrides` are `key=value` pairs applied on top
/// of the JSON (same keys as config.json, e.g. hidden_size=256), so tests can
/// shrink a real config while keeping its structure.
FailureOr<ModelConfig> parseHFConfig(StringRef json, ArrayRef<std::string> overrides,
                                     std::string &error);

/// What to build.
struct ModelGenOptions {
  std::optional<int64_t> numLayers;    ///< Override num_hidden_layers.
  std::string dtype = "f32";           ///< f32, f16 or bf16.
  int64_t batch = 1;
  std::optional<int64_t> seqLen;       ///< Static sequence length (default `seq`, dynamic).
  bool kvCache = false;                ///< Past K/V inputs and present K/V outputs.
  std::optional<int64_t> pastLen;      ///< Static past length (default `past_seq`).
  bool layerOnly = false;              ///< One decoder layer on hidden states.
  /// Every decoder-layer linear weight as NVFP4 (rlx_hir.dequant_linear with
  /// ModelOpt's parameter names: <name>.weight [N, K/2] i8, .weight_scale
  /// [N, K/16] f8E4M3FN, .weight_scale_2 f32); embeddings, norms and the LM
  /// head stay in `dtype`.
  bool nvfp4Weights = false;
  std::string funcName = "forward";
};

/// Builds the model as a HIR module; emits a diagnostic and returns null on
/// an inconsistent config.
OwningOpRef<ModuleOp> buildModel(MLIRContext *ctx, const ModelConfig &config,
                                 const ModelGenOptions &options);

} // namespace mlir::rlx

#endif // RLX_MODELGEN_MODELGEN_H
