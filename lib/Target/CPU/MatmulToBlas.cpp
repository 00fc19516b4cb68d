//===- MatmulToBlas.cpp - f32 matmuls on buffers → BLAS sgemm -------------===//
//
// linalg.matmul / batch_matmul with f32 memrefs whose innermost dim is unit
// stride become calls into the RLX CPU runtime, which forwards to cblas_sgemm.
// Operands are passed as memref descriptors (C interface), so row strides of
// slices (a head of a packed [S, H·D] activation) reach BLAS as lda.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/Passes.h"
#include "RLX/Conversion/MIRToLinalg/MIRToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUMATMULTOBLAS
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {

/// A memref type with the same rank and element type but a fully dynamic
/// strided layout: what the runtime's descriptor parameter accepts.
MemRefType dynamicStrided(MemRefType t) {
  int64_t d = ShapedType::kDynamic;
  SmallVector<int64_t> shape(t.getRank(), d), strides(t.getRank(), d);
  return MemRefType::get(shape, t.getElementType(),
                         StridedLayoutAttr::get(t.getContext(), d, strides));
}

/// Unit innermost stride (sizes of 1 do not matter).
bool innermostContiguous(MemRefType t) {
  if (!t.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1 || t.getShape().back() == 1;
}

/// Transposition of an operand from its indexing map: `normal` lists the
/// expected (untransposed) result dims.
std::optional<bool> transposed(AffineMap map, ArrayRef<unsigned> normal) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    dims.push_back(d.getPosition());
  }
  if (dims == SmallVector<unsigned>(normal))
    return false;
  SmallVector<unsigned> swapped(normal);
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  if (dims == swapped)
    return true;
  return std::nullopt;
}

/// The runtime function `name` (C interface, no results), declared once.
func::FuncOp declareRuntime(OpBuilder &b, ModuleOp module, StringRef name, TypeRange inputs) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 FunctionType::get(b.getContext(), inputs, {}));
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return fn;
}

/// rlx_cpu_sgemm(_batched): (a, b, c, transA, transB, beta).
func::FuncOp declareRuntime(OpBuilder &b, ModuleOp module, StringRef name, unsigned rank) {
  auto m = dynamicStrided(MemRefType::get(SmallVector<int64_t>(rank, 1), b.getF32Type()));
  return declareRuntime(b, module, name,
                        {m, m, m, b.getI32Type(), b.getI32Type(), b.getF32Type()});
}

/// Multiply-adds of a matmul with static shapes: C's elements times K (the
/// lhs dim that C lacks); nullopt when a size is dynamic.
std::optional<int64_t> multiplyAdds(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t n = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r))
      return std::nullopt;
    n *= r;
  }
  return n;
}

template <typename OpT>
struct ToBlas : OpRewritePattern<OpT> {
  ToBlas(MLIRContext *ctx, StringRef fn, unsigned rank, int64_t minFlops)
      : OpRewritePattern<OpT>(ctx), fn(fn), rank(rank), minFlops(minFlops) {}
  std::string fn;
  unsigned rank;
  int64_t minFlops;

  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    if (!op.hasPureBufferSemantics())
      return failure();
    if (auto n = multiplyAdds(op); n && *n < minFlops)
      return rw.notifyMatchFailure(op, "too small for a BLAS call");
    Value a = op.getDpsInputs()[0], bv = op.getDpsInputs()[1], c = op.getDpsInits()[0];
    for (Value v : {a, bv, c})
      if (!innermostContiguous(cast<MemRefType>(v.getType())))
        return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // Loops: (b,) m, n, k.
    unsigned off = rank == 3 ? 1 : 0;
    SmallVector<unsigned> aNormal, bNormal, cNormal;
    if (rank == 3) {
      aNormal.push_back(0);
      bNormal.push_back(0);
      cNormal.push_back(0);
    }
    aNormal.append({off + 0, off + 2});
    bNormal.append({off + 2, off + 1});
    cNormal.append({off + 0, off + 1});
    auto ta = transposed(maps[0], aNormal), tb = transposed(maps[1], bNormal),
         tc = transposed(maps[2], cNormal);
    if (!ta || !tb || !tc || *tc)
      return failure();
    // A zero fill of C right before the matmul becomes beta = 0.
    float beta = 1.0f;
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
      FloatAttr zero;
      if (fill.getDpsInits()[0] == c && matchPattern(fill.getInputs()[0], m_Constant(&zero)) &&
          zero.getValue().isZero()) {
        beta = 0.0f;
        rw.eraseOp(fill);
      }
    }
    auto module = op->template getParentOfType<ModuleOp>();
    func::FuncOp callee = declareRuntime(rw, module, fn, rank);
    Location loc = op.getLoc();
    SmallVector<Value> args;
    for (Value v : {a, bv, c})
      args.push_back(memref::CastOp::create(
          rw, loc, dynamicStrided(cast<MemRefType>(v.getType())), v));
    args.push_back(arith::ConstantIntOp::create(rw, loc, *ta ? 1 : 0, 32));
    args.push_back(arith::ConstantIntOp::create(rw, loc, *tb ? 1 : 0, 32));
    args.push_back(arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(beta)));
    func::CallOp::create(rw, loc, callee, args);
    rw.eraseOp(op);
    return success();
  }
};

