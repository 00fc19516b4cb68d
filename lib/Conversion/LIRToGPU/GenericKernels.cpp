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
    MLIRContext *ctx = &getContext();
    for (const std::string &name : force)
      if (!RegisteredOperationName::lookup(name, ctx))
        return emitError(module.getLoc(), "rlx-gpu-generic-kernels: force names '")
                   << name << "', which is not a registered op",
               signalPassFailure();
    auto generic = [&](Operation *op) {
      if (!mir::isKernelOp(op))
        return false;
      return llvm::is_contained(force, op->getName().getStringRef().str()) || !hasTemplate(op);
    };
    bool dynamic = false;
    DenseSet<Operation *> candidates;
    module.walk([&](Operation *op) {
      if (!generic(op))
        return;
      candidates.insert(op);
      for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
        if (auto rt = dyn_cast<RankedTensorType>(t); rt && !rt.hasStaticShape() && !dynamic) {
          op->emitError("rlx-gpu-generic-kernels: '")
              << op->getName() << "' takes the generic path, which needs static shapes; got "
              << rt << " (bind the dims with --dims)";
          dynamic = true;
        }
      if (report)
        op->emitRemark("rlx-gpu-generic-kernels: '")
            << op->getName() << "' "
            << (hasTemplate(op) ? "forced onto" : "has no GPU kernel template; it takes")
            << " the generic path (its linalg lowering, one kernel per linalg op)";
    });
    if (dynamic)
      return signalPassFailure();
    if (candidates.empty())
      return;
    // Legality is asked again for every op the lowering creates (a
    // decomposition's ops without templates go the generic way too).
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([&](Operation *op) { return !generic(op); });
    RewritePatternSet patterns(ctx);
    populateMIRToLinalgConversionPatterns(patterns);
    ConversionConfig config;
    DenseSet<Operation *> unlegalized;
    config.unlegalizedOps = &unlegalized;
    if (failed(applyPartialConversion(module, target, std::move(patterns), config))) {
      // (Only ops that existed before: what the lowering built is rolled back.)
      bool reported = false;
      for (Operation *op : candidates)
        if (unlegalized.contains(op)) {
          op->emitError("rlx-gpu-generic-kernels: '")
              << op->getName()
              << "' has no GPU kernel template and its linalg lowering does not apply here";
          reported = true;
        }
      if (!reported)
        emitError(module.getLoc(), "rlx-gpu-generic-kernels: an op's linalg lowering failed");
      return signalPassFailure();
    }
  }
};

} // namespace
