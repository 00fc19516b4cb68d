//===- MambaBuilder.cpp - Mamba, FalconMamba and Mamba-2 causal LMs -------===//
//
// transformers' MambaModel with the checkpoint's parameter names
// (`backbone.embeddings`, `backbone.layers.<i>.norm` and `.mixer.*`,
// `backbone.norm_f`, `lm_head`, tied to the embeddings by default). Each
// layer is `x + mixer(rms_norm(x))`, the mixer as MambaMixer computes it:
// in_proj to x | z, rlx_mir.causal_conv1d with SiLU, x_proj to dt | B | C
// (FalconMamba: each through a weightless RMSNorm), dt_proj's weight,
// rlx_mir.selective_scan with A = −exp(A_log), D, the SiLU(z) gate and
// dt_proj's bias under softplus, out_proj. Mamba2Mixer: in_proj to
// z | x B C | dt, the causal conv1d with SiLU over x B C, rlx_mir.ssd_scan
// (heads of head_dim, B and C in n_groups groups, A = −exp(A_log), dt_bias,
// softplus, time_step_limit, D), MambaRMSNormGated (y · SiLU(z), normalized
// per group of intermediate / n_groups, then its weight), out_proj.
//
// With `kvCache` each layer's decode state is an input and an output, as
// the KV caches of the attention models: `past_key_values.<i>.conv`
// [B, intermediate, conv_kernel] (the last raw conv inputs, transformers'
// layout) and `past_key_values.<i>.ssm` [B, intermediate, state_size] in,
// `present.<i>.conv` / `present.<i>.ssm` out (Mamba-2: conv [B, conv_dim,
// conv_kernel] over x B C, ssm [B, num_heads, head_dim, state_size]). A
// prefill starts from zeros;
// a decode step is seq = 1, so one compiled step serves every token.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"

#include "RLX/Dialect/HIR/IR/HIROps.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {

class MambaBuilder : FunctionBuilder {
public:
  MambaBuilder(MLIRContext *ctx, const ModelConfig &c, const ModelGenOptions &o)
      : FunctionBuilder(ctx, o, c.architecture), c(c), m(c.mamba) {}

  OwningOpRef<ModuleOp> build();

private:
  struct LayerOut {
    Value hidden, conv, ssm;
  };
  Value param(const Twine &name, ArrayRef<int64_t> shape) {
    return addArg(tensor(shape), "rlx.param", name.str());
  }
  Value linear(Value x, Value w, Value bias = {}) {
    return mb.createWithOptional<hir::LinearOp>(x, w, bias, ActivationKind::None,
                                                WeightLayout::OutIn);
  }
  Value rmsNorm(Value x, Value weight, double eps) {
    return mb.createWithOptional<hir::RmsNormOp>(x, weight, b.getF64FloatAttr(eps));
  }
  /// FalconMambaWeightlessRMSNorm over the last axis of [B, S, n].
  Value weightlessNorm(Value x, int64_t n) {
    return rmsNorm(x, mb.broadcast(mb.scalar(elementType(), 1.0), {n}), m.mixerRmsEps);
  }
  /// `size` entries of the last axis of [B, S, total] from `offset`.
  Value lastAxis(Value x, int64_t offset, int64_t size) {
    return mb.slice(x, {0, 0, offset}, {-1, -1, size}, {1, 1, 1}); // -1: to the end
  }
  /// The same as [B, size, S].
  Value channelsFirst(Value x, int64_t offset, int64_t size) {
    return mb.transpose(lastAxis(x, offset, size), {0, 2, 1});
  }
  LayerOut layer(int64_t i, Value x);
  LayerOut layer2(int64_t i, Value x);
  /// MambaBlock's and Mamba2Block's residual: in f32 with residual_in_fp32.
  Value residual(Value x, Value y) {
    if (!m.residualInFp32)
      return mb.add(x, y);
    Type f32 = b.getF32Type();
    return mb.add(mb.widen(x, f32), mb.widen(y, f32));
  }
  const ModelConfig &c;
  const ModelConfig::Mamba &m;
  int64_t seqLen = kDyn;
};

