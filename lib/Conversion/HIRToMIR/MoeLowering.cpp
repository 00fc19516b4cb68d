//===- MoeLowering.cpp - HIR moe_router / moe_experts to MIR ---------------===//
//
// The router: the logits' linear layer, softmax or sigmoid in f32, topk,
// the optional renormalization and scaling. The experts: each token
// repeated k times, two rlx_mir.grouped_matmul (gate|up, then down) with
// the activation between them, the routing weights, and a sum over k.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

struct MoeRouterLowering : OpConversionPattern<hir::MoeRouterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(hir::MoeRouterOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    Type f32 = rw.getF32Type();
    int64_t k = op.getTopK();
    int64_t axis = MIRBuilder::typeOf(a.getInput()).getRank() - 1;
    FusedMatmulSpec spec;
    spec.lhs = a.getInput();
    spec.rhs = a.getWeight();
    spec.transposeB = true;
    Value logits = mb.fusedMatmul(spec);
    if (a.getBias())
      logits = mb.add(logits, a.getBias());
    logits = mb.cast(logits, f32);
    Value weights, ids;
    if (op.getScoring() == MoeScoring::TopkSoftmax) {
      Value top = mb.create<TopKOp>(logits, k);
      if (!top)
        return rw.notifyMatchFailure(op, "cannot build the router's topk");
      ids = top.getDefiningOp()->getResult(1);
      weights = mb.softmax(top, axis);
    } else {
      Value scores = op.getScoring() == MoeScoring::Sigmoid
                         ? mb.activation(ActivationKind::Sigmoid, logits)
                         : mb.softmax(logits, axis);
      Value choice = scores;
      if (a.getCorrectionBias())
        choice = mb.add(scores, mb.cast(a.getCorrectionBias(), f32));
      if (op.getNGroup())
        choice = groupLimited(mb, choice, *op.getNGroup(), *op.getTopkGroup());
      Value top = mb.create<TopKOp>(choice, k);
      if (!top)
        return rw.notifyMatchFailure(op, "cannot build the router's topk");
      ids = top.getDefiningOp()->getResult(1);
      weights = a.getCorrectionBias() ? pick(mb, scores, ids) : top;
    }
    if (op.getNormTopkProb())
      weights = mb.div(weights, mb.reduce(ReduceKind::Sum, weights, {axis}, /*keepDims=*/true));
    if (auto factor = op.getRoutedScalingFactor())
      weights = mb.mul(weights, mb.scalar(f32, factor->convertToDouble()));
    if (mb.failed() || !weights)
      return rw.notifyMatchFailure(op, "cannot build the router");
    rw.replaceOp(op, {weights, ids});
    return success();
  }

  /// DeepSeek-V3's group-limited choice: -inf outside the `chosen` groups
  /// with the largest sums of their two best scores.
  static Value groupLimited(MIRBuilder &mb, Value choice, int64_t groups, int64_t chosen) {
    auto ct = MIRBuilder::typeOf(choice);
    int64_t rank = ct.getRank(), e = ct.getShape().back();
    SmallVector<int64_t> lead = MIRBuilder::pattern(ct.getShape().drop_back());
    auto with = [&](ArrayRef<int64_t> tail) {
      SmallVector<int64_t> p(lead);
      p.append(tail.begin(), tail.end());
      return p;
    };
    Value grouped = mb.reshape(choice, with({groups, e / groups}));
    Value best2 = mb.create<TopKOp>(grouped, int64_t(2));
    Value groupScores = mb.reduce(ReduceKind::Sum, best2, {rank}, /*keepDims=*/false);
    Value top = mb.create<TopKOp>(groupScores, chosen);
    if (!top || !best2)
      return mb.fail();
    Value topGroups = mb.reshape(top.getDefiningOp()->getResult(1), with({chosen, 1}));
    Type i64 = mb.builder().getI64Type(), f32 = mb.builder().getF32Type();
    SmallVector<int64_t> hitShape(ct.getShape().drop_back());
    hitShape.append({chosen, groups});
    Value hit = mb.elementwise(
        TypeRange{RankedTensorType::get(hitShape, f32)},
        ValueRange{topGroups, mb.iota(groups, i64)},
        [&](OpBuilder &b, Location loc, ValueRange v) -> SmallVector<Value> {
          Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v[0], v[1]);
          return {arith::SelectOp::create(
              b, loc, eq, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f)),
              arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)))};
        })[0];
    Value mask = mb.reshape(mb.reduce(ReduceKind::Max, hit, {rank - 1}, /*keepDims=*/false),
                            with({groups, 1}));
    SmallVector<int64_t> groupedShape(ct.getShape().drop_back());
    groupedShape.append({groups, e / groups});
    Value masked = mb.elementwise(
        TypeRange{RankedTensorType::get(groupedShape, f32)}, ValueRange{grouped, mask},
        [&](OpBuilder &b, Location loc, ValueRange v) -> SmallVector<Value> {
          Value in = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGT, v[1],
              arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)));
          Value ninf = arith::ConstantOp::create(
              b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
          return {arith::SelectOp::create(b, loc, in, v[0], ninf)};
        })[0];
    return mb.reshape(masked, with({e}));
  }

  /// scores[..., ids[..., j]] exactly: the one matching expert's score
  /// summed with zeros.
  static Value pick(MIRBuilder &mb, Value scores, Value ids) {
    auto st = MIRBuilder::typeOf(scores), it = MIRBuilder::typeOf(ids);
    int64_t rank = st.getRank(), e = st.getShape().back(), k = it.getShape().back();
    SmallVector<int64_t> lead = MIRBuilder::pattern(st.getShape().drop_back());
    auto with = [&](ArrayRef<int64_t> tail) {
      SmallVector<int64_t> p(lead);
      p.append(tail.begin(), tail.end());
      return p;
    };
    Value s = mb.reshape(scores, with({1, e}));
    Value i = mb.reshape(ids, with({k, 1}));
    Value experts = mb.iota(e, it.getElementType());
    SmallVector<int64_t> shape(st.getShape().drop_back());
    shape.append({k, e});
    Value hit = mb.elementwise(
        TypeRange{RankedTensorType::get(shape, st.getElementType())}, ValueRange{s, i, experts},
        [&](OpBuilder &b, Location loc, ValueRange v) -> SmallVector<Value> {
          Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v[1], v[2]);
          Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
          return {arith::SelectOp::create(b, loc, eq, v[0], zero)};
        })[0];
    return mb.reduce(ReduceKind::Sum, hit, {rank}, /*keepDims=*/false);
  }
};

