//===- RopeLowering.cpp - RoPE tables and inverse frequencies -------------===//

#include "Lowerings.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

SmallVector<float> mlir::rlx::detail::ropeInverseFrequencies(int64_t rotaryDim,
                                                             double theta,
                                                             RopeScalingAttr scaling) {
  SmallVector<float> freqs;
  for (int64_t i = 0; i < rotaryDim / 2; ++i) {
    double f = 1.0 / std::pow(theta, static_cast<double>(2 * i) / rotaryDim);
    if (scaling && scaling.getRopeType() == RopeScalingKind::Linear) {
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
  return {mb.unary<CosOp>(angles), mb.unary<SinOp>(angles)};
}
