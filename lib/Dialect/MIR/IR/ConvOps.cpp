//===- ConvOps.cpp - conv: shape rules and chain ----------------------------===//
//
// One definition of the N-d convolution (PyTorch's conv1d/2d/3d): its
// geometry (convGeometry, for the shape rule and the decomposition alike)
// and its chain: im2col as a gather of the input's spatial positions (the
// padding a zero row), a batched matmul per group, the bias.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

std::string joinInts(ArrayRef<int64_t> v) {
  std::string s;
  for (int64_t e : v)
    s += (s.empty() ? "" : ", ") + std::to_string(e);
  return s;
}

/// The convolution's sizes, attributes resolved to PyTorch's defaults.
struct ConvGeometry {
  int64_t nd, batch, cin, cout, groups;
  SmallVector<int64_t> spatial, kernel, stride, dilation, lo, hi, out;
};

FailureOr<ConvGeometry> convGeometry(OptLoc loc, RankedTensorType x, RankedTensorType w,
                                     std::optional<ArrayRef<int64_t>> stride,
                                     std::optional<ArrayRef<int64_t>> padding,
                                     std::optional<ArrayRef<int64_t>> dilation,
                                     std::optional<int64_t> groups) {
  ConvGeometry g;
  int64_t rank = x.getRank();
  if (rank < 3 || rank > 5 || llvm::any_of(x.getShape().drop_front(), ShapedType::isDynamic))
    return shapeError(loc, "conv needs an input [B, C_in, S_1, ..., S_N] with N = 1, 2 or 3 and "
                           "static C_in and S, got " + shapeToString(x.getShape()));
  g.nd = rank - 2;
  g.batch = x.getDimSize(0);
  g.cin = x.getDimSize(1);
  g.groups = groups.value_or(1);
  auto list = [&](std::optional<ArrayRef<int64_t>> v, StringRef name, int64_t dflt, int64_t min,
                  SmallVectorImpl<int64_t> &outList) -> LogicalResult {
    if (!v) {
      outList.assign(g.nd, dflt);
      return success();
    }
    if (static_cast<int64_t>(v->size()) != g.nd || llvm::any_of(*v, [&](int64_t e) {
          return e < min;
        }))
      return shapeError(loc, "conv " + name + " needs " + Twine(g.nd) + " values >= " +
                                 Twine(min) + ", got [" + joinInts(*v) + "]");
    outList.assign(v->begin(), v->end());
    return success();
  };
  if (failed(list(stride, "stride", 1, 1, g.stride)) ||
      failed(list(dilation, "dilation", 1, 1, g.dilation)))
    return failure();
  if (padding && static_cast<int64_t>(padding->size()) == 2 * g.nd &&
      llvm::all_of(*padding, [](int64_t e) { return e >= 0; })) {
    for (int64_t i = 0; i < g.nd; ++i) {
      g.lo.push_back((*padding)[2 * i]);
      g.hi.push_back((*padding)[2 * i + 1]);
    }
  } else {
    SmallVector<int64_t> sym;
    if (failed(list(padding, "padding (N values, or 2·N as [lo, hi] per dim)", 0, 0, sym)))
      return failure();
    g.lo = g.hi = sym;
  }
  if (g.cin < 1)
    return shapeError(loc, "conv needs C_in >= 1, got " + shapeToString(x.getShape()));
  if (g.groups < 1 || g.cin % g.groups)
    return shapeError(loc, "conv needs groups >= 1 dividing C_in = " + Twine(g.cin) + ", got " +
                               Twine(g.groups));
  if (w.getRank() != rank || !w.hasStaticShape() || w.getDimSize(1) != g.cin / g.groups ||
      w.getDimSize(0) < 1 || w.getDimSize(0) % g.groups ||
      llvm::any_of(w.getShape().drop_front(2), [](int64_t k) { return k < 1; }))
    return shapeError(loc, "conv needs a static weight [C_out, C_in / groups = " +
                               Twine(g.cin / g.groups) + ", K_1, ..., K_" + Twine(g.nd) +
                               "] with C_out divisible by groups = " + Twine(g.groups) +
                               ", got " + shapeToString(w.getShape()));
  g.cout = w.getDimSize(0);
  // Sizes whose products stay far from int64 overflow: positions, padded
  // positions, kernel taps and each dilated kernel below 2^40 (every factor
  // checked before it multiplies).
  constexpr int64_t kMax = int64_t{1} << 40;
  auto below = [&](int64_t &acc, int64_t f) {
    if (f < 0 || f >= kMax || (f && acc >= kMax / f))
      return false;
    acc *= f;
    return true;
  };
  int64_t positions = 1, paddedAll = 1, taps = 1;
  for (int64_t i = 0; i < g.nd; ++i) {
    int64_t s = x.getDimSize(2 + i), k = w.getDimSize(2 + i);
    g.spatial.push_back(s);
    g.kernel.push_back(k);
    if (s < 1)
      return shapeError(loc, "conv needs non-empty spatial dims, got " +
                                 shapeToString(x.getShape()));
    int64_t dilated = g.dilation[i];
    bool fits = g.lo[i] < kMax && g.hi[i] < kMax && g.stride[i] < kMax && below(positions, s) &&
                below(paddedAll, s + g.lo[i] + g.hi[i]) && below(taps, k) &&
                below(dilated, k - 1 ? k - 1 : 1);
    if (!fits)
      return shapeError(loc, "conv sizes out of range (spatial dim " + Twine(i) +
                                 "): positions, padded positions, kernel taps and the dilated "
                                 "kernel must stay below 2^40");
    int64_t span = g.dilation[i] * (k - 1) + 1, padded = s + g.lo[i] + g.hi[i];
    if (padded < span)
      return shapeError(loc, "conv leaves no output in spatial dim " + Twine(i) + ": the padded " +
                                 "size " + Twine(padded) + " is shorter than the dilated kernel " +
                                 Twine(span));
    g.out.push_back((padded - span) / g.stride[i] + 1);
  }
  return g;
}

