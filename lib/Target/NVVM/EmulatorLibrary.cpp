//===- EmulatorLibrary.cpp - kernels.emu.so from the LLVM dialect ----------===//

#include "RLX/Target/NVVM/GPUArtifact.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

/// The host C compiler that links the shared library: $CC, cc, clang-22, gcc.
static std::string findLinker() {
  if (const char *cc = std::getenv("CC"); cc && *cc)
    if (auto p = llvm::sys::findProgramByName(cc))
      return *p;
  for (const char *name : {"cc", "clang-22", "clang", "gcc"})
    if (auto p = llvm::sys::findProgramByName(name))
      return *p;
  return "";
}

LogicalResult mlir::rlx::buildEmulatorLibrary(ModuleOp llvmModule, StringRef path) {
  Location loc = llvmModule.getLoc();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  llvmModule->getContext()->appendDialectRegistry(registry);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = translateModuleToLLVMIR(llvmModule, context);
  if (!module)
    return emitError(loc, "the emulator kernels do not translate to LLVM IR");
  // A portable x86-64 (or host-architecture) baseline: the artifact runs on
  // other machines than the one that built it.
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc, "no LLVM target for the host: ") << error;
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "generic", "", opts, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(triple);

  SmallString<128> object;
  if (llvm::sys::fs::createTemporaryFile("rlx-emu", "o", object))
    return emitError(loc, "cannot create a temporary object file");
  auto cleanup = llvm::make_scope_exit([&] { llvm::sys::fs::remove(object); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object, ec, llvm::sys::fs::OF_None);
    if (ec)
      return emitError(loc, "cannot write ") << object << ": " << ec.message();
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return emitError(loc, "the host target cannot emit object files");
    pm.run(*module);
  }
  std::string cc = findLinker();
  if (cc.empty())
    return emitError(loc, "no C compiler (cc, clang, gcc; or $CC) to link the emulator "
                          "library kernels.emu.so");
  std::string out = path.str();
  std::string message;
  // The __rlx_emu_* hooks stay undefined: the runtime that loads the
  // library provides them.
  int rc = llvm::sys::ExecuteAndWait(cc, {cc, "-shared", "-o", out, object.str()}, std::nullopt,
                                     {}, 0, 0, &message);
  if (rc != 0)
    return emitError(loc, "linking ") << out << " with " << cc << " failed"
                                      << (message.empty() ? "" : ": " + message);
  return success();
}
