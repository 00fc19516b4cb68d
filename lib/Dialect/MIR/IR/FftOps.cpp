//===- FftOps.cpp - fft, rfft, irfft: shape rules, chains, rules -----------===//
//
// One definition of the discrete Fourier transforms: the chain of MIR ops
// below (mixed-radix stages as dense DFT matmuls on the realified complex
// planes, twiddles, Bluestein for large primes) is what every backend runs;
// the derivative rules are transforms of the cotangents (the adjoint of a
// DFT is the conjugate DFT, scaled by the dual norm).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/FftRows.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include <cmath>
#include <complex>
#include <limits>
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

using Complex = std::complex<double>;

enum class Norm { Backward, Forward, Ortho };

FailureOr<Norm> parseNorm(OptLoc loc, std::optional<StringRef> s, StringRef op) {
  if (!s || *s == "backward")
    return Norm::Backward;
  if (*s == "forward")
    return Norm::Forward;
  if (*s == "ortho")
    return Norm::Ortho;
  return shapeError(loc, op + " norm must be \"backward\", \"forward\" or \"ortho\", got \"" +
                             *s + "\"");
}

Norm normOf(std::optional<StringRef> s) {
  return s == "forward" ? Norm::Forward : s == "ortho" ? Norm::Ortho : Norm::Backward;
}

/// numpy's scale of a transform of `n` points.
double scaleOf(Norm norm, bool inverse, int64_t n) {
  if (norm == Norm::Ortho)
    return 1.0 / std::sqrt(static_cast<double>(n));
  bool scaled = inverse ? norm == Norm::Backward : norm == Norm::Forward;
  return scaled ? 1.0 / static_cast<double>(n) : 1.0;
}

/// The norm whose inverse (forward) scale is this norm's forward (inverse)
/// scale: the adjoint's.
StringAttr dualNorm(Builder &b, std::optional<StringRef> s) {
  switch (normOf(s)) {
  case Norm::Backward:
    return b.getStringAttr("forward");
  case Norm::Forward:
    return b.getStringAttr("backward");
  case Norm::Ortho:
    return b.getStringAttr("ortho");
  }
  llvm_unreachable("norm");
}

/// e^{∓2πi·num/den} (− forward, + inverse), the phase reduced exactly first.
Complex root(int64_t num, int64_t den, bool inverse) {
  num %= den;
  double theta = 2.0 * llvm::numbers::pi * static_cast<double>(num) / static_cast<double>(den);
  return {std::cos(theta), inverse ? std::sin(theta) : -std::sin(theta)};
}

bool isPrime(int64_t n) {
  if (n < 2)
    return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0)
      return false;
  return true;
}

/// The forward DFT of `a` (power-of-two length) in f64: Bluestein's kernel.
void fftInPlace(std::vector<Complex> &a) {
  size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j ^= bit;
    if (i < j)
      std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1)
    for (size_t i = 0; i < n; i += len)
      for (size_t k = 0; k < len / 2; ++k) {
        Complex w = root(static_cast<int64_t>(k), static_cast<int64_t>(len), false);
        Complex u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
}

/// Lengths up to this are one dense DFT matmul (primes up to twice it), and
/// the radix of a stage is at most this.
constexpr int64_t kDense = 32;

/// The chain of one transform, in the compute type, on "planes": values
/// [B, 2, n] with the real and imaginary parts as the middle axis.
class FftChain {
public:
  FftChain(MIRBuilder &mb, Type ct) : mb(mb), ct(ct) {}

