//===- HIRDialect.cpp - rlx_hir dialect -----------------------------------===//

#include "RLX/Dialect/HIR/IR/HIRDialect.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"

using namespace mlir;
using namespace mlir::rlx::hir;

#include "RLX/Dialect/HIR/IR/HIRDialect.cpp.inc"

void HIRDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "RLX/Dialect/HIR/IR/HIROps.cpp.inc"
      >();
}
