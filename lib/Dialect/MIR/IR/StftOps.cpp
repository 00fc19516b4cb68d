//===- StftOps.cpp - stft, istft: shape rules and chains --------------------===//
//
// The short-time transforms as torch defines them, each one chain of MIR ops
// every backend runs: stft gathers the frames (reflect padding folded into
// the indices), windows them and calls rfft; istft calls irfft, windows the
// frames and overlap-adds them with a gather of each output sample's frames,
// divided by the window's squared overlap-add envelope. Their derivatives are
// their chains' (gather, reduce, rfft, irfft).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The frame index tables (stft's frames·n_fft, istft's samples·overlap) are
/// constants: at most this many entries.
constexpr int64_t kMaxTable = int64_t{1} << 28;

/// torch's window rule: a window of win_length ≤ n_fft is centred in n_fft
/// zeros, the odd zero (if any) on the right.
int64_t windowOffset(int64_t nfft, int64_t win) { return (nfft - win) / 2; }

/// The window centred in n_fft zeros, as a [n_fft] value.
Value paddedWindow(MIRBuilder &mb, Value window, int64_t nfft) {
  int64_t win = MIRBuilder::typeOf(window).getDimSize(0);
  if (win == nfft)
    return window;
  Type et = MIRBuilder::typeOf(window).getElementType();
  auto zeros = [&](int64_t n) {
    auto t = RankedTensorType::get({n}, et);
    return mb.create<ConstantOp>(DenseElementsAttr::get(t, mb.builder().getFloatAttr(et, 0.0)));
  };
  int64_t left = windowOffset(nfft, win), right = nfft - win - left;
  SmallVector<Value> parts;
  if (left)
    parts.push_back(zeros(left));
  parts.push_back(window);
  if (right)
    parts.push_back(zeros(right));
  return mb.concat(parts, 0);
}

/// The signal (or spectrogram) operand, ranked, after checking the window:
/// `[win_length]` with 1 ≤ win_length ≤ n_fft, of the operand's type.
FailureOr<RankedTensorType> signalAndWindow(OptLoc loc, Value input, Value window, int64_t nfft,
                                            StringRef op) {
  auto x = getRankedTensor(loc, input, "input");
  auto w = getRankedTensor(loc, window, "window");
  if (failed(x) || failed(w) || failed(checkSameElementType(loc, {*x, *w}, {"input", "window"})))
    return failure();
  if (w->getRank() != 1 || w->isDynamicDim(0) || w->getDimSize(0) < 1 || w->getDimSize(0) > nfft)
    return shapeError(loc, op + " needs a window [win_length] with 1 <= win_length <= n_fft = " +
                               Twine(nfft) + ", got " + shapeToString(w->getShape()));
  return x;
}

/// A rank-1 or rank-2 `[B?, ...]` operand's leading batch (1 without one).
int64_t batchOf(RankedTensorType t, int64_t unbatchedRank) {
  return t.getRank() > unbatchedRank ? t.getDimSize(0) : 1;
}

/// istft's output range: `[start, end)` of the overlap-added signal of
/// `full = n_fft + hop·(frames − 1)` samples (torch: `length` from `start`,
/// else the centre padding trimmed from both ends).
struct IstftRange {
  int64_t full, start, end;
};

IstftRange istftRange(int64_t nfft, int64_t hop, int64_t frames, bool center,
                      std::optional<int64_t> length) {
  int64_t full = nfft + hop * (frames - 1), start = center ? nfft / 2 : 0;
  int64_t end = length ? start + *length : (center ? full - nfft / 2 : full);
  return {full, start, end};
}

} // namespace

//===----------------------------------------------------------------------===//
// stft
//===----------------------------------------------------------------------===//

