//===- ModelBuilder.h - The attention models' builder ---------------------===//
//
// ModelBuilder (ModelBuilder.cpp) builds the attention decoder models of
// lib/ModelGen: Llama-family, GPT-2, mixtures of experts, DeepSeek-V3's
// latent attention, Llama-4, and Qwen3-Next's hybrid of gated attention and
// Gated DeltaNet layers (HybridLayers.cpp). Internal to lib/ModelGen.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_MODELGEN_MODELBUILDER_H
#define RLX_LIB_MODELGEN_MODELBUILDER_H

#include "FunctionBuilder.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/ModelGen/ModelGen.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SaveAndRestore.h"

namespace mlir::rlx {

class ModelBuilder : FunctionBuilder {
public:
  ModelBuilder(MLIRContext *ctx, const ModelConfig &c, const ModelGenOptions &o)
      : FunctionBuilder(ctx, o, c.architecture), c(c) {}

  OwningOpRef<ModuleOp> build();

private:
  /// A layer's output and its decode state: present K/V, or a recurrent
  /// layer's conv and SSM states (`key`, `value`) with `recurrent`.
  struct LayerOut {
    Value hidden, key, value;
    bool recurrent = false;
  };

  Value param(const Twine &name, ArrayRef<int64_t> shape) {
    std::string n = name.str();
    if (!inLoraWeight && StringRef(n).ends_with(".weight"))
      refuseLora(StringRef(n).drop_back(strlen(".weight")));
    return addArg(tensor(shape), "rlx.param", n);
  }
  /// A LoRA target that is not built by weight() (packed q|k|v, experts,
  /// the LM head, embeddings) would run without its adapter: an error.
  void refuseLora(StringRef module) {
    // "all-linear" means nn.Linear modules: norms and embeddings are not
    // (every other weight counts as one, so a linear layer built here
    // without its adapter is refused rather than skipped).
    StringRef last = module.contains('.') ? module.rsplit('.').second : module;
    bool linearLike = !last.contains("norm") && !last.contains("embed") &&
                      !last.starts_with("ln_") && !llvm::is_contained({"wte", "wpe"}, last);
    for (const ModelGenOptions::LoraAdapter &adapter : o.loras) {
      if (adapter.config.allLinear && !linearLike)
        continue;
      std::string error;
      auto target = adapter.config.forModule(module, module == "lm_head", error);
      if (succeeded(target) && !*target)
        continue;
      emitError(loc) << "LoRA adapter" << (adapter.name.empty() ? "" : " '" + adapter.name + "'")
                     << ": "
                     << (failed(target) ? error
                                        : "it targets '" + module.str() +
                                              "', which RLX does not build as a linear layer "
                                              "with adapters (packed projections, experts, "
                                              "embeddings, the LM head)");
      mb.fail();
      return;
    }
  }
  RopeScalingAttr ropeScaling() {
    std::optional<RopeScalingKind> kind =
        llvm::StringSwitch<std::optional<RopeScalingKind>>(c.ropeScalingType)
            .Case("llama3", RopeScalingKind::Llama3)
            .Case("linear", RopeScalingKind::Linear)
            .Case("yarn", RopeScalingKind::Yarn)
            .Default(std::nullopt);
    if (!kind)
      return {};
    // The factors are the config's: the attribute's own rules judge them.
    auto attr = RopeScalingAttr::getChecked(
        [&] { return emitError(loc); }, ctx, *kind, APFloat(c.ropeFactor),
        APFloat(c.ropeLowFreqFactor), APFloat(c.ropeHighFreqFactor), c.ropeOriginalMaxPositions,
        APFloat(c.ropeBetaFast), APFloat(c.ropeBetaSlow), c.ropeTruncate,
        APFloat(*kind == RopeScalingKind::Yarn ? c.ropeAttentionFactor : 0.0));
    if (!attr)
      mb.fail();
    return attr;
  }
  ActivationKind activation() { return *activationKind(c.activation); }

