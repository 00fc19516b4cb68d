//===- AudioLowering.cpp - HIR log_mel_spectrogram to MIR ------------------===//
//
// Whisper's front end as rlx_mir primitives: pad or trim, stft with a
// periodic Hann window, the power spectrum without its last frame, the
// Slaney mel filter bank (a constant built here), log10 and the per-item
// dynamic-range clamp.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"

#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

// The Slaney mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic
// above (27 mels per factor 6.4).
constexpr double kHzPerMel = 200.0 / 3.0, kLogHz = 1000.0, kLogMel = kLogHz / kHzPerMel;
const double kLogStep = std::log(6.4) / 27.0;

double hzToMel(double hz) {
  return hz < kLogHz ? hz / kHzPerMel : kLogMel + std::log(hz / kLogHz) / kLogStep;
}

double melToHz(double mel) {
  return mel < kLogMel ? mel * kHzPerMel : kLogHz * std::exp(kLogStep * (mel - kLogMel));
}

/// Value `i` of `n` evenly spaced from `lo` to `hi` inclusive (numpy's linspace).
double linspace(double lo, double hi, int64_t n, int64_t i) {
  return n == 1 ? lo : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1);
}

struct LogMelSpectrogramLowering : OpConversionPattern<hir::LogMelSpectrogramOp> {
  using OpConversionPattern::OpConversionPattern;

  /// `values` as a constant of element type `et` (f32 or f64).
  static Value constant(MIRBuilder &mb, ArrayRef<int64_t> shape, ArrayRef<double> values,
                        Type et) {
    auto t = RankedTensorType::get(shape, et);
    if (et.isF64())
      return mb.create<ConstantOp>(DenseElementsAttr::get(t, values));
    SmallVector<float> narrow(values.begin(), values.end());
    return mb.create<ConstantOp>(DenseElementsAttr::get(t, ArrayRef(narrow)));
  }

  LogicalResult matchAndRewrite(hir::LogMelSpectrogramOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc(), /*diagnose=*/true);
    auto inType = MIRBuilder::typeOf(a.getInput());
    Type et = inType.getElementType(), ct = mb.computeType(et);
    int64_t len = inType.getShape().back(), batch = inType.getRank() == 2 ? inType.getDimSize(0) : 1;
    int64_t nfft = op.getNFft(), hop = op.getHopLength(), nMels = op.getNMels();
    int64_t n = op.getNSamples().value_or(len), bins = nfft / 2 + 1;
    if (len != n && ShapedType::isDynamic(batch))
      return rw.notifyMatchFailure(op, "padding or trimming needs a static batch");

    Value x = mb.reshape(a.getInput(), {batch == ShapedType::kDynamic ? -1 : batch, len});
    if (et != ct)
      x = mb.cast(x, ct);
    if (len > n)
      x = mb.sliceLast(x, 0, n);
    else if (len < n) {
      auto zeros = RankedTensorType::get({batch, n - len}, ct);
      x = mb.concat({x, mb.create<ConstantOp>(DenseElementsAttr::get(
                            zeros, rw.getFloatAttr(ct, 0.0)))},
                    1);
    }

    // The periodic Hann window: 0.5 − 0.5·cos(2πk/n_fft).
    SmallVector<double> hann(nfft);
    for (int64_t k = 0; k < nfft; ++k)
      hann[k] = 0.5 - 0.5 * std::cos(2 * M_PI * static_cast<double>(k) /
                                     static_cast<double>(nfft));
    Builder &bd = mb.builder();
    Value spec = mb.create<StftOp>(x, constant(mb, {nfft}, hann, ct), bd.getI64IntegerAttr(nfft),
                                   bd.getI64IntegerAttr(hop), bd.getUnitAttr(), UnitAttr());
    if (!spec)
      return failure();
    int64_t frames = MIRBuilder::shapeOf(spec).back() / 2, kept = frames - 1;
    Value sq = mb.mul(spec, spec);
    Value power = mb.add(mb.sliceLast(sq, 0, kept), mb.sliceLast(sq, frames, kept));

    // The Slaney filter bank, transposed: [n_mels, bins].
    double fmin = op.getFMin() ? op.getFMin()->convertToDouble() : hir::LogMelSpectrogramOp::kFMin;
    double fmax = op.getFMax() ? op.getFMax()->convertToDouble() : hir::LogMelSpectrogramOp::kFMax;
    double nyquist = std::floor(static_cast<double>(op.getSamplingRate()) / 2);
    double melLo = hzToMel(fmin), melHi = hzToMel(fmax);
    SmallVector<double> bank(nMels * bins, 0.0);
    for (int64_t m = 0; m < nMels; ++m) {
      double lo = melToHz(linspace(melLo, melHi, nMels + 2, m));
      double mid = melToHz(linspace(melLo, melHi, nMels + 2, m + 1));
      double hi = melToHz(linspace(melLo, melHi, nMels + 2, m + 2));
      if (!(lo < mid && mid < hi))
        continue; // a filter of no width has no weight
      double norm = 2.0 / (hi - lo);
      for (int64_t k = 0; k < bins; ++k) {
        double f = linspace(0.0, nyquist, bins, k);
        double w = std::min((f - lo) / (mid - lo), (hi - f) / (hi - mid));
        bank[m * bins + k] = std::max(0.0, w) * norm;
      }
    }
    if (!llvm::all_of(bank, [&](double w) { return std::isfinite(static_cast<float>(w)); }))
      return op.emitError("log_mel_spectrogram: the mel filter bank between f_min = ")
             << fmin << " and f_max = " << fmax << " Hz has weights that are not finite in "
             << ct;
    Value mel = mb.matmul(constant(mb, {nMels, bins}, bank, ct), power); // [B, n_mels, frames]
    mel = mb.create<MaxOp>(mel, mb.scalar(ct, 1e-10));
    Value logSpec = mb.mul(mb.unary<LogOp>(mel), mb.scalar(ct, 1.0 / M_LN10));
    Value peak = mb.reduce(ReduceKind::Max, logSpec, {1, 2}, /*keepDims=*/true);
    logSpec = mb.create<MaxOp>(logSpec, mb.sub(peak, mb.scalar(ct, 8.0)));
    Value y = mb.mul(mb.add(logSpec, mb.scalar(ct, 4.0)), mb.scalar(ct, 0.25));
    if (et != ct)
      y = mb.cast(y, et);
    y = mb.reshape(y, MIRBuilder::pattern(op.getType().getShape()));
    return replaceWithBuilt(rw, op, mb, {y});
  }
};

} // namespace

void mlir::rlx::detail::populateAudioLowerings(RewritePatternSet &patterns) {
  patterns.add<LogMelSpectrogramLowering>(patterns.getContext());
}
