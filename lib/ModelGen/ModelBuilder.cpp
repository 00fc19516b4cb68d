//===- ModelBuilder.cpp - Build HIR models from a ModelConfig -------------===//
//
// Arguments carry the IO manifest: `rlx.input` / `rlx.param` with Hugging
// Face's tensor names, `rlx.dim_names` for the dynamic dims (`seq`,
// `past_seq`); results carry `rlx.output`. Llama-family layers use
// rlx_hir.decoder_layer; layers with biases (Llama's attention_bias /
// mlp_bias, Qwen2, Qwen3's attention_bias), NVFP4 weights, and GPT-2 layers
// are written with the individual blocks, with the biases exactly where
// transformers' modeling code has them; DeepSeek-V3's layers with its
// multi-head latent attention (deepseekLayer, mlaAttention), Llama-4's
// (llama4Layer, llama4Moe) and Qwen3-Next's hybrid (HybridLayers.cpp).
//
// The sizes come from an untrusted config.json: every op is built through
// its shape rules (TryCreate.h), so a config whose sizes do not fit together
// is a diagnostic, not a fatal error, and the products the builder forms are
// overflow-checked before any type is made.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;

ModelBuilder::LayerOut ModelBuilder::llamaLayer(int64_t i, Value x, Value positions) {
  if (c.mla.enabled())
    return deepseekLayer(i, x, positions);
  if (c.llama4.enabled)
    return llama4Layer(i, x, positions);
  if (c.family == ModelFamily::Qwen3Next)
    return qwen3NextLayer(i, x, positions);
  if (c.family == ModelFamily::Bamba)
    return bambaLayer(i, x, positions);
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t h = c.hiddenSize, q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
  int64_t inter = c.intermediateSize;
  auto [pastK, pastV] = pastKv(i);
  Value inNorm = param(p + "input_layernorm.weight", {h});
  // Phi-3 packs q|k|v into qkv_proj and gate|up into gate_up_proj: the
  // parts are row slices of the checkpoint's tensors (parameter-only, so
  // packing computes them once).
  bool packed = c.family == ModelFamily::Phi3;
  SmallVector<Weight> qkv =
      packed ? packedRows(p + "self_attn.qkv_proj", {q, kv, kv}, h)
             : SmallVector<Weight>{weight(p + "self_attn.q_proj", q, h),
                                   weight(p + "self_attn.k_proj", kv, h),
                                   weight(p + "self_attn.v_proj", kv, h)};
  Weight wq = qkv[0], wk = qkv[1], wv = qkv[2];
  auto bias = [&](bool present, const Twine &name, int64_t n) {
    return present ? param(p + name + ".bias", {n}) : Value();
  };
  Value bq = bias(c.qkvBias, "self_attn.q_proj", q);
  Value bk = bias(c.qkvBias, "self_attn.k_proj", kv);
  Value bv = bias(c.qkvBias, "self_attn.v_proj", kv);
  Value qNorm, kNorm;
  if (c.qkNorm) {
    qNorm = param(p + "self_attn.q_norm.weight", {c.headDim});
    kNorm = param(p + "self_attn.k_norm.weight", {c.headDim});
  }
  if (c.fullWidthQkNorm) {
    qNorm = param(p + "self_attn.q_norm.weight", {q});
    kNorm = param(p + "self_attn.k_norm.weight", {kv});
  }
  Weight wo = weight(p + "self_attn.o_proj", h, q);
  Value bo = bias(c.oProjBias, "self_attn.o_proj", h);
  Value sinks = c.attentionSinks ? param(p + "self_attn.sinks", {c.numHeads}) : Value();
  Value postNorm = param(p + "post_attention_layernorm.weight", {h});
  bool moe = c.isMoeLayer(i);
  Weight wg, wu, wd;
  Value bg, bu, bd;
  if (!moe) {
    SmallVector<Weight> gateUp =
        packed ? packedRows(p + "mlp.gate_up_proj", {inter, inter}, h)
               : SmallVector<Weight>{weight(p + "mlp.gate_proj", inter, h),
                                     weight(p + "mlp.up_proj", inter, h)};
    wg = gateUp[0];
    wu = gateUp[1];
    wd = weight(p + "mlp.down_proj", h, inter);
    bg = bias(c.mlpBias, "mlp.gate_proj", inter);
    bu = bias(c.mlpBias, "mlp.up_proj", inter);
    bd = bias(c.mlpBias, "mlp.down_proj", h);
  }
  bool sliding = c.usesSlidingWindow(i);
  MaskKindAttr mask = MaskKindAttr::get(ctx, sliding ? MaskKind::SlidingWindow : MaskKind::Causal);
  IntegerAttr window = sliding ? b.getI64IntegerAttr(*c.slidingWindow) : IntegerAttr();
  FloatAttr eps = b.getF64FloatAttr(c.eps);
  bool anyBias = c.qkvBias || c.oProjBias || c.mlpBias;
  // Unmerged LoRA adapters need the blocks (their lora_matmul ops).
  bool anyLora = llvm::any_of(ArrayRef<const Weight *>{&wq, &wk, &wv, &wo, &wg, &wu, &wd},
                              [](const Weight *w) { return static_cast<bool>(w->loraA); });
  if (!anyBias && !anyLora && !o.nvfp4Weights && c.moe.numExperts == 0 &&
      !c.fullWidthQkNorm && !c.attentionSinks && !keyMask) {
    auto layer = createMulti<hir::DecoderLayerOp>(
        x, positions, inNorm, wq.dense, wk.dense, wv.dense, wo.dense, postNorm, wg.dense,
        wu.dense, wd.dense, qNorm, kNorm, pastK,
        pastV, b.getI64IntegerAttr(c.numHeads), b.getI64IntegerAttr(c.numKvHeads),
        b.getI64IntegerAttr(c.headDim), eps, b.getF64FloatAttr(c.ropeTheta), ropeScaling(), mask,
        window, ActivationKindAttr::get(ctx, activation()));
    if (!layer)
      return {};
    return {layer.getOutput(), layer.getPresentKey(), layer.getPresentValue()};
  }
  // Layers with biases or NVFP4 weights are written block by block (same
  // semantics).
  Value hn = mb.createWithOptional<hir::RmsNormOp>(x, inNorm, eps);
  Value qs = proj(hn, wq, bq), ks = proj(hn, wk, bk), vs = proj(hn, wv, bv);
  if (c.qkNorm) {
    qs = mb.createWithOptional<hir::QkNormOp>(qs, qNorm, c.headDim, eps.getValue());
    ks = mb.createWithOptional<hir::QkNormOp>(ks, kNorm, c.headDim, eps.getValue());
  }
  if (c.fullWidthQkNorm) {
    qs = mb.createWithOptional<hir::RmsNormOp>(qs, qNorm, eps);
    ks = mb.createWithOptional<hir::RmsNormOp>(ks, kNorm, eps);
  }
  qs = rope(qs, positions, c.headDim);
  ks = rope(ks, positions, c.headDim);
  if (pastK) {
    ks = mb.concat({pastK, ks}, 1);
    vs = mb.concat({pastV, vs}, 1);
  }
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      qs, ks, vs, paddingMask(), sinks, b.getI64IntegerAttr(c.numHeads),
      b.getI64IntegerAttr(c.numKvHeads), b.getI64IntegerAttr(c.headDim), mask, window,
      FloatAttr(), FloatAttr(), AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  Value o1 = proj(attn, wo, bo);
  auto rn = createMulti<hir::ResidualRmsNormOp>(o1, x, postNorm, eps);
  if (!rn)
    return {};
  Value mlp;
  if (moe) {
    mlp = moeBlock(p, rn.getOutput());
  } else if (o.nvfp4Weights || c.mlpBias || wg.loraA || wu.loraA || wd.loraA) {
    // HF LlamaMLP: down(act(gate(x) + bg) * (up(x) + bu)) + bd.
    Value g = proj(rn.getOutput(), wg, bg, activation());
    mlp = proj(mb.mul(g, proj(rn.getOutput(), wu, bu)), wd, bd);
  } else {
    mlp = mb.createWithOptional<hir::SwiGluOp>(rn.getOutput(), wg.dense, wu.dense, wd.dense,
                                               activation(), WeightLayout::OutIn);
  }
  return {mb.add(mlp, rn.getSum()), ks, vs};
}

