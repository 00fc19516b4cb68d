//===- AttentionLowering.cpp - rlx_mir.attention → one loop nest ----------===//
//
// scf.forall over (batch, query head). Per head, with its kv head g = h / G
// (GQA reads K/V in place, never copied):
//   s = q_h · k_gᵀ                          (linalg.matmul, f32)
//   t = visible(i, j) ? softcap(scale·s) [+ mask] : -inf
//   m = rowmax(t);  p = m == -inf ? 0 : exp(t - m);  l = rowsum(p)
//   o_h = (p · v_g) / l   (0 for rows with no visible key, never NaN)
// q/k/v/o heads are slices of the packed ([B, S, H·D]), BSHD or BHSD tensors.
//
// rlx_mir.attention_partial is the same nest over (split, batch, head), the
// split's key range one more visibility condition, writing o_h in f32 and
// lse = m + log l (−inf for an empty split). rlx_mir.attention_combine is
// three linalg.generic reductions over the splits (max lse, the weights'
// sum, the weighted outputs) and the layout's transpose / collapse.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

/// Offsets, sizes and the rank-reduced [S, D] type of head `h` of `x`.
struct HeadSlice {
  SmallVector<OpFoldResult> offsets, sizes;
  RankedTensorType type;
};

static HeadSlice headSlice(OpBuilder &b, Location loc, RankedTensorType t, AttnLayout layout,
                           Value bIdx, Value h, int64_t headSize) {
  auto i = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
  HeadSlice s;
  int64_t seq = 0;
  switch (layout) {
  case AttnLayout::BSD: {
    seq = t.getShape()[1];
    Value col = arith::MulIOp::create(b, loc, h, cIndex(b, loc, headSize));
    s.offsets = {bIdx, i(0), col};
    s.sizes = {i(1), i(seq), i(headSize)};
    break;
  }
  case AttnLayout::BSHD:
    seq = t.getShape()[1];
    s.offsets = {bIdx, i(0), h, i(0)};
    s.sizes = {i(1), i(seq), i(1), i(headSize)};
    break;
  case AttnLayout::BHSD:
    seq = t.getShape()[2];
    s.offsets = {bIdx, h, i(0), i(0)};
    s.sizes = {i(1), i(1), i(seq), i(headSize)};
    break;
  }
  s.type = RankedTensorType::get({seq, headSize}, t.getElementType());
  return s;
}

static Value extractHead(OpBuilder &b, Location loc, Value x, const HeadSlice &s) {
  SmallVector<OpFoldResult> strides(s.offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, s.type, x, s.offsets, s.sizes, strides);
}

