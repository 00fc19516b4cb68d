//===- ImportUtils.h - Shared pieces of the TOSA/linalg raising -*- C++ -*-===//
//
// Internal to lib/Conversion/ImportToMIR.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H
#define RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx::import_detail {

/// Replaces `op` by `v` when the types agree; else erases what was built for
/// `v` and fails, leaving the op as it is (a raised op must infer exactly the
/// original result type).
inline LogicalResult replaceIfSameType(PatternRewriter &rw, Operation *op, Value v) {
  if (v.getType() != op->getResult(0).getType()) {
    if (Operation *def = v.getDefiningOp(); def && def->use_empty())
      rw.eraseOp(def);
    return failure();
  }
  rw.replaceOp(op, v);
  return success();
}

} // namespace mlir::rlx::import_detail

#endif // RLX_LIB_CONVERSION_IMPORTTOMIR_IMPORTUTILS_H