/// DeepseekV3Attention builds q_a_layernorm and kv_a_layernorm as
/// DeepseekV3RMSNorm(rank): its default eps, not rms_norm_eps.
static constexpr double kLatentNormEps = 1e-6;

/// DeepseekV3Attention (multi-head latent attention) on the normed hidden
/// states `x`: the attention's output before o_proj's residual, and the
/// layer's present K/V (the normalized latent and the rotated shared key,
/// transformers' cache).
std::pair<Value, ModelBuilder::LayerOut>
ModelBuilder::mlaAttention(const std::string &p, int64_t i, Value x, Value positions) {
  const ModelConfig::Mla &m = c.mla;
  int64_t h = c.hiddenSize, heads = c.numHeads, nope = m.qkNopeHeadDim, rot = m.qkRopeHeadDim;
  int64_t vd = m.vHeadDim, qkd = m.qkHeadDim();
  int64_t batch = o.batch == kDyn ? -1 : o.batch;
  auto bias = [&](const std::string &name, int64_t n) {
    return c.qkvBias ? param(p + name + ".bias", {n}) : Value();
  };
  auto linearIn = [&](Value t, const std::string &name, int64_t out, int64_t in, Value bias) {
    return proj(t, weight(p + name, out, in), bias);
  };
  Value q = m.qLoraRank > 0
                ? linearIn(rmsNorm(linearIn(x, "q_a_proj", m.qLoraRank, h,
                                            bias("q_a_proj", m.qLoraRank)),
                                   p + "q_a_layernorm.weight", m.qLoraRank, kLatentNormEps),
                           "q_b_proj", heads * qkd, m.qLoraRank, Value())
                : linearIn(x, "q_proj", heads * qkd, h, Value());
  Value compressed = linearIn(x, "kv_a_proj_with_mqa", m.kvLoraRank + rot, h,
                              bias("kv_a_proj_with_mqa", m.kvLoraRank + rot));
  // rope_interleave: the rotary dims pair (2i, 2i+1). transformers writes
  // the rotated pairs de-interleaved, in q and k alike, which leaves q·k as
  // the interleaved rotation gives it.
  RopeStyle style = m.ropeInterleave ? RopeStyle::GPTJ : RopeStyle::NeoX;
  Value latent = rmsNorm(mb.sliceLast(compressed, 0, m.kvLoraRank), p + "kv_a_layernorm.weight",
                         m.kvLoraRank, kLatentNormEps);
  Value kRot = rope(mb.sliceLast(compressed, m.kvLoraRank, rot), positions, rot, style);
  auto [pastLatent, pastRot] = pastKv(i, m.kvLoraRank, rot);
  if (pastLatent) {
    latent = mb.concat({pastLatent, latent}, 1);
    kRot = mb.concat({pastRot, kRot}, 1);
  }
  // Per-head keys and values from the latent: [B, T, H, nope + v_head_dim].
  Value kv = mb.reshape(linearIn(latent, "kv_b_proj", heads * (nope + vd), m.kvLoraRank, Value()),
                        {batch, -1, heads, nope + vd});
  Value key = mb.concat({mb.sliceLast(kv, 0, nope),
                         mb.broadcast(mb.reshape(kRot, {batch, -1, 1, rot}), {-1, -1, heads, rot})},
                        3);
  Value q4 = mb.reshape(q, {batch, -1, heads, qkd});
  Value qRot = rope(mb.reshape(mb.sliceLast(q4, nope, rot), {batch, -1, heads * rot}), positions,
                    rot, style);
  Value query = mb.concat({mb.sliceLast(q4, 0, nope), mb.reshape(qRot, {batch, -1, heads, rot})}, 3);
  // q·k over qk_head_dim, v with its own v_head_dim (attention reads the
  // value's head size from its width).
  auto flat = [&](Value t, int64_t width) { return mb.reshape(t, {batch, -1, heads * width}); };
  // DeepseekV3Attention's scaling: qk_head_dim^-0.5, times the yarn mscale
  // of mscale_all_dim squared.
  double scale = 1.0 / std::sqrt(static_cast<double>(qkd));
  if (!c.ropeScalingType.empty() && c.ropeMscaleAllDim != 0.0 && c.ropeFactor > 1.0) {
    double mscale = 0.1 * c.ropeMscaleAllDim * std::log(c.ropeFactor) + 1.0;
    scale *= mscale * mscale;
  }
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      flat(query, qkd), flat(key, qkd), flat(mb.sliceLast(kv, nope, vd), vd), paddingMask(),
      Value(),
      b.getI64IntegerAttr(heads), b.getI64IntegerAttr(heads), b.getI64IntegerAttr(qkd),
      MaskKindAttr::get(ctx, MaskKind::Causal), IntegerAttr(), b.getF64FloatAttr(scale),
      FloatAttr(), AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  return {linearIn(attn, "o_proj", h, heads * vd, c.oProjBias ? param(p + "o_proj.bias", {h}) : Value()),
          LayerOut{Value(), latent, kRot}};
}

