//===- SwishGate.h - The demo dialect ----------------------------*- C++ -*-===//

#ifndef DEMO_SWISHGATE_H
#define DEMO_SWISHGATE_H

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "SwishGateDialect.h.inc"

#define GET_OP_CLASSES
#include "SwishGateOps.h.inc"

#endif // DEMO_SWISHGATE_H
