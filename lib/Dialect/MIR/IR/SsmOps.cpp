//===- SsmOps.cpp - causal_conv1d, selective/ssd scans: shapes, decompositions ===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult CausalConv1dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  if (failed(x) || failed(w) || failed(checkSameElementType(loc, {*x, *w}, {"input", "weight"})))
    return failure();
  if (x->getRank() != 3)
    return shapeError(loc, "causal_conv1d needs an input [B, D, L], got " +
                               shapeToString(x->getShape()));
  int64_t b = x->getDimSize(0), d = x->getDimSize(1);
  if (w->getRank() != 2 || !dimsMatch(w->getDimSize(0), d) || ShapedType::isDynamic(w->getDimSize(1)) ||
      w->getDimSize(1) < 1)
    return shapeError(loc, "causal_conv1d weight must be [D, K] = [" + Twine(d) +
                               ", K] with a static K >= 1, got " + shapeToString(w->getShape()));
  int64_t k = w->getDimSize(1);
  if (Value bias = a.getBias()) {
    auto t = getRankedTensor(loc, bias, "bias");
    if (failed(t) || failed(checkSameElementType(loc, {*x, *t}, {"input", "bias"})))
      return failure();
    if (t->getRank() != 1 || !dimsMatch(t->getDimSize(0), d))
      return shapeError(loc, "causal_conv1d bias must be [D] = [" + Twine(d) + "], got " +
                                 shapeToString(t->getShape()));
  }
  SmallVector<int64_t> stateShape{b, d, k - 1};
  if (Value state = a.getState()) {
    auto t = getRankedTensor(loc, state, "state");
    if (failed(t) || failed(checkSameElementType(loc, {*x, *t}, {"input", "state"})))
      return failure();
    if (t->getRank() != 3 || !dimsMatch(t->getDimSize(0), b) || !dimsMatch(t->getDimSize(1), d) ||
        ShapedType::isDynamic(t->getDimSize(2)) || t->getDimSize(2) < k - 1)
      return shapeError(loc, "causal_conv1d state must be [B, D, S] = [" + Twine(b) + ", " +
                                 Twine(d) + ", S] with a static S >= K - 1 = " + Twine(k - 1) +
                                 ", got " + shapeToString(t->getShape()));
    stateShape[2] = t->getDimSize(2);
  }
  if (std::optional<StringRef> act = a.getActivation(); act && *act != "silu")
    return shapeError(loc, "causal_conv1d activation must be \"silu\" (or absent), got \"" +
                               *act + "\"");
  out.push_back(*x);
  out.push_back(x->clone(stateShape));
  return success();
}

FailureOr<SmallVector<Value>> CausalConv1dOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getInput().getType();
  for (Value v : getOperands())
    if (failed(MIRBuilder::requireStaticShape(*this, cast<ShapedType>(v.getType()))))
      return failure();
  Type in = xt.getElementType(), acc = mb.computeType(in);
  auto widen = [&](Value v) { return mb.widen(v, acc); };
  int64_t b = xt.getDimSize(0), d = xt.getDimSize(1), l = xt.getDimSize(2);
  int64_t k = getWeight().getType().getDimSize(1);
  int64_t s = getFinalState().getType().getDimSize(2);
  // The raw inputs before `input`: the state, or S zeros.
  Value history = getState() ? getState() : mb.zerosLike(getFinalState());
  Value all = mb.concat({history, getInput()}, 2); // [B, D, S + L]
  Value xp = widen(s == k - 1 ? all : mb.slice(all, {0, 0, s - (k - 1)}, {b, d, l + k - 1}, {1, 1, 1}));
  Value w = widen(getWeight());
  Value y;
  for (int64_t i = 0; i < k; ++i) {
    Value tap = mb.reshape(mb.slice(w, {0, i}, {d, 1}, {1, 1}), {1, d, 1});
    Value term = mb.mul(mb.slice(xp, {0, 0, i}, {b, d, l}, {1, 1, 1}), tap);
    y = y ? mb.add(y, term) : term;
  }
  if (Value bias = widen(getBias()))
    y = mb.add(y, mb.reshape(bias, {1, d, 1}));
  if (getActivation())
    y = mb.unary<SiluOp>(y);
  if (in != acc)
    y = mb.cast(y, in);
  Value state = mb.slice(all, {0, 0, l}, {b, d, s}, {1, 1, 1});
  if (mb.failed() || !y || !state)
    return emitError("causal_conv1d: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y, state};
}

//===----------------------------------------------------------------------===//
// selective_scan
//===----------------------------------------------------------------------===//