/// DeepseekV3DecoderLayer: MLA, then a dense MLP (intermediate_size) below
/// first_k_dense_replace and the MoE block with its shared experts above.
ModelBuilder::LayerOut ModelBuilder::deepseekLayer(int64_t i, Value x, Value positions) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  Value hn = rmsNorm(x, p + "input_layernorm.weight", c.hiddenSize);
  auto [attn, present] = mlaAttention(p + "self_attn.", i, hn, positions);
  Value postNorm = param(p + "post_attention_layernorm.weight", {c.hiddenSize});
  auto rn = createMulti<hir::ResidualRmsNormOp>(attn, x, postNorm, b.getF64FloatAttr(c.eps));
  if (!rn)
    return {};
  Value mlp;
  if (c.isMoeLayer(i)) {
    mlp = moeBlock(p, rn.getOutput());
  } else {
    int64_t inter = c.intermediateSize, h = c.hiddenSize;
    mlp = mb.createWithOptional<hir::SwiGluOp>(
        rn.getOutput(), param(p + "mlp.gate_proj.weight", {inter, h}),
        param(p + "mlp.up_proj.weight", {inter, h}), param(p + "mlp.down_proj.weight", {h, inter}),
        activation(), WeightLayout::OutIn);
  }
  return {mb.add(mlp, rn.getSum()), present.key, present.value};
}

