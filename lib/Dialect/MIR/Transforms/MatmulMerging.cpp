//===- MatmulMerging.cpp - SwiGLU and shared-input (QKV) matmul merging ---===//
//
// Both families turn several matmuls that read one input into one matmul over
// concatenated weights. The concatenation is a parameter transform:
// rlx-mir-pack-weights computes it once, so no weights are copied per call.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// Two specs agree on everything that must be shared to merge them: input,
/// weight layout, prologue, element type and K.
static bool sameInputSide(const FusedMatmulSpec &a, const FusedMatmulSpec &b) {
  auto ra = MIRBuilder::typeOf(a.rhs), rb = MIRBuilder::typeOf(b.rhs);
  int64_t ka = a.transposeB ? ra.getShape()[1] : ra.getShape()[0];
  int64_t kb = b.transposeB ? rb.getShape()[1] : rb.getShape()[0];
  return a.lhs == b.lhs && a.transposeB == b.transposeB && a.norm == b.norm &&
         a.normEps == b.normEps && a.normWeight == b.normWeight && a.normBias == b.normBias &&
         ra.getElementType() == rb.getElementType() && ka == kb && !ShapedType::isDynamic(ka);
}

/// NVFP4 weights keep their own matmuls: each has its own global scale (one
/// merged weight would need one per column range).
static constexpr const char *kNvfp4NotMerged =
    "unsupported weight: NVFP4 weights are not merged (each has its own global scale)";

static int64_t outFeatures(const FusedMatmulSpec &s) {
  auto r = MIRBuilder::typeOf(s.rhs);
  return s.transposeB ? r.getShape()[0] : r.getShape()[1];
}

namespace {

/// act(x·Wg) · (x·Wu) → fused_matmul(x, concat(Wg, Wu)) glu activation act.
struct SwiGluIntoMatmul : FusionPattern<MulOp> {
  using FusionPattern::FusionPattern;

  /// The gate side: act(matmul) or a fused_matmul whose only stage is a
  /// gating activation. Returns the gate spec (activation cleared) and kind.
  static FailureOr<std::pair<FusedMatmulSpec, ActivationKind>> gateOf(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return failure();
    if (auto act = activationOf(def)) {
      auto spec = FusedMatmulSpec::of(def->getOperand(0).getDefiningOp());
      if (failed(spec) || spec->hasEpilogue())
        return failure();
      return std::make_pair(*spec, *act);
    }
    auto spec = FusedMatmulSpec::of(def);
    if (failed(spec) || spec->activation == ActivationKind::None || spec->glu ||
        spec->bias || spec->headNormWeight || spec->ropeCos || spec->residual)
      return failure();
    ActivationKind act = spec->activation;
    spec->activation = ActivationKind::None;
    return std::make_pair(*spec, act);
  }

  LogicalResult matchAndRewrite(MulOp mul, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value gateV = mul->getOperand(i), upV = mul->getOperand(1 - i);
      auto gate = gateOf(gateV);
      auto up = FusedMatmulSpec::of(upV.getDefiningOp());
      if (failed(gate) || failed(up) || up->hasEpilogue())
        continue;
      auto [g, act] = *gate;
      if (act == ActivationKind::Tanh)
        continue;
      if (g.isNvfp4() || up->isNvfp4()) {
        miss(mul, kNvfp4NotMerged);
        continue;
      }
      if (!sameInputSide(g, *up)) {
        miss(mul, "shape mismatch: gate and up matmuls differ in input, layout or prologue");
        continue;
      }
      if (outFeatures(g) != outFeatures(*up) || ShapedType::isDynamic(outFeatures(g)) ||
          mul.getType() != MIRBuilder::typeOf(upV)) {
        miss(mul, "shape mismatch: gate and up outputs differ");
        continue;
      }
      // Every intermediate is consumed by this gating only.
      Operation *gateAct = gateV.getDefiningOp();
      SmallVector<Value> mustBeSingle{gateV, upV};
      if (activationOf(gateAct))
        mustBeSingle.push_back(gateAct->getOperand(0));
      auto shared = llvm::find_if(mustBeSingle, [](Value v) { return !v.hasOneUse(); });
      if (shared != mustBeSingle.end()) {
        missMultiUse(mul, *shared);
        continue;
      }
      if (static_cast<bool>(g.bias) != static_cast<bool>(up->bias))
        continue;
      MIRBuilder mb(rw, mul.getLoc());
      FusedMatmulSpec merged = g;
      int64_t axis = g.transposeB ? 0 : 1;
      merged.rhs = mb.concat({g.rhs, up->rhs}, axis);
      if (g.bias)
        merged.bias = mb.concat({g.bias, up->bias}, 0);
      merged.glu = true;
      merged.activation = act;
      SmallVector<Operation *> dead{gateV.getDefiningOp(), upV.getDefiningOp()};
      if (activationOf(gateAct))
        dead.push_back(gateAct->getOperand(0).getDefiningOp());
      if (failed(replaceWithBuilt(rw, mul, mb, mb.fusedMatmul(merged))))
        return failure();
      for (Operation *op : dead)
        rw.eraseOp(op);
      return success();
    }
    return failure();
  }
};

