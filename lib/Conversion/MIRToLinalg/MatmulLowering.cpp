//===- MatmulLowering.cpp - matmul and fused_matmul → linalg --------------===//
//
// matmul: linalg.matmul (rank-2 rhs; lhs rows collapsed) or linalg.batch_matmul
// (batched rhs), transposes as indexing maps, f32 accumulation for f16/bf16.
//
// fused_matmul stays one loop nest: scf.forall over (batch, tile of rows),
// and per tile the norm prologue, the matmul, and the epilogue stages (bias,
// activation or GLU, head norm, RoPE, residual) on the tile just computed.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MatmulOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType out = op.getType();
    Type et = out.getElementType();
    Value lhs = a.getLhs(), rhs = a.getRhs();
    auto lt = tensorTypeOf(lhs), rt = tensorTypeOf(rhs);
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    if (rt.getRank() == 2 && !ta) {
      // Rows of every batch share the weight: one 2-D matmul.
      Value y = matmul2D(rw, loc, collapseRows(rw, loc, lhs), rhs, tb);
      y = castTo(rw, loc, y, et);
      rw.replaceOp(op, expandRows(rw, loc, y, out.getShape()));
      return success();
    }
    // General case: broadcast both operands to the output's batch dims, fold
    // them into one, and use batch_matmul with the transposes as maps.
    ArrayRef<int64_t> batch = out.getShape().drop_back(2);
    int64_t nb = 1;
    for (int64_t d : batch)
      nb *= d;
    auto toBatched = [&](Value x, RankedTensorType t) {
      SmallVector<int64_t> full(batch);
      full.append(t.getShape().take_back(2).begin(), t.getShape().take_back(2).end());
      auto fullType = RankedTensorType::get(full, t.getElementType());
      if (fullType != t)
        x = elementwise(rw, loc, x, fullType,
                        [](OpBuilder &, Location, ValueRange v) -> SmallVector<Value> {
                          return {v[0]};
                        })
                .front();
      SmallVector<ReassociationIndices> groups(3);
      for (size_t d = 0; d < batch.size(); ++d)
        groups[0].push_back(d);
      groups[1].push_back(batch.size());
      groups[2].push_back(batch.size() + 1);
      if (batch.size() == 1)
        return x;
      if (batch.empty()) {
        auto t3 = RankedTensorType::get({1, full[0], full[1]}, t.getElementType());
        return Value(tensor::ExpandShapeOp::create(rw, loc, t3, x,
                                                   SmallVector<ReassociationIndices>{{0, 1}, {2}}));
      }
      return Value(tensor::CollapseShapeOp::create(rw, loc, x, groups));
    };
    Value l3 = toBatched(lhs, lt), r3 = toBatched(rhs, rt);
    int64_t m = out.getShape()[out.getRank() - 2], n = out.getShape().back();
    Type acc = et.getIntOrFloatBitWidth() >= 32 ? et : rw.getF32Type();
    auto accType = RankedTensorType::get({nb, m, n}, acc);
    Value init = filled(rw, loc, accType, 0.0);
    MLIRContext *ctx = rw.getContext();
    AffineExpr db = getAffineDimExpr(0, ctx), dm = getAffineDimExpr(1, ctx),
               dn = getAffineDimExpr(2, ctx), dk = getAffineDimExpr(3, ctx);
    auto map = [&](ArrayRef<AffineExpr> e) { return AffineMapAttr::get(AffineMap::get(4, 0, e, ctx)); };
    SmallVector<Attribute> maps = {ta ? map({db, dk, dm}) : map({db, dm, dk}),
                                   tb ? map({db, dn, dk}) : map({db, dk, dn}), map({db, dm, dn})};
    Value y = linalg::BatchMatmulOp::create(
                  rw, loc, TypeRange{accType}, ValueRange{l3, r3}, ValueRange{init},
                  ArrayRef<NamedAttribute>{rw.getNamedAttr("indexing_maps", rw.getArrayAttr(maps))})
                  .getResult(0);
    y = castTo(rw, loc, y, et);
    if (batch.size() != 1) {
      if (batch.empty())
        y = tensor::CollapseShapeOp::create(rw, loc, out, y,
                                            SmallVector<ReassociationIndices>{{0, 1}, {2}});
      else {
        SmallVector<ReassociationIndices> groups(3);
        for (size_t d = 0; d < batch.size(); ++d)
          groups[0].push_back(d);
        groups[1].push_back(batch.size());
        groups[2].push_back(batch.size() + 1);
        y = tensor::ExpandShapeOp::create(rw, loc, out, y, groups);
      }
    }
    rw.replaceOp(op, y);
    return success();
  }
};