template <typename OpT>
struct AttentionLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  static constexpr bool kPartial = std::is_same_v<OpT, AttentionPartialOp>;

  LogicalResult matchAndRewrite(OpT op, typename OpT::Adaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    AttentionConfig cfg = getAttentionConfig(op);
    RankedTensorType qt = tensorTypeOf(a.getQuery()), kt = tensorTypeOf(a.getKey()),
                     vt = tensorTypeOf(a.getValue());
    RankedTensorType out = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t batch = qt.getShape()[0];
    int64_t d = cfg.headDim;
    int64_t dv = cfg.layout == AttnLayout::BSD ? vt.getShape()[2] / cfg.numKvHeads
                                               : vt.getShape()[3];
    int64_t group = cfg.numHeads / cfg.numKvHeads;
    double scale = attention_logits::logitScale(cfg, d);
    // f32 statistics (f64 for f64 attention; attention_partial's results are f32).
    Type f32 = kPartial ? Type(rw.getF32Type()) : statsType(rw, qt.getElementType());
    Type et = out.getElementType();
    int64_t keys = cfg.layout == AttnLayout::BHSD ? kt.getShape()[2] : kt.getShape()[1];
    double ninf = -std::numeric_limits<double>::infinity();
    int64_t splits = 1, chunk = keys;
    if constexpr (kPartial) {
      splits = op.getKvSplits();
      chunk = op.getChunk(keys);
      if (keys == 0) {
        rw.replaceOp(op, ValueRange{filled(rw, loc, out, 0.0),
                                    filled(rw, loc, cast<RankedTensorType>(op.getLse().getType()),
                                           ninf)});
        return success();
      }
    }
    if (keys == 0) {
      // No key is visible to any query: every row is 0 (DESIGN §3).
      Value zero = arith::ConstantOp::create(rw, loc, et, rw.getZeroAttr(et));
      rw.replaceOpWithNewOp<linalg::FillOp>(op, zero, empty(rw, loc, out));
      return success();
    }

    // A decode step (one query row, packed layout, no per-head mask) takes
    // the query heads of a KV head together: rows of one [group, D] block,
    // so K and V are read once per KV head and each product is one GEMM with
    // `group` rows instead of `group` one-row products (GQA packing, as the
    // GPU kernels do). Every row is query position 0, and a mask's one row
    // serves them all.
    auto maskType = a.getMask() ? tensorTypeOf(a.getMask()) : RankedTensorType();
    bool perHeadMask = maskType && maskType.getRank() == 4 && maskType.getShape()[1] != 1;
    bool grouped = !kPartial && group > 1 && cfg.layout == AttnLayout::BSD &&
                   qt.getShape()[1] == 1 && !perHeadMask;
    int64_t rowsPerBlock = grouped ? group : 1;
    SmallVector<OpFoldResult> ubs{rw.getIndexAttr(batch),
                                  rw.getIndexAttr(grouped ? cfg.numKvHeads : cfg.numHeads)};
    SmallVector<Value> inits{empty(rw, loc, out)};
    if constexpr (kPartial) {
      ubs.insert(ubs.begin(), rw.getIndexAttr(splits));
      inits.push_back(empty(rw, loc, cast<RankedTensorType>(op.getLse().getType())));
    }
    auto forall = scf::ForallOp::create(rw, loc, ubs, inits, std::nullopt);
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointToStart(forall.getBody());
    unsigned iv = kPartial ? 1 : 0;
    Value split = kPartial ? forall.getInductionVar(0) : Value();
    Value bIdx = forall.getInductionVar(iv), h = forall.getInductionVar(iv + 1);
    Value g = grouped ? h : arith::DivUIOp::create(rw, loc, h, cIndex(rw, loc, group));
    Value q = grouped ? groupRows(rw, loc, a.getQuery(), qt, bIdx, g, group, d)
                      : extractHead(rw, loc, a.getQuery(),
                                    headSlice(rw, loc, qt, cfg.layout, bIdx, h, d));
    Value k = extractHead(rw, loc, a.getKey(), headSlice(rw, loc, kt, cfg.layout, bIdx, g, d));
    Value v = extractHead(rw, loc, a.getValue(), headSlice(rw, loc, vt, cfg.layout, bIdx, g, dv));
    int64_t sq = tensorTypeOf(q).getShape()[0], sk = tensorTypeOf(k).getShape()[0];

    Value s = matmul2D(rw, loc, q, k, /*transB=*/true); // [Sq, Sk]
    if (tensorTypeOf(s).getElementType() != f32)
      s = castTo(rw, loc, s, f32);
    // This head's [Sq, Sk] slice of the mask operand (size-1 dims broadcast).
    Value maskTile;
    if (Value mask = a.getMask()) {
      auto mt = tensorTypeOf(mask);
      int64_t r = mt.getRank();
      SmallVector<OpFoldResult> offsets, sizes, strides(r, rw.getIndexAttr(1));
      if (r >= 3) {
        offsets.push_back(mt.getShape()[0] == 1 ? OpFoldResult(rw.getIndexAttr(0))
                                                : OpFoldResult(bIdx));
        sizes.push_back(rw.getIndexAttr(1));
      }
      if (r == 4) {
        offsets.push_back(mt.getShape()[1] == 1 ? OpFoldResult(rw.getIndexAttr(0))
                                                : OpFoldResult(h));
        sizes.push_back(rw.getIndexAttr(1));
      }
      offsets.append({rw.getIndexAttr(0), rw.getIndexAttr(0)});
      sizes.append({rw.getIndexAttr(mt.getShape()[r - 2]), rw.getIndexAttr(mt.getShape()[r - 1])});
      auto tileType = RankedTensorType::get(mt.getShape().take_back(2), mt.getElementType());
      maskTile = tensor::ExtractSliceOp::create(rw, loc, tileType, mask, offsets, sizes, strides);
      if (grouped) { // the query row's [1, Sk] for each of the group's rows
        Type mEt = mt.getElementType();
        Value row = tensor::CollapseShapeOp::create(rw, loc, RankedTensorType::get({sk}, mEt),
                                                    maskTile,
                                                    SmallVector<ReassociationIndices>{{0, 1}});
        Value init = tensor::EmptyOp::create(rw, loc, ArrayRef<int64_t>{sq, sk}, mEt);
        maskTile = linalg::BroadcastOp::create(rw, loc, row, init, ArrayRef<int64_t>{0})
                       .getResult()[0];
      }
    }
    SmallVector<Value> tIn{s};
    if (maskTile)
      tIn.push_back(maskTile);
    auto st = RankedTensorType::get({sq, sk}, f32);
    Value t = elementwise(
                  rw, loc, tIn, st,
                  [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
                    attention_logits::ScalarLogit in;
                    in.dot = x[0];
                    if (split) {
                      // Split s sees keys [s·c, (s + 1)·c).
                      Value j = linalg::IndexOp::create(b, l, 1);
                      Value lo = arith::MulIOp::create(b, l, split, cIndex(b, l, chunk));
                      Value hi = arith::AddIOp::create(b, l, lo, cIndex(b, l, chunk));
                      in.visible = arith::AndIOp::create(
                          b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, j, lo),
                          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j, hi));
                    }
                    if (cfg.maskKind != MaskKind::None) {
                      in.i = grouped ? cIndex(b, l, 0) : linalg::IndexOp::create(b, l, 0);
                      in.j = linalg::IndexOp::create(b, l, 1);
                      in.diagonal = sk - sq / rowsPerBlock;
                    }
                    if (maskTile)
                      in.mask = x[1].getType().isInteger(1) ? x[1] : convertScalar(b, l, x[1], f32);
                    return {attention_logits::scalarAttentionLogit(b, l, cfg, scale, in)};
                  })
                  .front();
    Value m = reduceLast(rw, loc, t, f32, ninf,
                         [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                           return arith::MaximumFOp::create(b, l, acc, e);
                         });
    Value p = elementwise(rw, loc, {t, expandRowStat(rw, loc, m)}, st,
                          [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
                            Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x[0], x[1]));
                            Value dead = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x[1],
                                                               cFloat(b, l, f32, ninf));
                            return {arith::SelectOp::create(b, l, dead, cFloat(b, l, f32, 0.0), e)};
                          })
                  .front();
    Value lsum = reduceLast(rw, loc, p, f32, 0.0,
                            [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                              return arith::AddFOp::create(b, l, acc, e,
                                                           reductionFlags(b.getContext()));
                            });
    Value vf = tensorTypeOf(v).getElementType() == f32 ? v : castTo(rw, loc, v, f32);
    Value o = matmul2D(rw, loc, p, vf, /*transB=*/false); // [Sq, Dv]
    if constexpr (kPartial)
      return finishPartial(rw, op, forall, o, m, lsum, split, bIdx, h, f32);
    auto ot = RankedTensorType::get({sq, dv}, et);
    o = elementwise(rw, loc, {o, expandRowStat(rw, loc, lsum)}, ot,
                    [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
                      Value zero = cFloat(b, l, f32, 0.0);
                      Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x[1], zero);
                      Value r = arith::SelectOp::create(b, l, empty, zero,
                                                        arith::DivFOp::create(b, l, x[0], x[1]));
                      return {convertScalar(b, l, r, et)};
                    })
            .front();
    HeadSlice os = headSlice(rw, loc, out, cfg.layout, bIdx, h, dv);
    if (grouped) {
      // The [group, Dv] block is the group's heads, side by side in the row.
      o = tensor::CollapseShapeOp::create(rw, loc, o, SmallVector<ReassociationIndices>{{0, 1}});
      os = headSlice(rw, loc, out, cfg.layout, bIdx, h, group * dv);
    }
    rw.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> strides(os.offsets.size(), rw.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(rw, loc, o, forall.getRegionIterArgs()[0], os.offsets,
                                          os.sizes, strides);
    rw.replaceOp(op, forall.getResult(0));
    return success();
  }

  /// attention_partial: o / l (f32) into [s, b, h] of the partial outputs,
  /// lse = m + log l (−inf where l = 0) into [s, b, h] of the lse.
  static LogicalResult finishPartial(ConversionPatternRewriter &rw, OpT op, scf::ForallOp forall,
                                     Value o, Value m, Value lsum, Value split, Value bIdx,
                                     Value h, Type f32) {
    Location loc = op.getLoc();
    auto ot = tensorTypeOf(o);
    int64_t sq = ot.getShape()[0], dv = ot.getShape()[1];
    double ninf = -std::numeric_limits<double>::infinity();
    Value on = elementwise(rw, loc, {o, expandRowStat(rw, loc, lsum)}, ot,
                           [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
                             Value zero = cFloat(b, l, f32, 0.0);
                             Value e = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x[1],
                                                             zero);
                             return {arith::SelectOp::create(
                                 b, l, e, zero, arith::DivFOp::create(b, l, x[0], x[1]))};
                           })
                   .front();
    Value lse = elementwise(rw, loc, {m, lsum}, tensorTypeOf(m),
                            [&](OpBuilder &b, Location l, ValueRange x) -> SmallVector<Value> {
                              Value e = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                                              x[1], cFloat(b, l, f32, 0.0));
                              Value r = arith::AddFOp::create(b, l, x[0],
                                                              math::LogOp::create(b, l, x[1]));
                              return {arith::SelectOp::create(b, l, e, cFloat(b, l, f32, ninf), r)};
                            })
                    .front();
    rw.setInsertionPointToStart(forall.getTerminator().getBody());
    auto i = [&](int64_t v) -> OpFoldResult { return rw.getIndexAttr(v); };
    SmallVector<OpFoldResult> head{split, bIdx, h};
    auto ins = [&](Value v, Value into, ArrayRef<OpFoldResult> rest) {
      SmallVector<OpFoldResult> offsets(head), sizes{i(1), i(1), i(1)};
      for (OpFoldResult r : rest) {
        offsets.push_back(i(0));
        sizes.push_back(r);
      }
      SmallVector<OpFoldResult> strides(offsets.size(), i(1));
      tensor::ParallelInsertSliceOp::create(rw, loc, v, into, offsets, sizes, strides);
    };
    ins(on, forall.getRegionIterArgs()[0], {i(sq), i(dv)});
    ins(lse, forall.getRegionIterArgs()[1], {i(sq)});
    rw.replaceOp(op, forall.getResults());
    return success();
  }

  /// The query heads g·group .. g·group + group − 1 of a one-row packed
  /// query [B, 1, H·D] as a [group, D] block (contiguous: no copy).
  static Value groupRows(OpBuilder &b, Location loc, Value q, RankedTensorType qt, Value bIdx,
                         Value g, int64_t group, int64_t d) {
    HeadSlice s = headSlice(b, loc, qt, AttnLayout::BSD, bIdx, g, group * d);
    Value row = extractHead(b, loc, q, s); // [1, group·D]
    auto t = RankedTensorType::get({group, d}, qt.getElementType());
    Value flat = tensor::CollapseShapeOp::create(b, loc, row, SmallVector<ReassociationIndices>{{0, 1}});
    return tensor::ExpandShapeOp::create(b, loc, t, flat, SmallVector<ReassociationIndices>{{0, 1}});
  }

  /// [Sq] row statistics as [Sq, 1] so they broadcast across a row.
  static Value expandRowStat(OpBuilder &b, Location loc, Value v) {
    auto t = tensorTypeOf(v);
    auto t2 = RankedTensorType::get({t.getShape()[0], 1}, t.getElementType());
    return tensor::ExpandShapeOp::create(b, loc, t2, v, SmallVector<ReassociationIndices>{{0, 1}});
  }
};

