//===- SamplingOps.cpp - random_uniform and sample: rules, chains ----------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cfloat>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// Philox-4x32-10's first output word for counter (c0, c1, c2, c3) and key
/// (k0, k1), all i32 (Salmon et al., SC'11).
Value philoxWord0(OpBuilder &b, Location loc, std::array<Value, 4> c, std::array<Value, 2> k) {
  auto i32 = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  };
  Value m0 = i32(0xD2511F53u), m1 = i32(0xCD9E8D57u);
  Value w0 = i32(0x9E3779B9u), w1 = i32(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), k[0]);
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), k[1]);
    c = {n0, p1.getLow(), n2, p0.getLow()};
  }
  return c[0];
}

/// An optional float attribute's value, or the value that turns its step off.
double orDefault(std::optional<APFloat> v, double dflt) {
  return v ? v->convertToDouble() : dflt;
}

/// The low and high 32-bit halves of an i64.
std::pair<Value, Value> halves(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  Value lo = arith::TruncIOp::create(b, loc, i32, v);
  Value shift = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32));
  Value hi = arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, v, shift));
  return {lo, hi};
}

} // namespace

//===----------------------------------------------------------------------===//
// random_uniform
//===----------------------------------------------------------------------===//

LogicalResult RandomUniformOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto offset = getRankedTensor(loc, a.getOffset(), "offset");
  if (failed(offset))
    return failure();
  if (offset->getRank() != 0)
    return shapeError(loc, "random_uniform offset must be tensor<i64>, got " +
                               typeToString(*offset));
  for (int64_t d : a.getShape())
    if (d < 0)
      return shapeError(loc, "random_uniform shape must be static and >= 0, got " +
                                 shapeToString(a.getShape()));
  out.push_back(RankedTensorType::get(a.getShape(), Float32Type::get(ctx)));
  return success();
}

FailureOr<SmallVector<Value>> RandomUniformOp::decompose(MIRBuilder &mb) {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  OpBuilder &b = mb.builder();
  Value index = mb.iota(n, b.getI64Type());
  auto f32 = RankedTensorType::get({n}, b.getF32Type());
  uint64_t seed = static_cast<uint64_t>(getSeed());
  auto bits = mb.elementwise(
      TypeRange{f32}, ValueRange{index, getOffset()},
      [&](OpBuilder &b, Location loc, ValueRange args) -> SmallVector<Value> {
        auto [i0, i1] = halves(b, loc, args[0]);
        auto [o0, o1] = halves(b, loc, args[1]);
        Value k0 = arith::ConstantOp::create(
            b, loc, b.getI32IntegerAttr(static_cast<int32_t>(uint32_t(seed))));
        Value k1 = arith::ConstantOp::create(
            b, loc, b.getI32IntegerAttr(static_cast<int32_t>(uint32_t(seed >> 32))));
        Value w = philoxWord0(b, loc, {i0, i1, o0, o1}, {k0, k1});
        // The top 24 bits, times 2^-24: exact in f32, in [0, 1).
        Value top = arith::ShRUIOp::create(
            b, loc, w, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8)));
        Value f = arith::UIToFPOp::create(b, loc, b.getF32Type(), top);
        Value scale = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::ldexp(1.0f, -24)));
        return {arith::MulFOp::create(b, loc, f, scale)};
      });
  Value out = mb.reshape(bits[0], SmallVector<int64_t>(getShape()));
  if (mb.failed() || !out)
    return emitError("random_uniform: cannot build its decomposition"), failure();
  return SmallVector<Value>{out};
}

//===----------------------------------------------------------------------===//
// sample
//===----------------------------------------------------------------------===//

LogicalResult SampleOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto logits = getRankedTensor(loc, a.getLogits(), "logits");
  auto uniform = getRankedTensor(loc, a.getUniform(), "uniform");
  if (failed(logits) || failed(uniform))
    return failure();
  if (logits->getRank() == 0 || logits->getShape().back() == 0)
    return shapeError(loc, "sample needs logits [..., V] with V >= 1, got " +
                               shapeToString(logits->getShape()));
  ArrayRef<int64_t> rows = logits->getShape().drop_back();
  if (uniform->getRank() != static_cast<int64_t>(rows.size()) ||
      !llvm::all_of(llvm::zip(rows, uniform->getShape()),
                    [](auto p) { return dimsMatch(std::get<0>(p), std::get<1>(p)); }))
    return shapeError(loc, "sample needs one uniform number per row: shape " +
                               shapeToString(rows) + " for logits " +
                               shapeToString(logits->getShape()) + ", got " +
                               shapeToString(uniform->getShape()));
  double t = orDefault(a.getTemperature(), 1.0), p = orDefault(a.getTopP(), 1.0),
         minP = orDefault(a.getMinP(), 0.0);
  int64_t topK = a.getTopK().value_or(0);
  auto show = [](double v) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", v);
    return text;
  };
  // 1/temperature is applied in f32.
  if (!(t >= 0) || (t > 0 && !(1.0 / t <= FLT_MAX)) || std::isinf(t))
    return shapeError(loc, "sample temperature must be >= 0 and finite (1/temperature an f32; "
                           "0: greedy), got " + show(t));
  if (topK < 0)
    return shapeError(loc, "sample top_k must be >= 0 (0: all), got " + Twine(topK));
  if (!(p > 0 && p <= 1))
    return shapeError(loc, "sample top_p must be in (0, 1], got " + show(p));
  if (!(minP >= 0 && minP < 1))
    return shapeError(loc, "sample min_p must be in [0, 1), got " + show(minP));
  out.push_back(RankedTensorType::get(rows, IntegerType::get(ctx, 64)));
  return success();
}

