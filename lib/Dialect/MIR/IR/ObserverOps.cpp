//===- ObserverOps.cpp - observe_minmax, choose_qparams: rules and chains --===//
//
// The statistics quantization-aware training derives its scales from, as
// PyTorch's observers (torch.ao.quantization.observer) compute them. Each is
// defined by its chain of MIR ops (decompose), which the linalg lowering and
// vmap use; autodiff keeps the op and its zero derivative (observers run
// under no_grad).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "RuleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The statistics' type: rank 0, or [C] along `axis` (normalized) of `in`.
RankedTensorType statsType(RankedTensorType in, std::optional<int64_t> axis) {
  if (!axis)
    return RankedTensorType::get({}, in.getElementType());
  return RankedTensorType::get({in.getDimSize(*axis)}, in.getElementType());
}

/// f32's machine epsilon, PyTorch's default eps for its observers.
constexpr double kF32Eps = 1.1920928955078125e-07;

} // namespace

//===----------------------------------------------------------------------===//
// observe_minmax
//===----------------------------------------------------------------------===//

LogicalResult ObserveMinmaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto in = getRankedTensor(loc, a.getInput(), "input");
  if (failed(in))
    return failure();
  std::optional<int64_t> axis;
  if (std::optional<int64_t> raw = a.getAxis()) {
    if (in->getRank() == 0)
      return shapeError(loc, "observe_minmax axis needs an input of rank >= 1");
    auto n = normalizeAxis(loc, *raw, in->getRank());
    if (failed(n))
      return failure();
    axis = *n;
  }
  RankedTensorType stats = statsType(*in, axis);
  bool running = static_cast<bool>(a.getRunningMin());
  if (running != static_cast<bool>(a.getRunningMax()))
    return shapeError(loc, "observe_minmax running needs both running_min and running_max");
  if (running) {
    for (auto [v, name] : {std::pair{a.getRunningMin(), "running_min"},
                           std::pair{a.getRunningMax(), "running_max"}})
      if (v.getType() != stats)
        return shapeError(loc, Twine("observe_minmax ") + name + " must be " +
                                   typeToString(stats) + " (the statistics' type), got " +
                                   typeToString(v.getType()));
  }
  if (std::optional<APFloat> c = a.getAveragingConstant()) {
    double v = c->convertToDouble();
    if (!running)
      return shapeError(loc, "observe_minmax averaging_constant needs running(%min, %max)");
    if (!(v > 0.0 && v <= 1.0)) {
      std::string got;
      llvm::raw_string_ostream(got) << llvm::format("%g", v);
      return shapeError(loc, "observe_minmax averaging_constant must be in (0, 1], got " + got);
    }
  }
  out.assign(2, stats);
  return success();
}

