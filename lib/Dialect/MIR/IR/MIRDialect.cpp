//===- MIRDialect.cpp - rlx_mir dialect -----------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRDialect.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

using namespace mlir;
using namespace mlir::rlx::mir;

#include "RLX/Dialect/MIR/IR/MIRDialect.cpp.inc"
#include "RLX/Dialect/MIR/IR/MIRInterfaces.cpp.inc"

void MIRDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "RLX/Dialect/MIR/IR/MIROps.cpp.inc"
      >();
}

Operation *MIRDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
