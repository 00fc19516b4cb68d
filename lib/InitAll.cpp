//===- InitAll.cpp - Register every RLX dialect, pass and pipeline --------===//

#include "RLX/InitAll.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Sharding.h"
#include "RLX/Target/CPU/CpuPipeline.h"
#include "RLX/Target/NVVM/Passes.h"
#include "RLX/Transforms/Passes.h"
#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "RLX/Dialect/HIR/IR/HIRDialect.h"
#include "RLX/Dialect/LIR/IR/LIRDialect.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::rlx::registerAllDialects(DialectRegistry &registry) {
  registry.insert<RLXDialect, hir::HIRDialect, mir::MIRDialect, lir::LIRDialect>();
  lir::registerBufferizableOpInterfaceExternalModels(registry);
  mir::registerShardingInterfaceExternalModels(registry);
  registerMPIMemoryEffectModels(registry);
}

void mlir::rlx::registerAllPasses() {
  registerRLXConversionPasses();
  mir::registerRLXMIRPasses();
  lir::registerRLXLIRPasses();
  registerRLXTransformsPasses();
  registerCpuPipelines();
  registerNVVMPipelines();
}

void mlir::rlx::registerEverything(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  rlx::registerAllDialects(registry);
}

mlir::OwningOpRef<mlir::ModuleOp> mlir::rlx::parseModuleFile(llvm::StringRef path, mlir::MLIRContext &ctx,
                                                 llvm::SourceMgr &sourceMgr,
                                                 llvm::StringRef tool) {
  std::string error;
  auto file = mlir::openInputFile(path, &error);
  if (!file) {
    llvm::errs() << tool << ": " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &ctx);
}