FailureOr<SmallVector<Value>> ObserveMinmaxOp::decompose(MIRBuilder &mb) {
  RankedTensorType in = getInput().getType();
  SmallVector<int64_t> axes;
  std::optional<int64_t> keep;
  if (std::optional<int64_t> raw = getAxis())
    keep = *raw < 0 ? *raw + in.getRank() : *raw;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != keep)
      axes.push_back(d);
  if (llvm::any_of(axes, [&](int64_t d) { return in.getDimSize(d) == 0; })) {
    // Nothing to observe: the running values stay (PyTorch returns early).
    if (getRunningMin())
      return SmallVector<Value>{getRunningMin(), getRunningMax()};
    return emitError("observe_minmax: an empty input has no min and max; give running values"),
           failure();
  }
  Value lo = getInput(), hi = getInput();
  if (!axes.empty()) {
    lo = mb.reduce(ReduceKind::Min, getInput(), axes, /*keepDims=*/false);
    hi = mb.reduce(ReduceKind::Max, getInput(), axes, /*keepDims=*/false);
  }
  SmallVector<Value> r{lo, hi};
  if (getRunningMin()) {
    Type et = in.getElementType();
    std::optional<double> c;
    if (std::optional<APFloat> ac = getAveragingConstant())
      c = ac->convertToDouble();
    r = mb.elementwise(
        {getMin().getType(), getMax().getType()}, {lo, hi, getRunningMin(), getRunningMax()},
        [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
          if (!c) // running extremes
            return {arith::MinimumFOp::create(b, l, v[2], v[0]),
                    arith::MaximumFOp::create(b, l, v[3], v[1])};
          auto k = [&](double x) { return arith::ConstantOp::create(b, l, b.getFloatAttr(et, x)); };
          auto ema = [&](Value run, Value batch) -> Value {
            return arith::AddFOp::create(
                b, l, run,
                arith::MulFOp::create(b, l, k(*c), arith::SubFOp::create(b, l, batch, run)));
          };
          double inf = std::numeric_limits<double>::infinity();
          Value fresh = arith::AndIOp::create(
              b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[2], k(inf)),
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[3], k(-inf)));
          // An empty batch (min > max: +inf, −inf) leaves the state as it is.
          Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v[0], v[1]);
          auto next = [&](Value batch, Value run) -> Value {
            return arith::SelectOp::create(
                b, l, empty, run, arith::SelectOp::create(b, l, fresh, batch, ema(run, batch)));
          };
          return {next(v[0], v[2]), next(v[1], v[3])};
        });
  }
  if (mb.failed() || r.size() != 2 || !r[0] || !r[1])
    return emitError("observe_minmax: cannot build its decomposition for these types"), failure();
  return r;
}

//===----------------------------------------------------------------------===//
// choose_qparams
//===----------------------------------------------------------------------===//

LogicalResult ChooseQparamsOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto lo = getRankedTensor(loc, a.getMin(), "min");
  auto hi = getRankedTensor(loc, a.getMax(), "max");
  if (failed(lo) || failed(hi))
    return failure();
  if (*lo != *hi)
    return shapeError(loc, "choose_qparams min and max must have one type, got " +
                               typeToString(*lo) + " and " + typeToString(*hi));
  if (lo->getRank() > 1 || !(lo->getElementType().isF32() || lo->getElementType().isF64()))
    return shapeError(loc, "choose_qparams needs f32 or f64 statistics of rank 0 or 1, got " +
                               typeToString(*lo));
  bool isUnsigned = a.getIsUnsigned();
  int64_t byteLo = isUnsigned ? 0 : -128, byteHi = isUnsigned ? 255 : 127;
  int64_t qmin = a.getQuantMin().value_or(byteLo), qmax = a.getQuantMax().value_or(byteHi);
  if (qmin < byteLo || qmax > byteHi || qmin >= qmax || qmin > 0 || qmax < 0)
    return shapeError(loc, "choose_qparams range [" + Twine(qmin) + ", " + Twine(qmax) +
                               "] must be increasing, hold 0 and lie within the " +
                               (isUnsigned ? "unsigned" : "signed") + " byte's [" +
                               Twine(byteLo) + ", " + Twine(byteHi) + "]");
  if (std::optional<APFloat> eps = a.getEps()) {
    double e = eps->convertToDouble();
    if (failed(checkEps(loc, e)))
      return failure();
    float asF32 = static_cast<float>(e);
    if (lo->getElementType().isF32() && (asF32 == 0.0f || std::isinf(asF32)))
      return shapeError(loc, "choose_qparams eps must be a finite nonzero f32 for f32 statistics");
  }
  out.push_back(*lo);
  out.push_back(lo->clone(IntegerType::get(ctx, 8)));
  return success();
}

