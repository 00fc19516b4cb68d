//===- WhisperBuilder.cpp - Whisper's encoder and decoder from its config --===//
//
// transformers' WhisperForConditionalGeneration with its checkpoint's
// parameter names, as one module of two functions:
//
// - @encoder (WhisperEncoder): input_features [B, mels, 2·positions] →
//   last_hidden_state. The stem (conv1 k3 + GELU, conv2 k3 stride 2 + GELU,
//   both padding 1, exact GELU whatever activation_function is) as im2col + linear on time-major activations, the
//   sinusoidal positions from the checkpoint (`embed_positions.weight`),
//   pre-norm layers (LayerNorm, self-attention without a mask, k_proj
//   without bias; LayerNorm, fc1, the activation, fc2) and the final
//   LayerNorm. f16 models clamp the layer outputs to ±(65504 − 1000) as
//   WhisperEncoderLayer does.
// - @decoder (WhisperDecoder + proj_out): decoder_input_ids [B, S],
//   position_ids [S] and encoder_hidden_states → logits. Token plus learned
//   position embeddings, pre-norm layers (causal self-attention; cross
//   attention whose keys and values come from the encoder output; the MLP),
//   the final LayerNorm, and proj_out tied to embed_tokens (or its own
//   weight when tie_word_embeddings is false). As in transformers,
//   scale_embedding does not scale anything.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"
#include "HFConfigReader.h"

#include "RLX/Dialect/HIR/IR/HIROps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rlx;

void mlir::rlx::hfconfig::readWhisper(Reader &r, ModelConfig &c) {
  ModelConfig::Whisper &w = c.whisper;
  c.hiddenSize = r.integer("d_model", 384);
  c.numLayers = r.integer("encoder_layers", 4);
  c.numHeads = c.numKvHeads = r.integer("encoder_attention_heads", 6);
  c.intermediateSize = r.integer("encoder_ffn_dim", 1536);
  c.vocabSize = r.integer("vocab_size", 51865);
  c.maxPositions = r.integer("max_target_positions", 448);
  c.activation = activation(r, "activation_function", "gelu");
  c.eps = 1e-5; // nn.LayerNorm's default
  if (r.has("quantization_config"))
    return r.fail("quantized Whisper checkpoints (quantization_config) are not supported");
  w.numMelBins = r.integer("num_mel_bins", 80);
  w.maxSourcePositions = r.integer("max_source_positions", 1500);
  w.decoderLayers = r.integer("decoder_layers", 4);
  w.decoderHeads = r.integer("decoder_attention_heads", 6);
  w.decoderFfnDim = r.integer("decoder_ffn_dim", 1536);
  if (!r.error.empty())
    return;
  for (auto [key, v] : {std::pair<StringRef, int64_t>{"d_model", c.hiddenSize},
                        {"encoder_layers", c.numLayers},
                        {"encoder_attention_heads", c.numHeads},
                        {"encoder_ffn_dim", c.intermediateSize},
                        {"vocab_size", c.vocabSize},
                        {"num_mel_bins", w.numMelBins},
                        {"max_source_positions", w.maxSourcePositions},
                        {"decoder_layers", w.decoderLayers},
                        {"decoder_attention_heads", w.decoderHeads},
                        {"decoder_ffn_dim", w.decoderFfnDim}})
    if (v < 1 || v > (int64_t{1} << 20))
      return r.fail("'" + key + "' must be in [1, 2^20], got " + Twine(v));
  if (c.numLayers > 4096 || w.decoderLayers > 4096)
    return r.fail("more than 4096 layers");
  if (c.hiddenSize % c.numHeads != 0)
    return r.fail("d_model must be divisible by encoder_attention_heads");
  if (c.hiddenSize % w.decoderHeads != 0)
    return r.fail("d_model must be divisible by decoder_attention_heads");
  c.headDim = c.hiddenSize / c.numHeads;
  c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
}

namespace {

/// One of the module's functions (`o.funcName`).
class WhisperBuilder : FunctionBuilder {
public:
  WhisperBuilder(MLIRContext *ctx, const ModelConfig &c, const ModelGenOptions &o)
      : FunctionBuilder(ctx, o, c.architecture), c(c) {}

