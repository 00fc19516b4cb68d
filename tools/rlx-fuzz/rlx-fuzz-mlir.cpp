//===- rlx-fuzz-mlir.cpp - libFuzzer target: MLIR text through RLX passes -===//
//
// Input: [selector][param] MLIR text (or bytecode). The text is parsed and
// verified (what rlx-opt does; invalid input is dropped), then the pipeline
// `selector % kNumPipelines` runs on it, configured by `param`:
//
//   0  round trip: print (custom, or generic with param bit 0), parse back,
//      print again; with bit 1 through bytecode instead
//   1  convert-rlx-hir-to-mir{fusion-policy=direct}
//   2  convert-rlx-hir-to-mir{fusion-policy=fusable}
//   3  convert-rlx-hir-to-mir{fusable},rlx-mir-fuse (HIR->MIR is a no-op on MIR)
//   4  rlx-mir-specialize{dims=<from param>}
//   5  convert-rlx-mir-to-lir,rlx-lir-bufferize,rlx-lir-plan-buffers,
//      rlx-lir-verify-plan (bit 0: in-place=false, bits 1-2:
//      alignment, bit 3: HIR->MIR, fuse and specialize first)
//   6  rlx-lower-to-cpu{...} up to the LLVM dialect (no JIT); param bits
//      toggle its options
//   7  rlx-import-to-mir (bit 0: then rlx-mir-fuse)
//   8  rlx-mir-prepare-for-ad
//   9  rlx-mir-grad (bit 0: prepare-for-ad first, bit 1: HIR->MIR first,
//      bit 2: wrt=arg0)
//  10  convert-rlx-mir-to-linalg (bit 0: HIR->MIR first, bit 1: row-tile=3)
//  11  one of RLX's other passes, chosen by param
//
// Findings: crashes, sanitizer reports, LLVM fatal errors and (unless
// RLX_FUZZ_STRICT=0) a pass that succeeds leaving IR that does not verify,
// a pipeline result or a round trip that does not parse back or prints
// differently. Diagnostics (rejected input) are not findings.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;

namespace {
constexpr unsigned kNumPipelines = 12;

/// Symbolic-dim bindings from one byte: a size 0..31 for seq, past_seq,
/// batch or n; bit 7 also binds past_seq (or seq) to size + 1.
std::string dimsFrom(uint8_t p) {
  static const char *names[] = {"seq", "past_seq", "batch", "n"};
  unsigned size = p & 0x1f;
  const char *name = names[(p >> 5) & 3];
  std::string s = std::string(name) + "=" + std::to_string(size);
  if (p & 0x80)
    s += std::string(",") + (std::string(name) == "past_seq" ? "seq" : "past_seq") + "=" +
         std::to_string(size + 1);
  return s;
}

/// RLX's other passes (selector 11), each as it parses on a module pass
/// manager (function passes nested in func.func). Names that do not parse
/// (a pass renamed since) are left out with a warning, not a crash.
const std::vector<std::string> &otherPasses() {
  static const std::vector<std::string> passes = [] {
    static const char *names[] = {
        "rlx-mir-fuse-attention",     "rlx-mir-fuse-swiglu",
        "rlx-mir-fuse-epilogue",      "rlx-mir-fuse-rope",
        "rlx-mir-merge-matmuls",      "rlx-mir-fuse-residual-norm",
        "rlx-mir-fuse-norm-prologue", "rlx-mir-fuse-elementwise",
        "rlx-mir-pack-weights",       "rlx-mir-recognize-blocks",
        "rlx-lir-bufferize",          "rlx-lir-plan-buffers",
        "rlx-lir-verify-plan",        "rlx-cpu-outline-kernels",
        "rlx-cpu-matmul-to-blas",     "convert-rlx-lir-to-gpu",
        "rlx-expand-low-precision-floats", "rlx-math-approximations",
        "convert-rlx-mir-to-lir",     "rlx-mir-specialize",
    };
    std::vector<std::string> out;
    // Checked on the kind of pass manager the target runs them on.
    std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
    for (const char *name : names) {
      for (std::string text : {std::string(name), "func.func(" + std::string(name) + ")"}) {
        PassManager pm(ctx.get(), ModuleOp::getOperationName());
        if (succeeded(parsePassPipeline(text, pm, llvm::nulls()))) {
          out.push_back(text);
          break;
        }
      }
      if (out.empty() || llvm::StringRef(out.back()).find(name) == llvm::StringRef::npos)
        llvm::errs() << "rlx-fuzz-mlir: warning: pass '" << name
                     << "' is not registered; left out\n";
    }
    return out;
  }();
  return passes;
}

std::string pipelineFor(unsigned selector, uint8_t p) {
  const std::string hirToMir = "convert-rlx-hir-to-mir{fusion-policy=fusable}";
  switch (selector) {
  case 1:
    return "convert-rlx-hir-to-mir{fusion-policy=direct}";
  case 2:
    return hirToMir;
  case 3:
    return hirToMir + ",rlx-mir-fuse" + ((p & 1) ? "{report}" : "");
  case 4:
    return "rlx-mir-specialize{dims=" + dimsFrom(p) + ((p & 0x10) ? " require-static" : "") + "}";
  case 5: {
    std::string s = (p & 8) ? hirToMir + ",rlx-mir-fuse,rlx-mir-specialize{dims=seq=4},"
                            : std::string();
    s += "convert-rlx-mir-to-lir,rlx-lir-bufferize,rlx-lir-plan-buffers{";
    s += (p & 1) ? "in-place=false" : "in-place=true";
    static const char *align[] = {"", " alignment=1", " alignment=16", " alignment=128"};
    s += align[(p >> 1) & 3];
    s += "},rlx-lir-verify-plan";
    return s;
  }
  case 6: {
    std::string s = "rlx-lower-to-cpu{dims=seq=4,past_seq=8";
    if (p & 1)
      s += " blas=false";
    if (p & 2)
      s += " lir=false";
    if (p & 4)
      s += " fuse=false";
    if (p & 8)
      s += " fusion-policy=fusable";
    if (p & 16)
      s += " approximate-math=false";
    if (p & 32)
      s += " import=false";
    if (p & 64)
      s += " blas-min-flops=0";
    if (p & 128)
      s += " row-tile=2";
    return s + "}";
  }
  case 7:
    return (p & 1) ? "rlx-import-to-mir,rlx-mir-fuse" : "rlx-import-to-mir";
  case 8:
    return "rlx-mir-prepare-for-ad";
  case 9: {
    std::string s;
    if (p & 2)
      s += hirToMir + ",";
    if (p & 1)
      s += "rlx-mir-prepare-for-ad,";
    return s + ((p & 4) ? "rlx-mir-grad{wrt=arg0}" : "rlx-mir-grad");
  }
  case 10:
    return std::string((p & 1) ? hirToMir + "," : "") + "convert-rlx-mir-to-linalg" +
           ((p & 2) ? "{row-tile=3}" : "");
  default:
    return otherPasses()[p % otherPasses().size()];
  }
}

/// In strict mode the pass manager's own verifier is off and this one makes
/// "a pass succeeded but left invalid IR" a finding (the pass manager would
/// only fail the pipeline with a diagnostic).
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (pass->getArgument().empty()) // pass-manager adaptors
      return;
    if (failed(verify(op)))
      rlx_fuzz::checkFailed("mlir-pass-invalid-ir", llvm::Twine("IR after pass '") + pass->getArgument() +
                            "' fails to verify");
  }
};

