//===- DiagnosticCollector.h - Diagnostics as text --------------*- C++ -*-===//
//
// One way of turning a context's diagnostics into the text tools and Python
// report: "file:line:col: error: message" (the location left out when
// unknown), each note on its own line. The CPU runner and the Python
// bindings collect through it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_DIAGNOSTICCOLLECTOR_H
#define RLX_DIALECT_COMMON_IR_DIAGNOSTICCOLLECTOR_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace mlir::rlx {

/// Collects every diagnostic of `ctx` into `text` while alive.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx);
  std::string text;

private:
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_DIAGNOSTICCOLLECTOR_H
