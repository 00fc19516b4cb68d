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

/// Whether operand `i`'s gradient is wanted (false past `need`'s end).
inline bool wants(ArrayRef<bool> need, unsigned i) { return i < need.size() && need[i]; }

/// `axis` counted from 0 in a value of `rank` dims.
inline int64_t axisFromZero(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

} // namespace mlir::rlx::mir::rules

#endif // RLX_LIB_DIALECT_MIR_IR_RULEUTILS_H
