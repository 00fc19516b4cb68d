//===- QuantToMIR.cpp - Raise quantize/dequantize generics to rlx_mir -----===//
//
// PT2E's quantized_decomposed ops as torch-mlir writes them in
// linalg-on-tensors: elementwise generics whose bodies are
//   quantize:   fptosi(clamp(roundeven(x / s) [+ zp], lo, hi)) to i8
//   dequantize: sitofp([extsi q to iN] [- zp]) · s
// with s and zp constants (per tensor) or read from a 1-D operand along one
// loop dim (per channel). They become rlx_mir.quantize / dequantize, which
// compute exactly these (an f32 quotient, round half to even, the zero
// point before the clamp), so that quantized-matmul recognition
// (mir::populateQuantRecognitionPatterns) sees them. Any other body (a
// truncating conversion, x · (1/s), no clamp, zero points the byte cannot
// hold) stays linalg, computing what it did.
//
//===----------------------------------------------------------------------===//

#include "ImportUtils.h"

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// One per-element parameter of a body (scale or zero point): a scalar
/// constant, or a 1-D operand of the generic read along loop dim `axis`.
struct Param {
  std::optional<double> value;
  Value tensor;
  int64_t axis = -1;
};

/// The body of an all-parallel generic with one input read by the identity
/// map (and 1-D parameter operands), one output written by it, and an
/// output block argument nothing reads; its yielded value.
Value elementwiseYield(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || g.getNumDpsInputs() < 1)
    return {};
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps.front().isIdentity() || !maps.back().isIdentity())
    return {};
  Block *body = g.getBody();
  if (!body->getArguments().back().use_empty())
    return {};
  return body->getTerminator()->getOperand(0);
}

/// What `v`, read in `g`'s body, is as a parameter.
std::optional<Param> paramOf(linalg::GenericOp g, Value v) {
  Attribute a;
  if (matchPattern(v, m_Constant(&a))) {
    if (auto f = dyn_cast<FloatAttr>(a))
      return Param{f.getValueAsDouble(), Value(), -1};
    if (auto i = dyn_cast<IntegerAttr>(a))
      return Param{static_cast<double>(i.getValue().getSExtValue()), Value(), -1};
    return std::nullopt;
  }
  auto arg = dyn_cast<BlockArgument>(v);
  // Operand 0 is the quantized tensor itself, not a parameter.
  if (!arg || arg.getOwner() != g.getBody() || arg.getArgNumber() == 0 ||
      arg.getArgNumber() >= g.getNumDpsInputs())
    return std::nullopt;
  OpOperand *operand = g.getDpsInputOperand(arg.getArgNumber());
  AffineMap m = g.getMatchingIndexingMap(operand);
  auto t = dyn_cast<RankedTensorType>(operand->get().getType());
  if (!t || t.getRank() != 1 || m.getNumResults() != 1)
    return std::nullopt;
  auto d = dyn_cast<AffineDimExpr>(m.getResult(0));
  if (!d)
    return std::nullopt;
  return Param{std::nullopt, operand->get(), d.getPosition()};
}

/// `v` = OpT(inner, param) (either order when `commutative`): the parameter
/// operand, and the other operand in `inner`.
template <typename OpT>
std::optional<Param> peel(linalg::GenericOp g, Value v, Value &inner, bool commutative = true) {
  auto op = v.getDefiningOp<OpT>();
  if (!op || op->getBlock() != g.getBody())
    return std::nullopt;
  for (unsigned i = 0; i < (commutative ? 2u : 1u); ++i)
    if (auto p = paramOf(g, op->getOperand(1 - i))) {
      inner = op->getOperand(i);
      return p;
    }
  return std::nullopt;
}

