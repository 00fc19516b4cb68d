//===- ImportUtils.h - Shared pieces of the TOSA/linalg raising -*- C++ -*-===//
//
// Internal to lib/Conversion/ImportToMIR.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H
#define RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H

#include "RLX/Dialect/Common/IR/TryCreate.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx::import_detail {

/// Replaces `op` by `v` when the types agree; else erases what was built for
/// `v` and fails, leaving the op as it is (a raised op must infer exactly the
/// original result type).
inline LogicalResult replaceIfSameType(PatternRewriter &rw, Operation *op, Value v) {
  if (!v)
    return failure();
  if (v.getType() != op->getResult(0).getType()) {
    if (Operation *def = v.getDefiningOp(); def && def->use_empty())
      rw.eraseOp(def);
    return failure();
  }
  rw.replaceOp(op, v);
  return success();
}

/// As above for a value built by `mb`: on failure, everything `mb` built is
/// erased again.
inline LogicalResult replaceIfSameType(PatternRewriter &rw, Operation *op, mir::MIRBuilder &mb,
                                       Value v) {
  if (!mb.failed() && v && v.getType() == op->getResult(0).getType()) {
    rw.replaceOp(op, v);
    return success();
  }
  mb.discardUnused(&rw);
  return failure();
}

/// As above for an op built with tryCreate: a rejected build leaves `op`.
template <typename OpTy>
LogicalResult replaceIfSameType(PatternRewriter &rw, Operation *op, FailureOr<OpTy> built) {
  if (failed(built))
    return failure();
  return replaceIfSameType(rw, op, (*built)->getResult(0));
}

/// Each scf.while on tensors whose condition forwards its own block
/// arguments (torch.while_loop from torch-mlir) as an rlx_mir.while
/// (WhileToMIR.cpp); others stay.
void raiseWhileLoops(Operation *root);

} // namespace mlir::rlx::import_detail

#endif // RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H
