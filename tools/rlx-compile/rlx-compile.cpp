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
static cl::opt<std::string> chip("chip", cl::desc("NVIDIA chip"), cl::init("sm_90a"),
                                 cl::cat(cat));
static cl::opt<std::string> features("features", cl::desc("+ptxNN"), cl::cat(cat));
static cl::opt<int> optLevel("O", cl::desc("optimization level"), cl::init(3), cl::cat(cat));
static cl::opt<std::string> dims("dims", cl::desc("symbolic dim bindings name=size,..."),
                                 cl::cat(cat));
static cl::opt<std::string> spills("spills", cl::desc("error | warn | ignore"),
                                   cl::init("warn"), cl::cat(cat));
static cl::opt<bool> noEmulator("no-emulator", cl::desc("skip kernels.emu.so"), cl::cat(cat));
static cl::opt<bool> noTensorCores("no-tensor-cores",
                                   cl::desc("SIMT kernels only (no mma.sync)"), cl::cat(cat));
static cl::opt<std::string> matmulKernel(
    "matmul-kernel",
    cl::desc("auto | gemv | simt | tensor-cores | wgmma | tcgen05: the matmul kernel to use where "
             "it applies (elsewhere the heuristic's, with a remark)"),
    cl::init("auto"), cl::cat(cat));
static cl::opt<int64_t> splitK("split-k", cl::desc("K splits of the gemv kernel (0: heuristic)"),
                               cl::init(0), cl::cat(cat));
static cl::opt<std::string> attentionKernel(
    "attention-kernel",
    cl::desc("auto | simt | flash | wgmma: the attention kernel to use where it applies"),
    cl::init("auto"), cl::cat(cat));
static cl::opt<bool> strictKernels(
    "strict-kernels",
    cl::desc("a --matmul-kernel / --attention-kernel that cannot take an op is an error"),
    cl::cat(cat));
static cl::opt<int64_t> kvSplits("kv-splits",
                                 cl::desc("split-KV attention: 0 heuristic, 1 never, N forced"),
                                 cl::init(0), cl::cat(cat));
static cl::opt<int64_t> tp("tp",
                           cl::desc("tensor-parallel ranks: the per-rank program, its all-reduces "
                                    "as collective steps (run under mpirun -np N rlx-run --tp N)"),
                           cl::init(0), cl::cat(cat));
static cl::opt<int64_t> rank("rank",
                             cl::desc("with --tp: the rank the artifact is for (needed when the "
                                      "per-rank program looks up by rank: a vocab-parallel "
                                      "embedding)"),
                             cl::init(-1), cl::cat(cat));
static cl::opt<bool> noCubin("no-cubin", cl::desc("skip ptxas (no cubins)"), cl::cat(cat));
static cl::opt<std::string> emitKernelIR(
    "emit-kernel-ir",
    cl::desc("write the module as it leaves the kernel pipeline (kernels at the NVVM level) to "
             "this file"),
    cl::cat(cat));
static cl::opt<bool> fromKernelIR(
    "from-kernel-ir",
    cl::desc("the input comes from --emit-kernel-ir (possibly edited): only code generation runs"),
    cl::cat(cat));
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
  rlx::GPUArtifactOptions options;
  options.chip = chip;
  options.features = features;
  options.optLevel = optLevel;
  options.spills = spills;
  options.emulator = !noEmulator;
  options.cubin = !noCubin;
  options.tensorCores = !noTensorCores;
  options.matmulKernel = matmulKernel;
  options.splitK = splitK;
  options.attentionKernel = attentionKernel;
  options.strictKernels = strictKernels;
  options.kvSplits = kvSplits;
  if (tp < 0 || (rank >= 0 && rank >= tp) || rank < -1) {
    llvm::errs() << "rlx-compile: --tp must be >= 0 and --rank (with --tp) in [0, tp)\n";
    return 1;
  }
  options.tp = tp;
  options.rank = rank;
  options.emitKernelIR = emitKernelIR;
  options.fromKernelIR = fromKernelIR;
  SmallVector<StringRef> parts;
  StringRef(dims).split(parts, ',', -1, false);
  for (StringRef p : parts)
    options.dims.push_back(p.trim().str());
  if (verbose) {
    // The PTX ISA: +ptxNN, else the newest the chip, LLVM and ptxas take.
    std::string error, ptxas = rlx::nvvm::findPtxas();
    FailureOr<rlx::nvvm::NVVMTarget> target = rlx::nvvm::parseTarget(chip, features, error);
    if (succeeded(target)) {
      std::optional<int> max = rlx::nvvm::maxPtxVersionOfPtxas();
      llvm::outs() << "target: " << target->chip << ", PTX ISA " << target->ptxString()
                   << (features.empty() ? " (the newest the chip, LLVM 22 and ptxas take)"
                                        : " (" + features + ")")
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