FailureOr<SmallVector<Value>> ChooseQparamsOp::decompose(MIRBuilder &mb) {
  Type et = getMin().getType().getElementType();
  // PyTorch's has_customized_qrange: both bounds given.
  bool isUnsigned = getIsUnsigned(), customRange = getQuantMin() && getQuantMax();
  int64_t qmin = getQuantMin().value_or(isUnsigned ? 0 : -128);
  int64_t qmax = getQuantMax().value_or(isUnsigned ? 255 : 127);
  double eps = kF32Eps;
  if (std::optional<APFloat> e = getEps())
    eps = e->convertToDouble();
  SmallVector<Value> r = mb.elementwise(
      {getScale().getType(), getZeroPoint().getType()}, {getMin(), getMax()},
      [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
        auto k = [&](double x) { return arith::ConstantOp::create(b, l, b.getFloatAttr(et, x)); };
        Value lo = arith::MinimumFOp::create(b, l, v[0], k(0.0));
        Value hi = arith::MaximumFOp::create(b, l, v[1], k(0.0));
        Value scale, zp;
        if (getSymmetric()) {
          Value m = arith::MaximumFOp::create(b, l, arith::NegFOp::create(b, l, lo), hi);
          scale = arith::DivFOp::create(b, l, m, k(double(qmax - qmin) / 2));
          int64_t z = !isUnsigned ? 0 : customRange ? (qmin + qmax) / 2 : 128;
          zp = k(double(z));
        } else {
          scale = arith::DivFOp::create(b, l, arith::SubFOp::create(b, l, hi, lo),
                                        k(double(qmax - qmin)));
        }
        scale = arith::MaximumFOp::create(b, l, scale, k(eps));
        if (!getSymmetric()) {
          Value steps = math::RoundEvenOp::create(b, l, arith::DivFOp::create(b, l, lo, scale));
          zp = arith::SubFOp::create(b, l, k(double(qmin)), steps);
          // maxnumf/minnumf: a NaN (from NaN or infinite statistics) becomes
          // quant_min rather than reaching the integer conversion.
          zp = arith::MinNumFOp::create(
              b, l, arith::MaxNumFOp::create(b, l, zp, k(double(qmin))), k(double(qmax)));
        }
        // Nothing observed (+inf and −inf, the observers' initial state): scale 1, zero point 0.
        double inf = std::numeric_limits<double>::infinity();
        Value none = arith::AndIOp::create(
            b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[0], k(inf)),
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[1], k(-inf)));
        scale = arith::SelectOp::create(b, l, none, k(1.0), scale);
        zp = arith::SelectOp::create(b, l, none, k(0.0), zp);
        Type i8 = b.getI8Type();
        Value zi = isUnsigned ? arith::FPToUIOp::create(b, l, i8, zp).getResult()
                              : arith::FPToSIOp::create(b, l, i8, zp).getResult();
        return {scale, zi};
      });
  if (mb.failed() || r.size() != 2 || !r[0] || !r[1])
    return emitError("choose_qparams: cannot build its decomposition for these types"), failure();
  return r;
}

//===----------------------------------------------------------------------===//
// Derivatives: none flows (PyTorch computes observers under no_grad)
//===----------------------------------------------------------------------===//

LogicalResult ObserveMinmaxOp::vjp(MIRBuilder &, ValueRange, ArrayRef<bool>,
                                   SmallVectorImpl<Value> &dx) {
  return rules::noDerivative(*this, rules::Mode::Reverse, dx);
}
LogicalResult ObserveMinmaxOp::jvp(MIRBuilder &, ValueRange, SmallVectorImpl<Value> &dy) {
  return rules::noDerivative(*this, rules::Mode::Forward, dy);
}
LogicalResult ChooseQparamsOp::vjp(MIRBuilder &, ValueRange, ArrayRef<bool>,
                                   SmallVectorImpl<Value> &dx) {
  return rules::noDerivative(*this, rules::Mode::Reverse, dx);
}
LogicalResult ChooseQparamsOp::jvp(MIRBuilder &, ValueRange, SmallVectorImpl<Value> &dy) {
  return rules::noDerivative(*this, rules::Mode::Forward, dy);
}