std::string print(ModuleOp module, bool generic) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module->print(os, flags);
  return s;
}

/// Parses `text` back and checks it prints as `text` again.
void checkReparses(MLIRContext *ctx, const std::string &text, bool generic, const char *what,
                   bool pipelineResult) {
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(text, ParserConfig(ctx));
  if (!again) {
    rlx_fuzz::checkFailed(pipelineResult ? "mlir-result-reparse" : "mlir-reparse", llvm::Twine(what) + " does not parse back");
    return;
  }
  if (print(*again, generic) != text)
    rlx_fuzz::checkFailed(pipelineResult ? "mlir-result-reprint" : "mlir-reprint",
                          llvm::Twine(what) + " prints differently after a round trip");
}

void roundTrip(MLIRContext *ctx, ModuleOp module, uint8_t p) {
  bool generic = p & 1;
  if (p & 2) {
    std::string bc;
    llvm::raw_string_ostream os(bc);
    if (failed(writeBytecodeToFile(module, os)))
      return;
    OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(bc, ParserConfig(ctx));
    if (!again) {
      rlx_fuzz::checkFailed("mlir-bytecode", "the module's bytecode does not parse back");
      return;
    }
    if (print(*again, generic) != print(module, generic))
      rlx_fuzz::checkFailed("mlir-bytecode-reprint", "the module prints differently after a bytecode round trip");
    return;
  }
  checkReparses(ctx, print(module, generic), generic, "the printed module", false);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rlx_fuzz::initialize();
  (void)otherPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  unsigned selector = data[0] % kNumPipelines;
  uint8_t param = data[1];
  // A std::string: the MLIR lexer reads the NUL after the buffer's end.
  std::string text(reinterpret_cast<const char *>(data + 2), size - 2);

  std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
  rlx_fuzz::DropDiagnostics drop(ctx.get());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ParserConfig(ctx.get()));
  if (!module)
    return 0;

  if (selector == 0) {
    if (rlx_fuzz::verbose())
      llvm::errs() << "rlx-fuzz-mlir: round trip, param " << unsigned(param) << "\n";
    roundTrip(ctx.get(), *module, param);
    return 0;
  }

  std::string pipeline = pipelineFor(selector, param);
  if (rlx_fuzz::verbose())
    llvm::errs() << "rlx-fuzz-mlir: pipeline builtin.module(" << pipeline << ")\n";
  PassManager pm(ctx.get(), ModuleOp::getOperationName());
  std::string parseError;
  llvm::raw_string_ostream es(parseError);
  if (failed(parsePassPipeline(pipeline, pm, es))) {
    // The harness's own pipeline text: always fatal.
    llvm::errs() << "rlx-fuzz-mlir: bad pipeline '" << pipeline << "': " << parseError << "\n";
    std::abort();
  }
  if (rlx_fuzz::strict()) {
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  }
  if (failed(pm.run(*module)))
    return 0;
  // The printers run on everything a pipeline produces; in strict mode the
  // result must parse back.
  std::string out = print(*module, false);
  if (rlx_fuzz::strict())
    checkReparses(ctx.get(), out, false, ("the result of '" + pipeline + "'").c_str(), true);
  return 0;
}