/// Llama4TextDecoderLayer: rotating layers (interleaved pairs; chunked
/// attention where layer_types says so; a weightless RMS norm of each q/k
/// head after the rotation) and NoPE layers (full attention; queries scaled
/// by the temperature tuning), then the MoE block or a dense MLP of
/// intermediate_size_mlp.
ModelBuilder::LayerOut ModelBuilder::llama4Layer(int64_t i, Value x, Value positions) {
  const ModelConfig::Llama4 &l = c.llama4;
  std::string p = "model.layers." + std::to_string(i) + ".", a = p + "self_attn.";
  int64_t h = c.hiddenSize, hd = c.headDim, q = c.numHeads * hd, kv = c.numKvHeads * hd;
  auto bias = [&](const std::string &name, int64_t n) {
    return c.qkvBias ? param(a + name + ".bias", {n}) : Value();
  };
  auto [pastK, pastV] = pastKv(i);
  Value hn = rmsNorm(x, p + "input_layernorm.weight", h);
  Value qs = proj(hn, weight(a + "q_proj", q, h), bias("q_proj", q));
  Value ks = proj(hn, weight(a + "k_proj", kv, h), bias("k_proj", kv));
  Value vs = proj(hn, weight(a + "v_proj", kv, h), bias("v_proj", kv));
  bool rotates = l.ropeLayers[i];
  if (rotates) {
    // Llama-4 rotates pairs (2i, 2i+1) (torch.view_as_complex).
    qs = rope(qs, positions, hd, RopeStyle::GPTJ);
    ks = rope(ks, positions, hd, RopeStyle::GPTJ);
    if (l.qkL2Norm) {
      // Llama4TextL2Norm: rms normalization without a weight.
      Value ones = mb.broadcast(mb.scalar(elementType(), 1.0), {hd});
      qs = mb.createWithOptional<hir::QkNormOp>(qs, ones, hd, APFloat(c.eps));
      ks = mb.createWithOptional<hir::QkNormOp>(ks, ones, hd, APFloat(c.eps));
    }
  } else if (l.temperatureTuning) {
    // log1p(⌊(pos + 1) / floor_scale⌋)·attn_scale + 1 per query position
    // (an integer division: positions are non-negative), in f32.
    Type i64 = b.getI64Type(), f32 = b.getF32Type();
    Value steps = mb.div(mb.add(positions, mb.scalar(i64, 1.0)),
                         mb.scalar(i64, static_cast<double>(l.floorScale)));
    Value scale = mb.add(mb.mul(mb.unary<mir::LogOp>(mb.add(mb.cast(steps, f32),
                                                                mb.scalar(f32, 1.0))),
                                mb.scalar(f32, l.attnScale)),
                         mb.scalar(f32, 1.0));
    // transformers multiplies in f32 and rounds the product once.
    Value scaled = mb.mul(elementType() == f32 ? qs : mb.cast(qs, f32),
                          mb.reshape(scale, {-1, 1}));
    qs = elementType() == f32 ? scaled : mb.cast(scaled, elementType());
  }
  if (pastK) {
    ks = mb.concat({pastK, ks}, 1);
    vs = mb.concat({pastV, vs}, 1);
  }
  bool chunked = l.chunkedLayers[i];
  // With attention_mask the chunks come from the key positions it implies
  // (paddingMask) and the kind stays causal: chunked's own rule counts
  // cache slots, which padding shifts.
  bool chunkRule = chunked && !keyMask;
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      qs, ks, vs, chunked ? paddingMask(l.chunkSize) : paddingMask(), Value(),
      b.getI64IntegerAttr(c.numHeads), b.getI64IntegerAttr(c.numKvHeads), b.getI64IntegerAttr(hd),
      MaskKindAttr::get(ctx, chunkRule ? MaskKind::Chunked : MaskKind::Causal),
      chunkRule ? b.getI64IntegerAttr(l.chunkSize) : IntegerAttr(), FloatAttr(), FloatAttr(),
      AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  Value o1 = proj(attn, weight(a + "o_proj", h, q), c.oProjBias ? param(a + "o_proj.bias", {h})
                                                                : Value());
  Value postNorm = param(p + "post_attention_layernorm.weight", {h});
  auto rn = createMulti<hir::ResidualRmsNormOp>(o1, x, postNorm, b.getF64FloatAttr(c.eps));
  if (!rn)
    return {};
  std::string f = p + "feed_forward.";
  Value mlp;
  if (c.isMoeLayer(i)) {
    mlp = llama4Moe(f, rn.getOutput());
  } else {
    int64_t inter = l.denseIntermediateSize;
    mlp = mb.createWithOptional<hir::SwiGluOp>(
        rn.getOutput(), param(f + "gate_proj.weight", {inter, h}),
        param(f + "up_proj.weight", {inter, h}), param(f + "down_proj.weight", {h, inter}),
        activation(), WeightLayout::OutIn);
  }
  return {mb.add(mlp, rn.getSum()), ks, vs};
}

/// Llama4TextMoe: the router's top-k logits through a sigmoid scale the
/// chosen experts' inputs; the experts' [E, H, 2I] gate|up columns and
/// [E, I, H] down become moe_experts' layout from parameters only; the
/// shared expert always adds.
Value ModelBuilder::llama4Moe(const std::string &p, Value x) {
  const ModelConfig::Moe &m = c.moe;
  int64_t e = m.numExperts, inter = m.intermediateSize, h = c.hiddenSize;
  auto route = createMulti<hir::MoeRouterOp>(
      x, param(p + "router.weight", {e, h}), Value(), Value(), b.getI64IntegerAttr(m.topK),
      MoeScoringAttr::get(ctx, MoeScoring::Sigmoid), UnitAttr(), FloatAttr(), IntegerAttr(),
      IntegerAttr());
  if (!route)
    return mb.fail();
  Value gateUp = mb.transpose(param(p + "experts.gate_up_proj", {e, h, 2 * inter}), {0, 2, 1});
  Value down = mb.transpose(param(p + "experts.down_proj", {e, inter, h}), {0, 2, 1});
  Value y = mb.createWithOptional<hir::MoeExpertsOp>(x, route.getWeights(), route.getIds(),
                                                     gateUp, down, Value(), Value(),
                                                     activation(), FloatAttr(), FloatAttr(),
                                                     /*weights_on_input=*/true);
  std::string s = p + "shared_expert.";
  Value shared = mb.createWithOptional<hir::SwiGluOp>(
      x, param(s + "gate_proj.weight", {inter, h}), param(s + "up_proj.weight", {inter, h}),
      param(s + "down_proj.weight", {h, inter}), activation(), WeightLayout::OutIn);
  return mb.add(y, shared);
}

/// The experts' stacked gate_up [E, 2I, H] and down [E, H, I]: transformers
/// 5's parameters, or the checkpoint's per-expert tensors stacked.
std::pair<Value, Value> ModelBuilder::expertWeights(const std::string &prefix) {
  int64_t e = c.moe.numExperts, inter = c.moe.intermediateSize, h = c.hiddenSize;
  if (o.stackedExperts)
    return {param(prefix + "experts.gate_up_proj", {e, 2 * inter, h}),
            param(prefix + "experts.down_proj", {e, h, inter})};
  bool mixtral = c.family == ModelFamily::Mixtral;
  SmallVector<Value> gateUps, downs;
  for (int64_t j = 0; j < e; ++j) {
    std::string ep = prefix + "experts." + std::to_string(j) + ".";
    Value gate = param(ep + (mixtral ? "w1" : "gate_proj") + ".weight", {inter, h});
    Value up = param(ep + (mixtral ? "w3" : "up_proj") + ".weight", {inter, h});
    Value down = param(ep + (mixtral ? "w2" : "down_proj") + ".weight", {h, inter});
    gateUps.push_back(mb.reshape(mb.concat({gate, up}, 0), {1, 2 * inter, h}));
    downs.push_back(mb.reshape(down, {1, h, inter}));
  }
  return {mb.concat(gateUps, 0), mb.concat(downs, 0)};
}