  OwningOpRef<ModuleOp> buildEncoder();
  OwningOpRef<ModuleOp> buildDecoder();

private:
  Value param(const Twine &name, ArrayRef<int64_t> shape) {
    return addArg(tensor(shape), "rlx.param", name.str());
  }
  Value linear(Value x, const std::string &name, int64_t out, int64_t in, bool bias = true,
               ActivationKind act = ActivationKind::None) {
    Value w = param(name + ".weight", {out, in});
    Value bv = bias ? param(name + ".bias", {out}) : Value();
    return mb.createWithOptional<hir::LinearOp>(x, w, bv, act, WeightLayout::OutIn);
  }
  Value layerNorm(Value x, const std::string &name) {
    Value w = param(name + ".weight", {c.hiddenSize});
    Value bias = param(name + ".bias", {c.hiddenSize});
    return mb.createWithOptional<hir::LayerNormOp>(x, w, bias, b.getF64FloatAttr(c.eps));
  }
  ActivationKind activation() { return *activationKind(c.activation); }
  /// nn.Conv1d(in, out, 3, stride, padding=1) + GELU (WhisperEncoder's
  /// stem applies nn.functional.gelu whatever activation_function says) on
  /// time-major x [B, T, in] → [B, T', out]: the three taps side by side
  /// (tap-major) times the weight [out, in, 3] as [out, 3·in].
  Value conv(Value x, const std::string &name, int64_t in, int64_t out, int64_t stride);
  /// WhisperAttention's keys and values of `kv` under `name` (k_proj
  /// without a bias, v_proj with one).
  std::pair<Value, Value> keysValues(Value kv, const std::string &name) {
    int64_t d = c.hiddenSize;
    return {linear(kv, name + ".k_proj", d, d, /*bias=*/false), linear(kv, name + ".v_proj", d, d)};
  }
  /// WhisperAttention under `name`: queries from `x` (q_proj with a bias)
  /// over keys `k` and values `v`, then out_proj.
  Value attention(Value x, Value k, Value v, const std::string &name, int64_t heads,
                  MaskKind kind, Value mask = {});
  struct DecoderLayerOut {
    Value hidden, key, value;
  };
  /// The decoder layer's keys and values: the encoder output's
  /// (encoder_attn) and, with a cache, `past` self-attention K/V.
  /// The MLP block (final_layer_norm, fc1, the activation, fc2) plus the
  /// residual, and WhisperEncoderLayer's f16 clamp.
  Value mlp(Value x, const std::string &p, int64_t ffn);
  Value encoderLayer(int64_t i, Value x);
  DecoderLayerOut decoderLayer(int64_t i, Value x, std::pair<Value, Value> cross,
                               std::pair<Value, Value> past, Value mask);
  std::string decoderPrefix(int64_t i) {
    return "model.decoder.layers." + std::to_string(i) + ".";
  }