  /// The unscaled DFT of x [B, P, n] along its last axis: P = 2 (real and
  /// imaginary parts) or P = 1 (a real input: the imaginary parts are zero,
  /// and the first stage reads half as much). The result is [B, 2, n].
  Value planes(Value x, int64_t n, bool inverse) {
    if (!x)
      return x;
    int64_t b = MIRBuilder::shapeOf(x)[0], p = MIRBuilder::shapeOf(x)[1];
    if (n == 1)
      return p == 2 ? x : mb.concat({x, constant({b, 1, 1}, std::vector<double>(b, 0.0))}, 1);
    bool prime = isPrime(n);
    if (n <= kDense || (prime && n <= 2 * kDense))
      return dense(x, n, inverse);
    if (prime)
      return bluestein(x, n, inverse);
    int64_t r = 1;
    for (int64_t d = kDense; d >= 2 && r == 1; --d)
      if (n % d == 0)
        r = d;
    if (r == 1) // every prime factor is larger than kDense
      for (int64_t d = 2; r == 1; ++d)
        if (n % d == 0)
          r = d;
    int64_t m = n / r;
    // x[r·j2 + j1] → [B, j1, P, j2]; the m-point transforms over j2.
    Value y = mb.transpose(mb.reshape(x, {b, p, m, r}), {0, 3, 1, 2});
    y = mb.reshape(planes(mb.reshape(y, {b * r, p, m}), m, inverse), {b, r, 2, m});
    // Twiddles w_n^{j1·k2}, then the r-point transforms over j1.
    std::vector<Complex> tw(r * m);
    for (int64_t j1 = 0; j1 < r; ++j1)
      for (int64_t k2 = 0; k2 < m; ++k2)
        tw[j1 * m + k2] = root(j1 * k2, n, inverse);
    y = mul(y, 2, tw, {1, r, 1, m});
    y = mb.transpose(y, {0, 3, 2, 1}); // [B, k2, 2, j1]
    y = mb.reshape(planes(mb.reshape(y, {b * m, 2, r}), r, inverse), {b, m, 2, r});
    // X[m·k1 + k2]: [B, 2, k1, k2].
    return mb.reshape(mb.transpose(y, {0, 2, 3, 1}), {b, 2, n});
  }

  /// A constant of the compute type.
  Value constant(ArrayRef<int64_t> shape, ArrayRef<double> values) {
    auto t = RankedTensorType::get(shape, ct);
    if (ct.isF64())
      return mb.create<ConstantOp>(DenseElementsAttr::get(t, values));
    SmallVector<float> f(values.begin(), values.end());
    return mb.create<ConstantOp>(DenseElementsAttr::get(t, ArrayRef<float>(f)));
  }

  /// x with its size along `axis` cut or zero-padded to `len`.
  Value fit(Value x, int64_t axis, int64_t len) {
    if (!x)
      return x;
    SmallVector<int64_t> shape(MIRBuilder::shapeOf(x));
    int64_t cur = shape[axis];
    if (cur == len)
      return x;
    if (cur > len) {
      SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
      shape[axis] = len;
      return mb.slice(x, offsets, shape, strides);
    }
    shape[axis] = len - cur;
    return mb.concat({x, constant(shape, std::vector<double>(product(shape), 0.0))}, axis);
  }

  /// x times the complex constant `c` (of `shape`, broadcast against x),
  /// the parts of x along `planeAxis` (one part: x is real).
  Value mul(Value x, int64_t planeAxis, ArrayRef<Complex> c, ArrayRef<int64_t> shape) {
    if (!x)
      return x;
    std::vector<double> re, im;
    for (Complex z : c) {
      re.push_back(z.real());
      im.push_back(z.imag());
    }
    Value cr = constant(shape, re), ci = constant(shape, im);
    if (MIRBuilder::shapeOf(x)[planeAxis] == 1) // real x
      return mb.concat({mb.mul(x, cr), mb.mul(x, ci)}, planeAxis);
    Value xr = plane(x, planeAxis, 0), xi = plane(x, planeAxis, 1);
    Value outR = mb.sub(mb.mul(xr, cr), mb.mul(xi, ci));
    Value outI = mb.add(mb.mul(xr, ci), mb.mul(xi, cr));
    return mb.concat({outR, outI}, planeAxis);
  }

  /// The real (p = 0) or imaginary (p = 1) part of x, size 1 at `planeAxis`.
  Value plane(Value x, int64_t planeAxis, int64_t p) {
    if (!x)
      return mb.fail();
    int64_t rank = MIRBuilder::typeOf(x).getRank();
    SmallVector<int64_t> offsets(rank, 0), sizes(rank, -1), strides(rank, 1);
    offsets[planeAxis] = p;
    sizes[planeAxis] = 1;
    return mb.slice(x, offsets, sizes, strides);
  }