/// rlx_mir.attention_combine: M = max_s lse (and the head's sink), w_s =
/// exp(lse_s − M) (0 when M = −inf), out = Σ w_s o_s / (Σ w_s [+ exp(sink −
/// M)]) (0 when the sum is 0), then BHSD → the result's layout.
struct AttentionCombineLowering : OpConversionPattern<AttentionCombineOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(AttentionCombineOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    auto ot = tensorTypeOf(a.getPartialOutput());
    RankedTensorType rt = op.getType();
    ArrayRef<int64_t> s = ot.getShape(); // [N, B, H, Sq, Dv]
    if (ShapedType::isDynamicShape(s))
      return rw.notifyMatchFailure(op, "dynamic shapes");
    Type f32 = rw.getF32Type(), et = rt.getElementType();
    double ninf = -std::numeric_limits<double>::infinity();
    auto d = [&](ArrayRef<unsigned> dims, unsigned n) {
      SmallVector<AffineExpr> e;
      for (unsigned x : dims)
        e.push_back(getAffineDimExpr(x, ctx));
      return AffineMap::get(n, 0, e, ctx);
    };
    auto par = utils::IteratorType::parallel, red = utils::IteratorType::reduction;
    auto rowT = RankedTensorType::get({s[1], s[2], s[3]}, f32);
    auto bhsdT = RankedTensorType::get({s[1], s[2], s[3], s[4]}, f32);
    // The weight of split (lse, M).
    auto weight = [&](OpBuilder &b, Location l, Value lse, Value m) -> Value {
      Value dead = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m, cFloat(b, l, f32, ninf));
      Value w = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, lse, m));
      return arith::SelectOp::create(b, l, dead, cFloat(b, l, f32, 0.0), w);
    };
    // Rows start from the head's sink (as a split's lse), else from −inf.
    Value sinkRows = filled(rw, loc, rowT, ninf), sinkWeights = filled(rw, loc, rowT, 0.0);
    if (a.getSinks())
      sinkRows = linalg::GenericOp::create(
                     rw, loc, TypeRange{rowT}, ValueRange{a.getSinks()}, ValueRange{sinkRows},
                     ArrayRef<AffineMap>{d({1}, 3), d({0, 1, 2}, 3)},
                     ArrayRef<utils::IteratorType>{par, par, par},
                     [&](OpBuilder &b, Location l, ValueRange x) {
                       linalg::YieldOp::create(b, l, x[0]);
                     })
                     .getResult(0);
    Value mx = linalg::GenericOp::create(
                   rw, loc, TypeRange{rowT}, ValueRange{a.getLse()},
                   ValueRange{sinkRows},
                   ArrayRef<AffineMap>{d({0, 1, 2, 3}, 4), d({1, 2, 3}, 4)},
                   ArrayRef<utils::IteratorType>{red, par, par, par},
                   [&](OpBuilder &b, Location l, ValueRange x) {
                     linalg::YieldOp::create(b, l, Value(arith::MaximumFOp::create(b, l, x[0], x[1])));
                   })
                   .getResult(0);
    if (a.getSinks())
      sinkWeights = linalg::GenericOp::create(
                        rw, loc, TypeRange{rowT}, ValueRange{sinkRows, mx},
                        ValueRange{sinkWeights},
                        ArrayRef<AffineMap>{d({0, 1, 2}, 3), d({0, 1, 2}, 3), d({0, 1, 2}, 3)},
                        ArrayRef<utils::IteratorType>{par, par, par},
                        [&](OpBuilder &b, Location l, ValueRange x) {
                          linalg::YieldOp::create(b, l, weight(b, l, x[0], x[1]));
                        })
                        .getResult(0);
    Value den = linalg::GenericOp::create(
                    rw, loc, TypeRange{rowT}, ValueRange{a.getLse(), mx},
                    ValueRange{sinkWeights},
                    ArrayRef<AffineMap>{d({0, 1, 2, 3}, 4), d({1, 2, 3}, 4), d({1, 2, 3}, 4)},
                    ArrayRef<utils::IteratorType>{red, par, par, par},
                    [&](OpBuilder &b, Location l, ValueRange x) {
                      linalg::YieldOp::create(
                          b, l, Value(arith::AddFOp::create(b, l, x[2], weight(b, l, x[0], x[1]))));
                    })
                    .getResult(0);
    Value num = linalg::GenericOp::create(
                    rw, loc, TypeRange{bhsdT}, ValueRange{a.getPartialOutput(), a.getLse(), mx},
                    ValueRange{filled(rw, loc, bhsdT, 0.0)},
                    ArrayRef<AffineMap>{d({0, 1, 2, 3, 4}, 5), d({0, 1, 2, 3}, 5),
                                        d({1, 2, 3}, 5), d({1, 2, 3, 4}, 5)},
                    ArrayRef<utils::IteratorType>{red, par, par, par, par},
                    [&](OpBuilder &b, Location l, ValueRange x) {
                      Value w = weight(b, l, x[1], x[2]);
                      linalg::YieldOp::create(
                          b, l, Value(math::FmaOp::create(b, l, w, x[0], x[3])));
                    })
                    .getResult(0);
    auto outT = RankedTensorType::get(bhsdT.getShape(), et);
    Value o = linalg::GenericOp::create(
                  rw, loc, TypeRange{outT}, ValueRange{num, den}, ValueRange{empty(rw, loc, outT)},
                  ArrayRef<AffineMap>{d({0, 1, 2, 3}, 4), d({0, 1, 2}, 4), d({0, 1, 2, 3}, 4)},
                  ArrayRef<utils::IteratorType>{par, par, par, par},
                  [&](OpBuilder &b, Location l, ValueRange x) {
                    Value zero = cFloat(b, l, f32, 0.0);
                    Value e = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x[1], zero);
                    Value r = arith::SelectOp::create(b, l, e, zero,
                                                      arith::DivFOp::create(b, l, x[0], x[1]));
                    linalg::YieldOp::create(b, l, convertScalar(b, l, r, et));
                  })
                  .getResult(0);
    if (op.getLayout() != AttnLayout::BHSD) {
      auto bshdT = RankedTensorType::get({s[1], s[3], s[2], s[4]}, et);
      o = linalg::TransposeOp::create(rw, loc, o, empty(rw, loc, bshdT),
                                      ArrayRef<int64_t>{0, 2, 1, 3})
              .getResult()[0];
      if (op.getLayout() == AttnLayout::BSD)
        o = tensor::CollapseShapeOp::create(rw, loc, rt, o,
                                            SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    }
    rw.replaceOp(op, o);
    return success();
  }
};

} // namespace

void linalg_builders::populateAttentionLowerings(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering<AttentionOp>, AttentionLowering<AttentionPartialOp>,
               AttentionCombineLowering>(patterns.getContext());
}