  const ModelConfig &c;
};

Value WhisperBuilder::conv(Value x, const std::string &name, int64_t in, int64_t out,
                           int64_t stride) {
  if (mb.failed())
    return {};
  int64_t t = mir::MIRBuilder::shapeOf(x)[1], tOut = (t + 2 - 3) / stride + 1;
  auto zerosType = tensor({o.batch, 1, in});
  Value zeros = mb.create<mir::ConstantOp>(
      DenseElementsAttr::get(zerosType, b.getFloatAttr(zerosType.getElementType(), 0.0)));
  Value padded = mb.concat({zeros, x, zeros}, 1);
  SmallVector<Value> taps;
  for (int64_t k = 0; k < 3; ++k)
    taps.push_back(mb.slice(padded, {0, k, 0}, {-1, tOut, -1}, {1, stride, 1}));
  Value cols = mb.concat(taps, 2); // [B, T', 3·in]
  Value w = param(name + ".weight", {out, in, 3});
  Value wt = mb.reshape(mb.transpose(w, {0, 2, 1}), {out, 3 * in});
  Value bias = param(name + ".bias", {out});
  return mb.createWithOptional<hir::LinearOp>(cols, wt, bias, ActivationKind::Gelu,
                                              WeightLayout::OutIn);
}

Value WhisperBuilder::attention(Value x, Value k, Value v, const std::string &name,
                                int64_t heads, MaskKind kind, Value mask) {
  int64_t d = c.hiddenSize;
  Value q = linear(x, name + ".q_proj", d, d);
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      q, k, v, mask, Value(), b.getI64IntegerAttr(heads), b.getI64IntegerAttr(heads),
      b.getI64IntegerAttr(d / heads), MaskKindAttr::get(ctx, kind), IntegerAttr(), FloatAttr(),
      FloatAttr(), AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  return linear(attn, name + ".out_proj", d, d);
}

Value WhisperBuilder::mlp(Value x, const std::string &p, int64_t ffn) {
  int64_t d = c.hiddenSize;
  Value f = linear(layerNorm(x, p + "final_layer_norm"), p + "fc1", ffn, d, /*bias=*/true,
                   activation());
  return mb.add(x, linear(f, p + "fc2", d, ffn));
}

Value WhisperBuilder::encoderLayer(int64_t i, Value x) {
  std::string p = "model.encoder.layers." + std::to_string(i) + ".";
  Value a = layerNorm(x, p + "self_attn_layer_norm");
  auto [k, v] = keysValues(a, p + "self_attn");
  x = mb.add(x, attention(a, k, v, p + "self_attn", c.numHeads, MaskKind::None));
  x = mlp(x, p, c.intermediateSize);
  if (elementType().isF16()) {
    // WhisperEncoderLayer keeps f16 activations finite.
    double limit = 65504.0 - 1000.0;
    x = mb.create<mir::MinOp>(mb.create<mir::MaxOp>(x, mb.scalar(elementType(), -limit)),
                              mb.scalar(elementType(), limit));
  }
  return x;
}

WhisperBuilder::DecoderLayerOut WhisperBuilder::decoderLayer(int64_t i, Value x,
                                                             std::pair<Value, Value> cross,
                                                             std::pair<Value, Value> past,
                                                             Value mask) {
  std::string p = decoderPrefix(i);
  int64_t heads = c.whisper.decoderHeads;
  Value a = layerNorm(x, p + "self_attn_layer_norm");
  auto [k, v] = keysValues(a, p + "self_attn");
  if (past.first) {
    k = mb.concat({past.first, k}, 1);
    v = mb.concat({past.second, v}, 1);
  }
  x = mb.add(x, attention(a, k, v, p + "self_attn", heads, MaskKind::Causal, mask));
  a = layerNorm(x, p + "encoder_attn_layer_norm");
  x = mb.add(x, attention(a, cross.first, cross.second, p + "encoder_attn", heads,
                          MaskKind::None));
  return {mlp(x, p, c.whisper.decoderFfnDim), k, v};
}

OwningOpRef<ModuleOp> WhisperBuilder::buildEncoder() {
  OwningOpRef<ModuleOp> module = begin();
  const ModelConfig::Whisper &w = c.whisper;
  int64_t frames = 2 * w.maxSourcePositions, d = c.hiddenSize;
  Value features = input("input_features", {o.batch, w.numMelBins, frames}, {"batch", "", ""});
  Value x = mb.transpose(features, {0, 2, 1}); // [B, T, mels]
  x = conv(x, "model.encoder.conv1", w.numMelBins, d, 1);
  x = conv(x, "model.encoder.conv2", d, d, 2); // [B, max_source_positions, d]
  x = mb.add(x, param("model.encoder.embed_positions.weight", {w.maxSourcePositions, d}));
  int64_t layers = o.numLayers.value_or(c.numLayers);
  for (int64_t i = 0; i < layers && !mb.failed(); ++i)
    x = encoderLayer(i, x);
  x = layerNorm(x, "model.encoder.layer_norm");
  output(x, "last_hidden_state");
  // With a cache, the cross-attention keys and values of every decoder
  // layer, computed once per input.
  if (o.kvCache)
    for (int64_t i = 0; i < o.numLayers.value_or(w.decoderLayers) && !mb.failed(); ++i) {
      auto [k, v] = keysValues(x, decoderPrefix(i) + "encoder_attn");
      std::string name = "cross_key_values." + std::to_string(i) + ".";
      output(k, name + "key");
      output(v, name + "value");
    }
  return finish(std::move(module));
}

OwningOpRef<ModuleOp> WhisperBuilder::buildDecoder() {
  OwningOpRef<ModuleOp> module = begin();
  const ModelConfig::Whisper &w = c.whisper;
  int64_t d = c.hiddenSize, seqLen = o.seqLen.value_or(kDyn);
  Type i64 = b.getI64Type();
  Value ids = input("decoder_input_ids", {o.batch, seqLen}, {"batch", "seq"}, i64);
  Value positions = input("position_ids", {seqLen}, {"seq"}, i64);
  Value encoderStates;
  if (!o.kvCache)
    encoderStates = input("encoder_hidden_states", {o.batch, w.maxSourcePositions, d},
                          {"batch", "", ""});
  Value embed = param("model.decoder.embed_tokens.weight", {c.vocabSize, d});
  Value x = mb.create<hir::EmbeddingOp>(ids, embed);
  Value table = param("model.decoder.embed_positions.weight", {c.maxPositions, d});
  x = mb.add(x, mb.create<hir::EmbeddingOp>(positions, table));
  int64_t layers = o.numLayers.value_or(w.decoderLayers);
  int64_t pastLen = o.pastLen.value_or(kDyn);
  // The padding mask [B, past_seq + seq] (1: the slot holds a token): a
  // history left-padded to a fixed capacity, one compiled decode step.
  Value mask;
  if (o.attentionMask) {
    int64_t total = !o.kvCache                                ? seqLen
                    : seqLen == kDyn || pastLen == kDyn ? kDyn
                                                              : seqLen + pastLen;
    Value keys = input("attention_mask", {o.batch, total},
                       {"batch", o.kvCache ? "total_seq" : "seq"}, i64);
    mask = keyPaddingMask(mb.reshape(keys, mir::MIRBuilder::pattern({o.batch, 1, total})),
                          mb.reshape(positions, {1, -1, 1}));
  }
  SmallVector<DecoderLayerOut> presents;
  for (int64_t i = 0; i < layers && !mb.failed(); ++i) {
    std::pair<Value, Value> cross, past;
    if (o.kvCache) {
      auto in = [&](const std::string &name, int64_t len, StringRef dim) {
        return input(name, {o.batch, len, d}, {"batch", dim, ""});
      };
      std::string n = std::to_string(i);
      past = {in("past_key_values." + n + ".key", pastLen, "past_seq"),
              in("past_key_values." + n + ".value", pastLen, "past_seq")};
      cross = {in("cross_key_values." + n + ".key", w.maxSourcePositions, ""),
               in("cross_key_values." + n + ".value", w.maxSourcePositions, "")};
    } else {
      cross = keysValues(encoderStates, decoderPrefix(i) + "encoder_attn");
    }
    presents.push_back(decoderLayer(i, x, cross, past, mask));
    x = presents.back().hidden;
  }
  x = layerNorm(x, "model.decoder.layer_norm");
  Value head = c.tieEmbeddings ? embed : param("proj_out.weight", {c.vocabSize, d});
  output(mb.createWithOptional<hir::LinearOp>(x, head, Value(), ActivationKind::None,
                                              WeightLayout::OutIn),
         "logits");
  if (o.kvCache)
    for (auto [i, out] : llvm::enumerate(presents)) {
      output(out.key, "present." + std::to_string(i) + ".key");
      output(out.value, "present." + std::to_string(i) + ".value");
    }
  return finish(std::move(module));
}

} // namespace

