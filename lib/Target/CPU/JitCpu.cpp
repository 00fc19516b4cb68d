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

/// System and special-purpose instructions that LLVM emits only for
/// intrinsics RLX never uses (enclaves, cache and power control, user
/// interrupts, AMX tiles, crypto, ...), and which hypervisors often hide: a
/// CPU name must not be refused for them. Everything else counts, so a feature
/// this list does not know (APX's egpr/ndd, a new AVX10) is checked.
static bool systemOnlyFeature(StringRef f) {
  static const char *const names[] = {
      "aes", "cldemote", "clflushopt", "clwb", "clzero", "cmpccxadd", "crc32", "enqcmd",
      "fsgsbase", "fxsr", "hreset", "invpcid", "kl", "lwp", "movdir64b", "movdiri", "mwaitx",
      "pclmul", "pconfig", "pku", "prefetchi", "prfchw", "ptwrite", "raoint", "rdpid", "rdpru",
      "rdrnd", "rdseed", "rtm", "serialize", "sgx", "sha", "sha512", "shstk", "sm3", "sm4",
      "tsxldtrk", "uintr", "usermsr", "vaes", "vpclmulqdq", "waitpkg", "wbnoinvd", "widekl",
      "xsave", "xsavec", "xsaveopt", "xsaves", "movrs"};
  return f.starts_with("amx-") || llvm::is_contained(names, f);
}

std::vector<std::string> mlir::rlx::featuresMissingOnHost(const llvm::StringMap<bool> &target,
                                                          const llvm::StringMap<bool> &host) {
  std::vector<std::string> missing;
  for (const auto &entry : target) {
    if (!entry.getValue() || systemOnlyFeature(entry.getKey()))
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
  // $RLX_CPU / $RLX_CPU_MATTR are one default: an explicit CPU takes neither.
  bool fromEnvironment = cpuArg.empty() && !fromEnv("RLX_CPU").empty();
  std::string cpu = cpuArg.empty() ? fromEnv("RLX_CPU") : cpuArg.str();
  std::string mattr = mattrArg.empty() && cpuArg.empty() ? fromEnv("RLX_CPU_MATTR") : mattrArg.str();
  cpu = StringRef(cpu).trim().str();
  if (cpu.empty())
    cpu = "host";
  // How the messages name the setting.
  const std::string cpuFlag = (fromEnvironment ? "RLX_CPU=" : "--cpu=") + cpu;
  const std::string mattrFlag = mattrArg.empty() && cpuArg.empty() ? "RLX_CPU_MATTR" : "--mattr";
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
      error = mattrFlag + ": '" + item.str() + "' is not +feature or -feature (e.g. -avx512f,+f16c)";
      return failure();
    }
    if (!known) {
      error = mattrFlag + ": '" + name.str() + "' is not a feature LLVM knows for " +
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
      error = cpuFlag + ": on " + triple.getArchName().str() +
              " the JIT compiles for the host only (host, with features removed by -feature)";
      return failure();
    }
    if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None) {
      error = cpuFlag + " is not an x86-64 CPU LLVM knows (e.g. x86-64-v3, x86-64-v4, "
              "znver3, znver4, skylake-avx512, sapphirerapids; or host, this machine's " +
              hostName.str() + ")";
      return failure();
    }
  }
  result.features.insert(result.features.end(), changes.begin(), changes.end());
  if (!triple.isX86()) {
    // Without a target parser to check against, only removing is safe.
    for (const std::string &f : changes)
      if (f[0] == '+') {
        error = mattrFlag + ": '" + f + "': on " + triple.getArchName().str() +
                " features can only be removed (the code runs on this CPU)";
        return failure();
      }
    return result;
  }

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
    error = cpuFlag + (result.mattr.empty() ? "" : " " + mattrFlag + "=" + result.mattr) +
            ": this machine's CPU (" + hostName.str() + ") lacks " + llvm::join(missing, ", ") +
            ", which the compiled code may use, and JIT-compiled code runs here (name a CPU "
            "this one can run, such as x86-64-v3, or host)";
    return failure();
  }
  return result;
}
