//===- JitCpu.h - The CPU that the CPU path's JIT compiles for --*- C++ -*-===//
//
// By default the CPU JIT (rlx-run, rlx.compile_cpu) compiles for this machine:
// its CPU name and every feature it has (`host`). A user can instead name a
// CPU as LLVM knows it (x86-64-v2/v3/v4, znver3, skylake-avx512, ...) and add
// or remove features (`+avx512bf16,-f16c`, as llc's -mattr): to compile for
// the least capable CPU of a fleet, or to take the code paths a CPU without
// some extension takes (f32 → bf16 becomes a compiler-rt call without
// AVX512-BF16, f32 ↔ f16 without F16C; lib/Runtime/Common/SoftFloat.cpp).
//
// The code runs here, so the target's ISA features must be ones this CPU has:
// a feature the target enables and the host lacks is an error naming it (the
// alternative is an illegal instruction). That check reads LLVM's x86 target
// parser; on other hosts only `host` is accepted.
//
// Defaults: $RLX_CPU and $RLX_CPU_MATTR (one default: a CPU given
// explicitly takes neither), else `host`. CI runs the low-precision tests with
// RLX_CPU=x86-64-v3 on whatever machine it has.
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_JITCPU_H
#define RLX_TARGET_CPU_JITCPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::rlx {

struct JitCpu {
  std::string cpu;                   ///< LLVM's CPU name (the host's for `host`).
  std::vector<std::string> features; ///< "+name" / "-name" for LLVM, in order.
  bool host = true;                  ///< Compiled for this machine as it is.
  std::string mattr;                 ///< The user's changes, as given.
  /// "znver4 (host)", "x86-64-v3", "host, -avx512bf16".
  std::string describe() const;
};

/// Resolves a `--cpu` value ("" for $RLX_CPU, else `host`) and a `--mattr`
/// list ("" for $RLX_CPU_MATTR) into what the JIT compiles for. Fails, with
/// `error` set, for an unknown CPU or feature, a malformed list, or a target
/// whose code this machine could not run.
FailureOr<JitCpu> resolveJitCpu(StringRef cpu, StringRef mattr, std::string &error);

/// The ISA features of the x86 CPU `cpu` (an LLVM name) after the `+f` / `-f`
/// changes in `mattr`, implied features following (-avx2 drops the AVX-512
/// family, +avx512bf16 brings avx512bw, ...). `cpu` must be a 64-bit x86 CPU
/// llvm::X86::parseArchX86 knows.
llvm::StringMap<bool> x86CpuFeatures(StringRef cpu, ArrayRef<std::string> mattr);

/// The features `target` enables that `host` says it lacks, sorted; system
/// instructions that LLVM emits only for intrinsics RLX never uses (sgx,
/// wbnoinvd, mwaitx, amx-*, aes, ...: hypervisors often hide them) do not
/// count. Features the host does not mention count as present (its map lists
/// what CPUID tells).
std::vector<std::string> featuresMissingOnHost(const llvm::StringMap<bool> &target,
                                               const llvm::StringMap<bool> &host);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_JITCPU_H