  static int64_t product(ArrayRef<int64_t> shape) {
    int64_t p = 1;
    for (int64_t d : shape)
      p *= d;
    return p;
  }

private:
  /// One matmul with the realified DFT matrix: rows (c, j), columns
  /// (c', k); only the real rows (c = 0) for a real x.
  Value dense(Value x, int64_t n, bool inverse) {
    int64_t b = MIRBuilder::shapeOf(x)[0], p = MIRBuilder::shapeOf(x)[1];
    std::vector<double> m(4 * n * n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < n; ++k) {
        Complex w = root(j * k, n, inverse);
        m[j * 2 * n + k] = w.real();            // re → re
        m[(n + j) * 2 * n + k] = -w.imag();     // im → re
        m[j * 2 * n + n + k] = w.imag();        // re → im
        m[(n + j) * 2 * n + n + k] = w.real();  // im → im
      }
    m.resize(p * n * 2 * n);
    Value y = mb.matmul(mb.reshape(x, {b, p * n}), constant({p * n, 2 * n}, m));
    return mb.reshape(y, {b, 2, n});
  }

  /// Bluestein: X[k] = c_k · Σ_j (x_j c_j) · conj(c_{k−j}), c_j = e^{∓πi·j²/n},
  /// the convolution circular over a power of two ≥ 2n − 1.
  Value bluestein(Value x, int64_t n, bool inverse) {
    int64_t len = 1;
    while (len < 2 * n - 1)
      len <<= 1;
    int64_t b = MIRBuilder::shapeOf(x)[0];
    std::vector<Complex> chirp(n);
    for (int64_t j = 0; j < n; ++j)
      chirp[j] = root((j * j) % (2 * n), 2 * n, inverse);
    std::vector<Complex> h(len, Complex(0.0, 0.0));
    for (int64_t j = 0; j < n; ++j) {
      h[j] = std::conj(chirp[j]);
      if (j > 0)
        h[len - j] = std::conj(chirp[j]);
    }
    fftInPlace(h);
    for (Complex &z : h)
      z /= static_cast<double>(len); // the unscaled inverse below
    Value a = fit(mul(x, 1, chirp, {1, 1, n}), 2, len);
    Value conv = planes(mul(planes(a, len, false), 1, h, {1, 1, len}), len, true);
    conv = mb.slice(conv, {0, 0, 0}, {b, 2, n}, {1, 1, 1});
    return mul(conv, 1, chirp, {1, 1, n});
  }

  MIRBuilder &mb;
  Type ct;
};

/// Labels of a value's dims: logical axes 0.., the complex parts -1.
constexpr int64_t kPlane = -1;

