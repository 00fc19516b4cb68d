//===- InitAll.h - Register every RLX dialect, pass and pipeline -*- C++ -*-===//
//
// The one entry point tools use to make RLX available: rlx-opt, the mlir-opt
// plugin, rlx-run and the Python bindings all call these, so every tool sees
// the same dialects, interfaces and passes.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_INITALL_H
#define RLX_INITALL_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace mlir::rlx {

/// Adds the RLX dialects (rlx, rlx_hir, rlx_mir, rlx_lir) and their interface
/// models to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers every RLX pass and pass pipeline with the global registry.
void registerAllPasses();

/// Upstream MLIR's dialects, extensions and LLVM IR translations plus RLX's:
/// what rlx-opt and rlx-run load.
void registerEverything(DialectRegistry &registry);

} // namespace mlir::rlx

#endif // RLX_INITALL_H
