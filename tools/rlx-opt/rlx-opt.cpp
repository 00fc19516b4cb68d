//===- rlx-opt.cpp - The RLX optimizer driver -----------------------------===//
//
// mlir-opt with the RLX dialects, passes and pipelines added. Every upstream
// dialect, extension, pass and LLVM IR translation is registered as in
// mlir-opt-22, so upstream-only input behaves the same, with one addition: a
// pipeline that contains upstream's sharding passes is preceded by
// rlx-verify-shard-grids (they divide by a grid axis of size 0).
//
//===----------------------------------------------------------------------===//

#include "RLX/InitAll.h"
#include "RLX/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// The pipeline `base` sets up, as text anchored on `pm`'s op, when it runs
/// one of upstream's sharding passes; otherwise nothing.
static std::optional<std::string> shardingPipeline(const MlirOptMainConfig &base,
                                                   PassManager &pm) {
  PassManager probe(pm.getContext(), pm.getOpAnchorName(), pm.getNesting());
  ScopedDiagnosticHandler quiet(pm.getContext(), [](Diagnostic &) { return success(); });
  if (failed(base.setupPassPipeline(probe)))
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  probe.printAsTextualPipeline(os);
  if (!StringRef(text).contains("sharding-propagation") &&
      !StringRef(text).contains("shard-partition"))
    return std::nullopt;
  return text;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  rlx::registerAllPasses();
  DialectRegistry registry;
  rlx::registerEverything(registry);
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "RLX optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  MlirOptMainConfig base = config;
  config.setPassPipelineSetupFn([base](PassManager &pm) -> LogicalResult {
    std::optional<std::string> sharding = shardingPipeline(base, pm);
    if (!sharding)
      return base.setupPassPipeline(pm);
    // The check goes first; the user's passes follow as they printed (an
    // anchored pipeline would replace the check, so its anchor is dropped).
    pm.addPass(rlx::createVerifyShardGrids());
    StringRef inner = *sharding;
    StringRef anchor = pm.getOpAnchorName();
    if (inner.consume_front(anchor) && inner.consume_front("(") && inner.consume_back(")"))
      return parsePassPipeline(inner, pm);
    return emitError(UnknownLoc::get(pm.getContext()))
           << "rlx-opt: cannot put rlx-verify-shard-grids in front of the pipeline '"
           << *sharding << "'; run it as the first pass yourself";
  });
  // What MlirOptMain(argc, argv, ...) does, with this config.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
