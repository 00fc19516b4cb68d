//===- SsmOps.cpp - causal_conv1d: shape rule and decomposition ------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult CausalConv1dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  if (failed(x) || failed(w) || failed(checkSameElementType(loc, {*x, *w}, {"input", "weight"})))
    return failure();
  if (x->getRank() != 3)
    return shapeError(loc, "causal_conv1d needs an input [B, D, L], got " +
                               shapeToString(x->getShape()));
  int64_t b = x->getDimSize(0), d = x->getDimSize(1);
  if (w->getRank() != 2 || !dimsMatch(w->getDimSize(0), d) || ShapedType::isDynamic(w->getDimSize(1)) ||
      w->getDimSize(1) < 1)
    return shapeError(loc, "causal_conv1d weight must be [D, K] = [" + Twine(d) +
                               ", K] with a static K >= 1, got " + shapeToString(w->getShape()));
  int64_t k = w->getDimSize(1);
  if (Value bias = a.getBias()) {
    auto t = getRankedTensor(loc, bias, "bias");
    if (failed(t) || failed(checkSameElementType(loc, {*x, *t}, {"input", "bias"})))
      return failure();
    if (t->getRank() != 1 || !dimsMatch(t->getDimSize(0), d))
      return shapeError(loc, "causal_conv1d bias must be [D] = [" + Twine(d) + "], got " +
                                 shapeToString(t->getShape()));
  }
  SmallVector<int64_t> stateShape{b, d, k - 1};
  if (Value state = a.getState()) {
    auto t = getRankedTensor(loc, state, "state");
    if (failed(t) || failed(checkSameElementType(loc, {*x, *t}, {"input", "state"})))
      return failure();
    if (t->getRank() != 3 || !dimsMatch(t->getDimSize(0), b) || !dimsMatch(t->getDimSize(1), d) ||
        ShapedType::isDynamic(t->getDimSize(2)) || t->getDimSize(2) < k - 1)
      return shapeError(loc, "causal_conv1d state must be [B, D, S] = [" + Twine(b) + ", " +
                                 Twine(d) + ", S] with a static S >= K - 1 = " + Twine(k - 1) +
                                 ", got " + shapeToString(t->getShape()));
    stateShape[2] = t->getDimSize(2);
  }
  if (std::optional<StringRef> act = a.getActivation(); act && *act != "silu")
    return shapeError(loc, "causal_conv1d activation must be \"silu\" (or absent), got \"" +
                               *act + "\"");
  out.push_back(*x);
  out.push_back(x->clone(stateShape));
  return success();
}

FailureOr<SmallVector<Value>> CausalConv1dOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getInput().getType();
  if (!xt.hasStaticShape())
    return emitError("causal_conv1d: the decomposition needs static shapes; bind the dims first "
                     "(rlx-mir-specialize)"),
           failure();
  Type in = xt.getElementType();
  Type acc = in.isF64() ? in : mb.builder().getF32Type();
  auto widen = [&](Value v) { return v && in != acc ? mb.cast(v, acc) : v; };
  int64_t b = xt.getDimSize(0), d = xt.getDimSize(1), l = xt.getDimSize(2);
  int64_t k = getWeight().getType().getDimSize(1);
  int64_t s = getFinalState().getType().getDimSize(2);
  // The raw inputs before `input`: the state, or S zeros.
  Value history = getState() ? getState() : mb.zerosLike(getFinalState());
  Value all = mb.concat({history, getInput()}, 2); // [B, D, S + L]
  Value xp = widen(s == k - 1 ? all : mb.slice(all, {0, 0, s - (k - 1)}, {b, d, l + k - 1}, {1, 1, 1}));
  Value w = widen(getWeight());
  Value y;
  for (int64_t i = 0; i < k; ++i) {
    Value tap = mb.reshape(mb.slice(w, {0, i}, {d, 1}, {1, 1}), {1, d, 1});
    Value term = mb.mul(mb.slice(xp, {0, 0, i}, {b, d, l}, {1, 1, 1}), tap);
    y = y ? mb.add(y, term) : term;
  }
  if (Value bias = widen(getBias()))
    y = mb.add(y, mb.reshape(bias, {1, d, 1}));
  if (getActivation())
    y = mb.unary<SiluOp>(y);
  if (in != acc)
    y = mb.cast(y, in);
  Value state = mb.slice(all, {0, 0, l}, {b, d, s}, {1, 1, 1});
  if (mb.failed() || !y || !state)
    return emitError("causal_conv1d: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y, state};
}
