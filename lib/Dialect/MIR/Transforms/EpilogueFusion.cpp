//===- EpilogueFusion.cpp - bias, activation, residual, head norm, RoPE ---===//
//
// Patterns that grow a matmul's epilogue one stage at a time (a residual
// add may also come from a residual_rms_norm). A stage is only
// added when every later stage is still empty (bias → activation → head norm
// → rope → residual) and the matmul result has no other use.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// add(matmul, b[N]) → bias; add(matmul, r) with r of the result's type →
/// residual.
struct AddIntoMatmul : FusionPattern<AddOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value mm = add->getOperand(i), other = add->getOperand(1 - i);
      auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
      if (failed(spec))
        continue;
      RankedTensorType outT = MIRBuilder::typeOf(mm), otherT = MIRBuilder::typeOf(other);
      if (add.getType() != outT) {
        miss(add, "shape mismatch: the add broadcasts the matmul result to " +
                      typeToString(add.getType()));
        continue;
      }
      bool biasShape = otherT.getRank() == 1 && otherT.getShape()[0] == outT.getShape().back() &&
                       !ShapedType::isDynamic(otherT.getShape()[0]);
      bool residualShape = otherT == outT;
      bool asBias = biasShape && !spec->hasEpilogue();
      bool asResidual = !asBias && residualShape && !spec->residual;
      if (!asBias && !asResidual) {
        if (biasShape || residualShape)
          miss(add, "unsupported epilogue: a bias or residual cannot follow the existing "
                    "epilogue stages");
        else
          miss(add, "shape mismatch: " + typeToString(otherT) +
                        " is neither a bias [N] nor a residual of the output's shape");
        continue;
      }
      if (!mm.hasOneUse()) {
        missMultiUse(add, mm);
        continue;
      }
      (asBias ? spec->bias : spec->residual) = other;
      if (succeeded(replaceWithFusedMatmul(rw, add, *spec, mm.getDefiningOp())))
        return success();
      continue;
    }
    return failure();
  }
};

/// residual_rms_norm(matmul, r) → rms_norm(fused_matmul residual(r)): the
/// residual add moves into the matmul epilogue, which leaves a plain norm that
/// rlx-mir-fuse-norm-prologue can move into the next matmul.
struct ResidualNormIntoMatmul : FusionPattern<ResidualRmsNormOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(ResidualRmsNormOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value mm = op->getOperand(i), other = op->getOperand(1 - i);
      auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
      if (failed(spec))
        continue;
      if (spec->residual) {
        miss(op, "unsupported epilogue: the matmul already adds a residual");
        continue;
      }
      if (!mm.hasOneUse()) {
        missMultiUse(op, mm);
        continue;
      }
      Operation *producer = mm.getDefiningOp();
      spec->residual = other;
      MIRBuilder mb(rw, op.getLoc());
      Value sum = mb.fusedMatmul(*spec);
      Value norm = sum ? mb.createWithOptional<RmsNormOp>(sum, op.getWeight(), op.getEpsAttr())
                       : Value();
      if (failed(replaceWithBuilt(rw, op, mb, {norm, sum})))
        return failure();
      rw.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// act(matmul) → activation stage.
struct ActivationIntoMatmul : RewritePattern, FusionReporter {
  ActivationIntoMatmul(MLIRContext *ctx, FusionReport *report, StringRef family)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        FusionReporter(report, family) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rw) const override {
    std::optional<ActivationKind> act = activationOf(op);
    if (!act)
      return failure();
    Value mm = op->getOperand(0);
    auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
    if (failed(spec))
      return failure();
    if (spec->activation != ActivationKind::None || spec->glu || spec->headNormWeight ||
        spec->ropeCos || spec->residual) {
      miss(op, "unsupported epilogue: an activation after later epilogue stages");
      return failure();
    }
    if (!mm.hasOneUse()) {
      missMultiUse(op, mm);
      return failure();
    }
    spec->activation = *act;
    return replaceWithFusedMatmul(rw, op, *spec, mm.getDefiningOp());
  }
};

