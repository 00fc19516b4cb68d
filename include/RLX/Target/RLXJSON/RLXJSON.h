//===- RLXJSON.h - The original RLX's JSON graphs in and out ----*- C++ -*-===//
//
// Interop with the Rust RLX's serde-JSON modules (format in
// ../shared/rlx-json.md). Importing a HIR module gives a func.func of
// rlx_hir/rlx_mir ops whose locations carry the node ids (and names);
// importing a LIR module (MIR graph + buffer plan) gives a function in LIR
// buffer form whose arena views sit at the original offsets, with the plan
// kept in `rlx_lir.plan` so rlx-lir-verify-plan can check it. Exporting
// writes the same formats from RLX-MLIR's HIR and planned LIR; ops the
// original format has no variant for are written as {"Mlir": {"op": text}}
// (which the importer reads back), so our own modules round-trip.
//
// rlx-translate registers --import-rlx-json, --export-rlx-hir-json and
// --export-rlx-lir-json.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_RLXJSON_RLXJSON_H
#define RLX_TARGET_RLXJSON_RLXJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::rlx {

/// Imports an RLX HIR or LIR JSON module (told apart by its keys). Errors
/// are diagnostics located at "<buffer> node:<id>"; returns null on error.
OwningOpRef<ModuleOp> importRLXJson(StringRef json, StringRef bufferName, MLIRContext *ctx);

/// Writes the single public function of `module` (HIR/MIR on tensors) as an
/// RLX HIR JSON module.
LogicalResult exportRLXHirJson(ModuleOp module, llvm::raw_ostream &os);

/// Writes the planned LIR function of `module` (after rlx-lir-plan-buffers)
/// as an RLX LIR JSON module: the kernels' MIR graph and the buffer plan.
LogicalResult exportRLXLirJson(ModuleOp module, llvm::raw_ostream &os);

/// Registers the rlx-translate translations (library
/// RLXTargetRLXJSONRegistration, which registers every dialect: an escaped op
/// may be of any).
void registerRLXJsonTranslations();

} // namespace mlir::rlx

#endif // RLX_TARGET_RLXJSON_RLXJSON_H