namespace {
/// "[2, ?, 5]".
std::string dimList(ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

/// `v` (when set) is a tensor of `x`'s element type and of shape `want`
/// (dynamic entries match any size); else an error naming both.
LogicalResult checkOperand(OptLoc loc, StringRef op, Value v, StringRef name, Type et,
                           ArrayRef<int64_t> want, StringRef layout, StringRef first = "u") {
  if (!v)
    return success();
  auto t = getRankedTensor(loc, v, name);
  if (failed(t) || failed(checkSameElementType(loc, {et, t->getElementType()}, {first, name})))
    return failure();
  if (t->getRank() != static_cast<int64_t>(want.size()) ||
      !llvm::all_of(llvm::zip(t->getShape(), want),
                    [](auto p) { return dimsMatch(std::get<0>(p), std::get<1>(p)); }))
    return shapeError(loc, op + " " + name + " must be " + layout + " = " + dimList(want) +
                               ", got " + dimList(t->getShape()));
  return success();
}
} // namespace

LogicalResult SelectiveScanOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto u = getRankedTensor(loc, a.getU(), "u");
  auto at = getRankedTensor(loc, a.getA(), "A");
  if (failed(u) || failed(at))
    return failure();
  if (u->getRank() != 3)
    return shapeError(loc, "selective_scan needs u [B, D, L], got " +
                               shapeToString(u->getShape()));
  int64_t b = u->getDimSize(0), d = u->getDimSize(1), l = u->getDimSize(2);
  if (at->getRank() != 2 || ShapedType::isDynamic(at->getDimSize(1)) || at->getDimSize(1) < 1)
    return shapeError(loc, "selective_scan A must be [D, N] with a static N >= 1, got " +
                               shapeToString(at->getShape()));
  int64_t n = at->getDimSize(1);
  Type et = u->getElementType();
  StringRef op = "selective_scan";
  if (failed(checkOperand(loc, op, a.getDelta(), "delta", et, {b, d, l}, "[B, D, L]")) ||
      failed(checkOperand(loc, op, a.getA(), "A", et, {d, n}, "[D, N]")) ||
      failed(checkOperand(loc, op, a.getB(), "B", et, {b, n, l}, "[B, N, L]")) ||
      failed(checkOperand(loc, op, a.getC(), "C", et, {b, n, l}, "[B, N, L]")) ||
      failed(checkOperand(loc, op, a.getD(), "D", et, {d}, "[D]")) ||
      failed(checkOperand(loc, op, a.getZ(), "z", et, {b, d, l}, "[B, D, L]")) ||
      failed(checkOperand(loc, op, a.getDeltaBias(), "delta_bias", et, {d}, "[D]")) ||
      failed(checkOperand(loc, op, a.getState(), "state", et, {b, d, n}, "[B, D, N]")))
    return failure();
  if (std::optional<int64_t> c = a.getChunkSize(); c && *c < 1)
    return shapeError(loc, "selective_scan chunk_size must be >= 1, got " + Twine(*c));
  out.push_back(*u);
  out.push_back(u->clone({b, d, n}));
  return success();
}

/// Chunk boundaries carried one after another (the recurrence) when at most
/// this many; more are scanned in chunks themselves.
constexpr int64_t kSequentialChunks = 8;
/// selective_scan's chunk_size when not given (bench/cpu/bench_mamba.py).
constexpr int64_t kDefaultChunk = 8;