/// GptOssMLP: router with a bias (top-k, then softmax over the k), experts
/// stored [E, H, 2I] with gate and up interleaved (gate_up[..., ::2],
/// [..., 1::2]) and down [E, I, H], with biases and the clamped SwiGLU. The
/// layouts become moe_experts' [E, 2I, H] / [E, H, I] from parameters only,
/// so weight packing does it once at load.
Value ModelBuilder::gptOssMoeBlock(const std::string &p, Value x) {
  int64_t e = c.moe.numExperts, inter = c.moe.intermediateSize, h = c.hiddenSize;
  Value router = param(p + "router.weight", {e, h});
  Value routerBias = param(p + "router.bias", {e});
  Value gateUp, down;
  if (c.moe.mxfp4) {
    // The hub's MXFP4 tensors hold [E, 2I, H] and [E, H, I] (rows the
    // outputs, gate and up rows interleaved): dequantized in the model dtype.
    auto mxfp4 = [&](const std::string &proj, int64_t rows, int64_t k) {
      Type i8 = b.getI8Type();
      Value blocks = addArg(tensor({e, rows, k / 32, 16}, i8), "rlx.param", proj + "_blocks");
      Value scales = addArg(tensor({e, rows, k / 32}, i8), "rlx.param", proj + "_scales");
      return mb.cast(mb.create<mir::Mxfp4DequantizeOp>(blocks, scales), elementType());
    };
    gateUp = mb.reshape(
        mb.transpose(mb.reshape(mxfp4(p + "experts.gate_up_proj", 2 * inter, h),
                                {e, inter, 2, h}),
                     {0, 2, 1, 3}),
        {e, 2 * inter, h});
    down = mxfp4(p + "experts.down_proj", h, inter);
  } else {
    // [E, H, I, 2] -> [E, 2, I, H]: gate rows, then up rows.
    gateUp = mb.reshape(mb.transpose(mb.reshape(param(p + "experts.gate_up_proj",
                                                      {e, h, 2 * inter}),
                                                {e, h, inter, 2}),
                                     {0, 3, 2, 1}),
                        {e, 2 * inter, h});
    down = mb.transpose(param(p + "experts.down_proj", {e, inter, h}), {0, 2, 1});
  }
  Value gateUpBias = param(p + "experts.gate_up_proj_bias", {e, 2 * inter});
  Value downBias = param(p + "experts.down_proj_bias", {e, h});
  gateUpBias = mb.reshape(mb.transpose(mb.reshape(gateUpBias, {e, inter, 2}), {0, 2, 1}),
                          {e, 2 * inter});
  auto route = createMulti<hir::MoeRouterOp>(
      x, router, routerBias, Value(), b.getI64IntegerAttr(c.moe.topK),
      MoeScoringAttr::get(ctx, MoeScoring::TopkSoftmax), UnitAttr(), FloatAttr(), IntegerAttr(),
      IntegerAttr());
  if (!route)
    return mb.fail();
  return mb.create<hir::MoeExpertsOp>(x, route.getWeights(), route.getIds(), gateUp, down,
                                      gateUpBias, downBias, ActivationKind::Silu,
                                      b.getF64FloatAttr(c.moe.swigluAlpha),
                                      b.getF64FloatAttr(c.moe.swigluLimit),
                                      /*weights_on_input=*/false);
}

/// transformers' sparse MoE block: router, experts, and Qwen2-MoE's
/// sigmoid-gated shared expert.
Value ModelBuilder::moeBlock(const std::string &layerPrefix, Value x) {
  // Mixtral's checkpoints keep the pre-v5 module name; transformers 5
  // calls it `mlp` like the others.
  bool legacy = c.family == ModelFamily::Mixtral && !o.stackedExperts;
  std::string p = layerPrefix + (legacy ? "block_sparse_moe." : "mlp.");
  if (c.moe.gptOss)
    return gptOssMoeBlock(p, x);
  const ModelConfig::Moe &m = c.moe;
  // DeepSeek-V3: sigmoid scores, a selection-only correction bias,
  // group-limited top-k and a scaling factor. DeepseekV3TopkRouter keeps
  // its weight and bias in f32 whatever the model's dtype and computes the
  // logits from f32 hidden states: so does this router.
  Value router, correction, routed = x;
  if (m.noauxTc) {
    Type f32 = b.getF32Type();
    router = addArg(tensor({m.numExperts, c.hiddenSize}, f32), "rlx.param", p + "gate.weight");
    correction = addArg(tensor({m.numExperts}, f32), "rlx.param",
                        p + "gate.e_score_correction_bias");
    if (elementType() != f32)
      routed = mb.cast(x, f32);
  } else {
    router = param(p + "gate.weight", {m.numExperts, c.hiddenSize});
  }
  auto [gateUp, down] = expertWeights(p);
  auto route = createMulti<hir::MoeRouterOp>(
      routed, router, Value(), correction, b.getI64IntegerAttr(m.topK),
      MoeScoringAttr::get(ctx, m.noauxTc ? MoeScoring::Sigmoid : MoeScoring::Softmax),
      m.normTopkProb ? b.getUnitAttr() : UnitAttr(),
      m.noauxTc ? b.getF64FloatAttr(m.routedScalingFactor) : FloatAttr(),
      m.noauxTc ? b.getI64IntegerAttr(m.numGroups) : IntegerAttr(),
      m.noauxTc ? b.getI64IntegerAttr(m.topkGroups) : IntegerAttr());
  if (!route)
    return mb.fail();
  Value y = mb.createWithOptional<hir::MoeExpertsOp>(x, route.getWeights(), route.getIds(),
                                                     gateUp, down, Value(), Value(),
                                                     activation(), FloatAttr(), FloatAttr(),
                                                     /*weights_on_input=*/false);
  if (m.sharedIntermediateSize > 0 && m.noauxTc) {
    // DeepseekV3MoE's shared experts: one MLP, always on, no gate.
    int64_t is = m.sharedIntermediateSize, h = c.hiddenSize;
    std::string s = p + "shared_experts.";
    y = mb.add(y, mb.createWithOptional<hir::SwiGluOp>(
                      x, param(s + "gate_proj.weight", {is, h}),
                      param(s + "up_proj.weight", {is, h}), param(s + "down_proj.weight", {h, is}),
                      activation(), WeightLayout::OutIn));
  } else if (m.sharedIntermediateSize > 0) {
    int64_t is = m.sharedIntermediateSize, h = c.hiddenSize;
    Value wg = param(p + "shared_expert.gate_proj.weight", {is, h});
    Value wu = param(p + "shared_expert.up_proj.weight", {is, h});
    Value wd = param(p + "shared_expert.down_proj.weight", {h, is});
    Value shared = mb.createWithOptional<hir::SwiGluOp>(x, wg, wu, wd, activation(),
                                                        WeightLayout::OutIn);
    Value gate = linear(x, param(p + "shared_expert_gate.weight", {1, h}), Value(),
                        ActivationKind::Sigmoid);
    y = mb.add(y, mb.mul(gate, shared));
  }
  return y;
}

