//===- FuzzCommon.cpp - Shared setup of the RLX libFuzzer targets ---------===//

#include "FuzzCommon.h"

#include "RLX/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir;

static DialectRegistry *sharedRegistry;

// LLVM's BumpPtrAllocator poisons fresh slabs in instrumented code and
// unpoisons each allocation; the uninstrumented libMLIR.so allocates from the
// same allocators (e.g. the storage uniquer's) without unpoisoning, which
// reads as use-after-poison. Manual poisoning is therefore off; everything
// else ASan checks stays on. (scripts/sanitize.sh sets the same for the tools.)
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }
extern "C" const char *__ubsan_default_options() { return "print_stacktrace=1"; }

static bool envFlag(const char *name, bool dflt) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return dflt;
  return std::strcmp(v, "0") != 0;
}

bool rlx_fuzz::verbose() {
  static bool v = envFlag("RLX_FUZZ_VERBOSE", false);
  return v;
}

bool rlx_fuzz::strict() {
  static bool v = envFlag("RLX_FUZZ_STRICT", true);
  return v;
}

/// report_fatal_error (and LLVM's other fatal paths) must never be how RLX
/// rejects input: make it an abort, which the fuzzer records as a crash.
static void fatalErrorHandler(void *, const char *reason, bool) {
  std::fprintf(stderr, "RLX-FUZZ: LLVM fatal error: %s\n", reason);
  std::fflush(stderr);
  std::abort();
}

void rlx_fuzz::initialize() {
  if (sharedRegistry)
    return;
  llvm::install_fatal_error_handler(fatalErrorHandler);
  mlir::registerAllPasses();
  mlir::rlx::registerAllPasses();
  sharedRegistry = new DialectRegistry();
  mlir::rlx::registerEverything(*sharedRegistry);
}

std::unique_ptr<MLIRContext> rlx_fuzz::makeContext() {
  auto ctx = std::make_unique<MLIRContext>(*sharedRegistry, MLIRContext::Threading::DISABLED);
  ctx->printOpOnDiagnostic(verbose());
  ctx->printStackTraceOnDiagnostic(false);
  return ctx;
}

rlx_fuzz::DropDiagnostics::DropDiagnostics(MLIRContext *ctx)
    : handler(ctx, [](Diagnostic &diag) {
        if (verbose()) {
          llvm::errs() << diag.getLocation() << ": " << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            llvm::errs() << "  note: " << note.getLocation() << ": " << note << "\n";
        }
        return success();
      }) {}

void rlx_fuzz::checkFailed(const char *id, const llvm::Twine &what) {
  if (!strict())
    return;
  if (const char *skip = std::getenv("RLX_FUZZ_SKIP")) {
    llvm::SmallVector<llvm::StringRef> ids;
    llvm::StringRef(skip).split(ids, ',');
    if (llvm::is_contained(ids, llvm::StringRef(id)))
      return;
  }
  llvm::errs() << "RLX-FUZZ CHECK FAILED [" << id << "]: " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

std::string rlx_fuzz::tempPath(const char *tag, const char *ext) {
  const char *dir = std::getenv("TMPDIR");
  std::string d = dir && *dir ? dir : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  std::string path = d + "/rlx-fuzz-" + tag + "-" + std::to_string(getpid()) + ext;
  static std::vector<std::string> *made = new std::vector<std::string>;
  if (made->empty())
    std::atexit([] {
      for (const std::string &p : *made)
        std::remove(p.c_str());
    });
  made->push_back(path);
  return path;
}

void rlx_fuzz::writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size))
    std::abort();
  std::fclose(f);
}
