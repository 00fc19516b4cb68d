//===- Passes.h - rlx_lir passes ---------------------------------*- C++ -*-===//
//
// rlx-lir-bufferize, rlx-lir-plan-buffers and rlx-lir-verify-plan; generated
// from Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_TRANSFORMS_PASSES_H
#define RLX_DIALECT_LIR_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace memref {
class MemRefDialect;
} // namespace memref
} // namespace mlir

namespace mlir::rlx::lir {
class LIRDialect;

#define GEN_PASS_DECL
#include "RLX/Dialect/LIR/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Dialect/LIR/Transforms/Passes.h.inc"

/// Attaches the BufferizableOpInterface model of rlx_lir.kernel.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::rlx::lir

#endif // RLX_DIALECT_LIR_TRANSFORMS_PASSES_H
