//===- rlx-compile.cpp - Compile an RLX module into a GPU artifact ---------===//
//
//   rlx-compile model.mlir -o DIR [--chip sm_90a] [--features +ptx80]
//               [--dims seq=37,past_seq=16] [--spills error|warn|ignore]
//               [--no-emulator] [--no-cubin]
//               [--emit-kernel-ir FILE] [--from-kernel-ir]
//
// Writes DIR/manifest.json, a cubin and the PTX per kernel module and
// DIR/kernels.emu.so (the same kernels for the CPU GPU emulator). Run it with
// rlx-gpu-run (no LLVM/MLIR needed there). Format: docs/gpu-artifact.md.
//
//===----------------------------------------------------------------------===//

#include "RLX/InitAll.h"
#include "RLX/Target/NVVM/GPUArtifact.h"
#include "RLX/Target/NVVM/NVVMTarget.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory cat("rlx-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<module.mlir>"), cl::Required,
                                      cl::cat(cat));
static cl::opt<std::string> outputDir("o", cl::desc("artifact directory"), cl::Required,
                                      cl::cat(cat));
// Every compile option (CompileOptions.def) that the artifact writer takes.
static rlx::CompileOptionsFlags compileFlags(cat, {rlx::CompileOptionGroup::Common,
                                                   rlx::CompileOptionGroup::Codegen,
                                                   rlx::CompileOptionGroup::Gpu,
                                                   rlx::CompileOptionGroup::GpuArtifact});
static cl::opt<bool> verbose("v", cl::desc("print the target: chip, PTX ISA and the ptxas used"),
                             cl::cat(cat));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "RLX GPU compiler: a module to a GPU artifact\n");
  DialectRegistry registry;
  rlx::registerEverything(registry);
  MLIRContext ctx(registry);
  // Errors name the op and the reason, without the IR around it (--dump-ir
  // or rlx-opt show the IR).
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = rlx::parseModuleFile(inputFile, ctx, sourceMgr, "rlx-compile");
  if (!module)
    return 1;
  rlx::CompileOptions options = compileFlags.values();
  std::string error;
  if (failed(options.verify(error))) {
    llvm::errs() << "rlx-compile: " << rlx::spellOptionError(error, /*python=*/false) << "\n";
    return 1;
  }
  if (verbose) {
    // The PTX ISA: +ptxNN, else the newest the chip, LLVM and ptxas take.
    std::string ptxas = rlx::nvvm::findPtxas();
    FailureOr<rlx::nvvm::NVVMTarget> target = rlx::nvvm::parseTarget(options.chip, options.features, error);
    if (succeeded(target)) {
      std::optional<int> max = rlx::nvvm::maxPtxVersionOfPtxas();
      llvm::outs() << "target: " << target->chip << ", PTX ISA " << target->ptxString()
                   << (options.features.empty()
                        ? " (the newest the chip, LLVM 22 and ptxas take)"
                        : " (" + options.features + ")")
                   << "\nptxas: " << (ptxas.empty() ? std::string("none found") : ptxas);
      if (max)
        llvm::outs() << " (PTX ISA up to " << max.value() / 10 << "." << max.value() % 10 << ")";
      llvm::outs() << "\n";
    }
  }
  if (failed(rlx::writeGPUArtifact(*module, options, outputDir)))
    return 1;
  return 0;
}
