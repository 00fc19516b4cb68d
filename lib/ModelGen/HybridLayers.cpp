//===- HybridLayers.cpp - Qwen3-Next's and Bamba's hybrid decoder layers --===//
//
// transformers' BambaDecoderLayer: RMSNorm, then Mamba-2's mixer
// (FunctionBuilder::mamba2Mixer under `mamba.`) on the layers outside
// attn_layer_indices and BambaAttention (Llama's, RoPE on half of each head)
// on the others, the residual, RMSNorm and the SwiGLU `feed_forward`, the
// residual; its decode states as Mamba-2's and the usual K/V.
//
// transformers' Qwen3NextDecoderLayer with the checkpoint's names: a token
// mixer (Qwen3NextGatedDeltaNet on layer_types' linear_attention layers,
// Qwen3NextAttention on the others) and an MLP (the sparse MoE block with
// its gated shared expert, or a dense SwiGLU), each behind a
// Qwen3NextRMSNorm (x̂ · (1 + weight)) and a residual.
//
// The Gated DeltaNet layer: in_proj_qkvz and in_proj_ba whose rows are
// grouped per key head (q | k | the head's v | its z, then b | a), the
// depthwise causal conv1d with SiLU over q | k | v, beta = sigmoid(b),
// g = −exp(A_log)·softplus(a + dt_bias), each key head's q and k repeated
// for its group of value heads, rlx_mir.gated_delta_rule with l2-normalized
// q and k, Qwen3NextRMSNormGated per value head (RMSNorm · weight ·
// SiLU(z)) and out_proj. With `kvCache` its decode state is
// `past_key_values.<i>.conv` [B, conv_dim, conv_kernel] and `.ssm`
// [B, num_value_heads, key_head_dim, value_head_dim] (transformers' cache
// layouts), the attention layers' the usual past K/V.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace mlir::rlx;

ModelBuilder::LayerOut ModelBuilder::qwen3NextLayer(int64_t i, Value x, Value positions) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t h = c.hiddenSize;
  Value hn = normIn(x, normWeight(p + "input_layernorm.weight", h));
  LayerOut out = c.linearAttention.isLinear(i) ? gatedDeltaNet(p + "linear_attn.", i, hn)
                                               : hybridAttention(p + "self_attn.", i, hn, positions);
  Value sum = mb.add(out.hidden, x); // the residual in the model's dtype
  Value hn2 = normIn(sum, normWeight(p + "post_attention_layernorm.weight", h));
  Value mlp;
  if (c.isMoeLayer(i)) {
    mlp = moeBlock(p, hn2);
  } else {
    int64_t inter = c.intermediateSize;
    Weight wg = weight(p + "mlp.gate_proj", inter, h), wu = weight(p + "mlp.up_proj", inter, h);
    Weight wd = weight(p + "mlp.down_proj", h, inter);
    mlp = proj(mb.mul(proj(hn2, wg, Value(), activation()), proj(hn2, wu, Value())), wd, Value());
  }
  out.hidden = mb.add(mlp, sum);
  return out;
}

ModelBuilder::LayerOut ModelBuilder::hybridAttention(const std::string &p, int64_t i, Value x,
                                                     Value positions) {
  bool gated = c.family == ModelFamily::Qwen3Next;
  int64_t h = c.hiddenSize, hd = c.headDim, heads = c.numHeads;
  int64_t q = heads * hd, kv = c.numKvHeads * hd, qRows = gated ? 2 * q : q;
  auto [pastK, pastV] = pastKv(i);
  auto bias = [&](const std::string &name, int64_t n) {
    return c.qkvBias ? param(p + name + ".bias", {n}) : Value();
  };
  Value qs = proj(x, weight(p + "q_proj", qRows, h), bias("q_proj", qRows)), gate;
  if (gated) {
    // q_proj gives each head its query and then its output gate.
    Value perHead = mb.reshape(qs, mir::MIRBuilder::pattern({o.batch, seqLen, heads, 2 * hd}));
    auto packed = [&](Value t) {
      return mb.reshape(t, mir::MIRBuilder::pattern({o.batch, seqLen, q}));
    };
    qs = packed(mb.sliceLast(perHead, 0, hd));
    gate = packed(mb.sliceLast(perHead, hd, hd));
  }
  Value ks = proj(x, weight(p + "k_proj", kv, h), bias("k_proj", kv));
  Value vs = proj(x, weight(p + "v_proj", kv, h), bias("v_proj", kv));
  // Per-head Qwen3NextRMSNorms: in f32 with 1 + weight, rounded once.
  auto headNorm = [&](Value t, const std::string &name) {
    Value w = normWeight(p + name, hd);
    if (!t || !w)
      return mb.fail();
    Type et = mir::MIRBuilder::elementType(t), wt = mir::MIRBuilder::elementType(w);
    return mb.widen(
        mb.createWithOptional<hir::QkNormOp>(mb.widen(t, wt), w, hd, APFloat(c.eps)), et);
  };
  if (c.qkNorm) {
    qs = headNorm(qs, "q_norm.weight");
    ks = headNorm(ks, "k_norm.weight");
  }
  IntegerAttr rotary = c.rotaryDim ? b.getI64IntegerAttr(c.rotaryDim) : IntegerAttr();
  auto rope = [&](Value t) {
    return mb.createWithOptional<hir::RopeOp>(
        t, positions, Value(), Value(), b.getI64IntegerAttr(hd), rotary,
        b.getF64FloatAttr(c.ropeTheta), RopeStyleAttr::get(ctx, RopeStyle::NeoX), ropeScaling());
  };
  qs = rope(qs);
  ks = rope(ks);
  if (pastK) {
    ks = mb.concat({pastK, ks}, 1);
    vs = mb.concat({pastV, vs}, 1);
  }
  Value attn = mb.createWithOptional<hir::AttentionOp>(
      qs, ks, vs, paddingMask(), Value(), b.getI64IntegerAttr(heads),
      b.getI64IntegerAttr(c.numKvHeads), b.getI64IntegerAttr(hd),
      MaskKindAttr::get(ctx, MaskKind::Causal), IntegerAttr(), FloatAttr(), FloatAttr(),
      AttnLayoutAttr::get(ctx, AttnLayout::BSD));
  if (gated)
    attn = mb.mul(attn, mb.unary<mir::SigmoidOp>(gate));
  Value out = proj(attn, weight(p + "o_proj", h, q), c.oProjBias ? param(p + "o_proj.bias", {h})
                                                                  : Value());
  return {out, ks, vs};
}