/// h[t] = a[t]·h[t−1] + x[t] along axis 2 of `a`, `x` [B, D, L, N] from
/// h[−1] = `h0` [B, D, N]; returns every h. Chunks of `c` steps are scanned
/// in log2(c) doubling steps (each step composed with the one `shift`
/// before it: (a, x) ∘ (a', x') = (a·a', a·x' + x)); the chunks' last pairs
/// are the same kind of scan one level up, carried step by step when
/// `c` = 1 or at most kSequentialChunks remain, else chunked again.
static Value chunkedLinearScan(MIRBuilder &mb, Value a, Value x, Value h0, int64_t c) {
  if (mb.failed() || !a || !x || !h0)
    return Value();
  ArrayRef<int64_t> s = MIRBuilder::shapeOf(a);
  int64_t b = s[0], d = s[1], l = s[2], n = s[3];
  c = std::min(c, l);
  int64_t nc = llvm::divideCeil(l, c), lp = nc * c;
  Type et = MIRBuilder::elementType(a);
  auto fill = [&](double v, int64_t steps) { return mb.broadcast(mb.scalar(et, v), {b, d, steps, n}); };
  if (lp != l) { // identity pairs (1, 0) after the end change nothing before it
    a = mb.concat({a, fill(1.0, lp - l)}, 2);
    x = mb.concat({x, fill(0.0, lp - l)}, 2);
  }
  a = mb.reshape(a, {b, d, nc, c, n});
  x = mb.reshape(x, {b, d, nc, c, n});
  for (int64_t shift = 1; shift < c; shift *= 2) {
    auto earlier = [&](Value v, double identity) {
      Value pad = mb.broadcast(mb.scalar(et, identity), {b, d, nc, shift, n});
      return mb.concat({pad, mb.slice(v, {0, 0, 0, 0, 0}, {b, d, nc, c - shift, n},
                                      {1, 1, 1, 1, 1})},
                       3);
    };
    Value xe = earlier(x, 0.0), ae = earlier(a, 1.0);
    x = mb.add(mb.mul(a, xe), x);
    a = mb.mul(a, ae);
  }
  // The state entering each chunk.
  Value start;
  if (nc == 1) {
    start = mb.reshape(h0, {b, d, 1, 1, n});
  } else if (c == 1 || nc <= kSequentialChunks) {
    auto last = [&](Value v, int64_t j) {
      return mb.slice(v, {0, 0, j, c - 1, 0}, {b, d, 1, 1, n}, {1, 1, 1, 1, 1});
    };
    SmallVector<Value> starts;
    Value h = mb.reshape(h0, {b, d, 1, 1, n});
    for (int64_t j = 0; j < nc; ++j) {
      starts.push_back(h);
      if (j + 1 < nc)
        h = mb.add(mb.mul(last(a, j), h), last(x, j));
    }
    start = mb.concat(starts, 2);
  } else {
    auto ends = [&](Value v) {
      return mb.reshape(mb.slice(v, {0, 0, 0, c - 1, 0}, {b, d, nc - 1, 1, n}, {1, 1, 1, 1, 1}),
                        {b, d, nc - 1, n});
    };
    // The state after each chunk but the last, from the chunks' own scans.
    Value after = chunkedLinearScan(mb, ends(a), ends(x), h0, c);
    start = mb.reshape(mb.concat({mb.reshape(h0, {b, d, 1, n}), after}, 2), {b, d, nc, 1, n});
  }
  Value all = mb.reshape(mb.add(mb.mul(a, start), x), {b, d, lp, n});
  return lp == l ? all : mb.slice(all, {0, 0, 0, 0}, {b, d, l, n}, {1, 1, 1, 1});
}

