//===- Mamba2Mixer.cpp - Mamba-2's mixer, for Mamba-2 and Bamba -----------===//
//
// One definition of transformers' Mamba2Mixer (BambaMixer is the same
// computation under the layer's `mamba.` prefix): see
// FunctionBuilder::mamba2Mixer.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"

#include "RLX/Dialect/HIR/IR/HIROps.h"

using namespace mlir;
using namespace mlir::rlx;

FunctionBuilder::MixerOut FunctionBuilder::mamba2Mixer(const std::string &p, int64_t layer,
                                                       Value x, const ModelConfig &c,
                                                       int64_t inter, Value tokens) {
  const ModelConfig::Mamba &m = c.mamba;
  int64_t h = c.hiddenSize, n = m.stateSize, k = m.convKernel;
  int64_t heads = m.numHeads, hd = m.headDim, g = m.nGroups;
  int64_t convDim = inter + 2 * g * n, rows = inter + convDim + heads;
  auto param = [&](const std::string &name, ArrayRef<int64_t> shape) {
    return addArg(tensor(shape), "rlx.param", p + name);
  };
  Value inProj = param("in_proj.weight", {rows, h});
  Value inBias = m.useBias ? param("in_proj.bias", {rows}) : Value();
  Value convW = param("conv1d.weight", {convDim, 1, k});
  Value convB = m.useConvBias ? param("conv1d.bias", {convDim}) : Value();
  Value dtBias = param("dt_bias", {heads});
  Value aLog = param("A_log", {heads});
  Value dSkip = param("D", {heads});
  Value gateNorm = param("norm.weight", {inter});
  Value outProj = param("out_proj.weight", {h, inter});
  Value outBias = m.useBias ? param("out_proj.bias", {h}) : Value();
  auto [convState, ssmState] = recurrentStates(layer, {o.batch, convDim, k}, {o.batch, heads, hd, n});
  auto linear = [&](Value t, Value w, Value bias) {
    return mb.createWithOptional<hir::LinearOp>(t, w, bias, ActivationKind::None,
                                                WeightLayout::OutIn);
  };
  auto shaped = [&](Value t, ArrayRef<int64_t> inner) { // [B, S, inner...]
    SmallVector<int64_t> shape = {o.batch, kDyn};
    shape.append(inner.begin(), inner.end());
    return mb.reshape(t, mir::MIRBuilder::pattern(shape));
  };

  if (tokens)
    x = mb.mul(x, tokens);
  Value proj = linear(x, inProj, inBias); // [B, S, rows]
  if (mb.failed())
    return {};
  Value gate = mb.sliceLast(proj, 0, inter);
  Value xbcIn = mb.transpose(mb.sliceLast(proj, inter, convDim), {0, 2, 1});
  auto conv = createMulti<mir::CausalConv1dOp>(xbcIn, mb.reshape(convW, {convDim, k}), convB,
                                               convState, b.getStringAttr("silu"));
  if (!conv)
    return {};
  Value xbc = mb.transpose(conv.getOutput(), {0, 2, 1}); // [B, S, conv]
  if (tokens)
    xbc = mb.mul(xbc, tokens);
  Value xs = shaped(mb.sliceLast(xbc, 0, inter), {heads, hd});
  Value bs = shaped(mb.sliceLast(xbc, inter, g * n), {g, n});
  Value cs = shaped(mb.sliceLast(xbc, inter + g * n, g * n), {g, n});
  Value dt = mb.sliceLast(proj, inter + convDim, heads);
  Value a = mb.unary<mir::NegOp>(mb.unary<mir::ExpOp>(aLog));
  if (mb.failed())
    return {};
  auto attr = [&](std::optional<double> v) { return v ? b.getF64FloatAttr(*v) : FloatAttr(); };
  auto scan = createMulti<mir::SsdScanOp>(xs, dt, a, bs, cs, dSkip, dtBias, ssmState,
                                          b.getUnitAttr(), attr(m.dtMin), attr(m.dtMax),
                                          b.getI64IntegerAttr(m.chunkSize));
  if (!scan)
    return {};
  // MambaRMSNormGated: (y · SiLU(z)) in f32, normalized per group, in the
  // model's dtype times the weight.
  Type f32 = b.getF32Type();
  Value y = shaped(scan.getOutput(), {inter});
  Value gated = mb.mul(mb.widen(y, f32), mb.unary<mir::SiluOp>(mb.widen(gate, f32)));
  Value normed = mb.createWithOptional<hir::RmsNormOp>(
      shaped(gated, {g, inter / g}), mb.broadcast(mb.scalar(f32, 1.0), {inter / g}),
      b.getF64FloatAttr(c.eps));
  normed = mb.mul(gateNorm, mb.widen(shaped(normed, {inter}), elementType()));
  Value out = linear(normed, outProj, outBias);
  if (mb.failed())
    return {};
  return {out, conv.getFinalState(), scan.getFinalState()};
}
