//===- CheckLLVM.cpp - rlx-cpu-check-llvm ---------------------------------===//
//
// What the CPU pipeline leaves outside the LLVM dialect is an error here,
// not in mlir-runner or the JIT (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUCHECKLLVM
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {
struct CpuCheckLLVMPass : rlx::impl::CpuCheckLLVMBase<CpuCheckLLVMPass> {
  void runOnOperation() override {
    WalkResult r = getOperation()->walk([](Operation *op) {
      if (isa<ModuleOp>(op) || isa_and_nonnull<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError() << "rlx-lower-to-cpu: '" << op->getName()
                      << "' was not lowered to the LLVM dialect";
      return WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