FailureOr<SmallVector<Value>> SelectiveScanOp::decompose(MIRBuilder &mb) {
  RankedTensorType ut = getU().getType();
  for (Value v : getOperands())
    if (failed(MIRBuilder::requireStaticShape(*this, cast<ShapedType>(v.getType()))))
      return failure();
  Type in = ut.getElementType(), acc = mb.computeType(in);
  auto widen = [&](Value v) { return mb.widen(v, acc); };
  int64_t b = ut.getDimSize(0), d = ut.getDimSize(1), l = ut.getDimSize(2);
  int64_t n = getA().getType().getDimSize(1);
  int64_t elements;
  if (llvm::MulOverflow(b * d, l, elements) || llvm::MulOverflow(elements, n, elements) ||
      elements > (int64_t(1) << 40))
    return emitError("selective_scan: the decomposition materializes [B, D, L, N] = [")
               << b << ", " << d << ", " << l << ", " << n << "] pairs: too many elements",
           failure();
  if (l == 0) // no steps: nothing out, the state unchanged
    return SmallVector<Value>{getU(), getState() ? getState()
                                                 : mb.broadcast(mb.scalar(in, 0.0), {b, d, n})};
  Value u = widen(getU()), dt = widen(getDelta());
  if (Value bias = widen(getDeltaBias()))
    dt = mb.add(dt, mb.reshape(bias, {1, d, 1}));
  if (getDeltaSoftplus())
    dt = mb.softplus(dt);
  // Per token: [B, 1, L, N] views of B and C.
  auto perToken = [&](Value v) { return mb.reshape(mb.transpose(widen(v), {0, 2, 1}), {b, 1, l, n}); };
  Value dt4 = mb.reshape(dt, {b, d, l, 1});
  Value decay = mb.unary<ExpOp>(mb.mul(dt4, mb.reshape(widen(getA()), {1, d, 1, n})));
  Value drive = mb.mul(mb.reshape(mb.mul(dt, u), {b, d, l, 1}), perToken(getB()));
  Value h0 = getState() ? widen(getState()) : mb.broadcast(mb.scalar(acc, 0.0), {b, d, n});
  Value h = chunkedLinearScan(mb, decay, drive, h0, getChunkSize().value_or(kDefaultChunk));
  Value y = mb.reduce(ReduceKind::Sum, mb.mul(h, perToken(getC())), {3}, /*keepDims=*/false);
  if (Value dskip = widen(getD()))
    y = mb.add(y, mb.mul(u, mb.reshape(dskip, {1, d, 1})));
  if (Value z = widen(getZ()))
    y = mb.mul(y, mb.unary<SiluOp>(z));
  Value last = mb.reshape(mb.slice(h, {0, 0, l - 1, 0}, {b, d, 1, n}, {1, 1, 1, 1}), {b, d, n});
  if (in != acc) {
    y = mb.cast(y, in);
    last = mb.cast(last, in);
  }
  if (mb.failed() || !y || !last)
    return emitError("selective_scan: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y, last};
}

//===----------------------------------------------------------------------===//
// ssd_scan
//===----------------------------------------------------------------------===//

LogicalResult SsdScanOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                          SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getX(), "x");
  auto bt = getRankedTensor(loc, a.getB(), "B");
  if (failed(x) || failed(bt))
    return failure();
  auto staticPositive = [](int64_t d) { return !ShapedType::isDynamic(d) && d >= 1; };
  if (x->getRank() != 4 || !staticPositive(x->getDimSize(3)))
    return shapeError(loc, "ssd_scan needs x [B, L, H, P] with a static P >= 1, got " +
                               shapeToString(x->getShape()));
  if (bt->getRank() != 4 || !staticPositive(bt->getDimSize(2)) || !staticPositive(bt->getDimSize(3)))
    return shapeError(loc, "ssd_scan B must be [B, L, G, N] with static G, N >= 1, got " +
                               shapeToString(bt->getShape()));
  int64_t b = x->getDimSize(0), l = x->getDimSize(1), h = x->getDimSize(2), p = x->getDimSize(3);
  int64_t g = bt->getDimSize(2), n = bt->getDimSize(3);
  if (!ShapedType::isDynamic(h) && h % g != 0)
    return shapeError(loc, "ssd_scan: " + Twine(h) + " heads are not a multiple of the " +
                               Twine(g) + " groups of B and C");
  Type et = x->getElementType();
  StringRef op = "ssd_scan";
  auto check = [&](Value v, StringRef name, ArrayRef<int64_t> want, StringRef layout) {
    return checkOperand(loc, op, v, name, et, want, layout, "x");
  };
  if (failed(check(a.getDt(), "dt", {b, l, h}, "[B, L, H]")) ||
      failed(check(a.getA(), "A", {h}, "[H]")) ||
      failed(check(a.getB(), "B", {b, l, g, n}, "[B, L, G, N]")) ||
      failed(check(a.getC(), "C", {b, l, g, n}, "[B, L, G, N]")) ||
      failed(check(a.getD(), "D", {h}, "[H]")) ||
      failed(check(a.getDtBias(), "dt_bias", {h}, "[H]")) ||
      failed(check(a.getState(), "state", {b, h, p, n}, "[B, H, P, N]")))
    return failure();
  if (std::optional<int64_t> c = a.getChunkSize(); c && *c < 1)
    return shapeError(loc, "ssd_scan chunk_size must be >= 1, got " + Twine(*c));
  std::optional<APFloat> lo = a.getDtMin(), hi = a.getDtMax();
  if ((lo && !lo->isFinite()) || (hi && !hi->isFinite()))
    return shapeError(loc, "ssd_scan dt_min and dt_max must be finite (leave one out for no "
                           "bound)");
  if (lo && hi && lo->convertToDouble() > hi->convertToDouble())
    return shapeError(loc, llvm::formatv("ssd_scan dt_min {0} is above dt_max {1}",
                                         lo->convertToDouble(), hi->convertToDouble())
                               .str());
  out.push_back(*x);
  out.push_back(x->clone({b, h, p, n}));
  return success();
}

/// ssd_scan's chunk_size when not given.
constexpr int64_t kDefaultSsdChunk = 64;
/// The largest chunk a decomposition builds (a larger chunk_size is taken
/// as this: the result does not depend on it, and the [C, C] tensors and
/// gated_delta_rule's row-by-row substitution grow as C²).
constexpr int64_t kMaxChunk = 256;