FailureOr<ConvGeometry> geometryOf(OptLoc loc, Value x, Value w, ConvOp::Adaptor a) {
  auto xt = getRankedTensor(loc, x, "input");
  auto wt = getRankedTensor(loc, w, "weight");
  if (failed(xt) || failed(wt) || failed(checkSameElementType(loc, {*xt, *wt}, {"input", "weight"})))
    return failure();
  std::optional<int64_t> groups;
  if (a.getGroupsAttr())
    groups = a.getGroupsAttr().getInt();
  return convGeometry(loc, *xt, *wt, a.getStride(), a.getPadding(), a.getDilation(), groups);
}

int64_t product(ArrayRef<int64_t> v) {
  int64_t p = 1;
  for (int64_t e : v)
    p *= e;
  return p;
}

} // namespace

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                       SmallVectorImpl<Type> &out) {
  FailureOr<ConvGeometry> g = geometryOf(loc, a.getInput(), a.getWeight(), a);
  if (failed(g))
    return failure();
  if (Value bias = a.getBias()) {
    auto t = getRankedTensor(loc, bias, "bias");
    auto x = cast<RankedTensorType>(a.getInput().getType());
    if (failed(t) || failed(checkSameElementType(loc, {x, *t}, {"input", "bias"})))
      return failure();
    if (t->getRank() != 1 || !dimsMatch(t->getDimSize(0), g->cout))
      return shapeError(loc, "conv bias must be [C_out] = [" + Twine(g->cout) + "], got " +
                                 shapeToString(t->getShape()));
  }
  SmallVector<int64_t> shape{g->batch, g->cout};
  shape.append(g->out);
  out.push_back(cast<RankedTensorType>(a.getInput().getType()).clone(shape));
  return success();
}

