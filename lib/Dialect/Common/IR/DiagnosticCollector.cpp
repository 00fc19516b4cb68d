//===- DiagnosticCollector.cpp - Diagnostics as text ----------------------===//

#include "RLX/Dialect/Common/IR/DiagnosticCollector.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static StringRef severityName(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

rlx::DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler(ctx, [this](Diagnostic &d) {
        llvm::raw_string_ostream os(text);
        if (auto flc = dyn_cast<FileLineColLoc>(d.getLocation()))
          os << flc.getFilename().getValue() << ":" << flc.getLine() << ":" << flc.getColumn()
             << ": ";
        else if (!isa<UnknownLoc>(d.getLocation()))
          os << d.getLocation() << ": ";
        os << severityName(d.getSeverity()) << ": " << d << "\n";
        for (Diagnostic &note : d.getNotes())
          os << "  note: " << note << "\n";
        return success();
      }) {}
