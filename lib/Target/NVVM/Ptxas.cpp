//===- Ptxas.cpp - Assemble PTX with the installed ptxas ------------------===//

#include "RLX/Target/NVVM/Ptxas.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <regex>

using namespace mlir;
using namespace mlir::rlx::nvvm;

std::vector<KernelResources> mlir::rlx::nvvm::parsePtxasReport(StringRef report) {
  // ptxas info    : Function properties for <name>
  //     <n> bytes stack frame, <n> bytes spill stores, <n> bytes spill loads
  // ptxas info    : Used <n> registers, used <n> barriers, <n> bytes smem, ...
  std::vector<KernelResources> out;
  static const std::regex props(R"(Function properties for ([A-Za-z0-9_$.]+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex entry(R"(Compiling entry function '([A-Za-z0-9_$.]+)')");
  SmallVector<StringRef> lines;
  report.split(lines, '\n');
  auto current = [&](const std::string &name) -> KernelResources & {
    for (KernelResources &k : out)
      if (k.kernel == name)
        return k;
    KernelResources fresh;
    fresh.kernel = name;
    out.push_back(std::move(fresh));
    return out.back();
  };
  static const std::regex note(R"((warning\s*:|Potential Performance Loss|\(C\d{4}\)))");
  static const std::regex inFunction(R"(in (?:the )?function '([A-Za-z0-9_$.]+)')");
  std::string name;
  for (StringRef l : lines) {
    std::string line = l.str();
    std::smatch m;
    if (std::regex_search(line, note)) {
      // Notes name their function ("... in the function 'k'"), or belong to
      // the one being compiled.
      std::string who = std::regex_search(line, m, inFunction) ? std::string(m[1]) : name;
      if (!who.empty()) {
        current(who).warnings.push_back(StringRef(line).trim().str());
        continue;
      }
    }
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, props)) {
      name = m[1];
      current(name);
      continue;
    }
    if (name.empty())
      continue;
    KernelResources &k = current(name);
    if (std::regex_search(line, m, frame)) {
      k.stackBytes = std::stoll(m[1]);
      k.spillStoreBytes = std::stoll(m[2]);
      k.spillLoadBytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used))
      k.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, barriers))
      k.barriers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem))
      k.sharedBytes = std::stoll(m[1]);
  }
  return out;
}

FailureOr<std::string> mlir::rlx::nvvm::assemblePtx(StringRef ptx, const NVVMTarget &target,
                                                    int optLevel,
                                                    std::vector<KernelResources> &resources,
                                                    std::string &error) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    error = "ptxas not found (install the CUDA toolkit, or set RLX_PTXAS or CUDA_ROOT)";
    return failure();
  }
  SmallString<128> in, out, log;
  if (llvm::sys::fs::createTemporaryFile("rlx-kernels", "ptx", in) ||
      llvm::sys::fs::createTemporaryFile("rlx-kernels", "cubin", out) ||
      llvm::sys::fs::createTemporaryFile("rlx-ptxas", "log", log)) {
    error = "cannot create temporary files for ptxas";
    return failure();
  }
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(log);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      error = "cannot write " + in.str().str() + ": " + ec.message();
      return failure();
    }
    os << ptx;
  }
  std::string arch = "-arch=" + target.chip;
  std::string opt = "-O" + std::to_string(std::clamp(optLevel, 0, 3));
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, {ptxas, arch, opt, "-v", "-o", out, in},
                                     std::nullopt, redirects, 0, 0, &message);
  auto report = llvm::MemoryBuffer::getFile(log);
  std::string text = report ? (*report)->getBuffer().str() : "";
  if (rc != 0) {
    error = "ptxas " + arch + " failed" + (message.empty() ? "" : " (" + message + ")") + ":\n" +
            text;
    return failure();
  }
  resources = parsePtxasReport(text);
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!cubin) {
    error = "ptxas wrote no cubin";
    return failure();
  }
  return (*cubin)->getBuffer().str();
}
