//===- RLXInterfaces.cpp - Interfaces shared by the RLX dialects ----------===//

#include "RLX/Dialect/Common/IR/RLXInterfaces.h"

#include "RLX/Dialect/Common/IR/RLXInterfaces.cpp.inc"