/// One tile of a fused_matmul: rows [s0, s0 + rows) of batch b.
struct FusedTile {
  FusedMatmulOp op;
  FusedMatmulOp::Adaptor a;
  Value lhs3, residual3; // [B, S, K], [B, S, N'] views
  Value rhs;             // the weight: rhs, or an NVFP4 one dequantized to f32
  int64_t k, n, nOut;

  /// Rows of `src3` ([B, S, X]) for this tile, as [rows, X].
  Value rowsOf(OpBuilder &b, Location loc, Value src3, Value bIdx, Value s0, int64_t rows) const {
    auto t = tensorTypeOf(src3);
    int64_t x = t.getShape()[2];
    return sliceDrop(b, loc, src3, {bIdx, s0, b.getIndexAttr(0)}, {1, rows, x},
                     RankedTensorType::get({rows, x}, t.getElementType()));
  }

  Value build(OpBuilder &b, Location loc, Value bIdx, Value s0, int64_t rows) {
    Type et = op.getType().getElementType();
    Value x = rowsOf(b, loc, lhs3, bIdx, s0, rows);
    // 1. norm prologue: statistics in f32, the normalized rows rounded once
    //    to the lhs type (what the unfused norm hands the matmul).
    if (op.getNormAttr())
      x = normalizeLast(b, loc, x, a.getNormWeight(), a.getNormBias(),
                        op.getNormEps()->convertToDouble(), op.getNormAttr().getValue(), et);
    // 2. matmul (an NVFP4 weight against the f32 lhs, as nvfp4_matmul).
    if (op.isNvfp4())
      x = castTo(b, loc, x, b.getF32Type());
    Value y = matmul2D(b, loc, x, rhs, op.getTransposeB()); // [rows, N], f32
    Type acc = tensorTypeOf(y).getElementType();
    // 3./4. bias, activation or GLU in one pass.
    ActivationKind act = op.getActivation();
    bool glu = op.getGlu();
    Value bias = a.getBias();
    if (bias || act != ActivationKind::None || glu) {
      // With GLU the gate and up halves are column slices (views) of y.
      auto half = [&](Value v, int64_t offset) -> Value {
        auto t = tensorTypeOf(v);
        bool isRow = t.getRank() == 1;
        SmallVector<OpFoldResult> offs, sizes, strides;
        if (!isRow) {
          offs.push_back(b.getIndexAttr(0));
          sizes.push_back(b.getIndexAttr(rows));
          strides.push_back(b.getIndexAttr(1));
        }
        offs.push_back(b.getIndexAttr(offset));
        sizes.push_back(b.getIndexAttr(nOut));
        strides.push_back(b.getIndexAttr(1));
        SmallVector<int64_t> shape = isRow ? SmallVector<int64_t>{nOut}
                                           : SmallVector<int64_t>{rows, nOut};
        return tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get(shape, t.getElementType()), v, offs, sizes, strides);
      };
      SmallVector<Value> ins{glu ? half(y, 0) : y};
      if (glu)
        ins.push_back(half(y, nOut));
      if (bias) {
        ins.push_back(glu ? half(bias, 0) : bias);
        if (glu)
          ins.push_back(half(bias, nOut));
      }
      auto zt = RankedTensorType::get({rows, nOut}, acc);
      y = elementwise(b, loc, ins, zt,
                      [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
                        Value gate = v[0], up = glu ? v[1] : Value();
                        if (bias) {
                          unsigned bi = glu ? 2 : 1;
                          gate = arith::AddFOp::create(nb, l, gate, convertScalar(nb, l, v[bi], acc));
                          if (glu)
                            up = arith::AddFOp::create(nb, l, up,
                                                       convertScalar(nb, l, v[bi + 1], acc));
                        }
                        Value z = buildActivationScalar(nb, l, act, gate);
                        if (glu)
                          z = arith::MulFOp::create(nb, l, z, up);
                        return {z};
                      })
              .front();
    }
    // 5. per-head norm of the leading heads; 6. RoPE of the leading heads.
    int64_t d = op.getHeadDim().value_or(0);
    auto onLeadingHeads = [&](Value z, int64_t heads,
                              function_ref<Value(Value /*[rows, heads, d]*/)> fn) {
      auto zt = tensorTypeOf(z);
      auto partType = RankedTensorType::get({rows, heads * d}, acc);
      SmallVector<OpFoldResult> zero2{b.getIndexAttr(0), b.getIndexAttr(0)},
          one2{b.getIndexAttr(1), b.getIndexAttr(1)},
          size2{b.getIndexAttr(rows), b.getIndexAttr(heads * d)};
      Value part = tensor::ExtractSliceOp::create(b, loc, partType, z, zero2, size2, one2);
      Value done = mergeHeads(b, loc, fn(splitHeads(b, loc, part, d)));
      (void)zt;
      return Value(tensor::InsertSliceOp::create(b, loc, done, z, zero2, size2, one2));
    };
    if (Value w = a.getHeadNormWeight()) {
      int64_t heads = tensorTypeOf(w).getShape()[0];
      double eps = op.getHeadNormEps()->convertToDouble();
      y = onLeadingHeads(y, heads, [&](Value h3) {
        // RMSNorm over d with per-head weight rows: normalize, then scale by
        // w[h, :].
        Value n = normalizeLast(b, loc, h3, Value(), Value(), eps, NormKind::RmsNorm, acc);
        auto t = tensorTypeOf(n);
        return elementwise(b, loc, {n, w}, t,
                           [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
                             return {arith::MulFOp::create(nb, l, v[0],
                                                           convertScalar(nb, l, v[1], acc))};
                           })
            .front();
      });
    }
    if (Value cos = a.getRopeCos()) {
      int64_t heads = *op.getRopeHeads();
      int64_t rot = op.getRotaryDim().value_or(d);
      MLIRContext *ctx = b.getContext();
      // Table rows for this tile: [S, r/2] or [B, S, r/2] → [rows, r/2].
      auto cosT = tensorTypeOf(cos);
      auto tile = [&](Value t) {
        if (cosT.getRank() == 2)
          return Value(tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({rows, rot / 2}, cosT.getElementType()), t,
              ArrayRef<OpFoldResult>{s0, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(rot / 2)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}));
        return rowsOf(b, loc, t, bIdx, s0, rows);
      };
      Value ct = tile(cos), st = tile(a.getRopeSin());
      AffineMap rowMap = AffineMap::get(3, 0, {getAffineDimExpr(0, ctx)}, ctx);
      y = onLeadingHeads(y, heads, [&](Value h3) {
        return applyRope(b, loc, h3, ct, st, rowMap, rot, op.getRopeStyle());
      });
    }
    // 7. residual, and the one rounding to the output type.
    SmallVector<Value> ins{y};
    if (residual3)
      ins.push_back(rowsOf(b, loc, residual3, bIdx, s0, rows));
    return elementwise(b, loc, ins, RankedTensorType::get({rows, nOut}, et),
                       [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
                         Value z = v[0];
                         if (residual3)
                           z = arith::AddFOp::create(nb, l, z, convertScalar(nb, l, v[1], acc));
                         return {convertScalar(nb, l, z, et)};
                       })
        .front();
  }
};