ModelBuilder::LayerOut ModelBuilder::gpt2Layer(int64_t i, Value x) {
  std::string p = "transformer.h." + std::to_string(i) + ".";
  int64_t h = c.hiddenSize, inter = c.intermediateSize;
  auto [pastK, pastV] = pastKv(i);
  FloatAttr eps = b.getF64FloatAttr(c.eps);
  auto ln = [&](Value t, StringRef name) {
    Value w = param(p + name + ".weight", {h});
    Value bias = param(p + name + ".bias", {h});
    return mb.createWithOptional<hir::LayerNormOp>(t, w, bias, eps);
  };
  // GPT-2's Conv1D stores weights [in, out].
  auto conv1d = [&](Value t, StringRef name, int64_t in, int64_t out,
                    ActivationKind act = ActivationKind::None) {
    Weight w = weight(p + name, out, in, WeightLayout::InOut);
    Value bias = param(p + name + ".bias", {out});
    return proj(t, w, bias, act);
  };
  Value qkv = conv1d(ln(x, "ln_1"), "attn.c_attn", h, 3 * h);
  Value q = mb.sliceLast(qkv, 0, h), k = mb.sliceLast(qkv, h, h), v = mb.sliceLast(qkv, 2 * h, h);
  if (pastK) {
    k = mb.concat({pastK, k}, 1);
    v = mb.concat({pastV, v}, 1);
  }
  // GPT2Attention's scaling: 1/sqrt(D) (the op's default) unless
  // scale_attn_weights is off, then divided by layer_idx + 1.
  FloatAttr scale;
  if (!c.scaleAttnWeights || c.scaleAttnByInverseLayerIdx) {
    double s = c.scaleAttnWeights ? 1.0 / std::sqrt(static_cast<double>(c.headDim)) : 1.0;
    if (c.scaleAttnByInverseLayerIdx)
      s /= static_cast<double>(i + 1);
    scale = b.getF64FloatAttr(s);
  }
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      q, k, v, paddingMask(), Value(), b.getI64IntegerAttr(c.numHeads),
      b.getI64IntegerAttr(c.numKvHeads), b.getI64IntegerAttr(c.headDim),
      MaskKindAttr::get(ctx, MaskKind::Causal), IntegerAttr(), scale, FloatAttr(),
      AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  Value r = mb.add(x, conv1d(attn, "attn.c_proj", h, h));
  Value f = conv1d(ln(r, "ln_2"), "mlp.c_fc", h, inter, activation());
  Value y = mb.add(r, conv1d(f, "mlp.c_proj", inter, h));
  return {y, k, v};
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = begin();
  seqLen = o.seqLen.value_or(kDyn);
  pastLen = o.pastLen.value_or(kDyn);
  int64_t layers = o.layerOnly ? 1 : o.numLayers.value_or(c.numLayers);
  Type i64 = b.getI64Type();
  Value hidden, positions;
  if (o.layerOnly && o.loras.size() > 1) {
    emitError(loc) << "several LoRA adapters select theirs by the input_ids' sequences: not "
                      "with a layer alone";
    return nullptr;
  }
  if (o.layerOnly) {
    hidden = input("hidden_states", {o.batch, seqLen, c.hiddenSize}, {"batch", "seq", ""});
    positions = input("position_ids", {seqLen}, {"seq"}, i64);
  } else {
    Value ids = input("input_ids", {o.batch, seqLen}, {"batch", "seq"}, i64);
    positions = input("position_ids", {seqLen}, {"seq"}, i64);
    if (o.loras.size() > 1) {
      // Each sequence's adapter for each of its tokens: ids·0 + adapter.
      Value perSequence = input("adapter_ids", {o.batch}, {"batch"}, i64);
      loraTokens = mb.add(mb.mul(ids, mb.scalar(i64, 0)),
                          mb.reshape(perSequence, mir::MIRBuilder::pattern({o.batch, 1})));
    }
    std::string embedName = c.family == ModelFamily::GPT2 ? "transformer.wte.weight"
                                                          : "model.embed_tokens.weight";
    embedTable = param(embedName, {c.vocabSize, c.hiddenSize});
    hidden = mb.create<hir::EmbeddingOp>(ids, embedTable);
    if (c.family == ModelFamily::GPT2) {
      Value wpe = param("transformer.wpe.weight", {c.maxPositions, c.hiddenSize});
      // [S, H] learned positions broadcast over the batch.
      hidden = mb.add(hidden, mb.create<hir::EmbeddingOp>(positions, wpe));
    }
  }
  if (o.attentionMask) {
    // [B, past_seq + seq]: the dim is total_seq with a cache.
    int64_t total = !o.kvCache ? seqLen
                    : seqLen == kDyn || pastLen == kDyn ? kDyn
                                                        : 0;
    if (total == 0 && o.kvCache && llvm::AddOverflow(seqLen, pastLen, total)) {
      emitError(loc) << "attention_mask: seq + past (" << seqLen << " + " << pastLen
                     << ") overflows";
      return nullptr;
    }
    Value mask = input("attention_mask", {o.batch, total},
                       {"batch", o.kvCache ? "total_seq" : "seq"}, i64);
    keyMask = mb.reshape(mask, mir::MIRBuilder::pattern({o.batch, 1, total}));
    queryPositions = mb.reshape(positions, {1, -1, 1});
  }
  SmallVector<LayerOut> presents;
  for (int64_t i = 0; i < layers; ++i) {
    LayerOut out = c.family == ModelFamily::GPT2 ? gpt2Layer(i, hidden)
                                                 : llamaLayer(i, hidden, positions);
    if (mb.failed())
      return nullptr;
    hidden = out.hidden;
    presents.push_back(out);
  }
  if (o.layerOnly) {
    output(hidden, "hidden_states");
  } else {
    FloatAttr eps = b.getF64FloatAttr(c.eps);
    if (c.family == ModelFamily::GPT2) {
      Value w = param("transformer.ln_f.weight", {c.hiddenSize});
      Value bias = param("transformer.ln_f.bias", {c.hiddenSize});
      hidden = mb.createWithOptional<hir::LayerNormOp>(hidden, w, bias, eps);
    } else {
      hidden = normIn(hidden, normWeight(c.family == ModelFamily::Bamba
                                             ? "model.final_layernorm.weight"
                                             : "model.norm.weight",
                                         c.hiddenSize));
    }
    // Tied heads read the embedding table, which is already [vocab, hidden].
    if (c.tieEmbeddings)
      refuseLora("lm_head");
    Value head = c.tieEmbeddings ? embedTable
                                 : param("lm_head.weight", {c.vocabSize, c.hiddenSize});
    output(linear(hidden, head, Value()), "logits");
  }
  if (mb.failed())
    return nullptr;
  if (!o.loras.empty() && loraModules == 0) {
    // PEFT refuses such an adapter too.
    emitError(loc) << "LoRA adapter: its target_modules match none of the model's linear "
                      "layers";
    return nullptr;
  }
  if (o.kvCache)
    for (auto [i, out] : llvm::enumerate(presents)) {
      std::string p = "present." + std::to_string(i) + ".";
      output(out.key, p + (out.recurrent ? "conv" : "key"));
      output(out.value, p + (out.recurrent ? "ssm" : "value"));
    }
  return finish(std::move(module));
}