/// The linalg.generic of an f32 grouped_matmul (kGroupedMatmulAttr), on
/// buffers: a call of the runtime's grouped GEMM (each expert's rows
/// gathered, one BLAS call per expert).
struct GroupedToBlas : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rw) const override {
    if (!op->hasAttr(rlx::kGroupedMatmulAttr) || !op.hasPureBufferSemantics() ||
        op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
      return failure();
    Value x = op.getDpsInputs()[0], ids = op.getDpsInputs()[1], out = op.getDpsInits()[0];
    // The shape grouped_matmul's lowering gives it: loops (t, n, k) with
    // maps (t, k), (t), (t, n), and one load of a 3-D f32 weight [E, N, K]
    // defined outside; anything else keeps its loops.
    MLIRContext *ctx = rw.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> want = {AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                   AffineMap::get(3, 0, {d(0)}, ctx),
                                   AffineMap::get(3, 0, {d(0), d(1)}, ctx)};
    auto iters = op.getIteratorTypesArray();
    if (op.getIndexingMapsArray() != want || iters.size() != 3 ||
        iters[2] != utils::IteratorType::reduction)
      return failure();
    SmallVector<memref::LoadOp> loads;
    op.getRegion().walk([&](memref::LoadOp load) { loads.push_back(load); });
    if (loads.size() != 1)
      return failure();
    Value w = loads.front().getMemRef();
    auto xType = dyn_cast<MemRefType>(x.getType());
    auto wType = dyn_cast<MemRefType>(w.getType());
    auto outType = dyn_cast<MemRefType>(out.getType());
    auto idType = dyn_cast<MemRefType>(ids.getType());
    if (!xType || !wType || !outType || !idType || xType.getRank() != 2 ||
        wType.getRank() != 3 || outType.getRank() != 2 || idType.getRank() != 1 ||
        op->isAncestor(w.getParentRegion()->getParentOp()))
      return failure();
    if (!idType.getElementType().isInteger() ||
        (idType.getElementType().getIntOrFloatBitWidth() != 32 &&
         idType.getElementType().getIntOrFloatBitWidth() != 64))
      return failure();
    for (MemRefType t : {xType, wType, outType})
      if (!innermostContiguous(t))
        return failure();
    // The zero fill of the output is the runtime's to do.
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode()))
      if (fill.getDpsInits()[0] == out)
        rw.eraseOp(fill);
    auto module = op->getParentOfType<ModuleOp>();
    unsigned bits = idType.getElementType().getIntOrFloatBitWidth();
    std::string name = "rlx_cpu_grouped_sgemm_i" + std::to_string(bits);
    auto f32 = [&](unsigned rank) {
      return dynamicStrided(MemRefType::get(SmallVector<int64_t>(rank, 1), rw.getF32Type()));
    };
    auto idArg = dynamicStrided(MemRefType::get({1}, idType.getElementType()));
    func::FuncOp callee =
        declareRuntime(rw, module, name, {f32(2), f32(3), idArg, f32(2), rw.getI32Type()});
    Location loc = op.getLoc();
    auto cast = [&](Value v, Type t) { return memref::CastOp::create(rw, loc, t, v).getResult(); };
    auto zeroOutOfRange = dyn_cast<BoolAttr>(op->getAttr(rlx::kGroupedMatmulAttr));
    Value flag = arith::ConstantIntOp::create(
        rw, loc, zeroOutOfRange && zeroOutOfRange.getValue() ? 1 : 0, 32);
    func::CallOp::create(rw, loc, callee,
                         ValueRange{cast(x, f32(2)), cast(w, f32(3)), cast(ids, idArg),
                                    cast(out, f32(2)), flag});
    rw.eraseOp(op);
    return success();
  }
};