struct MoeExpertsLowering : OpConversionPattern<hir::MoeExpertsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(hir::MoeExpertsOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    auto xt = MIRBuilder::typeOf(a.getInput());
    auto gut = MIRBuilder::typeOf(a.getGateUp());
    int64_t h = xt.getShape().back(), k = MIRBuilder::shapeOf(a.getIds()).back();
    int64_t inter = gut.getDimSize(1) / 2;
    if (ShapedType::isDynamic(h) || ShapedType::isDynamic(k) ||
        ShapedType::isDynamic(gut.getDimSize(1)))
      return rw.notifyMatchFailure(op, "moe_experts needs static H, k and I");
    // Every token k times: [T, k, H] -> [T·k, H], with its k expert ids.
    Value rows = mb.reshape(a.getInput(), {-1, 1, h});
    SmallVector<Value> copies(k, rows);
    Value x = mb.reshape(k == 1 ? rows : mb.concat(copies, 1), {-1, h});
    Value ids = mb.reshape(a.getIds(), {-1});
    // Each row's routing weight in the input's type, [T·k, 1]: on the
    // expert's input (Llama-4) or on its output.
    Value rowWeights = mb.reshape(mb.cast(a.getWeights(), xt.getElementType()), {-1, 1});
    if (op.getWeightsOnInput())
      x = mb.mul(x, rowWeights);
    Type idType = MIRBuilder::elementType(ids);
    // Each row's expert's bias row (ids clamped as grouped_matmul does).
    auto withBias = [&](Value y, Value bias) {
      if (!bias)
        return y;
      int64_t e = MIRBuilder::shapeOf(bias)[0];
      Value clamped = mb.create<MinOp>(mb.create<MaxOp>(ids, mb.scalar(idType, 0)),
                                       mb.scalar(idType, static_cast<double>(e - 1)));
      return mb.add(y, mb.create<GatherOp>(bias, clamped));
    };
    Value gateUp = withBias(mb.create<GroupedMatmulOp>(x, a.getGateUp(), ids), a.getGateUpBias());
    Value gate = mb.sliceLast(gateUp, 0, inter), up = mb.sliceLast(gateUp, inter, inter);
    Value hidden;
    if (std::optional<APFloat> alpha = op.getSwigluAlpha()) {
      // GptOssExperts._apply_gate, in f32 for narrower types (PyTorch scales
      // a bf16 tensor by the Python float alpha in f32: 1.702, not bf16's
      // 1.703125), rounded once.
      Type nt = xt.getElementType();
      Type et = nt.isF64() ? nt : rw.getF32Type();
      auto to = [&](Value v, Type t) {
        return MIRBuilder::elementType(v) == t ? v : mb.cast(v, t);
      };
      gate = to(gate, et);
      up = to(up, et);
      if (std::optional<APFloat> limit = op.getSwigluLimit()) {
        double l = limit->convertToDouble();
        gate = mb.create<MinOp>(gate, mb.scalar(et, l));
        up = mb.create<MinOp>(mb.create<MaxOp>(up, mb.scalar(et, -l)), mb.scalar(et, l));
      }
      Value glu = mb.mul(gate, mb.unary<SigmoidOp>(
                                   mb.mul(gate, mb.scalar(et, alpha->convertToDouble()))));
      hidden = to(mb.mul(mb.add(up, mb.scalar(et, 1.0)), glu), nt);
    } else {
      hidden = mb.mul(mb.activation(op.getActivation(), gate), up);
    }
    Value y = withBias(mb.create<GroupedMatmulOp>(hidden, a.getDown(), ids), a.getDownBias());
    if (!op.getWeightsOnInput())
      y = mb.mul(y, rowWeights);
    y = mb.reduce(ReduceKind::Sum, mb.reshape(y, {-1, k, h}), {1}, /*keepDims=*/false);
    y = mb.reshape(y, MIRBuilder::pattern(xt.getShape()));
    if (mb.failed() || !y)
      return rw.notifyMatchFailure(op, "cannot build the experts");
    rw.replaceOp(op, y);
    return success();
  }
};

} // namespace

void mlir::rlx::detail::populateMoeLowerings(RewritePatternSet &patterns) {
  patterns.add<MoeRouterLowering, MoeExpertsLowering>(patterns.getContext());
}