FailureOr<SmallVector<Value>> ConvOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, xt)))
    return failure();
  FailureOr<ConvGeometry> geo = geometryOf(getLoc(), getInput(), getWeight(), Adaptor(*this));
  if (failed(geo))
    return failure();
  const ConvGeometry &g = *geo;
  int64_t positions = product(g.spatial), outs = product(g.out), taps = product(g.kernel);
  constexpr int64_t kMaxTable = int64_t{1} << 26;
  if (outs > kMaxTable / taps)
    return emitError("conv: ") << outs << " output positions of " << taps
                               << " kernel taps make an index table over 2^26 entries",
           failure();
  Type et = xt.getElementType(), ct = mb.computeType(et);
  int64_t b = g.batch, cg = g.cin / g.groups, og = g.cout / g.groups;
  // The matmul's rows (B·O) and depth (C/G·K): below 2^40 each.
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  if ((b && outs > kMaxDim / b) || (cg && taps > kMaxDim / cg))
    return emitError("conv: ") << b << " × " << outs << " output rows or " << cg << " × " << taps
                               << " features per group reach 2^40",
           failure();

  // im2col: ids[o, k] = the input position output o reads at tap k, or the
  // zero row `positions`.
  SmallVector<int64_t> ids;
  ids.reserve(outs * taps);
  SmallVector<int64_t> o(g.nd, 0), k(g.nd, 0);
  for (int64_t oi = 0; oi < outs; ++oi) {
    for (int64_t i = g.nd - 1, r = oi; i >= 0; --i) {
      o[i] = r % g.out[i];
      r /= g.out[i];
    }
    for (int64_t ki = 0; ki < taps; ++ki) {
      for (int64_t i = g.nd - 1, r = ki; i >= 0; --i) {
        k[i] = r % g.kernel[i];
        r /= g.kernel[i];
      }
      int64_t flat = 0;
      bool inside = true;
      for (int64_t i = 0; i < g.nd; ++i) {
        int64_t p = o[i] * g.stride[i] + k[i] * g.dilation[i] - g.lo[i];
        inside = inside && p >= 0 && p < g.spatial[i];
        flat = flat * g.spatial[i] + p;
      }
      ids.push_back(inside ? flat : positions);
    }
  }
  Builder &bd = mb.builder();
  auto idsType = RankedTensorType::get({outs, taps}, bd.getI64Type());
  // [B, C, S...] → rows [positions + 1, B, C] (the last zero).
  SmallVector<int64_t> toRows;
  for (int64_t i = 0; i < g.nd; ++i)
    toRows.push_back(2 + i);
  toRows.append({0, 1});
  Value x = mb.reshape(mb.transpose(mb.widen(getInput(), ct), toRows), {positions, b, g.cin});
  auto zeroType = RankedTensorType::get({1, b, g.cin}, ct);
  x = mb.concat({x, mb.create<ConstantOp>(DenseElementsAttr::get(zeroType, bd.getFloatAttr(ct, 0.0)))},
                0);
  Value cols = mb.create<GatherOp>(
      x, mb.create<ConstantOp>(DenseElementsAttr::get(idsType, ArrayRef(ids)))); // [O, K, B, C]
  // → [G, B·O, C/G·K]: per group, rows of (channel, tap) features.
  cols = mb.transpose(cols, {2, 0, 3, 1});                                     // [B, O, C, K]
  cols = mb.reshape(cols, {b * outs, g.groups, cg * taps});
  cols = mb.transpose(cols, {1, 0, 2});
  // The weight [C_out, C/G, K...] → [G, C_out/G, C/G·K]; the product
  // [G, B·O, C_out/G].
  Value w = mb.reshape(mb.widen(getWeight(), ct), {g.groups, og, cg * taps});
  Value y = mb.matmul(cols, w, /*transA=*/false, /*transB=*/true);
  y = mb.reshape(mb.transpose(y, {1, 0, 2}), {b, outs, g.cout});               // [B, O, C_out]
  y = mb.transpose(y, {0, 2, 1});                                              // [B, C_out, O]
  if (Value bias = getBias())
    y = mb.add(y, mb.reshape(mb.widen(bias, ct), {1, g.cout, 1}));
  y = mb.reshape(y, getType().getShape());
  y = mb.widen(y, et);
  if (mb.failed() || !y)
    return emitError("conv: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y};
}