/// The permutation that takes dims labelled `from` to the order `to`.
SmallVector<int64_t> permBetween(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<int64_t> perm;
  for (int64_t l : to)
    perm.push_back(llvm::find(from, l) - from.begin());
  return perm;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A value with labelled dims, moved around for transforms along one axis.
struct Labelled {
  Value v;
  SmallVector<int64_t> labels;

  /// Transposes to the order `to`.
  void moveTo(MIRBuilder &mb, ArrayRef<int64_t> to) {
    SmallVector<int64_t> perm = permBetween(labels, to);
    if (!isIdentity(perm))
      v = mb.transpose(v, perm);
    labels.assign(to.begin(), to.end());
  }
  /// Transposes so that `axis` is last (after the parts, when present) and
  /// returns the product of the other dims.
  int64_t bringLast(MIRBuilder &mb, int64_t axis) {
    SmallVector<int64_t> to;
    bool parts = llvm::is_contained(labels, kPlane);
    for (int64_t l : labels)
      if (l != axis && l != kPlane)
        to.push_back(l);
    if (parts)
      to.push_back(kPlane);
    to.push_back(axis);
    moveTo(mb, to);
    if (!v)
      return 0;
    return FftChain::product(MIRBuilder::shapeOf(v).drop_back(parts ? 2 : 1));
  }
  /// The dims as they are, the last (and the parts) replaced.
  SmallVector<int64_t> leadingShape(bool parts) const {
    if (!v)
      return {};
    return SmallVector<int64_t>(MIRBuilder::shapeOf(v).drop_back(parts ? 2 : 1));
  }
};

/// The labels of the complex block layout's "P form": the stored
/// [..., 2·dk] as [..., 2, dk].
SmallVector<int64_t> complexLabels(int64_t rank) {
  SmallVector<int64_t> l;
  for (int64_t i = 0; i + 1 < rank; ++i)
    l.push_back(i);
  l.push_back(kPlane);
  l.push_back(rank - 1);
  return l;
}

/// The stored complex tensor `x` (logical shape `logical`) in P form.
SmallVector<int64_t> pShape(ArrayRef<int64_t> logical) {
  SmallVector<int64_t> s(logical.drop_back());
  s.push_back(2);
  s.push_back(logical.back());
  return s;
}

SmallVector<int64_t> logicalShape(RankedTensorType stored) {
  SmallVector<int64_t> s(stored.getShape());
  if (!ShapedType::isDynamic(s.back()))
    s.back() /= 2;
  return s;
}

SmallVector<int64_t> storedShape(ArrayRef<int64_t> logical) {
  SmallVector<int64_t> s(logical);
  if (!ShapedType::isDynamic(s.back()))
    s.back() *= 2;
  return s;
}

LogicalResult checkComplex(OptLoc loc, RankedTensorType t, StringRef op) {
  int64_t last = t.getRank() ? t.getShape().back() : 0;
  if (t.getRank() == 0 || ShapedType::isDynamic(last) || last % 2 != 0 || last == 0)
    return shapeError(loc, op + " input must be complex in the block layout (a static, even, "
                                "non-zero last axis: real parts, then imaginary parts), got " +
                               shapeToString(t.getShape()));
  return success();
}

/// Real weights along logical axis `axis` of the complex `x` (stored form).
Value scaleBins(MIRBuilder &mb, FftChain &chain, Value x, int64_t axis, ArrayRef<double> w) {
  if (!x)
    return mb.fail();
  SmallVector<int64_t> logical = logicalShape(MIRBuilder::typeOf(x));
  int64_t rank = static_cast<int64_t>(logical.size());
  SmallVector<int64_t> p = pShape(logical), cshape(rank + 1, 1);
  cshape[axis == rank - 1 ? rank : axis] = static_cast<int64_t>(w.size());
  Value y = mb.mul(mb.reshape(x, p), chain.constant(cshape, w));
  return mb.reshape(y, storedShape(logical));
}

/// A decomposition's last steps: `y` scaled by `s` (numpy's norm) and
/// rounded back to the op's element type; an error at `op` when any step
/// could not be built.
FailureOr<SmallVector<Value>> finishChain(MIRBuilder &mb, Operation *op, Value y, double s,
                                          Type ct, Type et) {
  if (y && s != 1.0)
    y = mb.mul(y, mb.scalar(ct, s));
  if (y && ct != et)
    y = mb.cast(y, et);
  if (mb.failed() || !y)
    return op->emitError() << op->getName().stripDialect()
                           << ": cannot build its decomposition for these types";
  return SmallVector<Value>{y};
}

/// The jvp of a transform (a linear map): the op itself on the tangent.
LogicalResult linearJvp(Operation *op, MIRBuilder &mb, ValueRange tangents,
                        SmallVectorImpl<Value> &dy) {
  dy.assign(1, Value());
  if (!tangents[0])
    return success();
  Operation *copy = mb.builder().clone(*op);
  copy->setOperand(0, tangents[0]);
  dy[0] = mb.record(copy);
  return success();
}

/// The rfft/irfft derivatives build static reshapes and slices.
LogicalResult requireStaticDerivative(Operation *op, RankedTensorType in, RankedTensorType out) {
  if (in.hasStaticShape() && out.hasStaticShape())
    return success();
  return op->emitError() << op->getName().stripDialect()
                         << ": its derivative needs static shapes; bind the dims first "
                            "(rlx-mir-specialize)";
}

/// A verified axis attribute, made non-negative.
int64_t axisOf(IntegerAttr axis, int64_t rank) {
  int64_t a = axis.getInt();
  return a < 0 ? a + rank : a;
}

/// rfft's bin weights: 1 for DC (and the Nyquist bin of an even n), 2 for
/// the bins whose conjugates are the negative frequencies.
std::vector<double> hermitianWeights(int64_t n) {
  std::vector<double> w(n / 2 + 1, 2.0);
  w[0] = 1.0;
  if (n % 2 == 0)
    w.back() = 1.0;
  return w;
}

} // namespace

//===----------------------------------------------------------------------===//
// fft
//===----------------------------------------------------------------------===//

LogicalResult FftOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                      SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(checkComplex(loc, *x, "fft")) ||
      failed(parseNorm(loc, a.getNorm(), "fft")))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> logical = logicalShape(*x);
  if (a.getAxes().empty())
    return shapeError(loc, "fft needs at least one axis");
  SmallVector<bool> seen(rank, false);
  for (int64_t axis : a.getAxes()) {
    auto ax = normalizeAxis(loc, axis, rank, "fft axis");
    if (failed(ax))
      return failure();
    if (seen[*ax])
      return shapeError(loc, "fft axes must not repeat, got axis " + Twine(axis) + " twice");
    seen[*ax] = true;
    if (ShapedType::isDynamic(logical[*ax]) || logical[*ax] == 0)
      return shapeError(loc, "fft needs a static, non-zero length along axis " + Twine(*ax) +
                                 ", got " + shapeToString(logical) + " (logical shape)");
  }
  out.push_back(*x);
  return success();
}

