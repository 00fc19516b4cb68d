//===- AudioOps.cpp - rlx_hir log_mel_spectrogram: shape rules -------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::hir;

LogicalResult LogMelSpectrogramOp::inferReturnTypes(MLIRContext *ctx,
                                                    std::optional<Location> loc, Adaptor a,
                                                    SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = x->getShape();
  if ((shape.size() != 1 && shape.size() != 2) || ShapedType::isDynamic(shape.back()))
    return shapeError(loc, "log_mel_spectrogram needs samples [L] or [B, L] with a static L, "
                           "got " + shapeToString(shape));
  for (auto [value, name, lo, log2Max] : {std::tuple{a.getNFft(), "n_fft", 2, 16},
                                          std::tuple{a.getHopLength(), "hop_length", 1, 30},
                                          std::tuple{a.getNMels(), "n_mels", 1, 12},
                                          std::tuple{a.getSamplingRate(), "sampling_rate", 1, 30}})
    if (static_cast<int64_t>(value) < lo || static_cast<int64_t>(value) > (int64_t{1} << log2Max))
      return shapeError(loc, Twine("log_mel_spectrogram ") + name + " must be in [" + Twine(lo) +
                                 ", 2^" + Twine(log2Max) + "], got " +
                                 Twine(static_cast<int64_t>(value)));
  int64_t nfft = a.getNFft(), hop = a.getHopLength();
  // The lowering's constants stay small: the filter bank (n_mels × bins)
  // and the stft's frame index table (frames × n_fft).
  if (static_cast<int64_t>(a.getNMels()) * (nfft / 2 + 1) > (int64_t{1} << 24))
    return shapeError(loc, "log_mel_spectrogram: a filter bank of n_mels x (n_fft/2 + 1) = " +
                               Twine(static_cast<int64_t>(a.getNMels())) + " x " +
                               Twine(nfft / 2 + 1) + " is over 2^24 entries");
  int64_t n = a.getNSamples() ? static_cast<int64_t>(*a.getNSamples()) : shape.back();
  if (n < 1 || n > (int64_t{1} << 32))
    return shapeError(loc, "log_mel_spectrogram n_samples must be in [1, 2^32], got " + Twine(n));
  if (n != shape.back() && shape.size() == 2 && ShapedType::isDynamic(shape[0]))
    return shapeError(loc, "log_mel_spectrogram pads or trims to n_samples = " + Twine(n) +
                               " only with a static batch, got " + shapeToString(shape));
  if (n <= nfft / 2)
    return shapeError(loc, "log_mel_spectrogram: reflect padding of n_fft/2 = " +
                               Twine(nfft / 2) + " needs more than that many samples, got " +
                               Twine(n));
  int64_t frames = (n + 2 * (nfft / 2) - nfft) / hop; // the last frame dropped
  if (frames < 1)
    return shapeError(loc, "log_mel_spectrogram: " + Twine(n) + " samples make one frame of n_fft = " +
                               Twine(nfft) + ", and the last frame is dropped");
  if (frames + 1 > (int64_t{1} << 28) / nfft)
    return shapeError(loc, "log_mel_spectrogram: " + Twine(frames + 1) + " frames of n_fft = " +
                               Twine(nfft) + " are over 2^28 samples");
  double fmin = a.getFMin() ? a.getFMin()->convertToDouble() : LogMelSpectrogramOp::kFMin;
  double fmax = a.getFMax() ? a.getFMax()->convertToDouble() : LogMelSpectrogramOp::kFMax;
  // 1 Hz keeps the triangles' slopes and norms finite.
  if (!std::isfinite(fmin) || !std::isfinite(fmax) || fmin < 0 || fmax - fmin < 1.0 ||
      fmax > 1e9) {
    char text[96];
    std::snprintf(text, sizeof(text), "f_min = %g, f_max = %g", fmin, fmax);
    return shapeError(loc, Twine("log_mel_spectrogram needs 0 <= f_min, f_min + 1 <= f_max <= 1e9, got ") +
                               text);
  }
  SmallVector<int64_t> result(shape.drop_back());
  result.push_back(a.getNMels());
  result.push_back(frames);
  out.push_back(RankedTensorType::get(result, x->getElementType()));
  return success();
}