MambaBuilder::LayerOut MambaBuilder::layer(int64_t i, Value x) {
  std::string p = "backbone.layers." + std::to_string(i) + ".";
  std::string mp = p + "mixer.";
  int64_t h = c.hiddenSize, inter = c.intermediateSize, n = m.stateSize, k = m.convKernel;
  int64_t rank = m.timeStepRank;
  Value norm = param(p + "norm.weight", {h});
  Value inProj = param(mp + "in_proj.weight", {2 * inter, h});
  Value inBias = m.useBias ? param(mp + "in_proj.bias", {2 * inter}) : Value();
  Value convW = param(mp + "conv1d.weight", {inter, 1, k});
  Value convB = m.useConvBias ? param(mp + "conv1d.bias", {inter}) : Value();
  Value xProj = param(mp + "x_proj.weight", {rank + 2 * n, inter});
  Value dtW = param(mp + "dt_proj.weight", {inter, rank});
  Value dtB = param(mp + "dt_proj.bias", {inter});
  Value aLog = param(mp + "A_log", {inter, n});
  Value dSkip = param(mp + "D", {inter});
  Value outProj = param(mp + "out_proj.weight", {h, inter});
  Value outBias = m.useBias ? param(mp + "out_proj.bias", {h}) : Value();
  auto [convState, ssmState] = recurrentStates(i, {o.batch, inter, k}, {o.batch, inter, n});

  // MambaBlock: the norm reads the stream in the model's dtype; with
  // residual_in_fp32 the stream is f32 and the sum is taken there.
  Value xz = linear(rmsNorm(mb.widen(x, elementType()), norm, c.eps), inProj, inBias); // [B, S, 2I]
  if (mb.failed())
    return {};
  Value xs = channelsFirst(xz, 0, inter), gate = channelsFirst(xz, inter, inter);
  auto conv = createMulti<mir::CausalConv1dOp>(xs, mb.reshape(convW, {inter, k}), convB,
                                               convState, b.getStringAttr("silu"));
  if (!conv)
    return {};
  Value u = conv.getOutput(); // [B, I, S]
  Value dbc = linear(mb.transpose(u, {0, 2, 1}), xProj); // [B, S, R + 2N]
  if (mb.failed())
    return {};
  auto part = [&](int64_t offset, int64_t size) {
    Value v = lastAxis(dbc, offset, size);
    return m.mixerRmsEps > 0 ? weightlessNorm(v, size) : v;
  };
  Value timeStep = part(0, rank), bs = part(rank, n), cs = part(rank + n, n);
  Value dt = mb.transpose(linear(timeStep, dtW), {0, 2, 1}); // [B, I, S], bias in the scan
  Value a = mb.unary<mir::NegOp>(mb.unary<mir::ExpOp>(aLog));
  if (mb.failed())
    return {};
  auto scan = createMulti<mir::SelectiveScanOp>(
      u, dt, a, mb.transpose(bs, {0, 2, 1}), mb.transpose(cs, {0, 2, 1}), dSkip, gate, dtB,
      ssmState, b.getUnitAttr(), IntegerAttr());
  if (!scan)
    return {};
  Value y = linear(mb.transpose(scan.getOutput(), {0, 2, 1}), outProj, outBias);
  return {residual(x, y), conv.getFinalState(), scan.getFinalState()};
}

MambaBuilder::LayerOut MambaBuilder::layer2(int64_t i, Value x) {
  std::string p = "backbone.layers." + std::to_string(i) + ".";
  Value norm = param(p + "norm.weight", {c.hiddenSize});
  MixerOut mix = mamba2Mixer(p + "mixer.", i, rmsNorm(mb.widen(x, elementType()), norm, c.eps), c,
                             c.intermediateSize);
  if (!mix.out)
    return {};
  return {residual(x, mix.out), mix.conv, mix.ssm};
}

OwningOpRef<ModuleOp> MambaBuilder::build() {
  OwningOpRef<ModuleOp> module = begin();
  seqLen = o.seqLen.value_or(kDyn);
  if (o.layerOnly || !o.loras.empty() || o.nvfp4Weights) {
    emitError(loc) << c.architecture
                   << ": layer_only, LoRA adapters and NVFP4 weights are not supported";
    return nullptr;
  }
  Type i64 = b.getI64Type();
  Value ids = input("input_ids", {o.batch, seqLen}, {"batch", "seq"}, i64);
  Value table = param("backbone.embeddings.weight", {c.vocabSize, c.hiddenSize});
  Value hidden = mb.create<hir::EmbeddingOp>(ids, table);
  int64_t layers = o.numLayers.value_or(c.numLayers);
  SmallVector<LayerOut> states;
  for (int64_t i = 0; i < layers && !mb.failed(); ++i) {
    LayerOut out = c.family == ModelFamily::Mamba2 ? layer2(i, hidden) : layer(i, hidden);
    if (mb.failed())
      return nullptr;
    hidden = out.hidden;
    states.push_back(out);
  }
  hidden = rmsNorm(mb.widen(hidden, elementType()),
                   param("backbone.norm_f.weight", {c.hiddenSize}), c.eps);
  Value head = c.tieEmbeddings ? table : param("lm_head.weight", {c.vocabSize, c.hiddenSize});
  output(linear(hidden, head), "logits");
  if (o.kvCache)
    for (auto [i, st] : llvm::enumerate(states)) {
      output(st.conv, "present." + std::to_string(i) + ".conv");
      output(st.ssm, "present." + std::to_string(i) + ".ssm");
    }
  return finish(std::move(module));
}

} // namespace

OwningOpRef<ModuleOp> mlir::rlx::buildMambaModel(MLIRContext *ctx, const ModelConfig &c,
                                                 const ModelGenOptions &o) {
  if (o.attentionMask) {
    // transformers' Mamba only zeroes padded steps' inputs; a left-padded
    // state is not the unpadded one, so no mask is offered.
    emitError(UnknownLoc::get(ctx)) << c.architecture
                                    << ": attention_mask is for attention models; a state-space "
                                       "model carries fixed-size states, not a padded history";
    return nullptr;
  }
  return MambaBuilder(ctx, c, o).build();
}
