//===- JitCpuTest.cpp - --cpu / --mattr for the CPU JIT -------------------===//

#include "RLX/Target/CPU/JitCpu.h"

#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::rlx;

namespace {
bool isX86Host() { return llvm::Triple(llvm::sys::getProcessTriple()).isX86(); }

bool has(const std::vector<std::string> &v, StringRef s) {
  return std::find(v.begin(), v.end(), s.str()) != v.end();
}
} // namespace

TEST(JitCpu, X86CpuFeaturesFollowImplications) {
  if (!isX86Host())
    GTEST_SKIP() << "x86 only";
  llvm::StringMap<bool> v3 = x86CpuFeatures("x86-64-v3", {});
  EXPECT_TRUE(v3.lookup("avx2"));
  EXPECT_TRUE(v3.lookup("f16c"));
  EXPECT_TRUE(v3.lookup("fma"));
  EXPECT_FALSE(v3.lookup("avx512f"));
  EXPECT_FALSE(v3.lookup("avx512bf16"));
  // Removing AVX2 removes what needs it; adding AVX512-BF16 brings its base.
  llvm::StringMap<bool> noAvx2 = x86CpuFeatures("skylake-avx512", {"-avx2"});
  EXPECT_FALSE(noAvx2.lookup("avx2"));
  EXPECT_FALSE(noAvx2.lookup("avx512f"));
  llvm::StringMap<bool> bf16 = x86CpuFeatures("x86-64-v3", {"+avx512bf16"});
  EXPECT_TRUE(bf16.lookup("avx512bf16"));
  EXPECT_TRUE(bf16.lookup("avx512f"));
}

TEST(JitCpu, MissingFeaturesAreNamed) {
  if (!isX86Host())
    GTEST_SKIP() << "x86 only";
  // A host that is exactly x86-64-v3 (every feature of skylake-avx512 that
  // v3 lacks is marked absent, as getHostCPUFeatures marks them).
  llvm::StringMap<bool> skx = x86CpuFeatures("skylake-avx512", {});
  llvm::StringMap<bool> v3 = x86CpuFeatures("x86-64-v3", {});
  llvm::StringMap<bool> host;
  for (const auto &f : skx)
    host[f.getKey()] = v3.lookup(f.getKey());
  std::vector<std::string> missing = featuresMissingOnHost(skx, host);
  EXPECT_TRUE(has(missing, "avx512f"));
  EXPECT_TRUE(has(missing, "avx512bw"));
  EXPECT_FALSE(has(missing, "avx2"));
  EXPECT_TRUE(featuresMissingOnHost(v3, host).empty());
  // Features the host map does not mention count as present.
  EXPECT_TRUE(featuresMissingOnHost(skx, {}).empty());
  // System instructions (hidden by hypervisors, never generated) do not count.
  llvm::StringMap<bool> znver3 = x86CpuFeatures("znver3", {});
  llvm::StringMap<bool> vm = znver3;
  vm["wbnoinvd"] = vm["mwaitx"] = vm["rdpru"] = vm["clzero"] = false;
  EXPECT_TRUE(featuresMissingOnHost(znver3, vm).empty());
  // Features RLX has no list for are checked (APX's registers and forms are
  // generated from ordinary code).
  llvm::StringMap<bool> apx = x86CpuFeatures("x86-64-v3", {"+egpr", "+ndd"});
  llvm::StringMap<bool> noApx = v3;
  noApx["egpr"] = noApx["ndd"] = false;
  EXPECT_EQ(featuresMissingOnHost(apx, noApx), (std::vector<std::string>{"egpr", "ndd"}));
}

TEST(JitCpu, ResolveChecksNamesAndLists) {
  std::string error;
  EXPECT_TRUE(failed(resolveJitCpu("not-a-cpu", "", error)));
  EXPECT_NE(error.find("not-a-cpu"), std::string::npos) << error;
  EXPECT_TRUE(failed(resolveJitCpu("host", "avx2", error)));
  EXPECT_NE(error.find("+feature or -feature"), std::string::npos) << error;
  EXPECT_TRUE(failed(resolveJitCpu("host", "+not-a-feature", error)));
  EXPECT_NE(error.find("not-a-feature"), std::string::npos) << error;
  if (isX86Host())
    EXPECT_TRUE(failed(resolveJitCpu("i686", "", error))) << "a 32-bit CPU";

  auto host = resolveJitCpu("host", "", error);
  ASSERT_TRUE(succeeded(host)) << error;
  EXPECT_TRUE(host->host);
  EXPECT_EQ(host->cpu, llvm::sys::getHostCPUName().str());
  auto stripped = resolveJitCpu("host", " -avx512f , -avx512bf16 ", error);
  ASSERT_TRUE(succeeded(stripped)) << error;
  ASSERT_GE(stripped->features.size(), 2u);
  EXPECT_EQ(stripped->features.back(), "-avx512bf16"); // after the host's, so they win
  EXPECT_EQ(stripped->describe(), stripped->cpu + " (host), -avx512f,-avx512bf16");
}

// The code runs here: a target this CPU cannot run is refused by name.
TEST(JitCpu, RefusesWhatThisCpuCannotRun) {
  if (!isX86Host())
    GTEST_SKIP() << "x86 only";
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  std::string error;
  if (hostFeatures.lookup("avx2")) {
    auto v3 = resolveJitCpu("x86-64-v3", "", error);
    ASSERT_TRUE(succeeded(v3)) << error;
    EXPECT_FALSE(v3->host);
    EXPECT_EQ(v3->cpu, "x86-64-v3");
  }
  for (const char *f : {"avx512f", "avx512bf16", "avx512fp16", "avxvnni", "avxifma"}) {
    auto it = hostFeatures.find(f);
    if (it == hostFeatures.end() || it->getValue())
      continue;
    EXPECT_TRUE(failed(resolveJitCpu("host", std::string("+") + f, error)));
    EXPECT_NE(error.find(f), std::string::npos) << error;
    EXPECT_NE(error.find("lacks"), std::string::npos) << error;
    return;
  }
  GTEST_SKIP() << "this CPU has every feature tried";
}
