//===- FusionPasses.cpp - Drivers of the MIR fusion pattern families ------===//
//
// Each single-family pass is a thin driver over its populate function; the
// rlx-mir-fuse pass runs every family in a working order, with CSE in
// between, and reports op counts and missed opportunities.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRFUSEEPILOGUE
#define GEN_PASS_DEF_MIRFUSEROPE
#define GEN_PASS_DEF_MIRFUSESWIGLU
#define GEN_PASS_DEF_MIRMERGEMATMULS
#define GEN_PASS_DEF_MIRFUSERESIDUALNORM
#define GEN_PASS_DEF_MIRFUSENORMPROLOGUE
#define GEN_PASS_DEF_MIRFUSEATTENTION
#define GEN_PASS_DEF_MIRFUSEELEMENTWISE
#define GEN_PASS_DEF_MIRPACKWEIGHTS
#define GEN_PASS_DEF_MIRFUSE
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {
/// Provenance of fused ops (the kernel timeline's locations, DESIGN §5): an
/// op a fusion replaces has its location fused into the ops that replace
/// it, and so does every producer of its operands that dies in the same
/// rewrite (the rest of the matched chain, erased once unused), transitively.
struct Provenance : RewriterBase::ForwardingListener {
  explicit Provenance(OpBuilder::Listener *next) : ForwardingListener(next) {}

  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint previous) override {
    live.insert(op);
    ForwardingListener::notifyOperationInserted(op, previous);
  }
  void notifyOperationReplaced(Operation *op, ValueRange replacement) override {
    SmallVector<Operation *> into;
    for (Value v : replacement)
      if (Operation *d = v.getDefiningOp();
          d && d != op && live.contains(d) && !llvm::is_contained(into, d))
        into.push_back(d);
    absorb(op, into);
    ForwardingListener::notifyOperationReplaced(op, replacement);
  }
  void notifyOperationReplaced(Operation *op, Operation *replacement) override {
    if (live.contains(replacement))
      absorb(op, {replacement});
    ForwardingListener::notifyOperationReplaced(op, replacement);
  }
  void notifyOperationErased(Operation *op) override {
    // No list may keep op: an op created later at its address is another.
    if (live.erase(op))
      for (auto &entry : absorbedBy)
        llvm::erase(entry.second, op);
    auto it = absorbedBy.find(op);
    if (it != absorbedBy.end()) {
      SmallVector<Operation *> into = std::move(it->second);
      absorbedBy.erase(it);
      llvm::erase_if(into, [&](Operation *n) { return !live.contains(n); });
      absorb(op, into);
    }
    ForwardingListener::notifyOperationErased(op);
  }

private:
  void absorb(Operation *op, ArrayRef<Operation *> into) {
    if (into.empty())
      return;
    for (Operation *n : into)
      n->setLoc(FusedLoc::get(n->getContext(), {n->getLoc(), op->getLoc()}));
    for (Value in : op->getOperands())
      if (Operation *p = in.getDefiningOp())
        for (Operation *n : into)
          if (!llvm::is_contained(absorbedBy[p], n))
            absorbedBy[p].push_back(n);
  }
  /// Ops created by the rewrite and not erased since.
  llvm::DenseSet<Operation *> live;
  llvm::DenseMap<Operation *, SmallVector<Operation *, 1>> absorbedBy;
};

/// A listener that passes everything on to nobody (Provenance without a
/// report).
struct NoListener : RewriterBase::Listener {};
} // namespace

/// Applies `populate`'s patterns greedily with `report` listening, fusing
/// the locations of what a fusion replaces into what replaces it.
static LogicalResult applyFamily(Operation *root,
                                 function_ref<void(RewritePatternSet &, FusionReport *)> populate,
                                 FusionReport *report) {
  RewritePatternSet patterns(root->getContext());
  populate(patterns, report);
  NoListener none;
  Provenance provenance(report ? static_cast<OpBuilder::Listener *>(report) : &none);
  GreedyRewriteConfig config;
  config.setListener(&provenance);
  return applyPatternsGreedily(root, std::move(patterns), config);
}

namespace {

/// The single-family passes share everything but the populate function.
template <typename Derived, typename Base>
struct FamilyPass : Base {
  using Base::Base;
  void runOnOperation() override {
    FusionReport report;
    if (failed(applyFamily(this->getOperation(), Derived::populate, &report)))
      return this->signalPassFailure();
    if (this->report)
      report.emitRemarks();
  }
};

#define RLX_FAMILY_PASS(PassName, PopulateFn)                                           \
  struct PassName##Pass                                                                  \
      : FamilyPass<PassName##Pass, mir::impl::PassName##Base<PassName##Pass>> {          \
    using Base = FamilyPass<PassName##Pass, mir::impl::PassName##Base<PassName##Pass>>;  \
    using Base::Base;                                                                    \
    static void populate(RewritePatternSet &p, FusionReport *r) { PopulateFn(p, r); }    \
  };