/// [.., K] → [B, S, K]: rank-3 stays, rank 2 is one batch, rank 1 one row.
static Value asBSK(OpBuilder &b, Location loc, Value x) {
  auto t = tensorTypeOf(x);
  if (t.getRank() == 3)
    return x;
  Value rows = collapseRows(b, loc, x); // [M, K]
  auto rt = tensorTypeOf(rows);
  auto t3 = RankedTensorType::get({1, rt.getShape()[0], rt.getShape()[1]}, t.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, t3, rows,
                                       SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

struct FusedMatmulLowering : OpConversionPattern<FusedMatmulOp> {
  FusedMatmulLowering(MLIRContext *ctx, const MIRToLinalgOptions &options)
      : OpConversionPattern(ctx), options(options) {}
  MIRToLinalgOptions options;

  LogicalResult matchAndRewrite(FusedMatmulOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType out = op.getType();
    auto wt = tensorTypeOf(a.getRhs());
    int64_t k = tensorTypeOf(a.getLhs()).getShape().back();
    int64_t n = op.getTransposeB() ? wt.getShape()[0] : wt.getShape()[1];
    Value rhs = a.getRhs();
    if (op.isNvfp4()) // dequantized once, outside the row tiles
      rhs = dequantizeNvfp4(rw, loc, rhs, a.getRhsScales(), a.getRhsGlobalScale(),
                            op.getTransposeB(),
                            RankedTensorType::get(op.getTransposeB() ? ArrayRef<int64_t>{n, k}
                                                                     : ArrayRef<int64_t>{k, n},
                                                  rw.getF32Type()));
    FusedTile tile{op, a, asBSK(rw, loc, a.getLhs()), Value(), rhs, k, n, out.getShape().back()};
    if (a.getResidual())
      tile.residual3 = asBSK(rw, loc, a.getResidual());
    auto lt = tensorTypeOf(tile.lhs3);
    int64_t batches = lt.getShape()[0], seq = lt.getShape()[1];
    int64_t rows = std::min<int64_t>(std::max<int64_t>(options.rowTile, 1), seq);
    int64_t full = seq / rows, tail = seq % rows;
    auto out3 = RankedTensorType::get({batches, seq, tile.nOut}, out.getElementType());
    Value result = empty(rw, loc, out3);
    // One scf.forall over (batch, row tile); the tail tile, if any, is a second
    // forall over the batch with its own static size.
    auto emitLoop = [&](Value into, int64_t tiles, int64_t rowsPerTile, int64_t firstRow) {
      SmallVector<OpFoldResult> ubs{rw.getIndexAttr(batches), rw.getIndexAttr(tiles)};
      auto forall = scf::ForallOp::create(rw, loc, ubs, ValueRange{into}, std::nullopt);
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(forall.getBody());
      Value bIdx = forall.getInductionVar(0), t = forall.getInductionVar(1);
      Value s0 = arith::AddIOp::create(
          rw, loc, arith::MulIOp::create(rw, loc, t, cIndex(rw, loc, rowsPerTile)),
          cIndex(rw, loc, firstRow));
      Value tileValue = tile.build(rw, loc, bIdx, s0, rowsPerTile);
      rw.setInsertionPointToStart(forall.getTerminator().getBody());
      SmallVector<OpFoldResult> offsets{bIdx, s0, rw.getIndexAttr(0)},
          sizes{rw.getIndexAttr(1), rw.getIndexAttr(rowsPerTile), rw.getIndexAttr(tile.nOut)},
          strides(3, rw.getIndexAttr(1));
      tensor::ParallelInsertSliceOp::create(rw, loc, tileValue, forall.getRegionIterArgs()[0],
                                            offsets, sizes, strides);
      return forall.getResult(0);
    };
    if (full > 0)
      result = emitLoop(result, full, rows, 0);
    if (tail > 0)
      result = emitLoop(result, 1, tail, full * rows);
    // Back to the op's shape.
    if (out.getRank() != 3) {
      SmallVector<ReassociationIndices> groups{{0, 1}, {2}};
      auto rowsType = RankedTensorType::get({batches * seq, tile.nOut}, out.getElementType());
      result = tensor::CollapseShapeOp::create(rw, loc, rowsType, result, groups);
      result = expandRows(rw, loc, result, out.getShape());
    }
    rw.replaceOp(op, result);
    return success();
  }
};

} // namespace

void linalg_builders::populateMatmulLowerings(RewritePatternSet &patterns,
                                              const MIRToLinalgOptions &options) {
  patterns.add<MatmulLowering>(patterns.getContext());
  patterns.add<FusedMatmulLowering>(patterns.getContext(), options);
}