/// The attention models' checks on sizes that an untrusted config may get
/// wrong, then ModelBuilder.
static OwningOpRef<ModuleOp> buildAttentionModel(MLIRContext *ctx, const ModelConfig &config,
                                                 const ModelGenOptions &options) {
  if (options.nvfp4Weights && config.moe.numExperts > 0) {
    emitError(UnknownLoc::get(ctx))
        << "--nvfp4-weights is not supported for mixture-of-experts models yet";
    return nullptr;
  }
  if (options.nvfp4Weights && config.family == ModelFamily::Phi3) {
    emitError(UnknownLoc::get(ctx))
        << "--nvfp4-weights is not supported for Phi-3 (its packed qkv_proj / gate_up_proj)";
    return nullptr;
  }
  // parseHFConfig only produces these; a ModelConfig filled by hand may not.
  if (!activationKind(config.activation)) {
    emitError(UnknownLoc::get(ctx))
        << "activation must be silu, gelu, gelu_tanh or relu, got '" << config.activation << "'";
    return nullptr;
  }
  // Types are made from these sizes directly (a negative one is no type), and
  // the builder forms the products below: both must hold for any config,
  // parsed from untrusted JSON or filled by hand.
  if (config.hiddenSize <= 0 || config.numHeads <= 0 || config.numKvHeads <= 0 ||
      config.headDim <= 0 || config.intermediateSize <= 0 || config.vocabSize <= 0 ||
      config.maxPositions <= 0) {
    emitError(UnknownLoc::get(ctx)) << "sizes must be positive";
    return nullptr;
  }
  int64_t product;
  if (llvm::MulOverflow(config.numHeads, config.headDim, product) ||
      llvm::MulOverflow(config.numKvHeads, config.headDim, product) ||
      llvm::MulOverflow(int64_t(3), config.hiddenSize, product)) {
    emitError(UnknownLoc::get(ctx))
        << "sizes overflow: num_attention_heads * head_dim = " << config.numHeads << " * "
        << config.headDim << ", 3 * hidden_size = 3 * " << config.hiddenSize;
    return nullptr;
  }
  int64_t layers = options.layerOnly ? 1 : options.numLayers.value_or(config.numLayers);
  if (!config.slidingLayers.empty() && layers > static_cast<int64_t>(config.slidingLayers.size())) {
    emitError(UnknownLoc::get(ctx)) << "layer_types names " << config.slidingLayers.size()
                                    << " layers but " << layers << " are built";
    return nullptr;
  }
  // Llama-4's per-layer lists (no_rope_layers, layer_types) cover the
  // config's layers: building more is an error, not a read past them.
  if (config.llama4.enabled &&
      (layers > static_cast<int64_t>(config.llama4.ropeLayers.size()) ||
       layers > static_cast<int64_t>(config.llama4.chunkedLayers.size()))) {
    emitError(UnknownLoc::get(ctx)) << "Llama-4's no_rope_layers / layer_types describe "
                                    << config.llama4.ropeLayers.size() << " layers but "
                                    << layers << " are built";
    return nullptr;
  }
  if (config.family == ModelFamily::Qwen3Next) {
    const ModelConfig::LinearAttention &l = config.linearAttention;
    int64_t kd, vd, rows;
    if (layers > static_cast<int64_t>(l.linearLayers.size())) {
      emitError(UnknownLoc::get(ctx))
          << "layer_types (or full_attention_interval) describes " << l.linearLayers.size()
          << " layers but " << layers << " are built";
      return nullptr;
    }
    if (l.convKernel <= 0 || l.keyHeadDim <= 0 || l.valueHeadDim <= 0 || l.numKeyHeads <= 0 ||
        l.numValueHeads <= 0 || l.numValueHeads % l.numKeyHeads != 0 ||
        llvm::MulOverflow(l.numKeyHeads, l.keyHeadDim, kd) ||
        llvm::MulOverflow(l.numValueHeads, l.valueHeadDim, vd) ||
        llvm::AddOverflow(kd, vd, rows) || llvm::MulOverflow(rows, int64_t(2), rows) ||
        llvm::MulOverflow(config.numHeads * config.headDim, int64_t(2), rows)) {
      emitError(UnknownLoc::get(ctx))
          << "Qwen3-Next's linear attention needs positive sizes, value heads a multiple of "
             "the key heads, and products that fit in 64 bits";
      return nullptr;
    }
    if (options.nvfp4Weights) {
      emitError(UnknownLoc::get(ctx)) << "--nvfp4-weights is not supported for Qwen3-Next";
      return nullptr;
    }
  }
  if (config.family == ModelFamily::Bamba) {
    const ModelConfig::Mamba &m = config.mamba;
    int64_t convDim, rows;
    if (layers > static_cast<int64_t>(m.mixerLayers.size())) {
      emitError(UnknownLoc::get(ctx)) << "Bamba's layer pattern describes " << m.mixerLayers.size()
                                      << " layers but " << layers << " are built";
      return nullptr;
    }
    if (m.width <= 0 || m.numHeads <= 0 || m.headDim <= 0 || m.nGroups <= 0 ||
        m.stateSize <= 0 || m.convKernel <= 0 || m.chunkSize <= 0 ||
        m.numHeads % m.nGroups != 0 || m.width % m.nGroups != 0 ||
        llvm::MulOverflow(m.numHeads, m.headDim, rows) || rows != m.width ||
        llvm::MulOverflow(m.nGroups, m.stateSize, convDim) ||
        llvm::MulOverflow(convDim, int64_t(2), convDim) ||
        llvm::AddOverflow(convDim, m.width, convDim) || llvm::AddOverflow(convDim, m.width, rows) ||
        llvm::AddOverflow(rows, m.numHeads, rows)) {
      emitError(UnknownLoc::get(ctx))
          << "Bamba's mixer needs positive sizes, heads · head_dim equal to its width, groups "
             "that divide the heads, and sizes that fit in 64 bits";
      return nullptr;
    }
    if (options.nvfp4Weights || !options.loras.empty()) {
      emitError(UnknownLoc::get(ctx))
          << "--nvfp4-weights and LoRA adapters are not supported for Bamba";
      return nullptr;
    }
  }
  ModelBuilder builder(ctx, config, options);
  return builder.build();
}

