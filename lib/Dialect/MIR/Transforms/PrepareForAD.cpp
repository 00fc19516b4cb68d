//===- PrepareForAD.cpp - Unfuse MIR into the primitives AD has rules for -===//
//
// Norms become reductions and elementwise ops (statistics in f32, one
// rounding at the end, as the lowering computes them), attention the primitive chain of MIRBuilder::attentionChain, a
// fused_matmul its stages, and an elementwise region one MIR op per scalar
// op of its body.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"


namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRPREPAREFORAD
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

Value reduceLast(MIRBuilder &mb, ReduceKind kind, Value x) {
  if (!x)
    return mb.fail();
  return mb.reduce(kind, x, {MIRBuilder::typeOf(x).getRank() - 1}, /*keepDims=*/true);
}

/// The norms' numerics, as every RLX path computes them (DESIGN §3): x, γ and
/// β are widened to f32, the statistics and the whole expression are f32,
/// and the result is rounded to the input's type once, at the end. (Hugging
/// Face's LlamaRMSNorm rounds twice for bf16: x̂ = x·rsqrt(...) back to bf16,
/// then γ·x̂ in bf16; RLX's single rounding is at most one bf16 ulp away.)
/// For f32 and f64 inputs there are no casts.
struct NormStats {
  MIRBuilder &mb;
  Type in, stats;
  Value widen(Value v) { return v && in != stats ? mb.cast(v, stats) : v; }
  Value narrow(Value v) { return v && in != stats ? mb.cast(v, in) : v; }
};

NormStats normStats(MIRBuilder &mb, Value x) {
  Type in = MIRBuilder::elementType(x);
  Type f32 = mb.builder().getF32Type();
  return {mb, in, in.isF64() ? in : f32};
}

/// x · rsqrt(mean(x², last) + eps) [· w]
Value rmsNormChain(MIRBuilder &mb, Value x, Value w, double eps) {
  NormStats n = normStats(mb, x);
  Value xf = n.widen(x), wf = n.widen(w);
  Value ms = reduceLast(mb, ReduceKind::Mean, mb.mul(xf, xf));
  Value y = mb.mul(xf, mb.unary<RsqrtOp>(mb.add(ms, mb.scalar(n.stats, eps))));
  return n.narrow(wf ? mb.mul(y, wf) : y);
}

/// (x − mean) · rsqrt(var + eps) [· w] [+ b]
Value layerNormChain(MIRBuilder &mb, Value x, Value w, Value bias, double eps) {
  NormStats n = normStats(mb, x);
  Value xf = n.widen(x), wf = n.widen(w), bf = n.widen(bias);
  Value xc = mb.sub(xf, reduceLast(mb, ReduceKind::Mean, xf));
  Value var = reduceLast(mb, ReduceKind::Mean, mb.mul(xc, xc));
  Value y = mb.mul(xc, mb.unary<RsqrtOp>(mb.add(var, mb.scalar(n.stats, eps))));
  if (wf)
    y = mb.mul(y, wf);
  return n.narrow(bf ? mb.add(y, bf) : y);
}

FailureOr<Value> unfuseMatmul(MIRBuilder &mb, FusedMatmulOp op) {
  auto spec = FusedMatmulSpec::of(op);
  if (failed(spec))
    return op.emitError("rlx-mir-prepare-for-ad: cannot read this fused_matmul"), failure();
  if (spec->headNormWeight || spec->ropeCos)
    return op.emitError("rlx-mir-prepare-for-ad: fused_matmul head-norm and RoPE stages are not "
                        "unfused; differentiate the unfused graph (fusion-policy=fusable, no "
                        "rlx-mir-fuse)"),
           failure();
  Value x = spec->lhs;
  if (spec->norm == NormKind::RmsNorm)
    x = rmsNormChain(mb, x, spec->normWeight, spec->normEps.value_or(1e-5));
  else if (spec->norm == NormKind::LayerNorm)
    x = layerNormChain(mb, x, spec->normWeight, spec->normBias, spec->normEps.value_or(1e-5));
  FusedMatmulSpec product;
  product.lhs = x;
  product.rhs = spec->rhs;
  product.transposeB = spec->transposeB;
  product.rhsScales = spec->rhsScales;
  product.rhsGlobalScale = spec->rhsGlobalScale;
  Value y = mb.fusedMatmul(product); // the plain matmul, or nvfp4_matmul
  if (spec->bias)
    y = mb.add(y, spec->bias);
  if (spec->glu && y) {
    int64_t n = MIRBuilder::shapeOf(y).back();
    y = mb.mul(mb.activation(spec->activation, mb.sliceLast(y, 0, n / 2)),
               mb.sliceLast(y, n / 2, n / 2));
  } else {
    y = mb.activation(spec->activation, y);
  }
  if (spec->residual)
    y = mb.add(y, spec->residual);
  return y;
}

} // namespace

