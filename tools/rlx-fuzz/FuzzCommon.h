//===- FuzzCommon.h - Shared setup of the RLX libFuzzer targets -*- C++ -*-===//
//
// What every rlx-fuzz-* target needs: the rlx-opt registration (upstream and
// RLX dialects, extensions, passes, pipelines) done once per process, a
// fresh single-threaded MLIRContext per input whose diagnostics are dropped,
// LLVM fatal errors turned into aborts the fuzzer sees, and `checkFailed`
// for the targets' own post-conditions (a pass that succeeds but leaves IR
// that does not verify, a builder that returns an invalid module, a printed
// module that does not parse back).
//
// Environment:
//   RLX_FUZZ_VERBOSE=1  print the diagnostics (and what the target does) to
//                       stderr: for triage of a reproducer
//   RLX_FUZZ_STRICT=0   turn the post-condition checks off: only crashes,
//                       sanitizer reports and LLVM fatal errors count
//   RLX_FUZZ_SKIP=a,b   turn the checks with these ids off (to keep fuzzing
//                       past a known, reported finding)
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TOOLS_RLX_FUZZ_FUZZCOMMON_H
#define RLX_TOOLS_RLX_FUZZ_FUZZCOMMON_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/Twine.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace rlx_fuzz {

/// Once per process (from LLVMFuzzerInitialize): registers everything
/// rlx-opt registers and installs the fatal-error handler.
void initialize();

/// A fresh context over the shared registry, multithreading disabled, no op
/// printing or stack traces attached to diagnostics.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Drops every diagnostic of `ctx` while alive (prints them when verbose).
class DropDiagnostics {
public:
  explicit DropDiagnostics(mlir::MLIRContext *ctx);

private:
  mlir::ScopedDiagnosticHandler handler;
};

bool verbose();
bool strict();

/// A post-condition of RLX failed: prints "RLX-FUZZ CHECK FAILED [id]: what"
/// and aborts (the fuzzer records the input as a crash). A no-op when not
/// strict() or when `id` is in RLX_FUZZ_SKIP.
void checkFailed(const char *id, const llvm::Twine &what);

/// A per-process temporary file for readers that take a path ($TMPDIR, else
/// /dev/shm when writable, else /tmp), removed at exit: "<dir>/rlx-fuzz-
/// <tag>-<pid><ext>".
std::string tempPath(const char *tag, const char *ext);
/// Writes `size` bytes to `path` (aborts when it cannot: not a finding).
void writeFile(const std::string &path, const uint8_t *data, size_t size);

} // namespace rlx_fuzz

#endif // RLX_TOOLS_RLX_FUZZ_FUZZCOMMON_H