FailureOr<SmallVector<Value>> FftOp::decompose(MIRBuilder &mb) {
  RankedTensorType t = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, t)))
    return failure();
  Type et = t.getElementType(), ct = mb.computeType(et);
  FftChain chain(mb, ct);
  SmallVector<int64_t> logical = logicalShape(t);
  int64_t rank = t.getRank(), count = 1;
  Labelled x{mb.reshape(mb.widen(getInput(), ct), pShape(logical)), complexLabels(rank)};
  for (int64_t axis : getAxes()) {
    int64_t ax = axis < 0 ? axis + rank : axis, n = logical[ax];
    count *= n;
    int64_t b = x.bringLast(mb, ax);
    SmallVector<int64_t> lead = x.leadingShape(true);
    Value y = chain.planes(mb.reshape(x.v, {b, 2, n}), n, getInverse());
    lead.append({2, n});
    x.v = mb.reshape(y, lead);
  }
  x.moveTo(mb, complexLabels(rank));
  Value y = mb.reshape(x.v, t.getShape());
  return finishChain(mb, *this, y, scaleOf(normOf(getNorm()), getInverse(), count), ct, et);
}

LogicalResult FftOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                         SmallVectorImpl<Value> &dx) {
  dx.assign(1, Value());
  if (!need[0] || !cotangents[0])
    return success();
  // The adjoint of s·F is s·F̄: the other direction with the dual norm.
  UnitAttr inv = getInverse() ? UnitAttr() : mb.builder().getUnitAttr();
  dx[0] = mb.create<FftOp>(cotangents[0], getAxesAttr(), inv,
                           dualNorm(mb.builder(), getNorm()));
  return success(dx[0] != nullptr);
}

LogicalResult FftOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return linearJvp(*this, mb, tangents, dy);
}

//===----------------------------------------------------------------------===//
// rfft
//===----------------------------------------------------------------------===//

LogicalResult RfftOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                       SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(parseNorm(loc, a.getNorm(), "rfft")))
    return failure();
  if (x->getRank() == 0)
    return shapeError(loc, "rfft needs an input of rank >= 1");
  auto ax = normalizeAxis(loc, a.getAxisAttr().getInt(), x->getRank(), "rfft axis");
  if (failed(ax))
    return failure();
  if (x->getDimSize(*ax) == 0 || x->getShape().back() == 0)
    return shapeError(loc, "rfft needs a non-empty input along axis " + Twine(*ax) +
                               " and the last axis, got " + shapeToString(x->getShape()));
  int64_t n = a.getNAttr() ? a.getNAttr().getInt() : x->getDimSize(*ax);
  if (ShapedType::isDynamic(n) || n < 1)
    return shapeError(loc, "rfft needs n >= 1 (n, or a static length along axis " + Twine(*ax) +
                               "), got " + (ShapedType::isDynamic(n) ? std::string("?")
                                                                     : std::to_string(n)));
  SmallVector<int64_t> logical(x->getShape());
  logical[*ax] = n / 2 + 1;
  out.push_back(x->clone(storedShape(logical)));
  return success();
}

FailureOr<SmallVector<Value>> RfftOp::decompose(MIRBuilder &mb) {
  RankedTensorType t = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, t)))
    return failure();
  Type et = t.getElementType(), ct = mb.computeType(et);
  FftChain chain(mb, ct);
  int64_t rank = t.getRank(), ax = axisOf(getAxisAttr(), rank);
  int64_t n = getN() ? static_cast<int64_t>(*getN()) : t.getDimSize(ax), bins = n / 2 + 1;
  SmallVector<int64_t> labels = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Labelled x{mb.widen(getInput(), ct), labels};
  int64_t b = x.bringLast(mb, ax);
  SmallVector<int64_t> lead = x.leadingShape(false);
  Value re = chain.fit(mb.reshape(x.v, {b, 1, t.getDimSize(ax)}), 2, n);
  Value y = chain.planes(re, n, /*inverse=*/false);
  y = mb.slice(y, {0, 0, 0}, {b, 2, bins}, {1, 1, 1});
  lead.append({2, bins});
  x.v = mb.reshape(y, lead);
  x.labels.insert(x.labels.end() - 1, kPlane);
  x.moveTo(mb, complexLabels(rank));
  y = mb.reshape(x.v, getType().getShape());
  return finishChain(mb, *this, y, scaleOf(normOf(getNorm()), false, n), ct, et);
}

