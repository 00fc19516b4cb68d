//===- NVVMTarget.cpp - NVIDIA targets: chips, PTX ISA, capabilities ------===//

#include "RLX/Target/NVVM/NVVMTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace mlir::rlx::nvvm;

namespace {
/// A chip LLVM 22 knows, with the PTX ISA it emits by default and the oldest
/// one it accepts (measured with llc-22 on this toolchain; ../shared/GPU.md).
struct ChipInfo {
  const char *chip;
  int defaultPtx, minimumPtx;
};
constexpr ChipInfo kChips[] = {
    {"sm_80", 70, 70},   {"sm_86", 71, 71},   {"sm_87", 74, 74},   {"sm_89", 78, 78},
    {"sm_90", 78, 78},   {"sm_90a", 80, 80},  {"sm_100", 86, 86},  {"sm_100a", 86, 86},
    {"sm_100f", 88, 88}, {"sm_101a", 86, 86}, {"sm_103a", 88, 88}, {"sm_120", 87, 87},
    {"sm_120a", 87, 87},
};

const ChipInfo *lookup(StringRef chip) {
  for (const ChipInfo &c : kChips)
    if (chip == c.chip)
      return &c;
  return nullptr;
}

/// The newest PTX ISA LLVM 22's NVPTX backend writes (+ptx90).
constexpr int kNewestLlvmPtx = 90;

std::string ptxText(int v) { return llvm::formatv("{0}.{1}", v / 10, v % 10).str(); }
} // namespace

std::string NVVMTarget::features() const { return "+ptx" + std::to_string(ptx); }
std::string NVVMTarget::ptxString() const { return ptxText(ptx); }

int64_t NVVMTarget::maxSharedMemoryPerBlock() const {
  // cudaDevAttrMaxSharedMemoryPerBlockOptin per generation.
  if (sm >= 100)
    return 232448;
  if (sm == 90)
    return 232448;
  if (sm == 80)
    return 166912;
  return 101376; // sm_86/87/89, sm_120
}

int NVVMTarget::smCount() const {
  switch (sm) {
  case 80: return 108;
  case 86: return 84;
  case 87: return 16;
  case 89: return 142;
  case 90: return 132;
  case 101: return 20;
  case 120: return 188;
  default: return sm >= 100 ? 148 : 108;
  }
}

std::optional<int> mlir::rlx::nvvm::defaultPtxVersion(StringRef chip) {
  // The newest PTX ISA the chip, LLVM's NVPTX backend and the installed
  // ptxas all take (case L3), so that what needs a newer ISA (sm_100a's
  // block-scaled FP4 MMA: 8.8) is there when the toolkit is; without
  // ptxas, the chip's first.
  const ChipInfo *c = lookup(chip);
  if (!c)
    return std::nullopt;
  if (std::optional<int> max = maxPtxVersionOfPtxas())
    return std::max(c->defaultPtx, std::min(*max, kNewestLlvmPtx));
  return c->defaultPtx;
}

std::optional<int> mlir::rlx::nvvm::minimumPtxVersion(StringRef chip) {
  if (const ChipInfo *c = lookup(chip))
    return c->minimumPtx;
  return std::nullopt;
}

StringRef mlir::rlx::nvvm::supportedChips() {
  static std::string all = [] {
    std::string s;
    for (const ChipInfo &c : kChips)
      s += (s.empty() ? "" : ", ") + std::string(c.chip);
    return s;
  }();
  return all;
}

FailureOr<NVVMTarget> mlir::rlx::nvvm::parseTarget(StringRef chip, StringRef features,
                                                   std::string &error) {
  const ChipInfo *info = lookup(chip);
  if (!info) {
    error = ("unknown NVIDIA chip '" + chip + "'; supported: " + supportedChips()).str();
    return failure();
  }
  NVVMTarget t;
  t.chip = chip.str();
  StringRef digits = chip.drop_front(3);
  if (!digits.empty() && !llvm::isDigit(digits.back())) {
    t.suffix = digits.back();
    digits = digits.drop_back();
  }
  digits.getAsInteger(10, t.sm);
  t.ptx = *defaultPtxVersion(chip);
  SmallVector<StringRef> parts;
  features.split(parts, ',', -1, false);
  for (StringRef f : parts) {
    f = f.trim();
    int v;
    if (!f.consume_front("+ptx") || f.getAsInteger(10, v) || v < 10) {
      error = ("unsupported NVVM feature '" + f + "'; RLX takes only +ptxNN (PTX ISA N.N)").str();
      return failure();
    }
    t.ptx = v;
  }
  if (t.ptx < info->minimumPtx) {
    error = llvm::formatv("PTX ISA {0} does not support {1}; it needs PTX ISA {2} or newer "
                          "(+ptx{3})",
                          ptxText(t.ptx), chip, ptxText(info->minimumPtx), info->minimumPtx)
                .str();
    return failure();
  }
  if (std::optional<int> max = maxPtxVersionOfPtxas(); max && t.ptx > *max) {
    error = llvm::formatv("PTX ISA {0} is newer than the installed ptxas ({1}) accepts (PTX "
                          "ISA {2} at most); use +ptx{3} or a newer CUDA toolkit",
                          ptxText(t.ptx), findPtxas(), ptxText(*max), *max)
                .str();
    return failure();
  }
  return t;
}

std::string mlir::rlx::nvvm::findPtxas() {
  if (const char *p = std::getenv("RLX_PTXAS"); p && *p)
    return p;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(var); root && *root) {
      SmallString<256> path(root);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return path.str().str();
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
#ifdef RLX_WHEEL_PTXAS
  // NVIDIA's PyPI wheel in .venv (scripts/setup.sh, where no toolkit is).
  if (llvm::sys::fs::can_execute(RLX_WHEEL_PTXAS))
    return RLX_WHEEL_PTXAS;
#endif
  return "";
}

std::string mlir::rlx::nvvm::findCudaRoot() {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return "";
  SmallString<256> root(ptxas);
  llvm::sys::fs::make_absolute(root);
  llvm::sys::path::remove_filename(root); // bin/
  llvm::sys::path::remove_filename(root);
  return root.str().str();
}

std::optional<int> mlir::rlx::nvvm::maxPtxVersionOfPtxas() {
  static std::once_flag once;
  static std::optional<int> result;
  std::call_once(once, [] {
    std::string ptxas = findPtxas();
    if (ptxas.empty())
      return;
    // Newest first: the first version that assembles is the answer.
    for (int v = 95; v >= 60; --v) {
      if (v % 10 > 8)
        continue;
      SmallString<128> in, out;
      if (llvm::sys::fs::createTemporaryFile("rlx-ptx-probe", "ptx", in) ||
          llvm::sys::fs::createTemporaryFile("rlx-ptx-probe", "cubin", out))
        return;
      {
        std::error_code ec;
        llvm::raw_fd_ostream os(in, ec);
        os << ".version " << ptxText(v) << "\n.target sm_80\n.address_size 64\n";
      }
      std::optional<StringRef> redirects[] = {std::nullopt, StringRef(""), StringRef("")};
      int rc = llvm::sys::ExecuteAndWait(ptxas, {ptxas, "-arch=sm_80", "-o", out, in},
                                         std::nullopt, redirects);
      llvm::sys::fs::remove(in);
      llvm::sys::fs::remove(out);
      if (rc == 0) {
        result = v;
        return;
      }
    }
  });
  return result;
}
