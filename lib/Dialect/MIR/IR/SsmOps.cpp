//===- SsmOps.cpp - causal_conv1d, selective_scan: shapes, decompositions -===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

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
                           ArrayRef<int64_t> want, StringRef layout) {
  if (!v)
    return success();
  auto t = getRankedTensor(loc, v, name);
  if (failed(t) || failed(checkSameElementType(loc, {et, t->getElementType()}, {"u", name})))
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
  if (getDeltaSoftplus()) // max(x, 0) + log(1 + exp(−|x|)): no overflow
    dt = mb.add(mb.create<MaxOp>(dt, mb.scalar(acc, 0.0)),
                mb.unary<LogOp>(mb.add(mb.scalar(acc, 1.0),
                                       mb.unary<ExpOp>(mb.unary<NegOp>(mb.unary<AbsOp>(dt))))));
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