LogicalResult StftOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                       SmallVectorImpl<Type> &out) {
  int64_t nfft = a.getNFftAttr().getInt(), hop = a.getHopLengthAttr().getInt();
  if (nfft < 1 || hop < 1)
    return shapeError(loc, "stft needs n_fft >= 1 and hop_length >= 1, got " + Twine(nfft) +
                               " and " + Twine(hop));
  auto x = signalAndWindow(loc, a.getInput(), a.getWindow(), nfft, "stft");
  if (failed(x))
    return failure();
  if ((x->getRank() != 1 && x->getRank() != 2) || x->isDynamicDim(x->getRank() - 1))
    return shapeError(loc, "stft needs an input [L] or [B, L] with a static L, got " +
                               shapeToString(x->getShape()));
  int64_t len = x->getShape().back(), pad = a.getCenter() ? nfft / 2 : 0;
  if (a.getCenter() && pad >= len)
    return shapeError(loc, "stft's reflect padding (n_fft // 2 = " + Twine(pad) +
                               ") must be shorter than the signal, got L = " + Twine(len));
  if (len + 2 * pad < nfft)
    return shapeError(loc, "stft needs at least n_fft = " + Twine(nfft) + " samples" +
                               (a.getCenter() ? " after padding" : "") + ", got " +
                               Twine(len + 2 * pad));
  int64_t frames = 1 + (len + 2 * pad - nfft) / hop;
  SmallVector<int64_t> shape(x->getShape().drop_back());
  shape.append({nfft / 2 + 1, 2 * frames});
  out.push_back(x->clone(shape));
  return success();
}

FailureOr<SmallVector<Value>> StftOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, xt)))
    return failure();
  int64_t nfft = getNFftAttr().getInt(), hop = getHopLengthAttr().getInt();
  int64_t len = xt.getShape().back(), b = batchOf(xt, 1);
  int64_t pad = getCenter() ? nfft / 2 : 0, frames = 1 + (len + 2 * pad - nfft) / hop;
  int64_t bins = nfft / 2 + 1;
  if (frames > kMaxTable / nfft)
    return emitError("stft: ") << frames << " frames of n_fft = " << nfft
                               << " make a frame index table over 2^28 entries",
           failure();
  // Sample k of frame t, the reflect padding folded in (torch's "reflect":
  // the edge sample is not repeated).
  SmallVector<int64_t> ids;
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t k = 0; k < nfft; ++k) {
      int64_t i = t * hop + k - pad;
      ids.push_back(i < 0 ? -i : i >= len ? 2 * (len - 1) - i : i);
    }
  auto idsType = RankedTensorType::get({frames, nfft}, mb.builder().getI64Type());
  Value table = mb.transpose(mb.reshape(getInput(), {b, len}), {1, 0}); // [L, B]
  Value framed = mb.create<GatherOp>(table, mb.create<ConstantOp>(
                                                DenseElementsAttr::get(idsType, ArrayRef(ids))));
  framed = mb.transpose(framed, {2, 0, 1}); // [B, frames, n_fft]
  framed = mb.mul(framed, mb.reshape(paddedWindow(mb, getWindow(), nfft), {1, 1, nfft}));
  Builder &bd = mb.builder();
  Value spec = mb.create<RfftOp>(framed, bd.getI64IntegerAttr(2), bd.getI64IntegerAttr(nfft),
                                 getNormalized() ? bd.getStringAttr("ortho") : StringAttr());
  // [B, frames, 2, bins] → torch's [B, bins, frames], complex.
  spec = mb.transpose(mb.reshape(spec, {b, frames, 2, bins}), {0, 3, 2, 1});
  Value y = mb.reshape(spec, getType().getShape());
  if (mb.failed() || !y)
    return emitError("stft: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y};
}

//===----------------------------------------------------------------------===//
// istft
//===----------------------------------------------------------------------===//

