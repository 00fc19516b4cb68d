//===- TryCreate.cpp - Build a type-inferring op or fail cleanly ----------===//

#include "RLX/Dialect/Common/IR/TryCreate.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

LogicalResult mlir::rlx::verifyBuilt(Operation *op, bool diagnose) {
  if (diagnose)
    return mlir::verify(op, /*verifyRecursively=*/false);
  // Swallow the verifier's diagnostics: the caller treats a failure as "this
  // rewrite does not apply".
  ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
  return mlir::verify(op, /*verifyRecursively=*/false);
}