ModelBuilder::LayerOut ModelBuilder::bambaLayer(int64_t i, Value x, Value positions) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t h = c.hiddenSize, inter = c.intermediateSize;
  FloatAttr eps = b.getF64FloatAttr(c.eps);
  Value hn = rmsNorm(x, p + "input_layernorm.weight", h);
  LayerOut out;
  if (c.mamba.mixerLayers[i]) {
    MixerOut mix = mamba2Mixer(p + "mamba.", i, hn, c, c.mamba.width, tokenMask());
    out = {mix.out, mix.conv, mix.ssm, /*recurrent=*/true};
  } else {
    out = hybridAttention(p + "self_attn.", i, hn, positions);
  }
  if (mb.failed())
    return {};
  Value postNorm = param(p + "pre_ff_layernorm.weight", {h});
  auto rn = createMulti<hir::ResidualRmsNormOp>(out.hidden, x, postNorm, eps);
  if (!rn)
    return {};
  auto bias = [&](const std::string &name, int64_t n) {
    return c.mlpBias ? param(p + "feed_forward." + name + ".bias", {n}) : Value();
  };
  // BambaMLP: down(act(gate(x)) * up(x)), with mlp_bias.
  Value f = rn.getOutput();
  Value g = proj(f, weight(p + "feed_forward.gate_proj", inter, h), bias("gate_proj", inter),
                 activation());
  Value u = proj(f, weight(p + "feed_forward.up_proj", inter, h), bias("up_proj", inter));
  Value mlp = proj(mb.mul(g, u), weight(p + "feed_forward.down_proj", h, inter),
                   bias("down_proj", h));
  out.hidden = mb.add(mlp, rn.getSum());
  return out;
}