LogicalResult IstftOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                        SmallVectorImpl<Type> &out) {
  int64_t nfft = a.getNFftAttr().getInt(), hop = a.getHopLengthAttr().getInt();
  if (nfft < 1 || nfft > kMaxTable)
    return shapeError(loc, "istft needs 1 <= n_fft <= 2^28, got " + Twine(nfft));
  auto x = signalAndWindow(loc, a.getInput(), a.getWindow(), nfft, "istft");
  if (failed(x))
    return failure();
  int64_t rank = x->getRank();
  if ((rank != 2 && rank != 3) || !x->hasStaticShape() || x->getShape().back() % 2 ||
      x->getShape().back() == 0 || x->getDimSize(rank - 2) != nfft / 2 + 1)
    return shapeError(loc, "istft needs a complex input [B?, n_fft // 2 + 1 = " +
                               Twine(nfft / 2 + 1) +
                               ", 2·frames] (static, at least one frame), got " +
                               shapeToString(x->getShape()));
  int64_t win = cast<RankedTensorType>(a.getWindow().getType()).getDimSize(0);
  if (hop < 1 || hop > win)
    return shapeError(loc, "istft needs 1 <= hop_length <= win_length = " + Twine(win) +
                               " (torch's rule: a longer hop leaves samples no frame covers), "
                               "got " + Twine(hop));
  std::optional<int64_t> length;
  if (a.getLengthAttr()) {
    length = a.getLengthAttr().getInt();
    if (*length < 1 || *length > (int64_t{1} << 40))
      return shapeError(loc, "istft needs 1 <= length <= 2^40, got " + Twine(*length));
  }
  if (x->getShape().back() / 2 > (int64_t{1} << 40) / nfft)
    return shapeError(loc, "istft of " + Twine(x->getShape().back() / 2) + " frames of n_fft = " +
                               Twine(nfft) + " is over 2^40 samples");
  int64_t frames = x->getShape().back() / 2;
  IstftRange r = istftRange(nfft, hop, frames, a.getCenter(), length);
  if (r.end <= r.start)
    return shapeError(loc, "istft of " + Twine(frames) + " frame(s) with n_fft = " + Twine(nfft) +
                               " and center leaves no samples; pass length");
  SmallVector<int64_t> shape(x->getShape().drop_back(2));
  shape.push_back(r.end - r.start);
  out.push_back(x->clone(shape));
  return success();
}

