//===- JitCpu.cpp - The CPU that the CPU path's JIT compiles for ----------===//

#include "RLX/Target/CPU/JitCpu.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

using namespace mlir;
using namespace mlir::rlx;

std::string JitCpu::describe() const {
  std::string s = host ? cpu + " (host)" : cpu;
  if (!mattr.empty())
    s += ", " + mattr;
  return s;
}

/// Applies "+f" / "-f" changes to an x86 feature map, implied features
/// following (updateImpliedFeatures sets those, not the feature itself).
static void applyX86Changes(llvm::StringMap<bool> &features, ArrayRef<std::string> mattr) {
  for (const std::string &f : mattr) {
    StringRef name = StringRef(f).drop_front();
    bool enable = f[0] == '+';
    features[name] = enable;
    llvm::X86::updateImpliedFeatures(name, enable, features);
  }
}

llvm::StringMap<bool> mlir::rlx::x86CpuFeatures(StringRef cpu, ArrayRef<std::string> mattr) {
  llvm::StringMap<bool> features;
  SmallVector<StringRef> names;
  llvm::X86::getFeaturesForCPU(cpu, names, /*NeedPlus=*/false);
  for (StringRef name : names)
    features[name] = true;
  applyX86Changes(features, mattr);
  return features;
}

/// Whether LLVM may use the feature in code it generates from ordinary IR
/// (vector and scalar arithmetic, bit manipulation, conversions). System and
/// special-purpose instructions (sgx, wbnoinvd, mwaitx, rdpru, serialize,
/// movdir*, amx, aes, sha, ...) come only from intrinsics RLX never emits,
/// and hypervisors often hide them: a CPU name must not be refused for them.
static bool codegenFeature(StringRef f) {
  for (StringRef prefix : {"sse", "ssse3", "avx", "fma", "f16c", "bmi", "lzcnt", "popcnt",
                           "movbe", "cmov", "cx8", "cx16", "x87", "mmx", "sahf", "xop", "tbm",
                           "gfni", "evex512", "adx"})
    if (f.starts_with(prefix))
      return true;
  return false;
}

std::vector<std::string> mlir::rlx::featuresMissingOnHost(const llvm::StringMap<bool> &target,
                                                          const llvm::StringMap<bool> &host) {
  std::vector<std::string> missing;
  for (const auto &entry : target) {
    if (!entry.getValue() || !codegenFeature(entry.getKey()))
      continue;
    auto it = host.find(entry.getKey());
    if (it != host.end() && !it->getValue())
      missing.push_back(entry.getKey().str());
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

static std::string fromEnv(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

FailureOr<JitCpu> mlir::rlx::resolveJitCpu(StringRef cpuArg, StringRef mattrArg,
                                           std::string &error) {
  std::string cpu = cpuArg.empty() ? fromEnv("RLX_CPU") : cpuArg.str();
  std::string mattr = mattrArg.empty() ? fromEnv("RLX_CPU_MATTR") : mattrArg.str();
  cpu = StringRef(cpu).trim().str();
  if (cpu.empty())
    cpu = "host";
  JitCpu result;

  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for this machine (" + triple.str() + "): " + lookupError;
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));

  // --mattr: a comma-separated list of +feature / -feature LLVM knows.
  SmallVector<StringRef> items;
  StringRef(mattr).split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> changes;
  for (StringRef item : items) {
    item = item.trim();
    if (item.empty())
      continue;
    StringRef name = item.drop_front();
    bool known = sti && llvm::any_of(sti->getAllProcessorFeatures(),
                                     [&](const llvm::SubtargetFeatureKV &kv) {
                                       return name == kv.Key;
                                     });
    if ((item[0] != '+' && item[0] != '-') || name.empty()) {
      error = "--mattr: '" + item.str() + "' is not +feature or -feature (e.g. -avx512f,+f16c)";
      return failure();
    }
    if (!known) {
      error = "--mattr: '" + name.str() + "' is not a feature LLVM knows for " +
              triple.getArchName().str() + " (e.g. avx2, avx512f, avx512bf16, f16c)";
      return failure();
    }
    changes.push_back(item.str());
  }

  result.mattr = llvm::join(changes, ",");

  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  StringRef hostName = llvm::sys::getHostCPUName();
  if (cpu == "host") {
    result.cpu = hostName.str();
    for (const auto &f : hostFeatures)
      result.features.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  } else {
    result.host = false;
    result.cpu = cpu;
    if (!triple.isX86()) {
      error = "--cpu=" + cpu + ": on " + triple.getArchName().str() +
              " the JIT compiles for the host only (--cpu=host, with --mattr changes)";
      return failure();
    }
    if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None) {
      error = "--cpu=" + cpu + " is not an x86-64 CPU LLVM knows (e.g. x86-64-v3, x86-64-v4, "
              "znver3, znver4, skylake-avx512, sapphirerapids; or host, this machine's " +
              hostName.str() + ")";
      return failure();
    }
  }
  result.features.insert(result.features.end(), changes.begin(), changes.end());
  if (!triple.isX86())
    return result;

  // The code runs here: everything the target may use must be on this CPU.
  llvm::StringMap<bool> targetFeatures;
  if (result.host) {
    targetFeatures = hostFeatures;
    applyX86Changes(targetFeatures, changes);
  } else {
    targetFeatures = x86CpuFeatures(cpu, changes);
  }
  std::vector<std::string> missing = featuresMissingOnHost(targetFeatures, hostFeatures);
  if (!missing.empty()) {
    error = "--cpu=" + cpu + (result.mattr.empty() ? "" : " --mattr=" + result.mattr) +
            ": this machine's CPU (" + hostName.str() + ") lacks " + llvm::join(missing, ", ") +
            ", which the compiled code may use, and JIT-compiled code runs here (name a CPU "
            "this one can run, such as x86-64-v3, or host)";
    return failure();
  }
  return result;
}
