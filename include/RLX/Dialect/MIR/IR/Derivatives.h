//===- Derivatives.h - reverse and forward mode over a list of ops -*- C++ -*-===//
//
// The two sweeps that rlx-mir-grad and rlx-mir-jvp run over a function body,
// and that the control-flow ops run over their regions to build their own
// derivative regions: each op's DifferentiableOpInterface rule in turn.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_DERIVATIVES_H
#define RLX_DIALECT_MIR_IR_DERIVATIVES_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::rlx::mir::ad {

/// The float-tensor values that depend on `seeds` through `ops` (in program
/// order), the seeds included.
DenseSet<Value> activeValues(ArrayRef<Operation *> ops, ValueRange seeds);

/// Reverse mode over `ops` (program order, one block): `grads` holds the
/// cotangents of some values on entry and gets those of every active
/// operand (summed over uses, broadcasts summed down). Builds at `b`'s
/// insertion point. Errors (prefixed with `pass`) at the first op without a
/// rule or whose rule fails.
LogicalResult backward(OpBuilder &b, ArrayRef<Operation *> ops, const DenseSet<Value> &active,
                       DenseMap<Value, Value> &grads, StringRef pass);

/// Forward mode over `ops`: `tangents` holds those of some values on entry
/// (null or absent: zero) and gets those of the results. Errors like
/// `backward`.
LogicalResult forward(OpBuilder &b, ArrayRef<Operation *> ops, DenseMap<Value, Value> &tangents,
                      StringRef pass);

/// Clones `block`'s ops but its terminator (an rlx_mir.yield) at `b`'s
/// insertion point with its arguments bound to `args`; the cloned ops go to
/// `cloned` when given. Returns the values the yield names.
SmallVector<Value> cloneYieldingBlock(OpBuilder &b, Block &block, ValueRange args,
                                      SmallVectorImpl<Operation *> *cloned = nullptr);

/// Errors at `op` unless `region` (when not empty) has one block taking
/// `args` and ending in an rlx_mir.yield of `yields`; `what` names the
/// region.
LogicalResult verifyRegionSignature(Operation *op, Region &region, StringRef what,
                                    TypeRange args, TypeRange yields);

} // namespace mlir::rlx::mir::ad

#endif // RLX_DIALECT_MIR_IR_DERIVATIVES_H
