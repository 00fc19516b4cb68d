//===- rlx-fuzz-json.cpp - libFuzzer target: the RLX JSON importer --------===//
//
// Input: an RLX HIR or LIR JSON module (../shared/rlx-json.md). It goes
// through mlir::rlx::importRLXJson (rlx-translate --import-rlx-json); an
// imported module is verified, written back with the matching exporter
// (HIR, else LIR JSON) and imported again, and its plan (if any) is checked
// with rlx-lir-verify-plan.
//
// Findings: crashes, sanitizer reports, LLVM fatal errors and (unless
// RLX_FUZZ_STRICT=0) an imported module that does not verify, or an export
// of an imported module that does not import again.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Target/RLXJSON/RLXJSON.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rlx_fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
  rlx_fuzz::DropDiagnostics drop(ctx.get());
  OwningOpRef<ModuleOp> module = rlx::importRLXJson(json, "fuzz.json", ctx.get());
  if (!module)
    return 0;
  if (failed(verify(*module))) {
    rlx_fuzz::checkFailed("json-import-invalid-ir", "importRLXJson returned a module that does not verify");
    return 0;
  }

  // Export (HIR JSON, else LIR JSON) and import again.
  std::string out;
  {
    llvm::raw_string_ostream os(out);
    if (failed(rlx::exportRLXHirJson(*module, os))) {
      out.clear();
      if (failed(rlx::exportRLXLirJson(*module, os)))
        out.clear();
    }
  }
  if (!out.empty()) {
    OwningOpRef<ModuleOp> again = rlx::importRLXJson(out, "exported.json", ctx.get());
    if (!again)
      rlx_fuzz::checkFailed("json-reimport", "the export of an imported module does not import again");
    else if (failed(verify(*again)))
      rlx_fuzz::checkFailed("json-reimport-invalid-ir", "the re-imported export does not verify");
  }

  // An imported plan is the checker's input.
  PassManager pm(ctx.get(), ModuleOp::getOperationName());
  std::string err;
  llvm::raw_string_ostream es(err);
  if (failed(parsePassPipeline("rlx-lir-verify-plan", pm, es))) {
    llvm::errs() << "rlx-fuzz-json: " << err << "\n";
    std::abort();
  }
  (void)pm.run(*module);
  return 0;
}
