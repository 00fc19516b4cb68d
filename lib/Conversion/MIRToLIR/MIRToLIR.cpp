//===- MIRToLIR.cpp - MIR compute ops into destination-style kernels ------===//
//
// convert-rlx-mir-to-lir: every compute op becomes one rlx_lir.kernel on
// tensors (outs = tensor.empty), and so does every `shard` collective of a
// partitioned program; data movement becomes upstream tensor ops.
// One-Shot Bufferize (rlx-lir-bufferize) then produces the buffer form.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CONVERTRLXMIRTOLIR
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// A constant small enough (or splat) to live inside the kernels that read it.
bool isInlinableConstant(Value v, int64_t limit) {
  auto c = v.getDefiningOp<mir::ConstantOp>();
  if (!c)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  return dense && (dense.isSplat() || dense.getNumElements() <= limit);
}

/// A collective of a partitioned (per-rank) program: one kernel writing its
/// result into a planned buffer, like a compute op.
bool isCollective(Operation *op) {
  return isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp, shard::AllToAllOp,
             shard::ReduceScatterOp>(op) &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

/// One compute op → rlx_lir.kernel ins(operands) outs(tensor.empty) { op }.
struct ComputeToKernel : ConversionPattern {
  ComputeToKernel(MLIRContext *ctx, int64_t constantLimit)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        constantLimit(constantLimit) {}
  int64_t constantLimit;

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rw) const override {
    // Reshape and slice are views, concat a set of slices, constants data;
    // everything else (broadcast included: it materializes) is a kernel.
    if ((!mir::isKernelOp(op) && !isCollective(op)) || op->getParentOfType<lir::KernelOp>())
      return failure();
    Location loc = op->getLoc();
    // Kernel inputs: each distinct operand once, small constants cloned inside.
    SmallVector<Value> inputs;
    SmallVector<int> inputOf(op->getNumOperands(), -1);
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      if (isInlinableConstant(v, constantLimit))
        continue;
      auto it = llvm::find(inputs, operands[i]);
      inputOf[i] = it - inputs.begin();
      if (it == inputs.end())
        inputs.push_back(operands[i]);
    }
    SmallVector<Value> outs;
    for (Type t : op->getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      outs.push_back(tensor::EmptyOp::create(rw, loc, rt.getShape(), rt.getElementType()));
    }
    StringRef mnemonic = op->getName().stripDialect();
    auto kernel = lir::KernelOp::create(rw, loc, op->getResultTypes(), inputs, outs,
                                        rw.getStringAttr(mnemonic), DenseI64ArrayAttr());
    Block *body = rw.createBlock(&kernel.getBody());
    for (Value in : inputs) {
      auto t = cast<ShapedType>(in.getType());
      body->addArgument(RankedTensorType::get(t.getShape(), t.getElementType()), loc);
    }
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToStart(body);
    IRMapping map;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      if (inputOf[i] >= 0)
        map.map(v, body->getArgument(inputOf[i]));
      else if (!map.contains(v))
        map.map(v, rw.clone(*v.getDefiningOp())->getResult(0));
    }
    Operation *inner = rw.clone(*op, map);
    lir::YieldOp::create(rw, loc, inner->getResults());
    rw.replaceOp(op, kernel.getResults());
    return success();
  }
};

/// Constants that stay outside kernels become arith.constant (a global after
/// bufferization); the ones only kernels read were cloned into them.
struct ConstantToArith : OpConversionPattern<mir::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(mir::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    if (op->getParentOfType<lir::KernelOp>())
      return failure();
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(), cast<TypedAttr>(op.getValue()));
    return success();
  }
};


struct ConvertRLXMIRToLIRPass : rlx::impl::ConvertRLXMIRToLIRBase<ConvertRLXMIRToLIRPass> {
  using ConvertRLXMIRToLIRBase::ConvertRLXMIRToLIRBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failedDynamic = false;
    module.walk([&](func::FuncOp fn) {
      fn.walk([&](Operation *op) {
        if (failedDynamic ||
            (!mir::isMIROp(op) && !isCollective(op)))
          return;
        for (Type t : op->getResultTypes())
          if (auto rt = dyn_cast<RankedTensorType>(t); rt && !rt.hasStaticShape()) {
            std::string dims = rlx::joinedDimNames(fn);
            InFlightDiagnostic d = op->emitError()
                                   << "MIR → LIR needs static shapes, got " << rt << "; bind ";
            if (dims.empty())
              d << "the dynamic dims";
            else
              d << "the symbolic dims (" << dims << ")";
            d << " first with rlx-mir-specialize{dims=<name>=<size>,...}";
            failedDynamic = true;
            return;
          }
      });
    });
    if (failedDynamic)
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<lir::LIRDialect, tensor::TensorDialect, arith::ArithDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *op) {
      return (!mir::isMIROp(op) && !isCollective(op)) ||
             op->getParentOfType<lir::KernelOp>();
    });
    RewritePatternSet patterns(ctx);
    patterns.add<ComputeToKernel>(ctx, inlineConstantLimit);
    patterns.add<ConstantToArith>(ctx);
    populateMIRDataMovementToTensorPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Constants that only kernels read were cloned into them.
    module.walk([](arith::ConstantOp c) {
      if (c->use_empty())
        c->erase();
    });
  }
};

} // namespace
