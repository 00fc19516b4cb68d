//===- SourceLocations.h - An op's origins as file:line:col -----*- C++ -*-===//
//
// The source positions a location stands for: a fused kernel's location is
// the FusedLoc of the ops it came from (fusion and lowering fuse them), so
// its origins are every file:line:col inside (names and call sites
// unwrapped), in order, without repeats. The kernel timelines (rlx-run and
// rlx-gpu-run --trace) and the GPU artifact's manifest report them.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_SOURCELOCATIONS_H
#define RLX_DIALECT_COMMON_IR_SOURCELOCATIONS_H

#include "mlir/IR/Location.h"

#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::rlx {

std::vector<std::string> sourceLocations(Location loc);

/// The location of `op` fused with those of every op nested in it: a
/// kernel's origins (its root op's location alone names one of the ops
/// fused into it).
Location fusedOrigins(Operation *op);

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_SOURCELOCATIONS_H
