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
