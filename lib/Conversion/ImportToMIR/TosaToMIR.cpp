//===- TosaToMIR.cpp - Raise TOSA ops to rlx_mir ---------------------------===//
//
// One pattern per TOSA op family. TOSA's broadcasting (equal ranks, size-1
// dims stretch) is a special case of MIR's numpy rules, so elementwise ops
// map one to one; a pattern only fires when the MIR op infers exactly the
// TOSA result type, so the raised graph has the same types throughout.
//
//===----------------------------------------------------------------------===//

#include "ImportUtils.h"

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using mlir::rlx::import_detail::replaceIfSameType;
using mlir::rlx::tryCreate;

namespace {

/// MIR ops take ranked tensors: the patterns only look at TOSA ops whose
/// operands (shape operands aside) and results are ranked tensors.
bool allRankedTensors(Operation *op) {
  auto ok = [](Type t) { return isa<RankedTensorType, tosa::shapeType>(t); };
  return llvm::all_of(op->getOperandTypes(), ok) &&
         llvm::all_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
}

/// NaN handling MIR matches: TOSA's default PROPAGATE (ops with IGNORE stay).
bool propagatesNaN(Operation *op) {
  auto mode = op->getAttrOfType<tosa::NanPropagationModeAttr>("nan_mode");
  return !mode || mode.getValue() == tosa::NanPropagationMode::PROPAGATE;
}


bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// The constant values of a !tosa.shape operand.
std::optional<SmallVector<int64_t>> shapeValues(Value shape) {
  auto c = shape.getDefiningOp<tosa::ConstShapeOp>();
  if (!c)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (APInt v : cast<DenseIntElementsAttr>(c.getValues()).getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

/// A float-zero zero point (TOSA's zp operands on float ops).
bool isZeroPoint(Value zp) {
  DenseElementsAttr attr;
  if (!matchPattern(zp, m_Constant(&attr)) || !attr.isSplat())
    return false;
  if (isa<FloatType>(attr.getElementType()))
    return attr.getSplatValue<APFloat>().isZero();
  return attr.getSplatValue<APInt>().isZero();
}

/// Base of the raising patterns: only ops on ranked tensors with TOSA's
/// default NaN propagation are raised; `raise` does the rest.
template <typename OpT>
struct TosaPattern : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const final {
    if (!allRankedTensors(op) || !propagatesNaN(op))
      return failure();
    return raise(op, rw);
  }
  virtual LogicalResult raise(OpT op, PatternRewriter &rw) const = 0;
};

template <typename TosaOp, typename MirOp>
struct Binary : TosaPattern<TosaOp> {
  using TosaPattern<TosaOp>::TosaPattern;
  LogicalResult raise(TosaOp op, PatternRewriter &rw) const override {
    return replaceIfSameType(
        rw, op, tryCreate<MirOp>(rw, op.getLoc(), /*diagnose=*/false, op->getOperand(0), op->getOperand(1)));
  }
};

template <typename TosaOp, typename MirOp>
struct Unary : TosaPattern<TosaOp> {
  using TosaPattern<TosaOp>::TosaPattern;
  LogicalResult raise(TosaOp op, PatternRewriter &rw) const override {
    if (!isFloatTensor(op->getOperand(0)))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<MirOp>(rw, op.getLoc(), /*diagnose=*/false, op->getOperand(0)));
  }
};

struct Const : TosaPattern<tosa::ConstOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::ConstOp op, PatternRewriter &rw) const override {
    if (!isa<RankedTensorType>(op.getType()))
      return failure();
    rw.replaceOpWithNewOp<ConstantOp>(op, op.getValues());
    return success();
  }
};

struct Mul : TosaPattern<tosa::MulOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::MulOp op, PatternRewriter &rw) const override {
    if (!isFloatTensor(op.getInput1()) || !isZeroPoint(op.getShift()))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<MulOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(), op.getInput2()));
  }
};

