//===- NormOps.cpp - group_norm: shape rule and decomposition --------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult GroupNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(checkEps(loc, a.getEps().convertToDouble())))
    return failure();
  if (x->getRank() < 2)
    return shapeError(loc, "group_norm needs an input of rank >= 2 [N, C, *], got " +
                               shapeToString(x->getShape()));
  int64_t c = x->getDimSize(1), g = a.getNumGroups();
  if (g < 1 || (!ShapedType::isDynamic(c) && c % g != 0))
    return shapeError(loc, "group_norm num_groups = " + Twine(g) + " must divide the " +
                               Twine(c) + " channels");
  for (auto [v, name] : {std::pair{a.getWeight(), "weight"}, std::pair{a.getBias(), "bias"}}) {
    if (!v)
      continue;
    auto t = getRankedTensor(loc, v, name);
    if (failed(t) || failed(checkSameElementType(loc, {*x, *t}, {"input", name})))
      return failure();
    if (t->getRank() != 1 || !dimsMatch(t->getDimSize(0), c))
      return shapeError(loc, Twine("group_norm ") + name + " must be [C] = [" + Twine(c) +
                                 "], got " + shapeToString(t->getShape()));
  }
  out.push_back(*x);
  return success();
}

FailureOr<SmallVector<Value>> GroupNormOp::decompose(MIRBuilder &mb) {
  auto xt = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, xt)))
    return failure();
  Type in = xt.getElementType(), stats = mb.computeType(in);
  auto widen = [&](Value v) { return mb.widen(v, stats); };
  ArrayRef<int64_t> shape = xt.getShape();
  int64_t n = shape[0], groups = getNumGroups();
  int64_t perGroup = shape[1] / groups; // channels per group × positions
  for (int64_t d : shape.drop_front(2))
    perGroup *= d;
  Value g = mb.reshape(widen(getInput()), {n, groups, perGroup});
  Value mean = mb.reduce(ReduceKind::Mean, g, {2}, /*keepDims=*/true);
  Value centered = mb.sub(g, mean);
  Value var = mb.reduce(ReduceKind::Mean, mb.mul(centered, centered), {2}, /*keepDims=*/true);
  Value y = mb.mul(centered, mb.unary<RsqrtOp>(mb.add(var, mb.scalar(stats, getEps().convertToDouble()))));
  y = mb.reshape(y, SmallVector<int64_t>(shape));
  // Per-channel affine: [C] as [C, 1, ...] against [N, C, *].
  SmallVector<int64_t> channel{shape[1]};
  channel.append(shape.size() - 2, 1);
  if (Value w = widen(getWeight()))
    y = mb.mul(y, mb.reshape(w, channel));
  if (Value b = widen(getBias()))
    y = mb.add(y, mb.reshape(b, channel));
  if (in != stats)
    y = mb.cast(y, in);
  if (mb.failed() || !y)
    return emitError("group_norm: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y};
}