LogicalResult RfftOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                          SmallVectorImpl<Value> &dx) {
  dx.assign(1, Value());
  if (!need[0] || !cotangents[0])
    return success();
  // rfft = keep bins ∘ s·F ∘ embed ∘ fit: its adjoint is Re ∘ s·F̄ ∘ zero
  // bins, which is irfft (dual norm) of the cotangent with the doubled bins
  // halved, then the fit undone.
  RankedTensorType t = getInput().getType();
  if (failed(requireStaticDerivative(*this, t, getType())))
    return failure();
  int64_t rank = t.getRank(), ax = axisOf(getAxisAttr(), rank);
  int64_t n = getN() ? static_cast<int64_t>(*getN()) : t.getDimSize(ax);
  Type et = t.getElementType(), ct = mb.computeType(et);
  FftChain chain(mb, ct);
  std::vector<double> w = hermitianWeights(n);
  for (double &v : w)
    v = 1.0 / v;
  Value g = scaleBins(mb, chain, mb.widen(cotangents[0], ct), ax, w);
  Value r = mb.create<IrfftOp>(g, getAxisAttr(), mb.builder().getI64IntegerAttr(n),
                               dualNorm(mb.builder(), getNorm()));
  dx[0] = mb.widen(chain.fit(r, ax, t.getDimSize(ax)), et);
  return success(dx[0] != nullptr);
}

LogicalResult RfftOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return linearJvp(*this, mb, tangents, dy);
}

//===----------------------------------------------------------------------===//
// irfft
//===----------------------------------------------------------------------===//

LogicalResult IrfftOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                        SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(checkComplex(loc, *x, "irfft")) ||
      failed(parseNorm(loc, a.getNorm(), "irfft")))
    return failure();
  auto ax = normalizeAxis(loc, a.getAxisAttr().getInt(), x->getRank(), "irfft axis");
  if (failed(ax))
    return failure();
  SmallVector<int64_t> logical = logicalShape(*x);
  int64_t m = logical[*ax];
  if (m == 0)
    return shapeError(loc, "irfft needs at least one bin along axis " + Twine(*ax) + ", got " +
                               shapeToString(x->getShape()));
  int64_t n = a.getNAttr() ? a.getNAttr().getInt()
                           : (ShapedType::isDynamic(m) ? m : 2 * (m - 1));
  if (ShapedType::isDynamic(n) || n < 1)
    return shapeError(loc, "irfft needs n >= 1 (n, or at least 2 bins along axis " +
                               Twine(*ax) + " for the default 2·(bins − 1)), got " +
                               (ShapedType::isDynamic(n) ? std::string("?") : std::to_string(n)));
  logical[*ax] = n;
  out.push_back(x->clone(logical));
  return success();
}