/// `x` [B, H, L(, W)] padded along L with zeros to whole chunks of `c`
/// steps (steps that change nothing, for the scans' operands) and split:
/// [B, H, ⌈L/c⌉, c(, W)].
static Value padIntoChunks(MIRBuilder &mb, Value x, int64_t c) {
  if (mb.failed() || !x)
    return Value();
  SmallVector<int64_t> shape(MIRBuilder::shapeOf(x));
  int64_t l = shape[2], nc = llvm::divideCeil(l, c);
  if (nc * c != l) {
    SmallVector<int64_t> pad = shape;
    pad[2] = nc * c - l;
    x = mb.concat({x, mb.broadcast(mb.scalar(MIRBuilder::elementType(x), 0.0), pad)}, 2);
  }
  shape[2] = c;
  shape.insert(shape.begin() + 2, nc);
  return mb.reshape(x, shape);
}

/// The elements of the largest per-chunk tensor, batch · heads · chunks ·
/// max(`perChunk`), or nullopt past 2^40 (or on overflow).
static std::optional<int64_t> chunkElements(int64_t batchHeads, int64_t chunks,
                                            ArrayRef<std::pair<int64_t, int64_t>> perChunk) {
  int64_t most = 0, e;
  for (auto [x, y] : perChunk) {
    if (llvm::MulOverflow(x, y, e))
      return std::nullopt;
    most = std::max(most, e);
  }
  if (llvm::MulOverflow(batchHeads, chunks, e) || llvm::MulOverflow(e, most, e) ||
      e > (int64_t(1) << 40))
    return std::nullopt;
  return e;
}