  Value linear(Value x, Value w, Value bias, ActivationKind act = ActivationKind::None,
               WeightLayout layout = WeightLayout::OutIn) {
    return mb.createWithOptional<hir::LinearOp>(x, w, bias, act, layout);
  }
  /// A linear layer's weight: dense `<name>.weight`, or with NVFP4 weights
  /// the packed codes `<name>.weight`, E4M3 block scales
  /// `<name>.weight_scale` and global scale `<name>.weight_scale_2`
  /// (NVIDIA ModelOpt's names).
  struct Weight {
    Value dense, codes, scales, global;
    WeightLayout layout = WeightLayout::OutIn;
    /// LoRA adapters applied with lora_matmul (not merged): [r, in] and
    /// [out, r], or stacked [n, r, in] and [n, out, r] for several.
    Value loraA, loraB;
    SmallVector<double> loraScales;
  };
  /// Dense [out, in] weights stored one after another in the rows of the
  /// checkpoint tensor `name`.weight.
  SmallVector<Weight> packedRows(const Twine &name, ArrayRef<int64_t> outs, int64_t in) {
    int64_t total = 0;
    for (int64_t o : outs)
      total += o;
    Value all = param(name + ".weight", {total, in});
    SmallVector<Weight> parts;
    int64_t offset = 0;
    for (int64_t o : outs) {
      Weight w;
      w.dense = mb.slice(all, {offset, 0}, {o, in}, {1, 1});
      parts.push_back(w);
      offset += o;
    }
    return parts;
  }
  Weight weight(const Twine &name, int64_t out, int64_t in,
                WeightLayout layout = WeightLayout::OutIn) {
    bool outIn = layout == WeightLayout::OutIn;
    Weight w;
    w.layout = layout;
    if (!o.nvfp4Weights) {
      inLoraWeight = outIn;
      w.dense = param(name + ".weight", outIn ? ArrayRef<int64_t>{out, in}
                                              : ArrayRef<int64_t>{in, out});
      inLoraWeight = false;
      if (outIn && !o.loras.empty())
        addLora(name.str(), w, out, in);
      return w;
    }
    if (!o.loras.empty()) {
      emitError(loc) << "LoRA adapters on NVFP4 weights are not supported";
      mb.fail();
    }
    SmallVector<int64_t> codes = outIn ? SmallVector<int64_t>{out, in / 2}
                                       : SmallVector<int64_t>{in / 2, out};
    SmallVector<int64_t> scales = outIn ? SmallVector<int64_t>{out, in / 16}
                                        : SmallVector<int64_t>{in / 16, out};
    w.codes = addArg(tensor(codes, b.getI8Type()), "rlx.param", (name + ".weight").str());
    w.scales = addArg(tensor(scales, b.getType<Float8E4M3FNType>()), "rlx.param",
                      (name + ".weight_scale").str());
    w.global = addArg(tensor({}, b.getF32Type()), "rlx.param", (name + ".weight_scale_2").str());
    return w;
  }
  /// PEFT's parameters of the adapter on `module` when it targets it:
  /// applied by proj() or merged into the weight (W + s·B·A, PEFT's merge).
  void addLora(const std::string &module, Weight &w, int64_t out, int64_t in) {
    SmallVector<std::optional<LoraAdapterConfig::Module>> targets;
    for (const ModelGenOptions::LoraAdapter &adapter : o.loras) {
      std::string error;
      auto target = adapter.config.forModule(module, /*isLmHead=*/false, error);
      if (failed(target)) {
        emitError(loc) << "LoRA adapter: " << error;
        mb.fail();
        return;
      }
      targets.push_back(*target);
    }
    if (llvm::none_of(targets, [](const auto &t) { return t.has_value(); }))
      return;
    ++loraModules;
    std::string prefix = "base_model.model." + module;
    Type et = cast<RankedTensorType>(w.dense.getType()).getElementType();
    // The adapters' own parameters are not targets (a regex target such as
    // ".*q_proj.*" also matches "...q_proj.lora_A").
    llvm::SaveAndRestore adapterParams(inLoraWeight, true);
    if (o.loras.size() == 1) {
      int64_t r = targets[0]->r;
      Value a = param(prefix + ".lora_A.weight", {r, in});
      Value bm = param(prefix + ".lora_B.weight", {out, r});
      double s = targets[0]->scale;
      if (o.loraMerge) {
        // PEFT merges in f32 (its adapters stay f32): the delta in f32,
        // rounded once into the weight's type.
        Type f32 = b.getF32Type();
        auto wide = [&](Value v) { return et == f32 ? v : mb.cast(v, f32); };
        Value delta = mb.mul(mb.matmul(wide(bm), wide(a)), mb.scalar(f32, s));
        w.dense = mb.add(w.dense, et == f32 ? delta : mb.cast(delta, et));
        return;
      }
      w.loraA = a;
      w.loraB = bm;
      w.loraScales = {s};
      return;
    }
    // Several: each adapter's A [r, in] and B [out, r] zero-padded to the
    // largest rank (zero rows of A and columns of B add nothing) and
    // stacked; an adapter that does not target this layer is all zeros.
    int64_t rmax = 0;
    for (const auto &t : targets)
      rmax = std::max(rmax, t ? t->r : 0);
    auto zeros = [&](int64_t rows, int64_t cols) {
      return mb.broadcast(mb.scalar(et, 0.0), {rows, cols});
    };
    SmallVector<Value> as, bs;
    for (auto [adapter, t] : llvm::zip(o.loras, targets)) {
      Value a = zeros(rmax, in), bm = zeros(out, rmax);
      if (t) {
        a = param(prefix + ".lora_A." + adapter.name + ".weight", {t->r, in});
        bm = param(prefix + ".lora_B." + adapter.name + ".weight", {out, t->r});
        if (t->r < rmax) {
          a = mb.concat({a, zeros(rmax - t->r, in)}, 0);
          bm = mb.concat({bm, zeros(out, rmax - t->r)}, 1);
        }
      }
      as.push_back(mb.reshape(a, {1, rmax, in}));
      bs.push_back(mb.reshape(bm, {1, out, rmax}));
      w.loraScales.push_back(t ? t->scale : 0.0);
    }
    w.loraA = mb.concat(as, 0);
    w.loraB = mb.concat(bs, 0);
  }
  Value proj(Value x, const Weight &w, Value bias, ActivationKind act = ActivationKind::None) {
    if (w.loraA) {
      Value y = mb.createWithOptional<mir::LoraMatmulOp>(x, w.dense, w.loraA, w.loraB,
                                                         loraTokens, w.loraScales);
      if (bias)
        y = mb.add(y, bias);
      return mb.activation(act, y);
    }
    if (w.dense)
      return linear(x, w.dense, bias, act, w.layout);
    return mb.createWithOptional<hir::DequantLinearOp>(x, w.codes, w.scales, w.global, bias,
                                                       QuantScheme::NVFP4, act, w.layout);
  }
  /// Past K/V for layer i ([B, past, width] each: num_kv_heads · head_dim
  /// unless given), or null without a cache.
  std::pair<Value, Value> pastKv(int64_t i, int64_t keyWidth = 0, int64_t valueWidth = 0) {
    if (!o.kvCache)
      return {};
    int64_t kv = c.numKvHeads * c.headDim;
    Value k = input(("past_key_values." + Twine(i) + ".key").str(),
                    {o.batch, pastLen, keyWidth ? keyWidth : kv}, {"batch", "past_seq", ""});
    Value v = input(("past_key_values." + Twine(i) + ".value").str(),
                    {o.batch, pastLen, valueWidth ? valueWidth : kv}, {"batch", "past_seq", ""});
    return {k, v};
  }
  /// The attention mask operand with `attention_mask` (null without):
  /// i1 [B, S, T], true where the key slot holds a token; for Llama-4's
  /// chunked layers (`chunk`) also where the key's position (the mask's
  /// cumulative sum − 1) is in the query's chunk of `chunk` positions.
  Value paddingMask(std::optional<int64_t> chunk = std::nullopt) {
    if (!keyMask)
      return {};
    Value &memo = chunk ? chunkMask : plainMask; // one per model
    if (!memo)
      memo = buildPaddingMask(chunk);
    return memo;
  }
  Value buildPaddingMask(std::optional<int64_t> chunk) {
    if (!chunk)
      return keyPaddingMask(keyMask, queryPositions);
    Type i1 = b.getI1Type(), i64 = b.getI64Type();
    Value no = mb.scalar(i1, 0), yes = mb.scalar(i1, 1);
    Value valid = mb.cast(keyMask, i1);
    Value keyPositions = mb.sub(mb.create<mir::CumsumOp>(keyMask, int64_t(-1), false, false),
                                mb.scalar(i64, 1));
    Value size = mb.scalar(i64, static_cast<double>(*chunk));
    // Positions are non-negative, so the integer division is a floor.
    Value otherChunk = mb.cast(mb.sub(mb.div(keyPositions, size), mb.div(queryPositions, size)), i1);
    return mb.select(valid, mb.select(otherChunk, no, yes), no);
  }
  Value rmsNorm(Value x, const std::string &weightName, int64_t width,
                std::optional<double> eps = std::nullopt) {
    return mb.createWithOptional<hir::RmsNormOp>(x, param(weightName, {width}),
                                                 b.getF64FloatAttr(eps.value_or(c.eps)));
  }
  Value rope(Value x, Value positions, int64_t headDim, RopeStyle style = RopeStyle::NeoX) {
    return mb.createWithOptional<hir::RopeOp>(x, positions, Value(), Value(),
                                              b.getI64IntegerAttr(headDim), IntegerAttr(),
                                              b.getF64FloatAttr(c.ropeTheta),
                                              RopeStyleAttr::get(ctx, style), ropeScaling());
  }

