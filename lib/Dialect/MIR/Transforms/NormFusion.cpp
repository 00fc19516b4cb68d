//===- NormFusion.cpp - residual add + norm, norm into matmul prologue ----===//

#include "FusionUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// rms_norm(add(x, r)) → residual_rms_norm(x, r): one pass yields the norm and
/// the sum; other readers of the add read the sum.
struct ResidualNorm : FusionPattern<RmsNormOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(RmsNormOp norm, PatternRewriter &rw) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add)
      return failure();
    if (add.getLhs().getType() != add.getType() || add.getRhs().getType() != add.getType()) {
      miss(norm, "shape mismatch: the residual add broadcasts");
      return failure();
    }
    if (add->getBlock() != norm->getBlock())
      return failure();
    // Build at the add when the weight is available there, else at the norm
    // when every other reader of the sum comes after it.
    Operation *ip = findInsertionPoint(add->getBlock(),
                                       {add.getLhs(), add.getRhs(), norm.getWeight()},
                                       {add.getOperation()});
    if (!ip) {
      miss(norm, "unsupported: the norm weight is defined after readers of the sum");
      return failure();
    }
    rw.setInsertionPoint(ip);
    auto fused = ResidualRmsNormOp::create(rw, norm.getLoc(), add.getLhs(), add.getRhs(),
                                           norm.getWeight(), norm.getEpsAttr());
    rw.replaceOp(norm, fused.getOutput());
    rw.replaceOp(add, fused.getSum());
    return success();
  }
};

/// A norm whose every reader is a matmul lhs moves into their prologues.
template <typename NormT>
struct NormIntoPrologue : FusionPattern<NormT> {
  using FusionPattern<NormT>::FusionPattern;
  using FusionPattern<NormT>::miss;
  LogicalResult matchAndRewrite(NormT norm, PatternRewriter &rw) const override {
    Value result = norm.getResult();
    if (result.use_empty())
      return failure();
    SmallVector<Operation *> users;
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      auto spec = FusedMatmulSpec::of(user);
      if (failed(spec) || spec->lhs != result || spec->norm) {
        if (user->hasTrait<OpTrait::ReturnLike>())
          miss(norm, "graph output: the normalized value is returned");
        else if (succeeded(spec) && spec->lhs == result)
          miss(norm, "unsupported epilogue: the matmul already has a prologue");
        else
          miss(norm, "multi-use: the normalized value is also read by " +
                         user->getName().getStringRef());
        return failure();
      }
      if (llvm::count(user->getOperands(), result) > 1)
        return failure(); // e.g. matmul(n, n): n is more than the lhs.
      users.push_back(user);
    }
    NormKind kind = std::is_same_v<NormT, RmsNormOp> ? NormKind::RmsNorm : NormKind::LayerNorm;
    for (Operation *user : users) {
      // Read the spec now, not before the loop: an earlier rewrite may have
      // replaced a value this user reads (one reader's result as another's
      // residual), and a saved spec would still name the erased value.
      FusedMatmulSpec spec = *FusedMatmulSpec::of(user);
      spec.lhs = norm.getInput();
      spec.norm = kind;
      spec.normEps = norm.getEps().convertToDouble();
      spec.normWeight = norm.getWeight();
      if constexpr (std::is_same_v<NormT, LayerNormOp>)
        spec.normBias = norm.getBias();
      rw.setInsertionPoint(user);
      MIRBuilder mb(rw, user->getLoc());
      Value fused = mb.fusedMatmul(spec);
      if (!fused) {
        // The uses handled so far stay fused; the norm stays for the rest.
        mb.discardUnused(&rw);
        return success(user != users.front());
      }
      rw.replaceOp(user, fused);
    }
    rw.eraseOp(norm);
    return success();
  }
};

} // namespace

void mlir::rlx::mir::populateResidualNormFusionPatterns(RewritePatternSet &patterns,
                                                        FusionReport *report) {
  patterns.add<ResidualNorm>(patterns.getContext(), report, "rlx-mir-fuse-residual-norm");
}

void mlir::rlx::mir::populateNormPrologueFusionPatterns(RewritePatternSet &patterns,
                                                        FusionReport *report) {
  patterns.add<NormIntoPrologue<RmsNormOp>, NormIntoPrologue<LayerNormOp>>(
      patterns.getContext(), report, "rlx-mir-fuse-norm-prologue");
}