FailureOr<SmallVector<Value>> SsdScanOp::decompose(MIRBuilder &mb) {
  RankedTensorType xt = getX().getType();
  for (Value v : getOperands())
    if (failed(MIRBuilder::requireStaticShape(*this, cast<ShapedType>(v.getType()))))
      return failure();
  Type in = xt.getElementType(), acc = mb.computeType(in);
  auto widen = [&](Value v) { return mb.widen(v, acc); };
  int64_t b = xt.getDimSize(0), l = xt.getDimSize(1), h = xt.getDimSize(2), p = xt.getDimSize(3);
  int64_t g = getB().getType().getDimSize(2), n = getB().getType().getDimSize(3);
  int64_t q = std::clamp<int64_t>(getChunkSize().value_or(kDefaultSsdChunk), 1,
                                  std::clamp<int64_t>(l, 1, kMaxChunk));
  int64_t nc = llvm::divideCeil(l, q), lp = nc * q, batchHeads;
  // The largest tensors: the chunks' [Q, Q] scores, [Q, max(N, P)] operands
  // and [N·P] states per head.
  if (llvm::MulOverflow(b, h, batchHeads) ||
      !chunkElements(batchHeads, nc, {{q, q}, {q, std::max(n, p)}, {n, p}}))
    return emitError("ssd_scan: the decomposition would materialize more than 2^40-element "
                     "chunk tensors for [B, L, H, P, N] = [")
               << b << ", " << l << ", " << h << ", " << p << ", " << n << "]",
           failure();
  if (l == 0) // no steps: nothing out, the state unchanged
    return SmallVector<Value>{getX(), getState() ? getState()
                                                 : mb.broadcast(mb.scalar(in, 0.0), {b, h, p, n})};
  Value x = widen(getX()), dt = widen(getDt());
  if (Value bias = widen(getDtBias()))
    dt = mb.add(dt, mb.reshape(bias, {1, 1, h}));
  if (getDtSoftplus())
    dt = mb.softplus(dt);
  if (std::optional<APFloat> lo = getDtMin())
    dt = mb.create<MaxOp>(dt, mb.scalar(acc, lo->convertToDouble()));
  if (std::optional<APFloat> hi = getDtMax())
    dt = mb.create<MinOp>(dt, mb.scalar(acc, hi->convertToDouble()));
  // Heads first ([B, H, L, ...]), padded to whole chunks with identity steps
  // (no decay, no input), then split into chunks [B, H, nc, Q, ...].
  auto chunks = [&](Value v, int64_t) { return padIntoChunks(mb, v, q); };
  int64_t r = h / g;
  auto perHeadBC = [&](Value v) { // [B, L, G, N] → head h reads group h / r
    v = mb.broadcast(mb.reshape(widen(v), {b, l, g, 1, n}), {b, l, g, r, n});
    return chunks(mb.transpose(mb.reshape(v, {b, l, h, n}), {0, 2, 1, 3}), n);
  };
  Value bh = perHeadBC(getB()), ch = perHeadBC(getC());
  Value xdt = chunks(mb.transpose(mb.mul(x, mb.reshape(dt, {b, l, h, 1})), {0, 2, 1, 3}), p);
  Value decayLog = chunks(mb.mul(mb.transpose(dt, {0, 2, 1}), mb.reshape(widen(getA()), {1, h, 1})), 0);
  Value cum = mb.create<CumsumOp>(decayLog, int64_t(-1), false, false); // [B, H, nc, Q]
  // Within a chunk: scores (C_i · B_j) · exp(cum_i − cum_j) for j ≤ i.
  Value segment = mb.sub(mb.reshape(cum, {b, h, nc, q, 1}), mb.reshape(cum, {b, h, nc, 1, q}));
  Value decayWithin = mb.unary<ExpOp>(mb.create<CausalMaskOp>(segment, IntegerAttr(), false));
  Value scores = mb.mul(mb.matmul(ch, bh, false, true), decayWithin);
  Value yDiag = mb.matmul(scores, xdt); // [B, H, nc, Q, P]
  // Each chunk's own final state from zero, [N, P] per head.
  Value total = mb.slice(cum, {0, 0, 0, q - 1}, {b, h, nc, 1}, {1, 1, 1, 1});
  Value toEnd = mb.unary<ExpOp>(mb.sub(total, cum));
  Value own = mb.matmul(mb.mul(bh, mb.reshape(toEnd, {b, h, nc, q, 1})), xdt, true, false);
  // The states after each chunk: a linear scan over the chunks.
  Value h0 = getState() ? mb.transpose(widen(getState()), {0, 1, 3, 2})
                        : mb.broadcast(mb.scalar(acc, 0.0), {b, h, n, p});
  h0 = mb.reshape(h0, {b, h, n * p});
  Value after = chunkedLinearScan(
      mb, mb.broadcast(mb.unary<ExpOp>(total), {b, h, nc, n * p}), mb.reshape(own, {b, h, nc, n * p}),
      h0, kDefaultChunk);
  Value start = mb.reshape(h0, {b, h, 1, n * p});
  if (nc > 1)
    start = mb.concat({start, mb.slice(after, {0, 0, 0, 0}, {b, h, nc - 1, n * p}, {1, 1, 1, 1})}, 2);
  // The entering state's part: C_i · start · exp(cum_i).
  Value yOff = mb.mul(mb.matmul(ch, mb.reshape(start, {b, h, nc, n, p})),
                      mb.reshape(mb.unary<ExpOp>(cum), {b, h, nc, q, 1}));
  Value y = mb.reshape(mb.add(yDiag, yOff), {b, h, lp, p});
  if (lp != l)
    y = mb.slice(y, {0, 0, 0, 0}, {b, h, l, p}, {1, 1, 1, 1});
  y = mb.transpose(y, {0, 2, 1, 3});
  if (Value dskip = widen(getD()))
    y = mb.add(y, mb.mul(x, mb.reshape(dskip, {1, 1, h, 1})));
  Value last = mb.reshape(mb.slice(after, {0, 0, nc - 1, 0}, {b, h, 1, n * p}, {1, 1, 1, 1}),
                          {b, h, n, p});
  last = mb.transpose(last, {0, 1, 3, 2});
  if (in != acc) {
    y = mb.cast(y, in);
    last = mb.cast(last, in);
  }
  if (mb.failed() || !y || !last)
    return emitError("ssd_scan: cannot build its decomposition for these types"), failure();
  return SmallVector<Value>{y, last};
}

//===----------------------------------------------------------------------===//
// gated_delta_rule
//===----------------------------------------------------------------------===//

