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
  auto x = checkNormOperands(loc, a.getInput(), a.getWeight(), a.getEps().convertToDouble());
  if (failed(x))
    return failure();
  auto r = getRankedTensor(loc, a.getResidual(), "residual");
  if (failed(r))
    return failure();
  if (*r != *x)
    return shapeError(loc, "input " + typeToString(*x) + " and residual " +
                               typeToString(*r) + " must have the same type");
  return pushSame(*x, out, 2);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = checkNormOperands(loc, a.getInput(), a.getWeight(), a.getEps().convertToDouble());
  if (failed(x))
    return failure();
  if (a.getBias()) {
    auto b = getRankedTensor(loc, a.getBias(), "bias");
    if (failed(b) ||
        failed(checkSameElementType(loc, {*x, *b}, {"input", "bias"})) ||
        failed(checkChannelVector(loc, x->getShape(), b->getShape(), "bias")))
      return failure();
  }
  return pushSame(*x, out);
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
  switch (act) {
  case ActivationKind::Silu:
  case ActivationKind::Gelu:
  case ActivationKind::GeluTanh:
  case ActivationKind::Relu:
    break;
  default:
    return shapeError(loc, "swiglu activation must be silu, gelu, gelu_tanh "
                           "or relu, got " +
                               stringifyActivationKind(act));
  }
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
  return inferAttentionTypes(loc, getAttentionConfig(a), a.getQuery(), a.getKey(),
                             a.getValue(), a.getMask(), out);
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
    auto c = getRankedTensor(loc, a.getCos(), "cos");
    auto s = getRankedTensor(loc, a.getSin(), "sin");
    if (failed(c) || failed(s))
      return failure();
    if (*c != *s)
      return shapeError(loc, "cos " + typeToString(*c) + " and sin " +
                                 typeToString(*s) + " must have the same type");
    ArrayRef<int64_t> cs = c->getShape();
    bool ok = (cs.size() == 2 && dimsMatch(cs[0], xs[1])) ||
              (cs.size() == 3 && dimsMatch(cs[0], xs[0]) && dimsMatch(cs[1], xs[1]));
    if (!ok || !dimsMatch(cs.back(), rot / 2))
      return shapeError(loc, "cos/sin must be [S, rotary_dim/2] or [B, S, "
                             "rotary_dim/2] = [.., " +
                                 Twine(rot / 2) + "] for input " +
                                 shapeToString(xs) + ", got " +
                                 shapeToString(cs));
  }
  return pushSame(*x, out);
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto ids = getRankedTensor(loc, a.getIds(), "ids");
  auto table = getRankedTensor(loc, a.getTable(), "table");
  if (failed(ids) || failed(table))
    return failure();
  if (table->getRank() != 2)
    return shapeError(loc, "embedding table must be rank 2 [vocab, hidden], got " +
                               shapeToString(table->getShape()));
  auto shape = inferGather(loc, table->getShape(), ids->getShape());
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(*shape, table->getElementType()));
  return success();
}

#define GET_OP_CLASSES
#include "RLX/Dialect/HIR/IR/HIROps.cpp.inc"
