//===- Registration.cpp - rlx-translate's RLX JSON translations -----------===//

#include "RLX/Target/RLXJSON/RLXJSON.h"

#include "RLX/InitAll.h"

#include "mlir/InitAllDialects.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

void mlir::rlx::registerRLXJsonTranslations() {
  static bool once = [] {
    auto dialects = [](DialectRegistry &registry) {
      mlir::registerAllDialects(registry);
      rlx::registerAllDialects(registry);
    };
    TranslateToMLIRRegistration importJson(
        "import-rlx-json", "the original RLX's HIR or LIR JSON module to RLX-MLIR",
        [](llvm::SourceMgr &sm, MLIRContext *ctx) -> OwningOpRef<Operation *> {
          const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(sm.getMainFileID());
          auto module = importRLXJson(buffer->getBuffer(), buffer->getBufferIdentifier(), ctx);
          return OwningOpRef<Operation *>(module.release());
        },
        dialects);
    TranslateFromMLIRRegistration exportHir(
        "export-rlx-hir-json", "a HIR/MIR function on tensors to an RLX HIR JSON module",
        [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
          auto module = dyn_cast<ModuleOp>(op);
          if (!module)
            return op->emitError("export-rlx-hir-json expects a builtin.module");
          return exportRLXHirJson(module, os);
        },
        dialects);
    TranslateFromMLIRRegistration exportLir(
        "export-rlx-lir-json", "a planned LIR function to an RLX LIR JSON module (graph + plan)",
        [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
          auto module = dyn_cast<ModuleOp>(op);
          if (!module)
            return op->emitError("export-rlx-lir-json expects a builtin.module");
          return exportRLXLirJson(module, os);
        },
        dialects);
    return true;
  }();
  (void)once;
}
