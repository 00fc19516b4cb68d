//===- rlx-translate.cpp - RLX-MLIR's translations ------------------------===//
//
// mlir-translate with RLX's translations: the original RLX's JSON modules
// in (--import-rlx-json) and out (--export-rlx-hir-json,
// --export-rlx-lir-json), next to upstream's (e.g. --mlir-to-llvmir).
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/RLXJSON/RLXJSON.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::rlx::registerRLXJsonTranslations();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "RLX-MLIR translation driver"));
}
