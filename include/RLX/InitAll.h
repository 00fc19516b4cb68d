//===- InitAll.h - Register every RLX dialect, pass and pipeline -*- C++ -*-===//
//
// The one entry point tools use to make RLX available: rlx-opt, the mlir-opt
// plugin, rlx-run and the Python bindings all call these, so every tool sees
// the same dialects, interfaces and passes.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_INITALL_H
#define RLX_INITALL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
class StringRef;
} // namespace llvm

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

/// Reads and parses the module in file `path` ("-": stdin) for a tool:
/// `sourceMgr` keeps the buffer for the diagnostics (the caller's
/// SourceMgrDiagnosticHandler prints them); null after "<tool>: <error>" on
/// stderr or a parse error.
OwningOpRef<ModuleOp> parseModuleFile(llvm::StringRef path, MLIRContext &ctx,
                                      llvm::SourceMgr &sourceMgr, llvm::StringRef tool);

} // namespace mlir::rlx

#endif // RLX_INITALL_H