LogicalResult GatedDeltaRuleOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                 Adaptor a, SmallVectorImpl<Type> &out) {
  auto q = getRankedTensor(loc, a.getQuery(), "query");
  auto v = getRankedTensor(loc, a.getValue(), "value");
  if (failed(q) || failed(v))
    return failure();
  auto staticPositive = [](int64_t d) { return !ShapedType::isDynamic(d) && d >= 1; };
  if (q->getRank() != 4 || !staticPositive(q->getDimSize(3)))
    return shapeError(loc, "gated_delta_rule needs query [B, L, H, Dk] with a static Dk >= 1, "
                           "got " + shapeToString(q->getShape()));
  if (v->getRank() != 4 || !staticPositive(v->getDimSize(3)))
    return shapeError(loc, "gated_delta_rule value must be [B, L, H, Dv] with a static Dv >= 1, "
                           "got " + shapeToString(v->getShape()));
  int64_t b = q->getDimSize(0), l = q->getDimSize(1), h = q->getDimSize(2), dk = q->getDimSize(3);
  int64_t dv = v->getDimSize(3);
  Type et = q->getElementType();
  auto check = [&](Value x, StringRef name, ArrayRef<int64_t> want, StringRef layout) {
    return checkOperand(loc, "gated_delta_rule", x, name, et, want, layout, "query");
  };
  if (failed(check(a.getKey(), "key", {b, l, h, dk}, "[B, L, H, Dk]")) ||
      failed(check(a.getValue(), "value", {b, l, h, dv}, "[B, L, H, Dv]")) ||
      failed(check(a.getG(), "g", {b, l, h}, "[B, L, H]")) ||
      failed(check(a.getBeta(), "beta", {b, l, h}, "[B, L, H]")) ||
      failed(check(a.getState(), "state", {b, h, dk, dv}, "[B, H, Dk, Dv]")))
    return failure();
  if (std::optional<int64_t> c = a.getChunkSize(); c && *c < 1)
    return shapeError(loc, "gated_delta_rule chunk_size must be >= 1, got " + Twine(*c));
  if (std::optional<APFloat> s = a.getScale(); s && !(s->isFinite() && s->convertToDouble() > 0))
    return shapeError(loc, "gated_delta_rule scale must be positive and finite");
  out.push_back(q->clone({b, l, h, dv}));
  out.push_back(q->clone({b, h, dk, dv}));
  return success();
}

/// gated_delta_rule's chunk_size when not given (flash-linear-attention's).
constexpr int64_t kDefaultDeltaChunk = 64;

