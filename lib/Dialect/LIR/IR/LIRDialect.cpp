//===- LIRDialect.cpp - rlx_lir dialect -----------------------------------===//

#include "RLX/Dialect/LIR/IR/LIRDialect.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"

using namespace mlir;
using namespace mlir::rlx::lir;

#include "RLX/Dialect/LIR/IR/LIRDialect.cpp.inc"

void LIRDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "RLX/Dialect/LIR/IR/LIROps.cpp.inc"
      >();
}

static LogicalResult checkIo(Operation *op, Attribute value) {
  auto dict = dyn_cast<DictionaryAttr>(value);
  if (!dict)
    return op->emitError() << "rlx_lir.io must be a dictionary, got " << value;
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    auto names = dyn_cast<ArrayAttr>(entry.getValue());
    if ((key != "inputs" && key != "params" && key != "outputs") || !names ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "rlx_lir.io has inputs, params and outputs (arrays of names), "
                                "got '"
                             << key << "' = " << entry.getValue();
  }
  return success();
}

static LogicalResult checkPlan(Operation *op, Attribute value) {
  auto dict = dyn_cast<DictionaryAttr>(value);
  if (!dict)
    return op->emitError() << "rlx_lir.plan must be a dictionary, got " << value;
  for (StringRef required : {"arena_bytes", "alignment"})
    if (!dict.get(required))
      return op->emitError() << "rlx_lir.plan needs '" << required << "'";
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    if (key == "imported") {
      if (!isa<StringAttr>(entry.getValue()))
        return op->emitError() << "rlx_lir.plan 'imported' must be a string";
      continue;
    }
    if (key != "arena_bytes" && key != "lower_bound_bytes" && key != "sum_bytes" &&
        key != "scratch_bytes" && key != "alignment")
      return op->emitError() << "rlx_lir.plan has no field '" << key << "'";
    auto i = dyn_cast<IntegerAttr>(entry.getValue());
    if (!i || i.getValue().isNegative() || (key == "alignment" && i.getValue().isZero()))
      return op->emitError() << "rlx_lir.plan '" << key << "' must be a "
                             << (key == "alignment" ? "positive" : "non-negative")
                             << " integer, got " << entry.getValue();
  }
  return success();
}

LogicalResult LIRDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "rlx_lir.io")
    return checkIo(op, attr.getValue());
  if (name == "rlx_lir.plan")
    return checkPlan(op, attr.getValue());
  if (name == "rlx_lir.arena") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "rlx_lir.arena is a unit attribute";
    return success();
  }
  return op->emitError() << "unknown attribute '" << name
                         << "' (the rlx_lir dialect defines rlx_lir.io, rlx_lir.plan and "
                            "rlx_lir.arena)";
}

LogicalResult LIRDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                   unsigned argIndex, NamedAttribute attr) {
  if (attr.getName() != "rlx_lir.arena")
    return op->emitError() << "unknown attribute '" << attr.getName().getValue()
                           << "' on argument " << argIndex
                           << " (the rlx_lir dialect defines rlx_lir.arena there)";
  Region &region = op->getRegion(regionIndex);
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "rlx_lir.arena is a unit attribute";
  if (region.empty() || argIndex >= region.getNumArguments())
    return success();
  auto t = dyn_cast<MemRefType>(region.getArgument(argIndex).getType());
  if (!t || t.getRank() != 1 || !t.hasStaticShape() || !t.getElementType().isInteger(8))
    return op->emitError() << "rlx_lir.arena argument " << argIndex
                           << " must be a static memref<Nxi8>, got "
                           << region.getArgument(argIndex).getType();
  return success();
}