FailureOr<SmallVector<Value>> SampleOp::decompose(MIRBuilder &mb) {
  auto lt = getLogits().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, lt)))
    return failure();
  OpBuilder &b = mb.builder();
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i64 = b.getI64Type();
  int64_t v = lt.getShape().back(), rows = 1;
  for (int64_t d : lt.getShape().drop_back())
    rows *= d;
  int64_t topK = getTopK().value_or(0);
  // Every token is sorted: the top-k filter keeps the ties at the k-th
  // value, which may be more than k tokens.
  int64_t k = v;
  double topP = orDefault(getTopP(), 1.0), minP = orDefault(getMinP(), 0.0);
  double temperature = orDefault(getTemperature(), 1.0);
  Value x = mb.reshape(mb.cast(getLogits(), f32), {rows, v});
  if (temperature == 0) {
    // Greedy: the first largest logit, whatever the filters (they all keep
    // it), with no division.
    Value top = mb.create<TopKOp>(x, int64_t(1));
    if (!top)
      return emitError("sample: cannot build its decomposition for these types"), failure();
    Value token = mb.reshape(top.getDefiningOp()->getResult(1),
                             SmallVector<int64_t>(lt.getShape().drop_back()));
    return SmallVector<Value>{token};
  }
  float invT = static_cast<float>(1.0 / temperature);
  x = mb.mul(x, mb.scalar(f32, invT));
  // Sorted descending (ties to the lower id): the kept set is a prefix.
  Value vals = mb.create<TopKOp>(x, k);
  if (!vals)
    return emitError("sample: cannot build its decomposition for these types"), failure();
  Value ids = vals.getDefiningOp()->getResult(1);
  if (topK > 0 && topK < v) {
    // TopKLogitsWarper: -inf below the k-th largest value.
    Value kth = mb.slice(vals, {0, topK - 1}, {rows, 1}, {1, 1});
    vals = mb.elementwise(
        TypeRange{RankedTensorType::get({rows, k}, f32)}, ValueRange{vals, kth},
        [&](OpBuilder &b, Location loc, ValueRange a) -> SmallVector<Value> {
          Value low = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a[0], a[1]);
          Value ninf = arith::ConstantOp::create(
              b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
          return {arith::SelectOp::create(b, loc, low, ninf, a[0])};
        })[0];
  }
  Value first = mb.slice(vals, {0, 0}, {rows, 1}, {1, 1});
  // Probability mass ranked above each token, for top-p: prefix sums in
  // f64 (in f32 a 128k vocabulary's sum drifts by ~1e-5, the mass of a
  // tail token).
  Value above = mb.create<CumsumOp>(mb.cast(mb.softmax(vals, 1), f64), int64_t(1),
                                    /*exclusive=*/true, /*reverse=*/false);
  // w: the kept tokens' probabilities relative to the first (0 elsewhere).
  auto kept = mb.elementwise(
      TypeRange{RankedTensorType::get({rows, k}, f32)}, ValueRange{vals, first, above},
      [&](OpBuilder &b, Location loc, ValueRange a) -> SmallVector<Value> {
        Value rel = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, a[0], a[1]));
        Value keep = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
        if (topP < 1.0) {
          Value p = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(double(float(topP))));
          keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a[2], p);
        }
        if (minP > 0.0) {
          Value m = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(minP)));
          keep = arith::AndIOp::create(
              b, loc, keep, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, rel, m));
        }
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
        return {arith::SelectOp::create(b, loc, keep, rel, zero)};
      });
  Value w = kept[0];
  Value cdf = mb.create<CumsumOp>(mb.cast(w, f64), int64_t(1), /*exclusive=*/false,
                                  /*reverse=*/false);
  Value total = mb.slice(cdf, {0, k - 1}, {rows, 1}, {1, 1});
  Value target = mb.mul(mb.reshape(mb.cast(getUniform(), f64), {rows, 1}), total);
  // The position: kept tokens whose cumulative mass is <= u·total, capped
  // at the last kept one.
  auto counts = mb.elementwise(
      TypeRange{RankedTensorType::get({rows, k}, f32), RankedTensorType::get({rows, k}, f32)},
      ValueRange{w, cdf, target},
      [&](OpBuilder &b, Location loc, ValueRange a) -> SmallVector<Value> {
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
        Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
        Value isKept = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a[0], zero);
        Value below = arith::AndIOp::create(
            b, loc, isKept, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, a[1], a[2]));
        return {arith::SelectOp::create(b, loc, below, one, zero),
                arith::SelectOp::create(b, loc, isKept, one, zero)};
      });
  Value below = mb.reduce(ReduceKind::Sum, counts[0], {1}, /*keepDims=*/true);
  Value numKept = mb.reduce(ReduceKind::Sum, counts[1], {1}, /*keepDims=*/true);
  Value position = mb.iota(k, f32);
  auto picked = mb.elementwise(
      TypeRange{RankedTensorType::get({rows, k}, i64)},
      ValueRange{position, below, numKept, ids},
      [&](OpBuilder &b, Location loc, ValueRange a) -> SmallVector<Value> {
        Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
        Value last = arith::SubFOp::create(b, loc, a[2], one);
        // Capped at the last kept token, and at the first when none is kept
        // (NaN or all -inf logits: the first sorted id).
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
        Value j = arith::MaximumFOp::create(
            b, loc, arith::MinimumFOp::create(b, loc, a[1], last), zero);
        Value hit = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[0], j);
        Value none = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
        return {arith::SelectOp::create(b, loc, hit, a[3], none)};
      });
  Value token = mb.reduce(ReduceKind::Sum, picked[0], {1}, /*keepDims=*/false);
  token = mb.reshape(token, SmallVector<int64_t>(lt.getShape().drop_back()));
  if (mb.failed() || !token)
    return emitError("sample: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{token};
}