struct Negate : TosaPattern<tosa::NegateOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::NegateOp op, PatternRewriter &rw) const override {
    if (!isFloatTensor(op.getInput1()) || !isZeroPoint(op.getInput1Zp()) ||
        !isZeroPoint(op.getOutputZp()))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<NegOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1()));
  }
};

/// clamp(x, 0, +max) is ReLU.
struct Clamp : TosaPattern<tosa::ClampOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::ClampOp op, PatternRewriter &rw) const override {
    auto lo = dyn_cast<FloatAttr>(op.getMinValAttr());
    auto hi = dyn_cast<FloatAttr>(op.getMaxValAttr());
    if (!lo || !hi || !lo.getValue().isZero() ||
        !(hi.getValue().isInfinity() || hi.getValueAsDouble() >= 3.0e38))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<ReluOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput()));
  }
};

struct Cast : TosaPattern<tosa::CastOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::CastOp op, PatternRewriter &rw) const override {
    // TOSA rounds float → int to nearest even, MIR's cast truncates: casts
    // to float are raised, and int → int (both wrap/sign-extend, e.g. the
    // i64 → i32 token ids of buddy-mlir's embedding) except to i1, which
    // TOSA computes as x != 0.
    auto t = cast<RankedTensorType>(op.getType());
    Type from = getElementTypeOrSelf(op.getInput().getType()), to = t.getElementType();
    bool intToInt = isa<IntegerType>(from) && isa<IntegerType>(to) && !to.isInteger(1);
    if (!isa<FloatType>(to) && !intToInt)
      return failure();
    // Element types rlx_mir.cast does not take (i16, unsigned) stay TOSA.
    auto c = CastOp::create(rw, op.getLoc(), op.getInput(), t.getElementType());
    if (failed(verifyBuilt(c, /*diagnose=*/false))) {
      rw.eraseOp(c);
      return failure();
    }
    return replaceIfSameType(rw, op, c.getResult());
  }
};

struct Select : TosaPattern<tosa::SelectOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::SelectOp op, PatternRewriter &rw) const override {
    return replaceIfSameType(rw, op, tryCreate<SelectOp>(rw, op.getLoc(), /*diagnose=*/false, op->getOperand(0),
                                                      op->getOperand(1), op->getOperand(2)));
  }
};

template <typename TosaOp, ReduceKind kind>
struct Reduce : TosaPattern<TosaOp> {
  using TosaPattern<TosaOp>::TosaPattern;
  LogicalResult raise(TosaOp op, PatternRewriter &rw) const override {
    int64_t axis = op.getAxis();
    return replaceIfSameType(
        rw, op,
        tryCreate<ReduceOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput(), ReduceKindAttr::get(rw.getContext(), kind),
                         rw.getDenseI64ArrayAttr({axis}), rw.getUnitAttr()));
  }
};

struct Reshape : TosaPattern<tosa::ReshapeOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::ReshapeOp op, PatternRewriter &rw) const override {
    auto t = cast<RankedTensorType>(op.getType());
    return replaceIfSameType(rw, op, tryCreate<ReshapeOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(),
                                                       MIRBuilder::pattern(t.getShape())));
  }
};

struct Transpose : TosaPattern<tosa::TransposeOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::TransposeOp op, PatternRewriter &rw) const override {
    SmallVector<int64_t> perm(op.getPerms().begin(), op.getPerms().end());
    return replaceIfSameType(rw, op, tryCreate<TransposeOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(), perm));
  }
};

struct Slice : TosaPattern<tosa::SliceOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::SliceOp op, PatternRewriter &rw) const override {
    auto start = shapeValues(op.getStart()), size = shapeValues(op.getSize());
    if (!start || !size)
      return failure();
    SmallVector<int64_t> strides(start->size(), 1);
    return replaceIfSameType(rw, op,
                             tryCreate<SliceOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(), *start, *size, strides));
  }
};