  LayerOut llamaLayer(int64_t i, Value x, Value positions);
  LayerOut deepseekLayer(int64_t i, Value x, Value positions);
  LayerOut llama4Layer(int64_t i, Value x, Value positions);
  Value llama4Moe(const std::string &prefix, Value x);
  std::pair<Value, LayerOut> mlaAttention(const std::string &prefix, int64_t i, Value x,
                                          Value positions);
  Value moeBlock(const std::string &layerPrefix, Value x);
  Value gptOssMoeBlock(const std::string &prefix, Value x);
  std::pair<Value, Value> expertWeights(const std::string &prefix);
  LayerOut gpt2Layer(int64_t i, Value x);
  // HybridLayers.cpp.
  LayerOut qwen3NextLayer(int64_t i, Value x, Value positions);
  /// Qwen3NextAttention (with Qwen3-Next's output gate and head norms) or
  /// BambaAttention (Llama's), RoPE on `rotaryDim` dims.
  LayerOut hybridAttention(const std::string &prefix, int64_t i, Value x, Value positions);
  LayerOut bambaLayer(int64_t i, Value x, Value positions);
  LayerOut gatedDeltaNet(const std::string &prefix, int64_t i, Value x);
  /// A norm's weight: the checkpoint's, or 1 + it (Qwen3NextRMSNorm, which
  /// forms it in f32: so it is for a model in bf16 or f16).
  Value normWeight(const std::string &name, int64_t width) {
    Value w = param(name, {width});
    if (!c.zeroCenteredNorms)
      return w;
    Type f32 = b.getF32Type();
    return mb.add(mb.widen(w, f32), mb.scalar(f32, 1.0));
  }
  /// RMSNorm of `x` computed in the weight's element type (f32 for
  /// normWeight's 1 + w), the result in x's: transformers' Qwen3NextRMSNorm
  /// rounds once.
  Value normIn(Value x, Value w) {
    if (!x || !w)
      return mb.fail();
    Type et = mir::MIRBuilder::elementType(x), wt = mir::MIRBuilder::elementType(w);
    return mb.widen(mb.createWithOptional<hir::RmsNormOp>(mb.widen(x, wt), w,
                                                          b.getF64FloatAttr(c.eps)),
                    et);
  }
  /// With `attention_mask`: [B, S, 1] in the model's dtype, 1 where the
  /// query token is not padding (the mask's last S columns); else null.
  Value tokenMask();

  const ModelConfig &c;
  /// While weight() creates a dense [out, in] weight (which gets its
  /// adapter), and how many layers got one.
  bool inLoraWeight = false;
  int64_t loraModules = 0;
  /// With several adapters: each token's adapter index [B, S].
  Value loraTokens;
  int64_t seqLen = kDyn, pastLen = kDyn;
  Value embedTable;
  /// With `attention_mask`: the mask [B, 1, T] and position_ids [1, S, 1] (i64).
  Value keyMask, queryPositions;
  Value plainMask, chunkMask, tokenMaskMemo;
};

} // namespace mlir::rlx

#endif // RLX_LIB_MODELGEN_MODELBUILDER_H
