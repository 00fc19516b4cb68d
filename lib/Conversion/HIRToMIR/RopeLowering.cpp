//===- RopeLowering.cpp - RoPE tables and inverse frequencies -------------===//

#include "Lowerings.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// HF `_compute_yarn_parameters`' ramp: the share of frequency `i` kept as
/// extrapolated (1 below the low correction dim, 0 above the high one).
static double yarnExtrapolation(int64_t i, int64_t rotaryDim, double theta,
                                RopeScalingAttr s) {
  double oldLen = static_cast<double>(s.getOriginalMaxPositionEmbeddings());
  auto correctionDim = [&](double rotations) {
    return rotaryDim * std::log(oldLen / (rotations * 2.0 * M_PI)) / (2.0 * std::log(theta));
  };
  double low = correctionDim(s.getBetaFast().convertToDouble());
  double high = correctionDim(s.getBetaSlow().convertToDouble());
  if (s.getTruncate()) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(rotaryDim - 1));
  if (low == high)
    high += 0.001;
  double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
  return 1.0 - ramp;
}

double mlir::rlx::detail::ropeAttentionFactor(RopeScalingAttr scaling) {
  if (!scaling || scaling.getRopeType() != RopeScalingKind::Yarn)
    return 1.0;
  double given = scaling.getAttentionFactor().convertToDouble();
  if (given > 0.0)
    return given;
  double factor = scaling.getFactor().convertToDouble();
  return factor <= 1.0 ? 1.0 : 0.1 * std::log(factor) + 1.0;
}

SmallVector<float> mlir::rlx::detail::ropeInverseFrequencies(int64_t rotaryDim,
                                                             double theta,
                                                             RopeScalingAttr scaling) {
  SmallVector<float> freqs;
  for (int64_t i = 0; i < rotaryDim / 2; ++i) {
    double f = 1.0 / std::pow(theta, static_cast<double>(2 * i) / rotaryDim);
    if (scaling && scaling.getRopeType() == RopeScalingKind::Yarn) {
      double keep = yarnExtrapolation(i, rotaryDim, theta, scaling);
      f = f / scaling.getFactor().convertToDouble() * (1.0 - keep) + f * keep;
    } else if (scaling && scaling.getRopeType() == RopeScalingKind::Linear) {
      f /= scaling.getFactor().convertToDouble();
    } else if (scaling && scaling.getRopeType() == RopeScalingKind::Llama3) {
      // HF transformers `_compute_llama3_parameters`.
      double factor = scaling.getFactor().convertToDouble();
      double low = scaling.getLowFreqFactor().convertToDouble();
      double high = scaling.getHighFreqFactor().convertToDouble();
      double oldLen = static_cast<double>(scaling.getOriginalMaxPositionEmbeddings());
      double lowWavelen = oldLen / low, highWavelen = oldLen / high;
      double wavelen = 2.0 * M_PI / f;
      if (wavelen > lowWavelen) {
        f /= factor;
      } else if (!(wavelen < highWavelen)) {
        double smooth = (oldLen / wavelen - low) / (high - low);
        f = (1.0 - smooth) * f / factor + smooth * f;
      }
    }
    freqs.push_back(static_cast<float>(f));
  }
  return freqs;
}

std::pair<Value, Value> mlir::rlx::detail::buildRopeTables(MIRBuilder &mb, Value positions,
                                                           int64_t rotaryDim, double theta,
                                                           RopeScalingAttr scaling) {
  SmallVector<float> freqs = ropeInverseFrequencies(rotaryDim, theta, scaling);
  Value invFreq = mb.constantF32({rotaryDim / 2}, freqs);
  // positions [..., S] -> [..., S, 1] so the product broadcasts to
  // [..., S, r/2]; the view comes first so the cast joins the elementwise
  // chain (cast, mul, cos, sin) that fusion turns into one op.
  SmallVector<int64_t> pattern = MIRBuilder::pattern(MIRBuilder::shapeOf(positions));
  pattern.push_back(1);
  Value pos = mb.cast(mb.reshape(positions, pattern), mb.builder().getF32Type());
  Value angles = mb.mul(pos, invFreq);
  Value cos = mb.unary<CosOp>(angles), sin = mb.unary<SinOp>(angles);
  double af = ropeAttentionFactor(scaling);
  if (af != 1.0) {
    Value f = mb.scalar(mb.builder().getF32Type(), af);
    cos = mb.mul(cos, f);
    sin = mb.mul(sin, f);
  }
  return {cos, sin};
}