struct Concat : TosaPattern<tosa::ConcatOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::ConcatOp op, PatternRewriter &rw) const override {
    return replaceIfSameType(rw, op, tryCreate<ConcatOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(),
                                                      static_cast<int64_t>(op.getAxis())));
  }
};

/// tile of size-1 dims is a broadcast (HF repeat_kv in TOSA form).
struct Tile : TosaPattern<tosa::TileOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::TileOp op, PatternRewriter &rw) const override {
    auto mult = shapeValues(op.getMultiples());
    auto in = cast<RankedTensorType>(op.getInput1().getType());
    if (!mult)
      return failure();
    for (auto [m, d] : llvm::zip(*mult, in.getShape()))
      if (m != 1 && d != 1)
        return failure();
    auto t = cast<RankedTensorType>(op.getType());
    return replaceIfSameType(rw, op, tryCreate<BroadcastOp>(rw, op.getLoc(), /*diagnose=*/false, op.getInput1(),
                                                         MIRBuilder::pattern(t.getShape())));
  }
};

struct Matmul : TosaPattern<tosa::MatMulOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::MatMulOp op, PatternRewriter &rw) const override {
    if (!isFloatTensor(op.getA()) || !isZeroPoint(op.getAZp()) || !isZeroPoint(op.getBZp()))
      return failure();
    return replaceIfSameType(rw, op, tryCreate<MatmulOp>(rw, op.getLoc(), /*diagnose=*/false, op.getA(), op.getB(),
                                                      false, false));
  }
};

/// gather(values [1, K, C], indices [1, W]) is an embedding lookup.
struct Gather : TosaPattern<tosa::GatherOp> {
  using TosaPattern::TosaPattern;
  LogicalResult raise(tosa::GatherOp op, PatternRewriter &rw) const override {
    auto values = cast<RankedTensorType>(op.getValues().getType());
    if (values.getDimSize(0) != 1)
      return failure();
    MIRBuilder mb(rw, op.getLoc());
    Value table = mb.reshape(op.getValues(), MIRBuilder::pattern(values.getShape().drop_front()));
    return replaceIfSameType(rw, op, mb, mb.create<GatherOp>(table, op.getIndices()));
  }
};

/// tosa.identity is its operand.
struct Identity : OpRewritePattern<tosa::IdentityOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::IdentityOp op, PatternRewriter &rw) const override {
    if (op.getInput1().getType() != op.getType())
      return failure();
    rw.replaceOp(op, op.getInput1());
    return success();
  }
};

} // namespace

void mlir::rlx::populateTosaToRLXMIRPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<Binary<tosa::AddOp, AddOp>, Binary<tosa::SubOp, SubOp>,
               Binary<tosa::MaximumOp, MaxOp>, Binary<tosa::MinimumOp, MinOp>,
               Binary<tosa::PowOp, PowOp>>(ctx);
  patterns.add<Unary<tosa::ExpOp, ExpOp>, Unary<tosa::LogOp, LogOp>,
               Unary<tosa::RsqrtOp, RsqrtOp>, Unary<tosa::ReciprocalOp, ReciprocalOp>,
               Unary<tosa::TanhOp, TanhOp>, Unary<tosa::SigmoidOp, SigmoidOp>,
               Unary<tosa::AbsOp, AbsOp>, Unary<tosa::SinOp, SinOp>, Unary<tosa::CosOp, CosOp>,
               Unary<tosa::ErfOp, ErfOp>>(ctx);
  patterns.add<Reduce<tosa::ReduceSumOp, ReduceKind::Sum>,
               Reduce<tosa::ReduceMaxOp, ReduceKind::Max>,
               Reduce<tosa::ReduceMinOp, ReduceKind::Min>,
               Reduce<tosa::ReduceProductOp, ReduceKind::Prod>>(ctx);
  patterns.add<Const, Mul, Negate, Clamp, Cast, Select, Reshape, Transpose, Slice, Concat, Tile,
               Matmul, Gather, Identity>(ctx);
}