/// rope(matmul) → rope stage on every output head.
struct RopeIntoMatmul : FusionPattern<RopeOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(RopeOp rope, PatternRewriter &rw) const override {
    Value mm = rope.getInput();
    auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
    if (failed(spec))
      return failure();
    if (spec->ropeCos || spec->residual) {
      miss(rope, "unsupported epilogue: rope after a rope or residual stage");
      return failure();
    }
    int64_t d = rope.getHeadDim();
    if (spec->headDim && *spec->headDim != d) {
      miss(rope, "shape mismatch: rope head_dim " + Twine(d) + " differs from the epilogue's " +
                     Twine(*spec->headDim));
      return failure();
    }
    int64_t n = MIRBuilder::shapeOf(mm).back();
    if (ShapedType::isDynamic(n) || MIRBuilder::typeOf(mm).getRank() != 3) {
      miss(rope, "shape mismatch: the rope epilogue needs a static [B, S, N] output");
      return failure();
    }
    if (!mm.hasOneUse()) {
      missMultiUse(rope, mm);
      return failure();
    }
    spec->headDim = d;
    spec->ropeCos = rope.getCos();
    spec->ropeSin = rope.getSin();
    spec->ropeHeads = n / d;
    spec->rotaryDim = rope.getRotaryDim();
    spec->ropeStyle = rope.getStyle();
    return replaceWithFusedMatmul(rw, rope, *spec, mm.getDefiningOp());
  }
};

/// reshape(rms_norm(reshape(matmul, [.., H, D]), g[D]), [.., H·D]) → head_norm
/// stage (Qwen3's q_norm/k_norm on a projection output).
struct HeadNormIntoMatmul : FusionPattern<ReshapeOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(ReshapeOp back, PatternRewriter &rw) const override {
    auto norm = back.getInput().getDefiningOp<RmsNormOp>();
    if (!norm)
      return failure();
    auto split = norm.getInput().getDefiningOp<ReshapeOp>();
    if (!split)
      return failure();
    Value mm = split.getInput();
    auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
    if (failed(spec))
      return failure();
    RankedTensorType mmT = MIRBuilder::typeOf(mm), splitT = split.getType();
    if (back.getType() != mmT || splitT.getRank() != mmT.getRank() + 1 ||
        mmT.getShape().drop_back() != splitT.getShape().drop_back(2) ||
        splitT.isDynamicDim(splitT.getRank() - 1) || splitT.isDynamicDim(splitT.getRank() - 2))
      return failure();
    int64_t heads = splitT.getShape()[splitT.getRank() - 2];
    int64_t d = splitT.getShape().back();
    if (spec->headNormWeight || spec->ropeCos || spec->residual) {
      miss(back, "unsupported epilogue: a head norm after rope or residual stages");
      return failure();
    }
    if (spec->headDim && *spec->headDim != d) {
      miss(back, "shape mismatch: head norm over " + Twine(d) + " differs from head_dim " +
                     Twine(*spec->headDim));
      return failure();
    }
    for (Value v : {mm, Value(split.getResult()), Value(norm.getResult())})
      if (!v.hasOneUse()) {
        missMultiUse(back, v);
        return failure();
      }
    Operation *producer = mm.getDefiningOp();
    MIRBuilder mb(rw, back.getLoc());
    Value w = norm.getWeight();
    Type et = MIRBuilder::elementType(mm);
    Value rows = w ? mb.broadcast(w, {heads, d})
                   : mb.broadcast(mb.scalar(et, 1.0), {heads, d});
    spec->headDim = d;
    spec->headNormWeight = rows;
    spec->headNormEps = norm.getEps().convertToDouble();
    if (failed(replaceWithBuilt(rw, back, mb, mb.fusedMatmul(*spec))))
      return failure();
    rw.eraseOp(norm);
    rw.eraseOp(split);
    rw.eraseOp(producer);
    return success();
  }
};

} // namespace

void mlir::rlx::mir::populateEpilogueFusionPatterns(RewritePatternSet &patterns,
                                                    FusionReport *report) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AddIntoMatmul, ResidualNormIntoMatmul>(ctx, report, "rlx-mir-fuse-epilogue");
  patterns.add<ActivationIntoMatmul>(ctx, report, "rlx-mir-fuse-epilogue");
}

void mlir::rlx::mir::populateRopeFusionPatterns(RewritePatternSet &patterns,
                                                FusionReport *report) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<RopeIntoMatmul>(ctx, report, "rlx-mir-fuse-rope");
  patterns.add<HeadNormIntoMatmul>(ctx, report, "rlx-mir-fuse-rope");
  populatePackedProjectionPatterns(patterns, report, /*rope=*/true);
}
