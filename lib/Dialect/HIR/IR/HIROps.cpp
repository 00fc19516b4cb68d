//===- HIROps.cpp - rlx_hir op shape inference and checks -----------------===//
//
// Every HIR op validates itself in inferReturnTypes; the checks are the shared
// rules of Common/IR/ShapeRules.h.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/HIR/IR/HIROps.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::hir;

/// Helper for ops whose result has the input's type after their own checks.
static LogicalResult pushSame(RankedTensorType t, SmallVectorImpl<Type> &out,
                              unsigned n = 1) {
  for (unsigned i = 0; i < n; ++i)
    out.push_back(t);
  return success();
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  if (failed(x) || failed(w))
    return failure();
  SmallVector<Type> types{*x, *w};
  SmallVector<StringRef> names{"input", "weight"};
  std::optional<ArrayRef<int64_t>> bias;
  if (a.getBias()) {
    auto b = getRankedTensor(loc, a.getBias(), "bias");
    if (failed(b))
      return failure();
    bias = b->getShape();
    types.push_back(*b);
    names.push_back("bias");
  }
  if (failed(checkSameElementType(loc, types, names)))
    return failure();
  auto shape = inferLinear(loc, x->getShape(), w->getShape(), bias,
                           enumOr(a.getLayoutAttr(), WeightLayout::OutIn));
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(*shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = checkNormOperands(loc, a.getInput(), a.getWeight(), a.getEps().convertToDouble());
  return failed(x) ? failure() : pushSame(*x, out);
}

LogicalResult ResidualRmsNormOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor a,
                                                  SmallVectorImpl<Type> &out) {
  auto x = checkResidualNormOperands(loc, a.getInput(), a.getResidual(), a.getWeight(),
                                     a.getEps().convertToDouble());
  return failed(x) ? failure() : pushSame(*x, out, 2);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = checkLayerNormOperands(loc, a.getInput(), a.getWeight(), a.getBias(),
                                  a.getEps().convertToDouble());
  return failed(x) ? failure() : pushSame(*x, out);
}

//===----------------------------------------------------------------------===//
// swiglu
//===----------------------------------------------------------------------===//

LogicalResult SwiGluOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto g = getRankedTensor(loc, a.getGateWeight(), "gate weight");
  auto u = getRankedTensor(loc, a.getUpWeight(), "up weight");
  auto d = getRankedTensor(loc, a.getDownWeight(), "down weight");
  if (failed(x) || failed(g) || failed(u) || failed(d))
    return failure();
  if (failed(checkSameElementType(loc, {*x, *g, *u, *d},
                                  {"input", "gate weight", "up weight",
                                   "down weight"})))
    return failure();
  ActivationKind act = enumOr(a.getActivationAttr(), ActivationKind::Silu);
  WeightLayout layout = enumOr(a.getLayoutAttr(), WeightLayout::OutIn);
  if (failed(checkGatedActivation(loc, "swiglu", act)))
    return failure();
  if (g->getShape() != u->getShape())
    return shapeError(loc, "gate weight " + shapeToString(g->getShape()) +
                               " and up weight " + shapeToString(u->getShape()) +
                               " must have the same shape");
  auto gated = inferLinear(loc, x->getShape(), g->getShape(), std::nullopt,
                           layout, "gate weight");
  if (failed(gated))
    return failure();
  auto y = inferLinear(loc, *gated, d->getShape(), std::nullopt, layout,
                       "down weight");
  if (failed(y))
    return failure();
  if (!dimsMatch(y->back(), x->getShape().back()))
    return shapeError(loc, "down weight " + shapeToString(d->getShape()) +
                               " maps to " + Twine(y->back()) +
                               " features, but the input has " +
                               Twine(x->getShape().back()));
  return pushSame(*x, out);
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  if (failed(inferAttentionTypes(loc, getAttentionConfig(a), a.getQuery(), a.getKey(),
                                 a.getValue(), a.getMask(), out)))
    return failure();
  if (!a.getSinks())
    return success();
  auto sinks = getRankedTensor(loc, a.getSinks(), "sinks");
  if (failed(sinks))
    return failure();
  if (sinks->getRank() != 1 || sinks->getDimSize(0) != a.getNumHeads())
    return shapeError(loc, "sinks must be [num_heads] = [" + Twine(a.getNumHeads()) +
                               "], got " + shapeToString(sinks->getShape()));
  if (sinks->getElementType() != cast<ShapedType>(a.getQuery().getType()).getElementType())
    return shapeError(loc, "sinks must have the query's element type");
  return success();
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  int64_t headDim = a.getHeadDim();
  int64_t rot = a.getRotaryDim().value_or(headDim);
  if (failed(checkRopeDims(loc, x->getShape(), headDim, rot)))
    return failure();
  bool hasPos = static_cast<bool>(a.getPositions());
  bool hasCos = static_cast<bool>(a.getCos()), hasSin = static_cast<bool>(a.getSin());
  if (hasCos != hasSin)
    return shapeError(loc, "cos and sin must be given together");
  if (hasPos == hasCos)
    return shapeError(loc, "rope needs either positions or cos/sin tables "
                           "(exactly one of the two forms)");
  ArrayRef<int64_t> xs = x->getShape();
  if (hasPos) {
    auto p = getRankedTensor(loc, a.getPositions(), "positions");
    if (failed(p))
      return failure();
    ArrayRef<int64_t> ps = p->getShape();
    bool ok = (ps.size() == 1 && dimsMatch(ps[0], xs[1])) ||
              (ps.size() == 2 && dimsMatch(ps[0], xs[0]) && dimsMatch(ps[1], xs[1]));
    if (!ok)
      return shapeError(loc, "positions must be [S] or [B, S] matching the "
                             "input " +
                                 shapeToString(xs) + ", got " +
                                 shapeToString(ps));
    if (a.getTheta() && !(a.getTheta()->convertToDouble() > 0.0))
      return shapeError(loc, "theta must be > 0");
  } else {
    if (a.getTheta() || a.getScaling())
      return shapeError(loc, "theta and scaling only apply to the positions "
                             "form; cos/sin tables are already final");
    if (failed(checkRopeTables(loc, xs, a.getCos(), a.getSin(), rot)))
      return failure();
  }
  return pushSame(*x, out);
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  return inferGatherTypes(loc, a.getTable(), a.getIds(), /*tableRank=*/2, out);
}