LogicalResult mlir::rlx::mir::ad::checkIsMir(func::FuncOp fn, StringRef pass) {
  for (Type t : fn.getArgumentTypes())
    if (isa<MemRefType>(t))
      return fn.emitError(pass) << ": @" << fn.getSymName()
                                << " is LIR (memref arguments); LIR is never differentiated, "
                                   "run autodiff on the MIR before convert-rlx-mir-to-lir";
  WalkResult r = fn.walk([&](Operation *op) {
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (ns == "rlx_lir") {
      op->emitError(pass) << ": LIR is never differentiated; run autodiff on the MIR before "
                             "convert-rlx-mir-to-lir";
      return WalkResult::interrupt();
    }
    if (ns == "rlx_hir") {
      op->emitError(pass) << ": HIR is not differentiated directly; lower it first with "
                             "convert-rlx-hir-to-mir{fusion-policy=fusable}";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// The attention_partial of attention with sinks (convert-rlx-hir-to-mir's
/// partial + combine) when `op` is its combine.
static AttentionPartialOp sinkAttention(Operation *op) {
  auto c = dyn_cast<AttentionCombineOp>(op);
  if (!c || !c.getSinks())
    return {};
  auto p = c.getPartialOutput().getDefiningOp<AttentionPartialOp>();
  return p && p.getLse() == c.getLse() ? p : AttentionPartialOp();
}

/// One round of ad::unfuse: every op to expand that is in `fn` now; sets
/// `expanded` when there was one.
static LogicalResult unfuseRound(func::FuncOp fn, bool regions, ad::Rule keep, bool &expanded) {
  using ad::Rule;
  SmallVector<Operation *> ops;
  // Pre-order: a custom_fn that stays keeps its regions as they are.
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto c = dyn_cast<CustomFnOp>(op)) {
      bool hasRule = !c.getVjp().empty() || !c.getJvp().empty();
      if ((keep == Rule::Vjp && !c.getVjp().empty()) ||
          (keep == Rule::Jvp && !c.getJvp().empty()))
        return WalkResult::skip();
      if (keep == Rule::None && hasRule)
        c.emitWarning() << "custom_fn '" << c.getName()
                        << "' is inlined here; its vjp/jvp rules no longer apply to the result";
    }
    // A composite op with derivative rules of its own (the observers: none
    // flows) keeps them; vmap (no rule kept) batches its chain.
    if (keep != Rule::None && isa<DecomposableOpInterface>(op) && !isa<CustomFnOp>(op) &&
        isa<DifferentiableOpInterface>(op))
      return WalkResult::advance();
    if (isa<FusedMatmulOp, AttentionOp, RmsNormOp, LayerNormOp, ResidualRmsNormOp,
            DecomposableOpInterface>(op) ||
        (regions && isa<FusedElementwiseOp>(op)) || sinkAttention(op))
      ops.push_back(op);
    return WalkResult::advance();
  });
  // Nested ops before the op around them (which clones its unfused body).
  for (Operation *op : llvm::reverse(ops)) {
    OpBuilder b(op);
    MIRBuilder mb(b, op->getLoc(), /*diagnose=*/true);
    SmallVector<Value> repl;
    if (auto m = dyn_cast<FusedMatmulOp>(op)) {
      auto y = unfuseMatmul(mb, m);
      if (failed(y))
        return failure();
      repl.push_back(*y);
    } else if (auto a = dyn_cast<AttentionOp>(op)) {
      repl.push_back(mb.attentionChain(getAttentionConfig(a), a.getQuery(), a.getKey(),
                                       a.getValue(), a.getMask()));
    } else if (AttentionPartialOp p = sinkAttention(op)) {
      // Attention with sinks: the chain with the sinks in its softmax.
      repl.push_back(mb.attentionChain(getAttentionConfig(p), p.getQuery(), p.getKey(),
                                       p.getValue(), p.getMask(),
                                       cast<AttentionCombineOp>(op).getSinks()));
    } else if (auto n = dyn_cast<RmsNormOp>(op)) {
      repl.push_back(rmsNormChain(mb, n.getInput(), n.getWeight(), n.getEps().convertToDouble()));
    } else if (auto n = dyn_cast<LayerNormOp>(op)) {
      repl.push_back(layerNormChain(mb, n.getInput(), n.getWeight(), n.getBias(),
                                    n.getEps().convertToDouble()));
    } else if (auto n = dyn_cast<ResidualRmsNormOp>(op)) {
      Value sum = mb.add(n.getInput(), n.getResidual());
      repl.push_back(rmsNormChain(mb, sum, n.getWeight(), n.getEps().convertToDouble()));
      repl.push_back(sum);
    } else if (auto d = dyn_cast<DecomposableOpInterface>(op)) {
      auto r = d.decompose(mb);
      if (failed(r))
        return failure();
      repl = *r;
    } else if (auto e = dyn_cast<FusedElementwiseOp>(op)) {
      auto r = mb.expandScalarBody(e.getBody().front(), e.getInputs(), e.getResultTypes(),
                                   "rlx-mir-prepare-for-ad");
      if (failed(r))
        return failure();
      repl = *r;
    }
    if (mb.failed() || repl.size() != op->getNumResults() || anyNullValue(ValueRange(repl)))
      return op->emitError("rlx-mir-prepare-for-ad: cannot expand '")
             << op->getName() << "' into primitive ops for these operand types",
             failure();
    AttentionPartialOp partial = sinkAttention(op);
    op->replaceAllUsesWith(repl);
    op->erase();
    if (partial && partial->use_empty())
      partial->erase();
  }
  expanded = !ops.empty();
  return success();
}

LogicalResult mlir::rlx::mir::ad::unfuse(func::FuncOp fn, bool regions, Rule keep) {
  // A chain may hold composite ops of its own (lora_matmul's grouped
  // matmuls): rounds until none is left. Every chain is made of strictly
  // simpler ops, so this ends; the bound turns a chain that contained its
  // own op into an error instead of a hang. The elementwise regions chains
  // build (with their own rules) stay as they are after the first round.
  for (int round = 0; round < 16; ++round) {
    bool expanded = false;
    if (failed(unfuseRound(fn, round == 0 && regions, keep, expanded)))
      return failure();
    if (!expanded)
      return success();
  }
  return fn.emitError("rlx-mir-prepare-for-ad: composite ops still left after 16 rounds of "
                      "expansion (a decomposition that contains its own op?)"),
         failure();
}

bool mlir::rlx::mir::ad::isFloatTensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && isa<FloatType>(r.getElementType());
}

