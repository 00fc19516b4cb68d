//===- LoraOps.cpp - lora_matmul: shape rule and chain ----------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult LoraMatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  auto la = getRankedTensor(loc, a.getLoraA(), "lora_a");
  auto lb = getRankedTensor(loc, a.getLoraB(), "lora_b");
  if (failed(x) || failed(w) || failed(la) || failed(lb) ||
      failed(checkSameElementType(loc, {*x, *w, *la, *lb},
                                  {"input", "weight", "lora_a", "lora_b"})))
    return failure();
  auto shapes = [&] {
    return shapeToString(x->getShape()) + ", " + shapeToString(w->getShape()) + ", " +
           shapeToString(la->getShape()) + " and " + shapeToString(lb->getShape());
  };
  bool many = static_cast<bool>(a.getAdapterIds());
  int64_t lead = many ? 1 : 0;
  if (x->getRank() < 2 || w->getRank() != 2 || la->getRank() != 2 + lead ||
      lb->getRank() != 2 + lead)
    return shapeError(loc, Twine("lora_matmul needs input [..., in], weight [out, in], ") +
                               (many ? "lora_a [n, r, in] and lora_b [n, out, r] (with adapter "
                                       "ids)"
                                     : "lora_a [r, in] and lora_b [out, r]") +
                               ", got " + shapes());
  int64_t in = x->getDimSize(x->getRank() - 1), outDim = w->getDimSize(0);
  int64_t r = la->getDimSize(lead);
  if (!dimsMatch(w->getDimSize(1), in) || !dimsMatch(la->getDimSize(lead + 1), in) ||
      !dimsMatch(lb->getDimSize(lead), outDim) || !dimsMatch(lb->getDimSize(lead + 1), r) ||
      (many && !dimsMatch(la->getDimSize(0), lb->getDimSize(0))))
    return shapeError(loc, "lora_matmul shapes disagree (input [..., in], weight [out, in], " +
                               Twine(many ? "lora_a [n, r, in], lora_b [n, out, r]"
                                          : "lora_a [r, in], lora_b [out, r]") +
                               "): " + shapes());
  ArrayRef<double> scales = a.getScales();
  int64_t n = many ? la->getDimSize(0) : 1;
  if ((ShapedType::isDynamic(n) && many) || static_cast<int64_t>(scales.size()) != n)
    return shapeError(loc, "lora_matmul needs one scale per adapter: " + Twine(scales.size()) +
                               " scales for " +
                               (ShapedType::isDynamic(n) ? std::string("a dynamic number of")
                                                         : std::to_string(n)) +
                               " adapters");
  for (double s : scales)
    if (!std::isfinite(s))
      return shapeError(loc, "lora_matmul scales must be finite");
  if (many) {
    auto ids = getRankedTensor(loc, a.getAdapterIds(), "adapter_ids");
    if (failed(ids))
      return failure();
    ArrayRef<int64_t> rows = x->getShape().drop_back();
    bool same = ids->getRank() == static_cast<int64_t>(rows.size()) && !rows.empty();
    for (int64_t i = 0; same && i < ids->getRank(); ++i)
      same = dimsMatch(ids->getDimSize(i), rows[i]);
    if (!same)
      return shapeError(loc, "lora_matmul adapter ids must be one per row, the input's shape "
                             "without its last axis " + shapeToString(rows) + ", got " +
                                 shapeToString(ids->getShape()));
    if (llvm::count_if(rows, ShapedType::isDynamic) > 1)
      return shapeError(loc, "lora_matmul with adapter ids takes at most one dynamic dim in "
                             "the input's leading axes, got " + shapeToString(rows));
    if (n < 1 || ShapedType::isDynamic(in) || ShapedType::isDynamic(outDim) ||
        ShapedType::isDynamic(r))
      return shapeError(loc, "lora_matmul with adapter ids needs at least one adapter and "
                             "static in, out and r, got " + shapes());
  }
  SmallVector<int64_t> shape(x->getShape());
  shape.back() = outDim;
  out.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

FailureOr<SmallVector<Value>> LoraMatmulOp::decompose(MIRBuilder &mb) {
  auto xt = getInput().getType();
  Type et = xt.getElementType();
  ArrayRef<double> scales = getScales();
  // s·B: a product of parameters when B is one (weight packing hoists it).
  // For f16/bf16 in f32 (the scale is not rounded to the element type; PEFT
  // scales in f32), then rounded once; f64 in f64.
  Type wide = et.isF64() ? et : mb.builder().getF32Type();
  Value b = et == wide ? getLoraB() : mb.cast(getLoraB(), wide);
  Value scaledB;
  if (!getAdapterIds()) {
    scaledB = mb.mul(b, mb.scalar(wide, scales[0]));
  } else {
    int64_t n = static_cast<int64_t>(scales.size());
    auto type = RankedTensorType::get({n, 1, 1}, wide);
    SmallVector<Attribute> values;
    for (double s : scales)
      values.push_back(FloatAttr::get(wide, s));
    Value table = mb.create<ConstantOp>(DenseElementsAttr::get(type, values));
    scaledB = mb.mul(b, table);
  }
  if (et != wide)
    scaledB = mb.cast(scaledB, et);
  // PEFT's base layer: the nn.Linear product, as rlx_hir.linear lowers it.
  FusedMatmulSpec base;
  base.lhs = getInput();
  base.rhs = getWeight();
  base.transposeB = true;
  Value y = mb.fusedMatmul(base);
  Value delta;
  if (!getAdapterIds()) {
    delta = mb.matmul(mb.matmul(getInput(), getLoraA(), false, true), scaledB, false, true);
  } else {
    int64_t in = xt.getDimSize(xt.getRank() - 1);
    Value rows = mb.reshape(getInput(), {-1, in});
    Value ids = mb.reshape(getAdapterIds(), {-1});
    auto grouped = [&](Value lhs, Value w) {
      return mb.create<GroupedMatmulOp>(lhs, w, ids, /*zero_out_of_range=*/true);
    };
    Value d = grouped(grouped(rows, getLoraA()), scaledB);
    delta = mb.reshape(d, MIRBuilder::pattern(getType().getShape()));
  }
  y = mb.add(y, delta);
  if (mb.failed() || !y)
    return emitError("lora_matmul: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y};
}
