//===- GenericKernels.cpp - rlx-gpu-generic-kernels ------------------------===//
//
// The GPU path for an MIR op without a kernel template: its linalg lowering
// (convert-rlx-mir-to-linalg's pattern, the same one the CPU path runs),
// applied before MIR → LIR so that the linalg ops are bufferized, planned and
// turned into kernels like the linalg an import leaves.
//
//===----------------------------------------------------------------------===//

#include "RLX/Conversion/LIRToGPU/LIRToGPU.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_GPUGENERICKERNELS
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

bool hasTemplate(Operation *op) {
  return llvm::any_of(gpu_kernels::builtinKernelTemplates(),
                      [&](const auto &t) { return t->matches(op); });
}

struct GpuGenericKernelsPass : rlx::impl::GpuGenericKernelsBase<GpuGenericKernelsPass> {
  using GpuGenericKernelsBase::GpuGenericKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseSet<Operation *> generic;
    module.walk([&](Operation *op) {
      if (!isa_and_nonnull<mir::MIRDialect>(op->getDialect()) || !mir::isKernelOp(op))
        return;
      bool forced = llvm::is_contained(force, op->getName().getStringRef().str());
      if (!forced && hasTemplate(op))
        return;
      generic.insert(op);
      if (report)
        op->emitRemark("rlx-gpu-generic-kernels: '")
            << op->getName() << "' "
            << (forced ? "forced onto" : "has no GPU kernel template; it takes")
            << " the generic path (its linalg lowering, one kernel per linalg op)";
    });
    if (generic.empty())
      return;
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return !generic.contains(op); });
    RewritePatternSet patterns(ctx);
    populateMIRToLinalgConversionPatterns(patterns);
    ConversionConfig config;
    DenseSet<Operation *> unlegalized;
    config.unlegalizedOps = &unlegalized;
    if (failed(applyPartialConversion(module, target, std::move(patterns), config))) {
      for (Operation *op : generic)
        if (unlegalized.contains(op))
          op->emitError("rlx-gpu-generic-kernels: '")
              << op->getName()
              << "' has no GPU kernel template and its linalg lowering does not apply here";
      return signalPassFailure();
    }
  }
};

} // namespace