FailureOr<SmallVector<Value>> IrfftOp::decompose(MIRBuilder &mb) {
  RankedTensorType t = getInput().getType();
  if (failed(MIRBuilder::requireStaticShape(*this, t)))
    return failure();
  Type et = t.getElementType(), ct = mb.computeType(et);
  FftChain chain(mb, ct);
  int64_t rank = t.getRank(), ax = axisOf(getAxisAttr(), rank);
  SmallVector<int64_t> logical = logicalShape(t);
  int64_t n = getType().getDimSize(ax), bins = n / 2 + 1;
  Labelled x{mb.reshape(mb.widen(getInput(), ct), pShape(logical)), complexLabels(rank)};
  int64_t b = x.bringLast(mb, ax);
  SmallVector<int64_t> lead = x.leadingShape(true);
  // Σ_k full[k]·w^{jk} is real: DC + 2·Re(positive bins) [+ Nyquist], i.e.
  // the real part of the inverse transform of the doubled bins, zero-padded.
  Value y = chain.fit(mb.reshape(x.v, {b, 2, logical[ax]}), 2, bins);
  std::vector<double> w = hermitianWeights(n);
  y = mb.mul(y, chain.constant({1, 1, bins}, w));
  y = chain.planes(chain.fit(y, 2, n), n, /*inverse=*/true);
  y = chain.plane(y, 1, 0);
  lead.push_back(n);
  x.v = mb.reshape(y, lead);
  llvm::erase(x.labels, kPlane);
  x.moveTo(mb, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  y = x.v;
  return finishChain(mb, *this, y, scaleOf(normOf(getNorm()), true, n), ct, et);
}

LogicalResult IrfftOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                           SmallVectorImpl<Value> &dx) {
  dx.assign(1, Value());
  if (!need[0] || !cotangents[0])
    return success();
  // irfft = Re ∘ s·F̄ ∘ zero-pad ∘ weights ∘ fit: the adjoint is the
  // weights times rfft (dual norm) of the cotangent, fitted back.
  RankedTensorType t = getInput().getType();
  if (failed(requireStaticDerivative(*this, t, getType())))
    return failure();
  int64_t rank = t.getRank(), ax = axisOf(getAxisAttr(), rank);
  int64_t n = getType().getDimSize(ax);
  Type et = t.getElementType(), ct = mb.computeType(et);
  FftChain chain(mb, ct);
  Value r = mb.create<RfftOp>(mb.widen(cotangents[0], ct), getAxisAttr(),
                              mb.builder().getI64IntegerAttr(n), dualNorm(mb.builder(), getNorm()));
  r = scaleBins(mb, chain, r, ax, hermitianWeights(n));
  if (!r)
    return failure();
  SmallVector<int64_t> logical = logicalShape(MIRBuilder::typeOf(r));
  int64_t pos = ax == rank - 1 ? rank : ax;
  r = chain.fit(mb.reshape(r, pShape(logical)), pos, logicalShape(t)[ax]);
  dx[0] = mb.widen(mb.reshape(r, t.getShape()), et);
  return success(dx[0] != nullptr);
}

LogicalResult IrfftOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return linearJvp(*this, mb, tangents, dy);
}

//===----------------------------------------------------------------------===//
// The row form (FftRows.h)
//===----------------------------------------------------------------------===//

std::optional<FftRows> mir::fftRows(Operation *op) {
  if (!isa<FftOp, RfftOp, IrfftOp>(op))
    return std::nullopt;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() || in.getRank() == 0)
    return std::nullopt;
  int64_t rank = in.getRank();
  FftRows f;
  std::optional<StringRef> norm;
  if (auto fft = dyn_cast<FftOp>(op)) {
    ArrayRef<int64_t> axes = fft.getAxes();
    if (axes.size() != 1 || (axes[0] != rank - 1 && axes[0] != -1))
      return std::nullopt;
    f.kind = FftRows::Kind::C2C;
    f.n = f.stored = in.getShape().back() / 2;
    f.inverse = fft.getInverse();
    norm = fft.getNorm();
  } else if (auto rfft = dyn_cast<RfftOp>(op)) {
    if (axisOf(rfft.getAxisAttr(), rank) != rank - 1)
      return std::nullopt;
    f.kind = FftRows::Kind::R2C;
    f.stored = in.getShape().back();
    f.n = rfft.getN() ? static_cast<int64_t>(*rfft.getN()) : f.stored;
    f.inverse = false;
    norm = rfft.getNorm();
  } else if (auto irfft = dyn_cast<IrfftOp>(op)) {
    if (axisOf(irfft.getAxisAttr(), rank) != rank - 1)
      return std::nullopt;
    f.kind = FftRows::Kind::C2R;
    f.stored = in.getShape().back() / 2;
    f.n = out.getShape().back();
    f.inverse = true;
    norm = irfft.getNorm();
  } else {
    return std::nullopt;
  }
  // Two buffers of real and imaginary planes; one block per row.
  int64_t planeBytes = 4 * (in.getElementType().isF64() ? 8 : 4);
  if (f.n < 1 || f.n > kFftRowsMaxBytes / planeBytes)
    return std::nullopt;
  f.rows = in.getNumElements() / std::max<int64_t>(in.getShape().back(), 1);
  if (f.rows > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  f.scale = scaleOf(normOf(norm), f.inverse, f.n);
  int64_t m = f.n;
  for (int64_t r : {4, 2, 3, 5, 7, 11, 13})
    for (; m % r == 0; m /= r)
      f.radices.push_back(r);
  if (m != 1)
    return std::nullopt; // a prime factor over kFftRowsMaxRadix
  return f;
}
