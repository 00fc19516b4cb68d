//===- RLXPlugin.cpp - RLX as a plugin for upstream mlir-opt ---------------===//
//
// libRLXPlugin.so makes RLX's dialects (with their interface models) and
// passes available to Debian's mlir-opt-22:
//
//   mlir-opt-22 --load-dialect-plugin=libRLXPlugin.so \
//               --load-pass-plugin=libRLXPlugin.so model.mlir --rlx-mir-fuse
//
// It links the shared libMLIR.so like mlir-opt-22 itself, so upstream's
// registrations exist once.
//
//===----------------------------------------------------------------------===//

#include "RLX/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RLX", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) { mlir::rlx::registerAllDialects(*registry); }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RLX", LLVM_VERSION_STRING,
          []() { mlir::rlx::registerAllPasses(); }};
}
