//===- RuleUtils.h - Shared pieces of the MIR ops' AD and vmap rules --------===//
//
// Internal to RLXMIR: the error every rule reports when it does not apply,
// and the batch size of a vmap rule's operands.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_DIALECT_MIR_IR_RULEUTILS_H
#define RLX_LIB_DIALECT_MIR_IR_RULEUTILS_H

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

namespace mlir::rlx::mir::rules {

enum class Mode { Reverse, Forward, Batching };

/// "no <mode> rule for '<op>'[: why]" at `op`; returns failure.
inline LogicalResult noRule(Operation *op, Mode mode, const Twine &why = "") {
  const char *what = mode == Mode::Reverse   ? "reverse-mode"
                     : mode == Mode::Forward ? "forward-mode"
                                             : "batching";
  auto d = op->emitError("no ") << what << " rule for '" << op->getName() << "'";
  if (!why.isTriviallyEmpty())
    d << ": " << why;
  return failure();
}

/// The first of a rule's (co)tangents, null when there is none.
inline Value firstOf(ValueRange r) { return r.empty() ? Value() : r.front(); }

/// Success, or the rule's error when one of `mb`'s steps failed.
inline LogicalResult done(Operation *op, MIRBuilder &mb, Mode mode) {
  return mb.failed() ? noRule(op, mode, "the rule's ops reject these operand types") : success();
}

/// The leading (batch) dim of the first batched operand.
inline int64_t batchSize(ValueRange operands, ArrayRef<bool> batched) {
  for (auto [v, b] : llvm::zip(operands, batched))
    if (b)
      return MIRBuilder::shapeOf(v).front();
  return ShapedType::kDynamic;
}

/// The result of `mb`'s last step as the one result of a rule, or an error
/// at `op` when a step failed.
inline LogicalResult single(Operation *op, MIRBuilder &mb, Value v, Mode mode,
                            SmallVectorImpl<Value> &out) {
  if (mb.failed() || !v)
    return noRule(op, mode, "the rule's ops reject these operand types");
  out.assign({v});
  return success();
}

/// The rules of an op through which no derivative flows (an integer result,
/// or statistics computed under no_grad): zero (null) for every operand, or
/// every result.
inline LogicalResult noDerivative(Operation *op, Mode mode, SmallVectorImpl<Value> &out) {
  out.assign(mode == Mode::Reverse ? op->getNumOperands() : op->getNumResults(), Value());
  return success();
}

/// Whether operand `i`'s gradient is wanted (false past `need`'s end).
inline bool wants(ArrayRef<bool> need, unsigned i) { return i < need.size() && need[i]; }

/// `axis` counted from 0 in a value of `rank` dims.
inline int64_t axisFromZero(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

inline int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n = ShapedType::isDynamic(d) || ShapedType::isDynamic(n) ? ShapedType::kDynamic : n * d;
  return n;
}

/// A constant of `shape` ++ [1...] (to `rank`) with entry r = r · stride, of
/// integer type `et`: the offsets that make per-row indices global.
inline Value rowOffsets(MIRBuilder &mb, ArrayRef<int64_t> lead, int64_t rank, int64_t stride, Type et) {
  SmallVector<int64_t> shape(lead);
  shape.append(rank - lead.size(), 1);
  auto t = RankedTensorType::get(shape, et);
  SmallVector<APInt> values;
  for (int64_t r = 0, n = product(lead); r < n; ++r)
    values.push_back(APInt(et.getIntOrFloatBitWidth(), r * stride, /*isSigned=*/true));
  return ConstantOp::create(mb.builder(), mb.getLoc(), DenseElementsAttr::get(t, values));
}

/// `indices` (of any integer type) clamped into [0, rows) as gather and
/// scatter_add read them, then offset by b·rows for entry b of their leading
/// (batch) axis: indices into the batch's rows flattened.
inline Value flattenedBatchIndices(MIRBuilder &mb, Value indices, int64_t batch, int64_t rows) {
  Type it = MIRBuilder::elementType(indices);
  unsigned width = it.getIntOrFloatBitWidth();
  if (width < 64 && batch * rows > (int64_t(1) << (width - 1)) - 1)
    return mb.fail(); // the flattened rows do not fit the index type
  Value c = mb.create<MinOp>(mb.create<MaxOp>(indices, mb.scalar(it, 0)), mb.scalar(it, rows - 1));
  return mb.add(c, rowOffsets(mb, {batch}, MIRBuilder::typeOf(indices).getRank(), rows, it));
}

} // namespace mlir::rlx::mir::rules

#endif // RLX_LIB_DIALECT_MIR_IR_RULEUTILS_H