OwningOpRef<ModuleOp> mlir::rlx::buildWhisperModel(MLIRContext *ctx, const ModelConfig &c,
                                                   const ModelGenOptions &o) {
  if (o.batch < 1) {
    emitError(NameLoc::get(StringAttr::get(ctx, c.architecture)))
        << "Whisper needs a static batch of at least 1, got " << o.batch;
    return nullptr;
  }
  if (o.layerOnly || o.nvfp4Weights || !o.loras.empty()) {
    emitError(NameLoc::get(StringAttr::get(ctx, c.architecture)))
        << "Whisper is built as @encoder and @decoder: --layer-only, --nvfp4-weights and LoRA "
           "adapters do not apply";
    return nullptr;
  }
  ModelGenOptions encoderOptions = o, decoderOptions = o;
  encoderOptions.funcName = "encoder";
  decoderOptions.funcName = "decoder";
  OwningOpRef<ModuleOp> module = WhisperBuilder(ctx, c, encoderOptions).buildEncoder();
  OwningOpRef<ModuleOp> decoder = WhisperBuilder(ctx, c, decoderOptions).buildDecoder();
  if (!module || !decoder)
    return nullptr;
  Operation *fn = &decoder->getBody()->front();
  fn->remove();
  module->getBody()->push_back(fn);
  return module;
}
