//===- MoeOps.cpp - rlx_hir moe_router and moe_experts: shape rules --------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::hir;

LogicalResult MoeRouterOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  if (failed(x) || failed(w) ||
      failed(checkSameElementType(loc, {*x, *w}, {"input", "weight"})))
    return failure();
  if (x->getRank() < 1 || w->getRank() != 2)
    return shapeError(loc, "moe_router needs input [..., H] and weight [E, H], got " +
                               shapeToString(x->getShape()) + " and " +
                               shapeToString(w->getShape()));
  int64_t e = w->getDimSize(0);
  if (ShapedType::isDynamic(e))
    return shapeError(loc, "moe_router needs a static number of experts, got weight " +
                               shapeToString(w->getShape()));
  if (!dimsMatch(x->getShape().back(), w->getDimSize(1)))
    return shapeError(loc, "moe_router weight " + shapeToString(w->getShape()) +
                               " is [E, H] for H = " + Twine(w->getDimSize(1)) +
                               ", but the input has H = " + Twine(x->getShape().back()));
  for (auto [value, name] : {std::pair{a.getBias(), "bias"},
                             std::pair{a.getCorrectionBias(), "correction_bias"}}) {
    if (!value)
      continue;
    auto b = getRankedTensor(loc, value, name);
    if (failed(b) || failed(checkSameElementType(loc, {*x, *b}, {"input", name})))
      return failure();
    if (b->getRank() != 1 || !dimsMatch(b->getDimSize(0), e))
      return shapeError(loc, Twine("moe_router ") + name + " must be [E] = [" + Twine(e) +
                                 "], got " + shapeToString(b->getShape()));
  }
  int64_t k = a.getTopK();
  if (k < 1 || (!ShapedType::isDynamic(e) && k > e))
    return shapeError(loc, "moe_router top_k must be in [1, E = " + Twine(e) + "], got " +
                               Twine(k));
  if (auto f = a.getRoutedScalingFactor()) {
    double s = f->convertToDouble();
    if (!(s > 0) || std::isinf(s))
      return shapeError(loc, "moe_router routed_scaling_factor must be positive and finite");
  }
  std::optional<int64_t> groups = a.getNGroup(), chosen = a.getTopkGroup();
  if (groups.has_value() != chosen.has_value())
    return shapeError(loc, "moe_router needs both n_group and topk_group, or neither");
  if (groups) {
    if (enumOr(a.getScoringAttr(), MoeScoring::Softmax) == MoeScoring::TopkSoftmax)
      return shapeError(loc, "moe_router groups need softmax or sigmoid scoring");
    if (*groups < 1 || ShapedType::isDynamic(e) || e % *groups != 0 || e / *groups < 2)
      return shapeError(loc, "moe_router n_group = " + Twine(*groups) + " must split the " +
                                 Twine(e) + " experts into equal groups of at least two");
    if (*chosen < 1 || *chosen > *groups)
      return shapeError(loc, "moe_router topk_group must be in [1, n_group = " +
                                 Twine(*groups) + "], got " + Twine(*chosen));
    if (k > *chosen * (e / *groups))
      return shapeError(loc, "moe_router top_k = " + Twine(k) + " is more than the " +
                                 Twine(*chosen * (e / *groups)) +
                                 " experts of the topk_group chosen groups");
  }
  SmallVector<int64_t> shape(x->getShape().drop_back());
  shape.push_back(k);
  out.push_back(RankedTensorType::get(shape, Float32Type::get(ctx)));
  out.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult MoeExpertsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeights(), "weights");
  auto ids = getRankedTensor(loc, a.getIds(), "ids");
  auto gu = getRankedTensor(loc, a.getGateUp(), "gate_up");
  auto d = getRankedTensor(loc, a.getDown(), "down");
  if (failed(x) || failed(w) || failed(ids) || failed(gu) || failed(d) ||
      failed(checkSameElementType(loc, {*x, *gu, *d}, {"input", "gate_up", "down"})))
    return failure();
  if (failed(checkGatedActivation(loc, "moe_experts",
                                  enumOr(a.getActivationAttr(), ActivationKind::Silu))))
    return failure();
  if (x->getRank() < 1 || gu->getRank() != 3 || d->getRank() != 3)
    return shapeError(loc, "moe_experts needs input [..., H], gate_up [E, 2I, H] and down "
                           "[E, H, I], got " + shapeToString(x->getShape()) + ", " +
                               shapeToString(gu->getShape()) + " and " +
                               shapeToString(d->getShape()));
  int64_t e = gu->getDimSize(0), twoI = gu->getDimSize(1), h = gu->getDimSize(2);
  if (!ShapedType::isDynamic(twoI) && twoI % 2 != 0)
    return shapeError(loc, "moe_experts gate_up " + shapeToString(gu->getShape()) +
                               " must be [E, 2I, H]: its middle dim is odd");
  int64_t i = ShapedType::isDynamic(twoI) ? ShapedType::kDynamic : twoI / 2;
  if (!dimsMatch(d->getDimSize(0), e) || !dimsMatch(d->getDimSize(1), h) ||
      !dimsMatch(d->getDimSize(2), i))
    return shapeError(loc, "moe_experts down must be [E, H, I] = [" + Twine(e) + ", " +
                               Twine(h) + ", " + Twine(i) + "] for gate_up " +
                               shapeToString(gu->getShape()) + ", got " +
                               shapeToString(d->getShape()));
  if (e == 0)
    return shapeError(loc, "moe_experts needs at least one expert");
  if (!gu->hasStaticShape() || !d->hasStaticShape())
    return shapeError(loc, "moe_experts needs static expert weights, got gate_up " +
                               shapeToString(gu->getShape()) + " and down " +
                               shapeToString(d->getShape()));
  if (!dimsMatch(x->getShape().back(), h))
    return shapeError(loc, "moe_experts input has H = " + Twine(x->getShape().back()) +
                               " but the experts take H = " + Twine(h));
  ArrayRef<int64_t> lead = x->getShape().drop_back();
  auto routed = [&](RankedTensorType t) {
    if (t.getRank() != static_cast<int64_t>(lead.size()) + 1)
      return false;
    for (auto [p, q] : llvm::zip(lead, t.getShape().drop_back()))
      if (!dimsMatch(p, q))
        return false;
    return true;
  };
  if (!routed(*w) || !routed(*ids) || !dimsMatch(w->getShape().back(), ids->getShape().back()))
    return shapeError(loc, "moe_experts weights and ids must both be [..., k] over the input's "
                           "leading dims " + shapeToString(lead) + ", got " +
                               shapeToString(w->getShape()) + " and " +
                               shapeToString(ids->getShape()));
  int64_t k = ids->getShape().back();
  if (ShapedType::isDynamic(k) || k < 1 || k > e)
    return shapeError(loc, "moe_experts needs a static k in [1, E = " + Twine(e) +
                               "] experts per token, got " + shapeToString(ids->getShape()));
  auto bias = [&](Value b, StringRef name, ArrayRef<int64_t> want) -> LogicalResult {
    if (!b)
      return success();
    auto t = getRankedTensor(loc, b, name);
    if (failed(t))
      return failure();
    if (t->getShape() != want || t->getElementType() != gu->getElementType())
      return shapeError(loc, "moe_experts " + name + " must be " + shapeToString(want) +
                                 " of the experts' element type, got " +
                                 shapeToString(t->getShape()));
    return success();
  };
  if (failed(bias(a.getGateUpBias(), "gate_up_bias", {e, twoI})) ||
      failed(bias(a.getDownBias(), "down_bias", {e, h})))
    return failure();
  std::optional<APFloat> alpha = a.getSwigluAlpha(), limit = a.getSwigluLimit();
  if (limit && !alpha)
    return shapeError(loc, "moe_experts swiglu_limit needs swiglu_alpha (gpt-oss's clamped SwiGLU)");
  if (limit && !(limit->convertToDouble() > 0.0))
    return shapeError(loc, "moe_experts swiglu_limit must be positive");
  if (alpha && !std::isfinite(alpha->convertToDouble()))
    return shapeError(loc, "moe_experts swiglu_alpha must be finite");
  if (alpha && enumOr(a.getActivationAttr(), ActivationKind::Silu) != ActivationKind::Silu)
    return shapeError(loc, "moe_experts swiglu_alpha is a SiLU gate: the activation must be silu");
  out.push_back(*x);
  return success();
}
