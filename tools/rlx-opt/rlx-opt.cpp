//===- rlx-opt.cpp - The RLX optimizer driver -----------------------------===//
//
// mlir-opt with the RLX dialects, passes and pipelines added. Every upstream
// dialect, extension, pass and LLVM IR translation is registered as in
// mlir-opt-22, so upstream-only input behaves the same.
//
//===----------------------------------------------------------------------===//

#include "RLX/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::rlx::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::rlx::registerEverything(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "RLX optimizer driver\n", registry));
}