ModelBuilder::LayerOut ModelBuilder::gatedDeltaNet(const std::string &p, int64_t i, Value x) {
  const ModelConfig::LinearAttention &l = c.linearAttention;
  int64_t h = c.hiddenSize, nk = l.numKeyHeads, nv = l.numValueHeads;
  int64_t dk = l.keyHeadDim, dv = l.valueHeadDim, group = nv / nk, kernel = l.convKernel;
  int64_t kd = nk * dk, vd = nv * dv, convDim = 2 * kd + vd;
  Value qkvzW = param(p + "in_proj_qkvz.weight", {2 * kd + 2 * vd, h});
  Value baW = param(p + "in_proj_ba.weight", {2 * nv, h});
  Value convW = param(p + "conv1d.weight", {convDim, 1, kernel});
  Value dtBias = param(p + "dt_bias", {nv});
  Value aLog = param(p + "A_log", {nv});
  Value gateNorm = param(p + "norm.weight", {dv});
  Value outW = param(p + "out_proj.weight", {h, vd});
  // The rule runs in f32 whatever the model's dtype, its state carried in
  // f32 (torch_chunk_gated_delta_rule and transformers' cache do so).
  Type f32 = b.getF32Type(), et = elementType();
  auto [convState, ssmState] =
      recurrentStates(i, {o.batch, convDim, kernel}, {o.batch, nv, dk, dv}, f32);
  auto shaped = [&](Value t, ArrayRef<int64_t> inner) {
    SmallVector<int64_t> shape = {o.batch, seqLen};
    shape.append(inner.begin(), inner.end());
    return mb.reshape(t, mir::MIRBuilder::pattern(shape));
  };
  // Padded tokens are zeroed (apply_mask_to_padding_states): with left
  // padding their q, k and v are then zero and the state stays zero until
  // the first real token, as for the unpadded prompt.
  if (Value valid = tokenMask())
    x = mb.mul(x, valid);

  // Rows grouped per key head: [q (dk) | k (dk) | v (group·dv) | z (group·dv)].
  Value qkvz = shaped(linear(x, qkvzW, Value()), {nk, 2 * dk + 2 * group * dv});
  Value ba = shaped(linear(x, baW, Value()), {nk, 2 * group});
  Value qs = shaped(mb.sliceLast(qkvz, 0, dk), {kd});
  Value ks = shaped(mb.sliceLast(qkvz, dk, dk), {kd});
  Value vs = shaped(mb.sliceLast(qkvz, 2 * dk, group * dv), {vd});
  Value z = shaped(mb.sliceLast(qkvz, 2 * dk + group * dv, group * dv), {nv, dv});
  Value beta = mb.unary<mir::SigmoidOp>(shaped(mb.sliceLast(ba, 0, group), {nv}));
  Value a = shaped(mb.sliceLast(ba, group, group), {nv});
  // g = −exp(A_log)·softplus(a + dt_bias), in f32 as transformers has it.
  Value g = mb.mul(mb.unary<mir::NegOp>(mb.unary<mir::ExpOp>(mb.widen(aLog, f32))),
                   mb.softplus(mb.add(mb.widen(a, f32), mb.widen(dtBias, f32))));

  Value mixed = mb.transpose(mb.concat({qs, ks, vs}, 2), {0, 2, 1}); // [B, conv_dim, S]
  auto conv = createMulti<mir::CausalConv1dOp>(mixed, mb.reshape(convW, {convDim, kernel}),
                                               Value(), convState, b.getStringAttr("silu"));
  if (!conv)
    return {};
  Value y = mb.transpose(conv.getOutput(), {0, 2, 1}); // [B, S, conv_dim]
  // Each key head's q and k serve its `group` value heads (repeat_interleave).
  auto repeated = [&](Value t) {
    Value one = shaped(t, {nk, 1, dk});
    SmallVector<Value> copies(group, one);
    return shaped(group == 1 ? one : mb.concat(copies, 3), {nv, dk});
  };
  Value query = repeated(mb.sliceLast(y, 0, kd));
  Value key = repeated(mb.sliceLast(y, kd, kd));
  Value value = shaped(mb.sliceLast(y, 2 * kd, vd), {nv, dv});
  auto rule = createMulti<mir::GatedDeltaRuleOp>(
      mb.widen(query, f32), mb.widen(key, f32), mb.widen(value, f32), g, mb.widen(beta, f32),
      ssmState, b.getUnitAttr(), FloatAttr(), IntegerAttr());
  if (!rule)
    return {};
  // Qwen3NextRMSNormGated per value head: weight · RMSNorm(out) in the
  // model's dtype, times SiLU(z) in f32, rounded once.
  Value normed = mb.createWithOptional<hir::RmsNormOp>(mb.widen(rule.getOutput(), et), gateNorm,
                                                       b.getF64FloatAttr(c.eps));
  Value gated = mb.widen(
      mb.mul(mb.widen(normed, f32), mb.unary<mir::SiluOp>(mb.widen(z, f32))), et);
  Value out = linear(shaped(gated, {vd}), outW, Value());
  return {out, conv.getFinalState(), rule.getFinalState(), /*recurrent=*/true};
}

Value ModelBuilder::tokenMask() {
  if (!keyMask)
    return {};
  if (tokenMaskMemo)
    return tokenMaskMemo;
  if (!o.kvCache) { // the mask is the queries' own: [B, 1, S] as [B, S, 1]
    tokenMaskMemo = mb.cast(mb.transpose(keyMask, {0, 2, 1}), elementType());
    return tokenMaskMemo;
  }
  // With a cache, query row s (of S) is key column T − S + s: picked out
  // of the [B, 1, T] mask by comparing 1-based column and row numbers
  // ([B, S, T] once per model; a decode step's S is 1).
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  auto ones = [&](Value like) { return mb.add(mb.mul(like, mb.scalar(i64, 0)), mb.scalar(i64, 1)); };
  Value onesT = ones(keyMask), onesS = ones(queryPositions); // [B, 1, T], [1, S, 1]
  Value column = mb.create<mir::CumsumOp>(onesT, int64_t(2), false, false);
  Value row = mb.create<mir::CumsumOp>(onesS, int64_t(1), false, false);
  Value past = mb.sub(mb.reduce(ReduceKind::Sum, onesT, {2}, true),
                      mb.reduce(ReduceKind::Sum, onesS, {1}, true)); // T − S
  Value elsewhere = mb.cast(mb.sub(mb.sub(column, row), past), i1); // [B, S, T]
  Value picked = mb.select(elsewhere, mb.scalar(i64, 0), keyMask);
  tokenMaskMemo = mb.cast(mb.reduce(ReduceKind::Sum, picked, {2}, true), elementType());
  return tokenMaskMemo;
}
