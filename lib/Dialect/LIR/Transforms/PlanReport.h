//===- PlanReport.h - Text, JSON and SVG views of an arena plan -*- C++ -*-===//
//
// Internal to lib/Dialect/LIR/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_DIALECT_LIR_TRANSFORMS_PLANREPORT_H
#define RLX_LIB_DIALECT_LIR_TRANSFORMS_PLANREPORT_H

#include "RLX/Dialect/LIR/Transforms/BufferPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::rlx::lir {

struct ReportBuffer {
  int64_t id = 0, size = 0, offset = 0, start = 0, end = 0, group = 0;
  std::string type;
  std::vector<std::string> views; ///< Ops that view this buffer.
};

struct PlanReport {
  std::string function;
  PlanSummary summary;
  int64_t alignment = 64;
  std::vector<std::string> schedule; ///< One label per op, in order.
  std::vector<ReportBuffer> buffers;
  DictionaryAttr io;
};

/// "arena 1024 bytes, lower bound 1024 (1.000x), sum of buffers 1536, 3 buffers"
std::string summaryLine(const PlanReport &report);

/// Writes <dir>/<function>.plan.json and <dir>/<function>.plan.svg.
LogicalResult writeReport(const PlanReport &report, StringRef dir, Operation *anchor);

} // namespace mlir::rlx::lir

#endif // RLX_LIB_DIALECT_LIR_TRANSFORMS_PLANREPORT_H