/// `v` = min(max(a, lo), hi) or max(min(a, hi), lo) with constant bounds
/// (arith.minimumf/maximumf: a NaN stays NaN, poison after fptosi; the
/// minnumf/maxnumf spelling would clamp it to a bound, which
/// rlx_mir.quantize does not do, so it stays linalg).
bool peelClamp(linalg::GenericOp g, Value v, Value &inner, double &lo, double &hi) {
  auto bound = [&](std::optional<Param> p, double &out) {
    if (!p || !p->value)
      return false;
    out = *p->value;
    return true;
  };
  Value mid;
  if (auto outerMin = peel<arith::MinimumFOp>(g, v, mid))
    return bound(outerMin, hi) && bound(peel<arith::MaximumFOp>(g, mid, inner), lo);
  if (auto outerMax = peel<arith::MaximumFOp>(g, v, mid))
    return bound(outerMax, lo) && bound(peel<arith::MinimumFOp>(g, mid, inner), hi);
  return false;
}

bool isArg0(linalg::GenericOp g, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == g.getBody() && arg.getArgNumber() == 0;
}

/// The integer values of a constant zero-point operand, or nothing.
std::optional<SmallVector<int64_t>> constantInts(Value v) {
  Attribute a;
  auto elements = matchPattern(v, m_Constant(&a)) ? dyn_cast<ElementsAttr>(a) : ElementsAttr();
  if (!elements || !isa<IntegerType>(elements.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto values = elements.tryGetValues<APInt>()) {
    for (APInt i : *values)
      out.push_back(i.getSExtValue());
    return out;
  }
  // dense_resource (torch-mlir's constants) reads only as its own type.
  if (auto blob = dyn_cast<DenseI64ResourceElementsAttr>(a))
    if (auto values = blob.tryGetAsArrayRef()) {
      llvm::append_range(out, *values);
      return out;
    }
  if (auto blob = dyn_cast<DenseI32ResourceElementsAttr>(a))
    if (auto values = blob.tryGetAsArrayRef()) {
      llvm::append_range(out, *values);
      return out;
    }
  return std::nullopt;
}

/// Builds the op's scale and zero-point operands and granularity; false when
/// the body's parameters are not expressible (mixed axes, a per-channel
/// zero point that is not a known constant, one outside the byte).
struct QuantOperands {
  Value scale, zeroPoint;
  IntegerAttr axis;

  bool build(MIRBuilder &mb, Param s, std::optional<Param> zp, bool isUnsigned) {
    OpBuilder &b = mb.builder();
    Type f32 = b.getF32Type();
    if (s.value) {
      scale = mb.scalar(f32, *s.value);
    } else {
      if (MIRBuilder::elementType(s.tensor) != f32 || !MIRBuilder::typeOf(s.tensor).hasStaticShape())
        return false;
      scale = s.tensor;
      axis = b.getI64IntegerAttr(s.axis);
    }
    SmallVector<int64_t> values;
    if (zp && zp->value) {
      if (*zp->value != std::floor(*zp->value))
        return false;
      values.assign(s.value ? 1 : MIRBuilder::shapeOf(s.tensor)[0],
                    static_cast<int64_t>(*zp->value));
    } else if (zp) {
      auto ints = constantInts(zp->tensor);
      if (s.value || zp->axis != s.axis || !ints)
        return false;
      values = std::move(*ints);
    }
    int64_t lo = isUnsigned ? 0 : -128, hi = isUnsigned ? 255 : 127;
    if (llvm::any_of(values, [&](int64_t z) { return z < lo || z > hi; }))
      return false;
    if (llvm::all_of(values, [](int64_t z) { return z == 0; }))
      return true; // none
    SmallVector<int8_t> bytes;
    for (int64_t z : values)
      bytes.push_back(static_cast<int8_t>(static_cast<uint8_t>(z & 0xff)));
    auto t = RankedTensorType::get(MIRBuilder::shapeOf(scale), b.getI8Type());
    zeroPoint = mb.create<ConstantOp>(DenseElementsAttr::get(t, ArrayRef<int8_t>(bytes)));
    return static_cast<bool>(zeroPoint);
  }
};

/// Replaces `g` by OpT (quantize or dequantize) of its input with the body's
/// parameters; fails, leaving `g`, when they are not expressible.
template <typename OpT>
LogicalResult raise(PatternRewriter &rw, linalg::GenericOp g, Param s, std::optional<Param> zp,
                    bool isUnsigned, IntegerAttr quantMin, IntegerAttr quantMax) {
  MIRBuilder mb(rw, g.getLoc());
  QuantOperands p;
  if (!p.build(mb, s, zp, isUnsigned)) {
    mb.discardUnused(&rw);
    return failure();
  }
  Value v = mb.createWithOptional<OpT>(g.getDpsInputs()[0], p.scale, p.zeroPoint, p.axis,
                                       IntegerAttr(), quantMin, quantMax, isUnsigned);
  return import_detail::replaceIfSameType(rw, g, mb, v);
}

/// fptosi(clamp(roundeven(x / s) [+ zp], lo, hi)) to i8.
struct QuantizeGeneric : OpRewritePattern<linalg::GenericOp> {
  QuantizeGeneric(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(linalg::GenericOp g, PatternRewriter &rw) const override {
    Value y = elementwiseYield(g);
    if (!y || !getElementTypeOrSelf(g.getResult(0).getType()).isInteger(8) ||
        !getElementTypeOrSelf(g.getDpsInputs()[0].getType()).isF32())
      return failure();
    Value clamped, rounded, x;
    bool isUnsigned = false;
    if (auto c = y.getDefiningOp<arith::FPToSIOp>())
      clamped = c.getIn();
    else if (auto c = y.getDefiningOp<arith::FPToUIOp>())
      clamped = c.getIn(), isUnsigned = true;
    double lo, hi;
    if (!clamped || !peelClamp(g, clamped, rounded, lo, hi))
      return failure();
    std::optional<Param> zp = peel<arith::AddFOp>(g, rounded, rounded);
    auto round = rounded.getDefiningOp<math::RoundEvenOp>();
    if (!round)
      return failure();
    std::optional<Param> s = peel<arith::DivFOp>(g, round.getOperand(), x, /*commutative=*/false);
    int64_t qlo = isUnsigned ? 0 : -128, qhi = isUnsigned ? 255 : 127;
    if (!s || !isArg0(g, x) || lo != std::floor(lo) || hi != std::floor(hi) || lo < qlo ||
        hi > qhi || lo > hi)
      return failure();
    auto range = [&](double v, int64_t dflt) {
      return v == dflt ? IntegerAttr() : rw.getI64IntegerAttr(static_cast<int64_t>(v));
    };
    return raise<QuantizeOp>(rw, g, *s, zp, isUnsigned, range(lo, qlo), range(hi, qhi));
  }
};

/// sitofp([extsi q to iN] [- zp]) · s, from i8 to f32.
struct DequantizeGeneric : OpRewritePattern<linalg::GenericOp> {
  DequantizeGeneric(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(linalg::GenericOp g, PatternRewriter &rw) const override {
    Value y = elementwiseYield(g);
    if (!y || !getElementTypeOrSelf(g.getResult(0).getType()).isF32() ||
        !getElementTypeOrSelf(g.getDpsInputs()[0].getType()).isInteger(8))
      return failure();
    Value converted, centered;
    std::optional<Param> s = peel<arith::MulFOp>(g, y, converted);
    if (!s)
      return failure();
    bool isUnsigned = false;
    if (auto c = converted.getDefiningOp<arith::SIToFPOp>())
      centered = c.getIn();
    else if (auto c = converted.getDefiningOp<arith::UIToFPOp>())
      centered = c.getIn(), isUnsigned = true;
    if (!centered || (isUnsigned && !isArg0(g, centered)))
      return failure();
    Value widened = centered;
    std::optional<Param> zp = peel<arith::SubIOp>(g, centered, widened, /*commutative=*/false);
    Value q = widened;
    if (auto e = widened.getDefiningOp<arith::ExtSIOp>())
      q = e.getIn();
    else if (auto e = widened.getDefiningOp<arith::ExtUIOp>())
      q = e.getIn(), isUnsigned = true;
    // A zero point subtracted in i8 itself could wrap: only in a wider type.
    if (!isArg0(g, q) || (zp && widened == q))
      return failure();
    return raise<DequantizeOp>(rw, g, *s, zp, isUnsigned, IntegerAttr(), IntegerAttr());
  }
};

} // namespace

void mlir::rlx::populateLinalgQuantToRLXMIRPatterns(RewritePatternSet &patterns) {
  patterns.add<QuantizeGeneric, DequantizeGeneric>(patterns.getContext());
}