FailureOr<SmallVector<Value>> GatedDeltaRuleOp::decompose(MIRBuilder &mb) {
  RankedTensorType qt = getQuery().getType();
  for (Value x : getOperands())
    if (failed(MIRBuilder::requireStaticShape(*this, cast<ShapedType>(x.getType()))))
      return failure();
  Type in = qt.getElementType(), acc = mb.computeType(in);
  auto widen = [&](Value x) { return mb.widen(x, acc); };
  int64_t b = qt.getDimSize(0), l = qt.getDimSize(1), h = qt.getDimSize(2), dk = qt.getDimSize(3);
  int64_t dv = getValue().getType().getDimSize(3);
  int64_t c = std::clamp<int64_t>(getChunkSize().value_or(kDefaultDeltaChunk), 1,
                                  std::clamp<int64_t>(l, 1, kMaxChunk));
  int64_t nc = llvm::divideCeil(l, c), lp = nc * c, bh;
  if (llvm::MulOverflow(b, h, bh) ||
      !chunkElements(bh, nc, {{c, c}, {c, std::max(dk, dv)}, {dk, dv}}))
    return emitError("gated_delta_rule: the decomposition would materialize more than "
                     "2^40-element chunk tensors for [B, L, H, Dk, Dv] = [")
               << b << ", " << l << ", " << h << ", " << dk << ", " << dv << "]",
           failure();
  if (l == 0)
    return SmallVector<Value>{mb.broadcast(mb.scalar(in, 0.0), {b, 0, h, dv}),
                              getState() ? getState()
                                         : mb.broadcast(mb.scalar(in, 0.0), {b, h, dk, dv})};
  Value q = widen(getQuery()), k = widen(getKey());
  if (getUseQkL2norm()) { // FLA's l2norm: x · rsqrt(Σ x² + 1e-6)
    auto l2norm = [&](Value x) {
      Value ss = mb.reduce(ReduceKind::Sum, mb.mul(x, x), {3}, /*keepDims=*/true);
      return mb.mul(x, mb.unary<RsqrtOp>(mb.add(ss, mb.scalar(acc, 1e-6))));
    };
    q = l2norm(q);
    k = l2norm(k);
  }
  double scale = getScale() ? getScale()->convertToDouble() : 1.0 / std::sqrt(double(dk));
  q = mb.mul(q, mb.scalar(acc, scale));
  // Heads first, padded with steps that change nothing (g = 0: no decay,
  // beta = 0: no write), then chunks [B, H, nc, C, ...].
  auto chunks = [&](Value x, int64_t width) { // heads first
    x = mb.transpose(x, width ? ArrayRef<int64_t>{0, 2, 1, 3} : ArrayRef<int64_t>{0, 2, 1});
    return padIntoChunks(mb, x, c);
  };
  q = chunks(q, dk);
  k = chunks(k, dk);
  Value v = chunks(widen(getValue()), dv);
  Value beta = mb.reshape(chunks(widen(getBeta()), 0), {b, h, nc, c, 1});
  Value cum = mb.create<CumsumOp>(chunks(widen(getG()), 0), int64_t(-1), false, false);
  Value cum5 = mb.reshape(cum, {b, h, nc, c, 1});
  // exp(cum_i − cum_j) for j ≤ i, else 0.
  Value segment = mb.sub(cum5, mb.reshape(cum, {b, h, nc, 1, c}));
  Value decay = mb.unary<ExpOp>(mb.create<CausalMaskOp>(segment, IntegerAttr(), false));
  Value kBeta = mb.mul(k, beta);
  // A = −(diag(beta)·K·Kᵀ ⊙ decay) strictly below the diagonal.
  SmallVector<float> offDiagonal(c * c, 1.0f), eye(c * c, 0.0f);
  for (int64_t i = 0; i < c; ++i) {
    offDiagonal[i * c + i] = 0.0f;
    eye[i * c + i] = 1.0f;
  }
  Value strict = mb.widen(mb.constantF32({c, c}, offDiagonal), acc);
  Value a = mb.mul(mb.unary<NegOp>(mb.mul(mb.matmul(kBeta, k, false, true), decay)), strict);
  // T = (I − A)⁻¹ by block forward substitution in log2(C) rounds: T
  // holds the inverses of the diagonal blocks of size s; pairs of them
  // merge as [[T₁, 0], [T₂·A₂₁·T₁, T₂]], i.e. T += T·(A ⊙ M_s)·T with M_s
  // selecting each pair's block below the diagonal (flash-linear-attention's
  // solve_tril order: only true inverses multiply, as stable as row
  // substitution; a product of powers of A is not).
  Value t = mb.widen(mb.constantF32({c, c}, eye), acc);
  for (int64_t s = 1; s < c && !mb.failed(); s *= 2) {
    SmallVector<float> below(c * c, 0.0f);
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < c; ++j)
        if (i / (2 * s) == j / (2 * s) && (i / s) % 2 == 1 && (j / s) % 2 == 0)
          below[i * c + j] = 1.0f;
    Value pairs = mb.mul(a, mb.widen(mb.constantF32({c, c}, below), acc));
    t = mb.add(t, mb.matmul(t, mb.matmul(pairs, t)));
  }
  Value u = mb.matmul(t, mb.mul(v, beta));                                // [.., C, Dv]
  Value w = mb.matmul(t, mb.mul(kBeta, mb.unary<ExpOp>(cum5)));          // [.., C, Dk]
  Value qk = mb.mul(mb.matmul(q, k, false, true), decay);                // [.., C, C]
  Value qDecayed = mb.mul(q, mb.unary<ExpOp>(cum5));
  SmallVector<int64_t> ones(5, 1);
  Value last = mb.slice(cum5, {0, 0, 0, c - 1, 0}, {b, h, nc, 1, 1}, ones);
  Value kToEnd = mb.mul(k, mb.unary<ExpOp>(mb.sub(last, cum5)));
  Value chunkDecay = mb.unary<ExpOp>(last); // [B, H, nc, 1, 1]
  // The chunks in order against the state [B, H, Dk, Dv].
  Value s = getState() ? widen(getState()) : mb.broadcast(mb.scalar(acc, 0.0), {b, h, dk, dv});
  auto at = [&](Value x, int64_t j) {
    SmallVector<int64_t> shape(MIRBuilder::shapeOf(x));
    SmallVector<int64_t> offsets(shape.size(), 0);
    offsets[2] = j;
    shape[2] = 1;
    Value piece = mb.slice(x, offsets, shape, SmallVector<int64_t>(shape.size(), 1));
    shape.erase(shape.begin() + 2);
    return mb.reshape(piece, shape);
  };
  SmallVector<Value> outs;
  for (int64_t j = 0; j < nc && !mb.failed(); ++j) {
    Value fresh = mb.sub(at(u, j), mb.matmul(at(w, j), s));             // [B, H, C, Dv]
    outs.push_back(mb.add(mb.matmul(at(qDecayed, j), s), mb.matmul(at(qk, j), fresh)));
    s = mb.add(mb.mul(s, at(chunkDecay, j)), mb.matmul(at(kToEnd, j), fresh, true, false));
  }
  Value y = mb.reshape(outs.size() == 1 ? outs[0] : mb.concat(outs, 2), {b, h, lp, dv});
  if (lp != l)
    y = mb.slice(y, {0, 0, 0, 0}, {b, h, l, dv}, {1, 1, 1, 1});
  y = mb.transpose(y, {0, 2, 1, 3});
  if (in != acc) {
    y = mb.cast(y, in);
    s = mb.cast(s, in);
  }
  if (mb.failed() || !y || !s)
    return emitError("gated_delta_rule: cannot build its decomposition for these types"),
           failure();
  return SmallVector<Value>{y, s};
}