RLX_FAMILY_PASS(MIRFuseEpilogue, populateEpilogueFusionPatterns)
RLX_FAMILY_PASS(MIRFuseRope, populateRopeFusionPatterns)
RLX_FAMILY_PASS(MIRFuseSwiGlu, populateSwiGluFusionPatterns)
RLX_FAMILY_PASS(MIRMergeMatmuls, populateMatmulMergePatterns)
RLX_FAMILY_PASS(MIRFuseResidualNorm, populateResidualNormFusionPatterns)
RLX_FAMILY_PASS(MIRFuseNormPrologue, populateNormPrologueFusionPatterns)
RLX_FAMILY_PASS(MIRFuseAttention, populateAttentionFusionPatterns)
#undef RLX_FAMILY_PASS

struct MIRFuseElementwisePass : mir::impl::MIRFuseElementwiseBase<MIRFuseElementwisePass> {
  using MIRFuseElementwiseBase::MIRFuseElementwiseBase;
  void runOnOperation() override {
    FusionReport misses;
    IRRewriter rewriter(&getContext(), &misses);
    fuseElementwiseChains(getOperation(), rewriter, report ? &misses : nullptr);
    if (report)
      misses.emitRemarks();
  }
};

struct MIRPackWeightsPass : mir::impl::MIRPackWeightsBase<MIRPackWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(packWeights(getOperation(), knWeights)))
      signalPassFailure();
  }
};


struct MIRFusePass : mir::impl::MIRFuseBase<MIRFusePass> {
  using MIRFuseBase::MIRFuseBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>> before;
    for (auto fn : module.getOps<func::FuncOp>())
      before[fn] = countOps(fn);

    // Canonicalization patterns of every loaded dialect and op.
    RewritePatternSet canonical(ctx);
    for (Dialect *d : ctx->getLoadedDialects())
      d->getCanonicalizationPatterns(canonical);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(canonical, ctx);
    FrozenRewritePatternSet frozenCanonical(std::move(canonical));

    FusionReport misses;
    auto cleanup = [&]() -> LogicalResult {
      GreedyRewriteConfig config;
      config.setListener(&misses);
      if (failed(applyPatternsGreedily(module, frozenCanonical, config)))
        return failure();
      IRRewriter rewriter(ctx, &misses);
      DominanceInfo dom(module);
      eliminateCommonSubExpressions(rewriter, dom, module);
      return success();
    };
    using Populate = void (*)(RewritePatternSet &, FusionReport *);
    // The order matters: attention and SwiGLU first (they need the plain
    // matmuls), then epilogues, then merging (which needs finished
    // epilogues), then what reads the merged results.
    SmallVector<Populate> phases = {
        populateAttentionFusionPatterns,    populateSwiGluFusionPatterns,
        populateEpilogueFusionPatterns,     populateRopeFusionPatterns,
        populateMatmulMergePatterns,        populateEpilogueFusionPatterns,
        populateResidualNormFusionPatterns, populateNormPrologueFusionPatterns};
    if (failed(cleanup()))
      return signalPassFailure();
    for (Populate phase : phases) {
      if (failed(applyFamily(module, phase, &misses)))
        return signalPassFailure();
      if (phase == populateRopeFusionPatterns && failed(cleanup()))
        return signalPassFailure();
    }
    IRRewriter rewriter(ctx, &misses);
    fuseElementwiseChains(module, rewriter, &misses);
    if (failed(cleanup()))
      return signalPassFailure();
    if (packWeights && failed(mlir::rlx::mir::packWeights(module, knWeights)))
      return signalPassFailure();
    if (!report)
      return;
    misses.emitRemarks();
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto it = before.find(fn);
      if (it == before.end())
        continue;
      llvm::StringMap<unsigned> foreign;
      auto [all, compute] = countOps(fn, &foreign);
      auto diag = mlir::emitRemark(fn.getLoc());
      diag << "fusion of @" << fn.getSymName() << ": " << it->second.first << " MIR ops before, "
           << all << " after; compute ops " << it->second.second << " -> " << compute;
      if (!foreign.empty()) {
        SmallVector<std::string> parts;
        for (auto &e : foreign)
          parts.push_back("'" + e.getKey().str() + "' x" + std::to_string(e.getValue()));
        llvm::sort(parts);
        diag << " (not rlx_mir: " << llvm::join(parts, ", ") << ")";
      }
    }
  }
};

} // namespace

/// (all MIR ops, compute ops) in `fn`; compute ops include the kernels of
/// other dialects (imported ops nothing raised), counted in `foreign` by name.
std::pair<unsigned, unsigned> mlir::rlx::mir::countOps(func::FuncOp fn,
                                                      llvm::StringMap<unsigned> *foreign) {
  unsigned all = 0, compute = 0;
  fn.walk([&](Operation *op) {
    if (isForeignKernelOp(op)) {
      ++compute;
      if (foreign)
        ++(*foreign)[op->getName().getStringRef()];
      return;
    }
    if (!isMIROp(op) || op->getParentOfType<FusedElementwiseOp>() ||
        isa<YieldOp>(op))
      return;
    ++all;
    compute += isKernelOp(op);
  });
  return {all, compute};
}
