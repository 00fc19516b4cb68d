//===- MIRToLinalg.cpp - The convert-rlx-mir-to-linalg pass ---------------===//

#include "Lowerings.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CONVERTRLXMIRTOLINALG
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {
/// An MIR op whose results hold no elements (a static 0-size dim) computes
/// nothing: its results are tensor.empty, before any op-specific lowering
/// builds slices into 0-size dims (which tensor.extract_slice rejects).
struct ZeroElementResults : ConversionPattern {
  explicit ZeroElementResults(MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/10, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>,
                                ConversionPatternRewriter &rw) const override {
    if (!mir::isMIROp(op) || op->getNumResults() == 0 ||
        isa<mir::ConstantOp>(op))
      return failure();
    SmallVector<Value> results;
    for (Type t : op->getResultTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape() || rt.getNumElements() != 0)
        return failure();
      results.push_back(tensor::EmptyOp::create(rw, op->getLoc(), rt.getShape(),
                                                rt.getElementType()));
    }
    rw.replaceOp(op, results);
    return success();
  }
};
/// A composite op (DecomposableOpInterface): its chain of MIR ops, which
/// the conversion then lowers like any other. Not for the composite ops
/// that have a linalg lowering of their own: the conversion ranks an
/// interface pattern by its place among all such patterns, so a
/// benefit would not put the op's own pattern first.
struct Decompose : OpInterfaceConversionPattern<mir::DecomposableOpInterface> {
  using OpInterfaceConversionPattern::OpInterfaceConversionPattern;
  LogicalResult matchAndRewrite(mir::DecomposableOpInterface op, ArrayRef<Value>,
                                ConversionPatternRewriter &rw) const override {
    if (isa<mir::GroupedMatmulOp>(op))
      return rw.notifyMatchFailure(op, "lowered by its own pattern (MoeLowering.cpp)");
    if (isa<mir::IfOp, mir::WhileOp, mir::ScanOp>(op))
      return rw.notifyMatchFailure(op, "lowered to scf (ControlFlowLowering.cpp)");
    mir::MIRBuilder mb(rw, op->getLoc(), /*diagnose=*/true);
    auto values = op.decompose(mb);
    if (failed(values) || mb.failed())
      return failure();
    rw.replaceOp(op, *values);
    return success();
  }
};
} // namespace

void mlir::rlx::populateMIRToLinalgConversionPatterns(RewritePatternSet &patterns,
                                                      const MIRToLinalgOptions &options) {
  patterns.add<ZeroElementResults>(patterns.getContext());
  patterns.add<Decompose>(patterns.getContext());
  linalg_builders::populateElementwiseLowerings(patterns);
  linalg_builders::populateShapeLowerings(patterns);
  linalg_builders::populateNormLowerings(patterns);
  linalg_builders::populateMatmulLowerings(patterns, options);
  linalg_builders::populateAttentionLowerings(patterns);
  linalg_builders::populateNvfp4Lowerings(patterns);
  linalg_builders::populateQuantLowerings(patterns);
  linalg_builders::populateIndexLowerings(patterns);
  linalg_builders::populateMoeLowerings(patterns);
  linalg_builders::populateControlFlowLowerings(patterns);
}

namespace {
struct ConvertRLXMIRToLinalgPass
    : rlx::impl::ConvertRLXMIRToLinalgBase<ConvertRLXMIRToLinalgPass> {
  using ConvertRLXMIRToLinalgBase::ConvertRLXMIRToLinalgBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    if (rowTile <= 0) {
      emitError(root->getLoc()) << "convert-rlx-mir-to-linalg: row-tile must be >= 1, got "
                                << static_cast<int64_t>(rowTile);
      return signalPassFailure();
    }
    // The lowering works on static shapes; say which dims to bind otherwise.
    WalkResult dynamic = root->walk([&](Operation *op) {
      if (!mir::isMIROp(op))
        return WalkResult::advance();
      for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
        if (auto rt = dyn_cast<RankedTensorType>(t); rt && !rt.hasStaticShape()) {
          op->emitError() << "convert-rlx-mir-to-linalg needs static shapes, got " << rt
                          << "; bind the dynamic dims first with "
                             "rlx-mir-specialize{dims=<name>=<size>,...}";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (dynamic.wasInterrupted())
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<mir::MIRDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                           math::MathDialect, scf::SCFDialect>();
    // Ops of other dialects stay, except those that join MIR (isMIROp).
    target.markUnknownOpDynamicallyLegal([](Operation *op) { return !mir::isMIROp(op); });
    RewritePatternSet patterns(ctx);
    MIRToLinalgOptions options;
    options.rowTile = rowTile;
    populateMIRToLinalgConversionPatterns(patterns, options);
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
