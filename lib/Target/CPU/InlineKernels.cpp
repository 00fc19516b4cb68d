//===- InlineKernels.cpp - rlx-cpu-inline-kernels -------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"
#include "RLX/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUINLINEKERNELS
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

struct CpuInlineKernelsPass : rlx::impl::CpuInlineKernelsBase<CpuInlineKernelsPass> {
  void runOnOperation() override {
    // Functions still on tensors (the path without LIR): one value per result.
    if (auto module = dyn_cast<ModuleOp>(getOperation()))
      lir::separateReturnedTensors(module);
    IRRewriter rw(&getContext());
    SmallVector<lir::ViewOp> views;
    SmallVector<lir::KernelOp> kernels;
    getOperation()->walk([&](Operation *op) {
      if (auto v = dyn_cast<lir::ViewOp>(op))
        views.push_back(v);
      else if (auto k = dyn_cast<lir::KernelOp>(op); k && k.hasPureBufferSemantics())
        kernels.push_back(k);
    });
    for (lir::ViewOp view : views) {
      rw.setInsertionPoint(view);
      Value shift = arith::ConstantIndexOp::create(rw, view.getLoc(), view.getByteOffset());
      rw.replaceOpWithNewOp<memref::ViewOp>(view, view.getType(), view.getArena(), shift,
                                            ValueRange{});
    }
    for (lir::KernelOp kernel : kernels) {
      Location loc = kernel.getLoc();
      rw.setInsertionPoint(kernel);
      IRMapping map;
      Block &body = kernel.getBody().front();
      DenseMap<Value, Value> tensorOf; // one to_tensor per distinct buffer
      for (auto [in, arg] : llvm::zip(kernel.getInputs(), body.getArguments())) {
        Value &t = tensorOf[in];
        if (!t)
          t = bufferization::ToTensorOp::create(rw, loc, arg.getType(), in, /*restrict=*/true,
                                                /*writable=*/false);
        map.map(arg, t);
      }
      for (Operation &op : body.without_terminator())
        rw.clone(op, map);
      for (auto [value, out] : llvm::zip(kernel.getYield().getValues(), kernel.getOutputs())) {
        auto store = bufferization::MaterializeInDestinationOp::create(
            rw, loc, TypeRange{}, map.lookupOrDefault(value), out);
        store.setRestrict(true);
        store.setWritable(true);
      }
      rw.eraseOp(kernel);
    }
  }
};

} // namespace