//===----------------------------------------------------------------------===//
// qk_norm
//===----------------------------------------------------------------------===//

LogicalResult QkNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  if (failed(x) || failed(w) || failed(checkEps(loc, a.getEps().convertToDouble())) ||
      failed(checkSameElementType(loc, {*x, *w}, {"input", "weight"})))
    return failure();
  int64_t d = a.getHeadDim();
  if (d <= 0)
    return shapeError(loc, "head_dim must be > 0, got " + Twine(d));
  if (x->getRank() < 1)
    return shapeError(loc, "input must have rank >= 1");
  int64_t last = x->getShape().back();
  if (!isDynamicDim(last) && last % d != 0)
    return shapeError(loc, "input hidden size " + Twine(last) +
                               " is not a multiple of head_dim " + Twine(d));
  if (w->getRank() != 1 || !dimsMatch(w->getShape()[0], d))
    return shapeError(loc, "weight must be [head_dim] = [" + Twine(d) + "], got " +
                               shapeToString(w->getShape()));
  return pushSame(*x, out);
}

//===----------------------------------------------------------------------===//
// dequant_linear
//===----------------------------------------------------------------------===//

LogicalResult DequantLinearOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor a,
                                                SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  auto s = getRankedTensor(loc, a.getScales(), "scales");
  if (failed(x) || failed(w) || failed(s))
    return failure();
  if (enumOr(a.getSchemeAttr(), QuantScheme::NVFP4) != QuantScheme::NVFP4)
    return shapeError(loc, "dequant_linear supports the nvfp4 scheme only");
  if (x->getRank() < 1 || w->getRank() != 2 || s->getRank() != 2)
    return shapeError(loc, "input must have rank >= 1 and weight/scales rank 2");
  bool outIn = enumOr(a.getLayoutAttr(), WeightLayout::OutIn) == WeightLayout::OutIn;
  auto nk = inferNvfp4Dims(loc, *w, *s, outIn, x->getShape().back());
  if (failed(nk))
    return failure();
  int64_t n = nk->first;
  if (a.getBias()) {
    auto b = getRankedTensor(loc, a.getBias(), "bias");
    if (failed(b) || failed(checkSameElementType(loc, {*x, *b}, {"input", "bias"})))
      return failure();
    if (b->getRank() != 1 || !dimsMatch(b->getShape()[0], n))
      return shapeError(loc, "bias must be [" + Twine(n) + "], got " +
                                 shapeToString(b->getShape()));
  }
  Shape result(x->getShape());
  result.back() = n;
  out.push_back(RankedTensorType::get(result, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// decoder_layer
//===----------------------------------------------------------------------===//

LogicalResult DecoderLayerOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor a,
                                               SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  if (x->getRank() != 3)
    return shapeError(loc, "decoder_layer input must be [batch, seq, hidden], got " +
                               shapeToString(x->getShape()));
  ArrayRef<int64_t> xs = x->getShape();
  int64_t hidden = xs[2];
  if (isDynamicDim(hidden))
    return shapeError(loc, "decoder_layer needs a static hidden size");
  int64_t hq = a.getNumHeads(), hkv = a.getNumKvHeads(), d = a.getHeadDim();
  if (hq <= 0 || hkv <= 0 || d <= 0)
    return shapeError(loc, "num_heads, num_kv_heads and head_dim must be > 0");
  if (hq % hkv != 0)
    return shapeError(loc, "num_heads (" + Twine(hq) +
                               ") must be divisible by num_kv_heads (" + Twine(hkv) + ")");
  if (failed(checkEps(loc, a.getEps().convertToDouble())))
    return failure();
  if (!(a.getTheta().convertToDouble() > 0.0))
    return shapeError(loc, "theta must be > 0");
  MaskKind mask = enumOr(a.getMaskAttr(), MaskKind::Causal);
  if (mask == MaskKind::None || mask == MaskKind::Chunked)
    return shapeError(loc, "a decoder layer's mask must be causal or sliding_window (chunked "
                           "attention is written with rlx_hir.attention)");
  if ((mask == MaskKind::SlidingWindow) != a.getWindow().has_value() ||
      (a.getWindow() && *a.getWindow() <= 0))
    return shapeError(loc, "sliding_window needs a window > 0 (and only it takes one)");

  // Every float operand shares the input's element type.
  SmallVector<Type> types{*x};
  SmallVector<StringRef> names{"input"};
  auto expect = [&](Value v, StringRef name, ArrayRef<int64_t> shape) -> LogicalResult {
    auto t = getRankedTensor(loc, v, name);
    if (failed(t))
      return failure();
    types.push_back(*t);
    names.push_back(name);
    if (t->getRank() != static_cast<int64_t>(shape.size()) ||
        !llvm::all_of(llvm::zip(t->getShape(), shape),
                      [](auto p) { return dimsMatch(std::get<0>(p), std::get<1>(p)); }))
      return shapeError(loc, Twine(name) + " must be " + shapeToString(shape) +
                                 ", got " + shapeToString(t->getShape()));
    return success();
  };
  auto gate = getRankedTensor(loc, a.getGateProj(), "gate_proj");
  if (failed(gate) || gate->getRank() != 2)
    return shapeError(loc, "gate_proj must be [intermediate, hidden]");
  int64_t inter = gate->getShape()[0];
  if (failed(expect(a.getInputNorm(), "input_norm", {hidden})) ||
      failed(expect(a.getQProj(), "q_proj", {hq * d, hidden})) ||
      failed(expect(a.getKProj(), "k_proj", {hkv * d, hidden})) ||
      failed(expect(a.getVProj(), "v_proj", {hkv * d, hidden})) ||
      failed(expect(a.getOProj(), "o_proj", {hidden, hq * d})) ||
      failed(expect(a.getPostNorm(), "post_norm", {hidden})) ||
      failed(expect(a.getGateProj(), "gate_proj", {inter, hidden})) ||
      failed(expect(a.getUpProj(), "up_proj", {inter, hidden})) ||
      failed(expect(a.getDownProj(), "down_proj", {hidden, inter})))
    return failure();
  if (static_cast<bool>(a.getQNorm()) != static_cast<bool>(a.getKNorm()))
    return shapeError(loc, "q_norm and k_norm must be given together");
  if (a.getQNorm() && (failed(expect(a.getQNorm(), "q_norm", {d})) ||
                       failed(expect(a.getKNorm(), "k_norm", {d}))))
    return failure();
  if (static_cast<bool>(a.getPastKey()) != static_cast<bool>(a.getPastValue()))
    return shapeError(loc, "past_key and past_value must be given together");
  int64_t total = xs[1];
  if (a.getPastKey()) {
    auto pk = getRankedTensor(loc, a.getPastKey(), "past_key");
    if (failed(pk) || pk->getRank() != 3)
      return shapeError(loc, "past_key must be [batch, past_seq, kv_heads*head_dim]");
    int64_t past = pk->getShape()[1];
    if (failed(expect(a.getPastKey(), "past_key", {xs[0], past, hkv * d})) ||
        failed(expect(a.getPastValue(), "past_value", {xs[0], past, hkv * d})))
      return failure();
    total = (isDynamicDim(past) || isDynamicDim(total)) ? ShapedType::kDynamic
                                                         : past + total;
  }
  if (failed(checkSameElementType(loc, types, names)))
    return failure();
  auto pos = getRankedTensor(loc, a.getPositions(), "positions");
  if (failed(pos))
    return failure();
  ArrayRef<int64_t> ps = pos->getShape();
  if (!((ps.size() == 1 && dimsMatch(ps[0], xs[1])) ||
        (ps.size() == 2 && dimsMatch(ps[0], xs[0]) && dimsMatch(ps[1], xs[1]))))
    return shapeError(loc, "positions must be [S] or [B, S] matching the input " +
                               shapeToString(xs) + ", got " + shapeToString(ps));
  Type et = x->getElementType();
  out.push_back(*x);
  auto kv = RankedTensorType::get({xs[0], total, hkv * d}, et);
  out.push_back(kv);
  out.push_back(kv);
  return success();
}

#define GET_OP_CLASSES
#include "RLX/Dialect/HIR/IR/HIROps.cpp.inc"