/// The linalg.generic of a 2-D qmatmul (kQMatmulAttr) on buffers: a call
/// of the runtime's integer GEMM (rlx_cpu_qgemm_s8, exact i32), which adds
/// to C as the generic does, or overwrites it when a zero fill of C comes
/// right before (the fill goes). The maps and loops must be qmatmul's (the
/// tag alone does not make a generic one).
struct QMatmulToRuntime : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rw) const override {
    auto params = op->getAttrOfType<DenseI64ArrayAttr>(rlx::kQMatmulAttr);
    if (!params || params.size() != 4 || !op.hasPureBufferSemantics() ||
        op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
      return failure();
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto iters = op.getIteratorTypesArray();
    auto ta = transposed(maps[0], {0, 2}), tc = transposed(maps[2], {0, 1});
    if (!ta || *ta || !tc || *tc || iters.size() != 3 ||
        iters[0] != utils::IteratorType::parallel || iters[1] != utils::IteratorType::parallel ||
        iters[2] != utils::IteratorType::reduction)
      return failure();
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    IntegerAttr zero;
    bool overwrite = fill && fill.getDpsInits()[0] == c &&
                     matchPattern(fill.getInputs()[0], m_Constant(&zero)) &&
                     zero.getValue().isZero();
    auto rankTwo = [](Value v, unsigned bits) {
      auto t = dyn_cast<MemRefType>(v.getType());
      return t && t.getRank() == 2 && t.getElementType().isInteger(bits);
    };
    if (!rankTwo(a, 8) || !rankTwo(b, 8) || !rankTwo(c, 32))
      return failure();
    auto tb = transposed(op.getIndexingMapsArray()[1], {2, 1});
    if (!tb)
      return failure();
    MLIRContext *ctx = rw.getContext();
    auto strided = [&](unsigned bits) {
      return dynamicStrided(MemRefType::get({1, 1}, IntegerType::get(ctx, bits)));
    };
    Type i32 = rw.getI32Type();
    auto module = op->getParentOfType<ModuleOp>();
    func::FuncOp callee =
        declareRuntime(rw, module, "rlx_cpu_qgemm_s8",
                       {strided(8), strided(8), strided(32), i32, i32, i32, i32, i32, i32});
    Location loc = op.getLoc();
    auto cast = [&](Value v, unsigned bits) {
      return memref::CastOp::create(rw, loc, strided(bits), v).getResult();
    };
    auto i32c = [&](int64_t v) { return arith::ConstantIntOp::create(rw, loc, v, 32).getResult(); };
    ArrayRef<int64_t> p = params.asArrayRef();
    func::CallOp::create(rw, loc, callee,
                         ValueRange{cast(a, 8), cast(b, 8), cast(c, 32), i32c(*tb ? 1 : 0),
                                    i32c(p[0]), i32c(p[1]), i32c(p[2]), i32c(p[3]),
                                    i32c(overwrite ? 1 : 0)});
    if (overwrite)
      rw.eraseOp(fill);
    rw.eraseOp(op);
    return success();
  }
};

struct CpuMatmulToBlasPass : rlx::impl::CpuMatmulToBlasBase<CpuMatmulToBlasPass> {
  using CpuMatmulToBlasBase::CpuMatmulToBlasBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ToBlas<linalg::MatmulOp>>(&getContext(), "rlx_cpu_sgemm", 2, minFlops);
    patterns.add<ToBlas<linalg::BatchMatmulOp>>(&getContext(), "rlx_cpu_sgemm_batched", 3,
                                                minFlops);
    patterns.add<GroupedToBlas, QMatmulToRuntime>(&getContext());
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
