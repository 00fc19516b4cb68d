//===- RLXInterfaces.h - Interfaces shared by the RLX dialects --*- C++ -*-===//

#ifndef RLX_DIALECT_COMMON_IR_RLXINTERFACES_H
#define RLX_DIALECT_COMMON_IR_RLXINTERFACES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "RLX/Dialect/Common/IR/RLXInterfaces.h.inc"

#endif // RLX_DIALECT_COMMON_IR_RLXINTERFACES_H