FailureOr<SmallVector<Value>> IstftOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getInput().getType();
  int64_t nfft = getNFftAttr().getInt(), hop = getHopLengthAttr().getInt();
  int64_t b = batchOf(xt, 2), bins = nfft / 2 + 1, frames = xt.getShape().back() / 2;
  std::optional<int64_t> length;
  if (getLengthAttr())
    length = getLengthAttr().getInt();
  IstftRange range = istftRange(nfft, hop, frames, getCenter(), length);
  // The overlap-added samples computed: [start, stop); zeros pad to `end`.
  int64_t stop = std::min(range.end, range.full), n = stop - range.start;
  int64_t overlap = (nfft + hop - 1) / hop; // frames that can cover a sample
  // Two tables (rows and frame positions) are built here: a lower bound.
  constexpr int64_t kMaxIstftTable = int64_t{1} << 26;
  if (n > kMaxIstftTable / overlap)
    return emitError("istft: ") << n << " samples of up to " << overlap
                                << " frames each make an index table over 2^26 entries",
           failure();
  Type et = xt.getElementType(), ct = mb.computeType(et);
  Builder &bd = mb.builder();

  // The frames: irfft of each frame's bins, windowed. [B, frames, n_fft]
  Value spec = mb.reshape(mb.widen(getInput(), ct), {b, bins, 2, frames});
  spec = mb.reshape(mb.transpose(spec, {0, 3, 2, 1}), {b, frames, 2 * bins});
  Value framed = mb.create<IrfftOp>(spec, bd.getI64IntegerAttr(2), bd.getI64IntegerAttr(nfft),
                                    getNormalized() ? bd.getStringAttr("ortho") : StringAttr());
  Value window = paddedWindow(mb, mb.widen(getWindow(), ct), nfft);
  framed = mb.mul(framed, mb.reshape(window, {1, 1, nfft}));

  // Overlap-add as a gather: output sample p sums sample p − t·hop of each
  // frame t covering it; the unused slots read a zero row. `kIds` are the
  // same slots' positions within the frame (for the envelope).
  SmallVector<int64_t> rowIds, kIds;
  for (int64_t p = range.start; p < stop; ++p) {
    int64_t slot = 0;
    for (int64_t t = std::min(frames - 1, p / hop); t >= 0 && t * hop + nfft > p; --t, ++slot) {
      rowIds.push_back(t * nfft + p - t * hop);
      kIds.push_back(p - t * hop);
    }
    for (; slot < overlap; ++slot) {
      rowIds.push_back(frames * nfft);
      kIds.push_back(nfft);
    }
  }
  auto idsType = RankedTensorType::get({n, overlap}, bd.getI64Type());
  auto zeros = [&](ArrayRef<int64_t> shape) {
    auto t = RankedTensorType::get(shape, ct);
    return mb.create<ConstantOp>(DenseElementsAttr::get(t, bd.getFloatAttr(ct, 0.0)));
  };
  Value rows = mb.reshape(mb.transpose(framed, {1, 2, 0}), {frames * nfft, b});
  rows = mb.concat({rows, zeros({1, b})}, 0); // [frames·n_fft + 1, B]
  Value y = mb.create<GatherOp>(
      rows, mb.create<ConstantOp>(DenseElementsAttr::get(idsType, ArrayRef(rowIds))));
  y = mb.transpose(mb.reduce(ReduceKind::Sum, y, {1}, false), {1, 0}); // [B, n]

  // Divided by Σ_t window²[p − t·hop]. torch refuses an envelope below
  // 1e-11 in the output: a constant window is checked here, another one
  // poisons those samples with NaN (g/g for g = √(env − 1e-11) is 1 at and
  // above the bound, NaN below; the bound itself is kept by taking the root
  // of env − 0.999999·1e-11).
  constexpr double kMinEnvelope = 1e-11;
  Value inverse;
  DenseElementsAttr constWindow;
  if (matchPattern(getWindow(), m_Constant(&constWindow))) {
    int64_t win = getWindow().getType().getDimSize(0), left = windowOffset(nfft, win);
    std::vector<double> sq(nfft + 1, 0.0);
    int64_t k = 0;
    for (const APFloat &v : constWindow.getValues<APFloat>()) {
      double d = APFloat(v).convertToDouble();
      sq[left + k++] = d * d;
    }
    SmallVector<double> inv(n);
    for (int64_t i = 0; i < n; ++i) {
      double env = 0;
      for (int64_t s = 0; s < overlap; ++s)
        env += sq[kIds[i * overlap + s]];
      if (!(std::abs(env) >= kMinEnvelope)) {
        std::string value;
        llvm::raw_string_ostream(value) << llvm::format("%g", env);
        return emitError("istft: the window's overlap-add envelope is ")
                   << value << " at output sample " << i
                   << " (torch requires at least 1e-11: the signal there cannot be recovered)",
               failure();
      }
      inv[i] = 1.0 / env;
    }
    auto t = RankedTensorType::get({1, n}, ct);
    SmallVector<APFloat> vals;
    for (double v : inv) {
      APFloat f(v);
      bool lost;
      f.convert(cast<FloatType>(ct).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    inverse = mb.create<ConstantOp>(DenseElementsAttr::get(t, vals));
  } else {
    Value sq = mb.concat({mb.mul(window, window), zeros({1})}, 0); // [n_fft + 1]
    Value env = mb.reduce(
        ReduceKind::Sum,
        mb.create<GatherOp>(sq, mb.create<ConstantOp>(DenseElementsAttr::get(idsType, ArrayRef(kIds)))),
        {1}, false);
    Value guard = mb.create<SqrtOp>(mb.sub(env, mb.scalar(ct, 0.999999 * kMinEnvelope)));
    inverse = mb.reshape(mb.mul(mb.create<ReciprocalOp>(env), mb.div(guard, guard)), {1, n});
  }
  y = mb.mul(y, inverse);
  if (range.end > stop)
    y = mb.concat({y, zeros({b, range.end - stop})}, 1);
  y = mb.reshape(y, getType().getShape());
  if (mb.failed() || !y)
    return emitError("istft: cannot build its decomposition for these types"), failure();
  y = mb.widen(y, et);
  return SmallVector<Value>{y};
}