/// How a matmul's head stages order it within a merged QKV output: head-normed
/// and roped heads must form leading blocks.
struct MergeCandidate {
  Operation *op;
  FusedMatmulSpec spec;
  int tier() const { return (spec.headNormWeight ? 0 : 2) + (spec.ropeCos ? 0 : 1); }
};

/// Matmuls sharing their lhs → one matmul over concatenated weights + slices.
template <typename MatmulT>
struct MergeSharedInput : FusionPattern<MatmulT> {
  using FusionPattern<MatmulT>::FusionPattern;
  using FusionPattern<MatmulT>::miss;

  /// Stages that can be merged: no glu or residual, one activation and bias
  /// presence for all, compatible head stages.
  static bool mergeable(const FusedMatmulSpec &s) { return !s.glu && !s.residual; }

  /// Why `a` and `b` cannot share one matmul, or nothing when they can.
  static std::optional<std::string> incompatibility(const FusedMatmulSpec &a,
                                                    const FusedMatmulSpec &b) {
    if (a.isNvfp4() || b.isNvfp4())
      return std::string(kNvfp4NotMerged);
    if (!sameInputSide(a, b))
      return std::string("shape mismatch: weight layout, K or prologue differ");
    if (a.activation != b.activation || static_cast<bool>(a.bias) != static_cast<bool>(b.bias))
      return std::string("unsupported epilogue: activations or bias presence differ");
    bool headA = a.headNormWeight || a.ropeCos, headB = b.headNormWeight || b.ropeCos;
    if ((headA && headB && a.headDim != b.headDim) ||
        (a.ropeCos && b.ropeCos &&
         (a.ropeCos != b.ropeCos || a.ropeSin != b.ropeSin ||
          a.rotaryDim.value_or(*a.headDim) != b.rotaryDim.value_or(*b.headDim) ||
          a.ropeStyle != b.ropeStyle)) ||
        (a.headNormWeight && b.headNormWeight && a.headNormEps != b.headNormEps))
      return std::string("unsupported epilogue: head sizes, rope tables or norm eps differ");
    return std::nullopt;
  }

