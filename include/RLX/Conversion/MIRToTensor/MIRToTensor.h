//===- MIRToTensor.h - MIR data movement as tensor ops ----------*- C++ -*-===//
//
// reshape, slice and concat, the MIR ops that are views or copies at the
// buffer level, as tensor dialect ops: for convert-rlx-mir-to-lir and
// convert-rlx-mir-to-linalg, neither of which depends on the other.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_MIRTOTENSOR_MIRTOTENSOR_H
#define RLX_CONVERSION_MIRTOTENSOR_MIRTOTENSOR_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {

/// reshape (tensor.expand_shape / collapse_shape), slice
/// (tensor.extract_slice) and concat (tensor.insert_slice into tensor.empty).
void populateMIRDataMovementToTensorPatterns(RewritePatternSet &patterns);

} // namespace mlir::rlx

#endif // RLX_CONVERSION_MIRTOTENSOR_MIRTOTENSOR_H
