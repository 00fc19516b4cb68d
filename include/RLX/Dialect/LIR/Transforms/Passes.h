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

/// Gives every tensor result of `module`'s functions a value of its own: a
/// value returned twice, or an argument returned as it is, is copied
/// (bufferization.alloc_tensor copy). Promoting buffer results to out
/// parameters needs one allocation per result; rlx-lir-bufferize and the
/// CPU pipeline call this before bufferizing.
void separateReturnedTensors(ModuleOp module);

/// Attaches the BufferizableOpInterface model of rlx_lir.kernel.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::rlx::lir

#endif // RLX_DIALECT_LIR_TRANSFORMS_PASSES_H