  LogicalResult matchAndRewrite(MatmulT root, PatternRewriter &rw) const override {
    auto rootSpec = FusedMatmulSpec::of(root);
    if (failed(rootSpec) || !mergeable(*rootSpec))
      return failure();
    // Every member must be compatible with every other one, not only with
    // the root (two roped candidates with different tables were merged
    // under a plain root).
    SmallVector<MergeCandidate> group{{root.getOperation(), *rootSpec}};
    for (Operation *user : rootSpec->lhs.getUsers()) {
      if (user->getBlock() != root->getBlock() || user == root.getOperation())
        continue;
      auto spec = FusedMatmulSpec::of(user);
      if (failed(spec) || spec->lhs != rootSpec->lhs || !mergeable(*spec))
        continue;
      if (llvm::any_of(group, [&](const MergeCandidate &c) { return c.op == user; }))
        continue;
      if (auto why = incompatibility(*rootSpec, *spec)) {
        // Each incompatible pair is reported once, at its later op.
        if (root->isBeforeInBlock(user))
          miss(user, *why);
        continue;
      }
      if (llvm::any_of(group, [&](const MergeCandidate &c) {
            return incompatibility(c.spec, *spec).has_value();
          }))
        continue;
      group.push_back({user, *spec});
    }
    if (group.size() < 2)
      return failure();
    llvm::stable_sort(group, [](const MergeCandidate &a, const MergeCandidate &b) {
      if (a.tier() != b.tier())
        return a.tier() < b.tier();
      return a.op->isBeforeInBlock(b.op);
    });
    // Head-normed heads and roped heads must each be a leading block.
    bool seenNoNorm = false, seenNoRope = false;
    for (const MergeCandidate &c : group) {
      if ((c.spec.headNormWeight && seenNoNorm) || (c.spec.ropeCos && seenNoRope)) {
        if (llvm::all_of(group, [&](const MergeCandidate &o) {
              return o.op == root.getOperation() || root->isBeforeInBlock(o.op);
            }))
          miss(root, "unsupported epilogue: head-norm and rope heads do not form leading "
                     "blocks of the merged output");
        return failure();
      }
      seenNoNorm |= !c.spec.headNormWeight;
      seenNoRope |= !c.spec.ropeCos;
    }
    SmallVector<Value> operands;
    SmallVector<Operation *> ops;
    for (const MergeCandidate &c : group) {
      ops.push_back(c.op);
      operands.append({c.spec.lhs, c.spec.rhs, c.spec.bias, c.spec.normWeight,
                       c.spec.normBias, c.spec.headNormWeight, c.spec.ropeCos,
                       c.spec.ropeSin});
    }
    Operation *ip = findInsertionPoint(root->getBlock(), operands, ops);
    if (!ip) {
      miss(root, "unsupported: no point dominates every weight and precedes every use");
      return failure();
    }
    rw.setInsertionPoint(ip);
    MIRBuilder mb(rw, root.getLoc());
    FusedMatmulSpec merged = group.front().spec;
    SmallVector<Value> rhs, bias, headNorm;
    int64_t ropeHeads = 0;
    for (const MergeCandidate &c : group) {
      rhs.push_back(c.spec.rhs);
      if (c.spec.bias)
        bias.push_back(c.spec.bias);
      if (c.spec.headNormWeight)
        headNorm.push_back(c.spec.headNormWeight);
      if (c.spec.ropeCos)
        ropeHeads += *c.spec.ropeHeads;
      if (c.spec.headDim)
        merged.headDim = c.spec.headDim;
      if (c.spec.ropeCos && !merged.ropeCos) {
        merged.ropeCos = c.spec.ropeCos;
        merged.ropeSin = c.spec.ropeSin;
        merged.rotaryDim = c.spec.rotaryDim;
        merged.ropeStyle = c.spec.ropeStyle;
      }
      if (c.spec.headNormWeight)
        merged.headNormEps = c.spec.headNormEps;
    }
    merged.rhs = mb.concat(rhs, merged.transposeB ? 0 : 1);
    merged.bias = bias.empty() ? Value() : mb.concat(bias, 0);
    merged.headNormWeight = headNorm.empty() ? Value() : mb.concat(headNorm, 0);
    if (ropeHeads)
      merged.ropeHeads = ropeHeads;
    Value all = mb.fusedMatmul(merged);
    SmallVector<Value> parts;
    int64_t offset = 0;
    for (const MergeCandidate &c : group) {
      int64_t n = MIRBuilder::shapeOf(c.op->getResult(0)).back();
      parts.push_back(mb.sliceLast(all, offset, n));
      offset += n;
    }
    if (mb.failed() || llvm::any_of(llvm::zip(group, parts), [](auto p) {
          return std::get<1>(p).getType() != std::get<0>(p).op->getResult(0).getType();
        })) {
      mb.discardUnused(&rw);
      return failure();
    }
    for (auto [c, part] : llvm::zip(group, parts))
      rw.replaceOp(c.op, part);
    return success();
  }
};

} // namespace

void mlir::rlx::mir::populateSwiGluFusionPatterns(RewritePatternSet &patterns,
                                                  FusionReport *report) {
  patterns.add<SwiGluIntoMatmul>(patterns.getContext(), report, "rlx-mir-fuse-swiglu");
  populatePackedProjectionPatterns(patterns, report, /*rope=*/false);
}

void mlir::rlx::mir::populateMatmulMergePatterns(RewritePatternSet &patterns,
                                                 FusionReport *report) {
  patterns.add<MergeSharedInput<MatmulOp>, MergeSharedInput<FusedMatmulOp>>(
      patterns.getContext(), report, "rlx-mir-merge-matmuls");
}
