//===- TopkCumsum.cpp - rlx-cpu-topk-cumsum --------------------------------===//
//
// topk and cumsum's linalg forms (quadratic in their axis) on buffers as
// calls of the CPU runtime's sort and running sum (lib/Runtime/CPU/
// IndexRuntime.cpp). See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/Passes.h"
#include "RLX/Conversion/MIRToLinalg/MIRToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUTOPKCUMSUM
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {

/// f32 or f64: the runtime's name suffix ("" otherwise).
StringRef suffixOf(Type t) { return t.isF32() ? "_f32" : t.isF64() ? "_f64" : ""; }

/// The runtime function `name` (C interface), declared once per module.
func::FuncOp runtimeFunction(PatternRewriter &rw, Operation *at, StringRef name,
                             TypeRange args) {
  auto module = at->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(rw, module.getLoc(), name,
                                FunctionType::get(rw.getContext(), args, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", rw.getUnitAttr());
  return f;
}

Value unranked(PatternRewriter &rw, Location loc, Value m) {
  auto t = cast<MemRefType>(m.getType());
  return memref::CastOp::create(rw, loc, UnrankedMemRefType::get(t.getElementType(), 0), m);
}

/// The zero fill of `buffer` right before `op`, which the runtime's writes
/// make dead.
void eraseFillBefore(PatternRewriter &rw, Operation *op, Value buffer) {
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode()))
    if (fill.getDpsInits()[0] == buffer)
      rw.eraseOp(fill);
}

struct CumsumToRuntime : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rw) const override {
    auto mode = op->getAttrOfType<DenseI64ArrayAttr>(rlx::kCumsumAttr);
    if (!mode || mode.size() != 3 || !op.hasPureBufferSemantics() ||
        op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1)
      return failure();
    Value x = op.getDpsInputs()[0], out = op.getDpsInits()[0];
    auto xt = dyn_cast<MemRefType>(x.getType()), ot = dyn_cast<MemRefType>(out.getType());
    if (!xt || !ot || xt.getElementType() != ot.getElementType() ||
        suffixOf(xt.getElementType()).empty() || xt.getRank() != ot.getRank() ||
        mode[0] < 0 || mode[0] >= xt.getRank())
      return failure();
    Location loc = op.getLoc();
    Value xu = unranked(rw, loc, x), ou = unranked(rw, loc, out);
    Type i32 = rw.getI32Type(), i64 = rw.getI64Type();
    func::FuncOp f = runtimeFunction(
        rw, op, ("rlx_cpu_cumsum" + suffixOf(xt.getElementType())).str(),
        {xu.getType(), ou.getType(), i64, i32, i32});
    eraseFillBefore(rw, op, out);
    func::CallOp::create(rw, loc, f,
                         ValueRange{xu, ou, arith::ConstantIntOp::create(rw, loc, mode[0], 64),
                                    arith::ConstantIntOp::create(rw, loc, mode[1] ? 1 : 0, 32),
                                    arith::ConstantIntOp::create(rw, loc, mode[2] ? 1 : 0, 32)});
    rw.eraseOp(op);
    return success();
  }
};

struct TopkToRuntime : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rw) const override {
    if (!op->hasAttr(rlx::kTopKAttr) || !op.hasPureBufferSemantics() ||
        op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 2)
      return failure();
    Value x = op.getDpsInputs()[0], ranks = op.getDpsInputs()[1];
    Value values = op.getDpsInits()[0], indices = op.getDpsInits()[1];
    auto xt = dyn_cast<MemRefType>(x.getType()), vt = dyn_cast<MemRefType>(values.getType());
    auto it = dyn_cast<MemRefType>(indices.getType());
    if (!xt || !vt || !it || xt.getElementType() != vt.getElementType() ||
        suffixOf(xt.getElementType()).empty() || !it.getElementType().isInteger(64) ||
        xt.getRank() == 0 || vt.getRank() != xt.getRank() || it.getRank() != xt.getRank())
      return failure();
    // The ranks' generic writes only the buffer the pick reads: erase both.
    linalg::GenericOp ranker;
    for (Operation *user : ranks.getUsers())
      if (auto g = dyn_cast<linalg::GenericOp>(user);
          g && g->hasAttr(rlx::kTopKRanksAttr) && g.getNumDpsInits() == 1 &&
          g.getDpsInits()[0] == ranks)
        ranker = g;
    Location loc = op.getLoc();
    Value xu = unranked(rw, loc, x), vu = unranked(rw, loc, values),
          iu = unranked(rw, loc, indices);
    func::FuncOp f = runtimeFunction(rw, op, ("rlx_cpu_topk" + suffixOf(xt.getElementType())).str(),
                                     {xu.getType(), vu.getType(), iu.getType()});
    func::CallOp::create(rw, loc, f, ValueRange{xu, vu, iu});
    rw.eraseOp(op);
    if (ranker) {
      eraseFillBefore(rw, ranker, ranks);
      rw.eraseOp(ranker);
    }
    return success();
  }
};

struct CpuTopkCumsumPass : rlx::impl::CpuTopkCumsumBase<CpuTopkCumsumPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CumsumToRuntime, TopkToRuntime>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