FailureOr<SmallVector<unsigned>>
mlir::rlx::mir::ad::selectArguments(func::FuncOp fn, ArrayRef<std::string> names, StringRef pass) {
  SmallVector<unsigned> picked;
  if (names.empty()) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (isFloatTensor(fn.getArgument(i).getType()))
        picked.push_back(i);
    return picked;
  }
  for (const std::string &name : names) {
    std::optional<unsigned> found;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (argumentName(fn, i) == name)
        found = i;
    if (!found)
      return fn.emitError(pass) << ": no argument named '" << name << "' (wrt)",
             failure();
    if (!isFloatTensor(fn.getArgument(*found).getType()))
      return fn.emitError(pass) << ": argument '" << name
                                << "' is not a floating-point tensor",
             failure();
    picked.push_back(*found);
  }
  return picked;
}

FailureOr<SmallVector<func::FuncOp>>
mlir::rlx::mir::ad::targetFunctions(ModuleOp module, StringRef function, StringRef pass,
                                    StringRef suffix, function_ref<bool(func::FuncOp)> pick) {
  SmallVector<func::FuncOp> targets;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    if (!function.empty() ? fn.getSymName() == function : fn.isPublic() && pick(fn))
      targets.push_back(fn);
  }
  if (targets.empty())
    return emitError(module.getLoc(), pass)
               << ": no function to transform"
               << (function.empty() ? std::string()
                                    : " named '" + function.str() + "'"),
           failure();
  for (func::FuncOp fn : targets) {
    if (failed(checkIsMir(fn, pass)))
      return failure();
    if (module.lookupSymbol((fn.getSymName() + suffix).str()))
      return fn.emitError(pass) << ": @" << fn.getSymName() << suffix << " exists already",
             failure();
  }
  return targets;
}

namespace {
struct MIRPrepareForADPass : mir::impl::MIRPrepareForADBase<MIRPrepareForADPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      if (failed(ad::checkIsMir(fn, "rlx-mir-prepare-for-ad")) || failed(ad::unfuse(fn)))
        return signalPassFailure();
    }
  }
};
} // namespace