OwningOpRef<ModuleOp> mlir::rlx::buildModel(MLIRContext *ctx, const ModelConfig &config,
                                            const ModelGenOptions &options) {
  ctx->loadDialect<hir::HIRDialect, mir::MIRDialect, func::FuncDialect>();
  if (options.dtype != "f32" && options.dtype != "bf16" && options.dtype != "f16") {
    emitError(UnknownLoc::get(ctx)) << "dtype must be f32, f16 or bf16, got " << options.dtype;
    return nullptr;
  }
  auto dimOk = [](std::optional<int64_t> d) { return !d || *d >= 0 || *d == ShapedType::kDynamic; };
  if (!dimOk(options.batch) || !dimOk(options.seqLen) || !dimOk(options.pastLen)) {
    emitError(UnknownLoc::get(ctx)) << "batch, seq and past must be non-negative";
    return nullptr;
  }
  // Every failure is reported: one that emitted nothing is named here
  // rather than ending the tool silently.
  bool reported = false;
  OwningOpRef<ModuleOp> module;
  {
    ScopedDiagnosticHandler seen(ctx, [&](Diagnostic &d) {
      reported |= d.getSeverity() == DiagnosticSeverity::Error;
      return failure(); // on to the caller's handler
    });
    bool stateSpace = config.family == ModelFamily::Mamba ||
                      config.family == ModelFamily::FalconMamba ||
                      config.family == ModelFamily::Mamba2;
    module = stateSpace                                 ? buildMambaModel(ctx, config, options)
             : config.family == ModelFamily::Whisper ? buildWhisperModel(ctx, config, options)
                                                       : buildAttentionModel(ctx, config, options);
  }
  if (!module && !reported)
    emitError(NameLoc::get(StringAttr::get(ctx, config.architecture)))
        << "internal error: the model builder failed without a diagnostic";
  return module;
}
