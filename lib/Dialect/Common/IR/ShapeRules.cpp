//===- ShapeRules.cpp - Shape inference and checks for RLX ops ------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace mlir;
using namespace mlir::rlx;

LogicalResult mlir::rlx::checkGatedActivation(OptLoc loc, StringRef op, ActivationKind act) {
  switch (act) {
  case ActivationKind::Silu:
  case ActivationKind::Gelu:
  case ActivationKind::GeluTanh:
  case ActivationKind::Relu:
    return success();
  default:
    return shapeError(loc, op + " activation must be silu, gelu, gelu_tanh or relu, got " +
                               stringifyActivationKind(act));
  }
}

LogicalResult mlir::rlx::shapeError(OptLoc loc, const Twine &msg) {
  if (loc)
    emitError(*loc) << msg;
  return failure();
}

/// Dims and attribute values come from input text: a product that does not
/// fit in int64_t is no size at all (the callers report a mismatch), never a
/// wrapped one.
static std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (llvm::MulOverflow(a, b, r))
    return std::nullopt;
  return r;
}

/// The static dims' product of `shape`, or failure when it overflows.
static LogicalResult checkElementCount(OptLoc loc, ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (isDynamicDim(d) || d == 0)
      continue;
    std::optional<int64_t> next = checkedMul(n, d);
    if (!next)
      return shapeError(loc, "shape " + shapeToString(shape) +
                                 " has more elements than an int64_t counts");
    n = *next;
  }
  return success();
}

bool mlir::rlx::dimsMatch(int64_t a, int64_t b) {
  return a == b || isDynamicDim(a) || isDynamicDim(b);
}

std::string mlir::rlx::shapeToString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (shape.empty())
    return "scalar";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (isDynamicDim(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

std::string mlir::rlx::typeToString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

FailureOr<RankedTensorType> mlir::rlx::getRankedTensor(OptLoc loc, Value v,
                                                       StringRef what) {
  if (!v)
    return shapeError(loc, Twine(what) + " is missing");
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return shapeError(loc, Twine(what) + " must be a ranked tensor, got " +
                               typeToString(v.getType()));
  return t;
}

LogicalResult mlir::rlx::checkSameElementType(OptLoc loc, ArrayRef<Type> types,
                                              ArrayRef<StringRef> names) {
  assert(types.size() == names.size() && "one name per type");
  if (types.empty())
    return success();
  Type first = getElementTypeOrSelf(types.front());
  for (auto [t, name] : llvm::zip(types.drop_front(), names.drop_front())) {
    Type e = getElementTypeOrSelf(t);
    if (e != first)
      return shapeError(loc, Twine("element type mismatch: ") + names.front() +
                                 " is " + typeToString(first) + " but " + name +
                                 " is " + typeToString(e));
  }
  return success();
}

FailureOr<int64_t> mlir::rlx::normalizeAxis(OptLoc loc, int64_t axis,
                                            int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank)
    return shapeError(loc, Twine(what) + " " + Twine(axis) +
                               " is out of range for rank " + Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

LogicalResult mlir::rlx::checkEps(OptLoc loc, double eps) {
  if (!(eps > 0.0) || !std::isfinite(eps))
    return shapeError(loc, Twine("eps must be a finite value > 0, got ") +
                               formatNumber(eps));
  return success();
}

FailureOr<Shape> mlir::rlx::broadcastShapes(OptLoc loc, ArrayRef<int64_t> a,
                                            ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (isDynamicDim(da) || isDynamicDim(db)) {
      // A dynamic dim against a static one > 1 must become that size; two
      // dynamic dims are assumed equal (they may not be 1 at run time).
      out[i] = isDynamicDim(da) ? db : da;
    } else if (da == db) {
      out[i] = da;
    } else {
      return shapeError(loc, "shapes " + shapeToString(a) + " and " +
                                 shapeToString(b) +
                                 " are not broadcast-compatible (dim " +
                                 Twine(i) + ": " + Twine(da) + " vs " +
                                 Twine(db) + ")");
    }
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferMatmul(OptLoc loc, ArrayRef<int64_t> lhs,
                                        ArrayRef<int64_t> rhs, bool transA,
                                        bool transB) {
  if (lhs.size() < 2 || rhs.size() < 2)
    return shapeError(loc, "matmul operands must have rank >= 2, got lhs " +
                               shapeToString(lhs) + " and rhs " +
                               shapeToString(rhs));
  size_t lr = lhs.size(), rr = rhs.size();
  int64_t m = transA ? lhs[lr - 1] : lhs[lr - 2];
  int64_t kl = transA ? lhs[lr - 2] : lhs[lr - 1];
  int64_t kr = transB ? rhs[rr - 1] : rhs[rr - 2];
  int64_t n = transB ? rhs[rr - 2] : rhs[rr - 1];
  if (!dimsMatch(kl, kr))
    return shapeError(loc, "matmul contraction dims differ: lhs " +
                               shapeToString(lhs) + " has K=" + Twine(kl) +
                               ", rhs " + shapeToString(rhs) + " has K=" +
                               Twine(kr));
  auto batch = broadcastShapes(loc, lhs.drop_back(2), rhs.drop_back(2));
  if (failed(batch))
    return failure();
  Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  return out;
}

FailureOr<Shape> mlir::rlx::inferLinear(OptLoc loc, ArrayRef<int64_t> x,
                                        ArrayRef<int64_t> weight,
                                        std::optional<ArrayRef<int64_t>> bias,
                                        WeightLayout layout,
                                        StringRef weightName) {
  if (x.empty())
    return shapeError(loc, "input must have rank >= 1");
  if (weight.size() != 2)
    return shapeError(loc, Twine(weightName) + " must be rank 2, got " +
                               shapeToString(weight));
  bool outIn = layout == WeightLayout::OutIn;
  int64_t in = outIn ? weight[1] : weight[0];
  int64_t out = outIn ? weight[0] : weight[1];
  if (!dimsMatch(in, x.back()))
    return shapeError(
        loc, Twine(weightName) + " " + shapeToString(weight) + " (layout " +
                 stringifyWeightLayout(layout) + ") expects in_features=" +
                 Twine(in) + " but the input's last dim is " +
                 (isDynamicDim(x.back()) ? std::string("?")
                                         : std::to_string(x.back())));
  if (bias && (bias->size() != 1 || !dimsMatch((*bias)[0], out)))
    return shapeError(loc, "bias must be [" + Twine(out) + "], got " +
                               shapeToString(*bias));
  Shape result(x.begin(), x.end());
  result.back() = out;
  return result;
}

LogicalResult mlir::rlx::checkChannelVector(OptLoc loc, ArrayRef<int64_t> x,
                                            ArrayRef<int64_t> w,
                                            StringRef name) {
  if (x.empty())
    return shapeError(loc, "input must have rank >= 1");
  if (w.size() != 1 || !dimsMatch(w[0], x.back()))
    return shapeError(loc, Twine(name) + " must be [" +
                               (isDynamicDim(x.back())
                                    ? std::string("?")
                                    : std::to_string(x.back())) +
                               "] (the input's last dim), got " +
                               shapeToString(w));
  return success();
}

namespace {
/// Batch, sequence, heads and head size of one attention operand.
struct AttnOperand {
  int64_t batch, seq, heads, headDim;
};
} // namespace

static FailureOr<AttnOperand> decodeAttnOperand(OptLoc loc, StringRef name,
                                                ArrayRef<int64_t> s,
                                                AttnLayout layout,
                                                int64_t heads,
                                                std::optional<int64_t> headDim) {
  switch (layout) {
  case AttnLayout::BSD: {
    if (s.size() != 3)
      return shapeError(loc, Twine(name) +
                                 " must be rank 3 [batch, seq, heads*head_dim] "
                                 "for layout bsd, got " +
                                 shapeToString(s));
    int64_t d = s[2];
    int64_t hd = ShapedType::kDynamic;
    if (!isDynamicDim(d)) {
      if (headDim) {
        std::optional<int64_t> width = checkedMul(heads, *headDim);
        if (!width || d != *width)
          return shapeError(loc, Twine(name) + " hidden size " + Twine(d) +
                                     " != " + Twine(heads) + " heads x " +
                                     Twine(*headDim) + " head_dim");
        hd = *headDim;
      } else {
        if (d % heads != 0)
          return shapeError(loc, Twine(name) + " hidden size " + Twine(d) +
                                     " is not divisible by " + Twine(heads) +
                                     " heads");
        hd = d / heads;
      }
    } else if (headDim) {
      hd = *headDim;
    }
    return AttnOperand{s[0], s[1], heads, hd};
  }
  case AttnLayout::BSHD:
  case AttnLayout::BHSD: {
    bool bshd = layout == AttnLayout::BSHD;
    if (s.size() != 4)
      return shapeError(loc, Twine(name) + " must be rank 4 for layout " +
                                 stringifyAttnLayout(layout) + ", got " +
                                 shapeToString(s));
    int64_t h = bshd ? s[2] : s[1];
    if (!dimsMatch(h, heads))
      return shapeError(loc, Twine(name) + " has " + Twine(h) +
                                 " heads, expected " + Twine(heads));
    if (headDim && !dimsMatch(s[3], *headDim))
      return shapeError(loc, Twine(name) + " head size " + Twine(s[3]) +
                                 " != head_dim " + Twine(*headDim));
    return AttnOperand{s[0], bshd ? s[1] : s[2], heads, s[3]};
  }
  }
  llvm_unreachable("unknown layout");
}

FailureOr<Shape> mlir::rlx::inferAttention(
    OptLoc loc, const AttentionConfig &cfg, ArrayRef<int64_t> q,
    ArrayRef<int64_t> k, ArrayRef<int64_t> v,
    std::optional<ArrayRef<int64_t>> mask) {
  if (cfg.numHeads <= 0 || cfg.numKvHeads <= 0)
    return shapeError(loc, "num_heads and num_kv_heads must be > 0, got " +
                               Twine(cfg.numHeads) + " and " +
                               Twine(cfg.numKvHeads));
  if (cfg.numHeads % cfg.numKvHeads != 0)
    return shapeError(loc, "num_heads (" + Twine(cfg.numHeads) +
                               ") must be divisible by num_kv_heads (" +
                               Twine(cfg.numKvHeads) + ")");
  if (cfg.headDim <= 0)
    return shapeError(loc, "head_dim must be > 0, got " + Twine(cfg.headDim));
  if (cfg.maskKind == MaskKind::SlidingWindow || cfg.maskKind == MaskKind::Chunked) {
    if (!cfg.window || *cfg.window <= 0)
      return shapeError(loc, cfg.maskKind == MaskKind::Chunked
                                 ? "chunked needs a window > 0 (the chunk size)"
                                 : "sliding_window needs a window > 0");
  } else if (cfg.window) {
    return shapeError(loc, "window is only valid with mask kind "
                           "sliding_window or chunked");
  }
  if (cfg.scale && !(*cfg.scale > 0.0 && std::isfinite(*cfg.scale)))
    return shapeError(loc, "scale must be finite and > 0, got " +
                               formatNumber(*cfg.scale));
  if (cfg.softcap && !(*cfg.softcap > 0.0 && std::isfinite(*cfg.softcap)))
    return shapeError(loc, "softcap must be finite and > 0, got " +
                               formatNumber(*cfg.softcap));

  auto qo = decodeAttnOperand(loc, "query", q, cfg.layout, cfg.numHeads,
                              cfg.headDim);
  if (failed(qo))
    return failure();
  auto ko = decodeAttnOperand(loc, "key", k, cfg.layout, cfg.numKvHeads,
                              cfg.headDim);
  if (failed(ko))
    return failure();
  // The value's head size may differ from head_dim (Dv != Dqk).
  auto vo = decodeAttnOperand(loc, "value", v, cfg.layout, cfg.numKvHeads,
                              std::nullopt);
  if (failed(vo))
    return failure();
  if (!dimsMatch(qo->batch, ko->batch) || !dimsMatch(qo->batch, vo->batch))
    return shapeError(loc, "query, key and value batch sizes differ: " +
                               shapeToString(q) + ", " + shapeToString(k) +
                               ", " + shapeToString(v));
  if (!dimsMatch(ko->seq, vo->seq))
    return shapeError(loc, "key and value sequence lengths differ: " +
                               shapeToString(k) + " vs " + shapeToString(v));
  if (mask) {
    ArrayRef<int64_t> m = *mask;
    if (m.size() < 2 || m.size() > 4)
      return shapeError(loc, "mask must be rank 2 [Sq, Sk], 3 [B, Sq, Sk] or 4 "
                             "[B, 1|heads, Sq, Sk], got " +
                                 shapeToString(m));
    size_t r = m.size();
    if (!dimsMatch(m[r - 2], qo->seq) || !dimsMatch(m[r - 1], ko->seq))
      return shapeError(loc, "mask " + shapeToString(m) +
                                 " does not match [Sq, Sk] = [" +
                                 shapeToString({qo->seq, ko->seq}) + "]");
    if (r >= 3 && m[0] != 1 && !dimsMatch(m[0], qo->batch))
      return shapeError(loc, "mask batch dim " + Twine(m[0]) +
                                 " does not match the query batch");
    if (r == 4 && m[1] != 1 && !dimsMatch(m[1], cfg.numHeads))
      return shapeError(loc, "mask head dim " + Twine(m[1]) +
                                 " must be 1 or num_heads (" +
                                 Twine(cfg.numHeads) + ")");
  }

  int64_t dv = vo->headDim;
  switch (cfg.layout) {
  case AttnLayout::BSD: {
    std::optional<int64_t> width =
        isDynamicDim(dv) ? std::optional<int64_t>(ShapedType::kDynamic) : checkedMul(cfg.numHeads, dv);
    if (!width)
      return shapeError(loc, "attention output width " + Twine(cfg.numHeads) + " heads x " +
                                 Twine(dv) + " overflows");
    return Shape{qo->batch, qo->seq, *width};
  }
  case AttnLayout::BSHD:
    return Shape{qo->batch, qo->seq, cfg.numHeads, dv};
  case AttnLayout::BHSD:
    return Shape{qo->batch, cfg.numHeads, qo->seq, dv};
  }
  llvm_unreachable("unknown layout");
}

LogicalResult mlir::rlx::checkRopeDims(OptLoc loc, ArrayRef<int64_t> x,
                                       int64_t headDim, int64_t rotaryDim) {
  if (x.size() != 3)
    return shapeError(loc, "rope input must be rank 3 [batch, seq, "
                           "heads*head_dim], got " +
                               shapeToString(x));
  if (headDim <= 0)
    return shapeError(loc, "head_dim must be > 0, got " + Twine(headDim));
  if (rotaryDim <= 0 || rotaryDim % 2 != 0 || rotaryDim > headDim)
    return shapeError(loc, "rotary_dim must be even and in (0, head_dim=" +
                               Twine(headDim) + "], got " + Twine(rotaryDim));
  if (!isDynamicDim(x[2]) && x[2] % headDim != 0)
    return shapeError(loc, "rope input hidden size " + Twine(x[2]) +
                               " is not a multiple of head_dim " +
                               Twine(headDim));
  return success();
}

/// Whether in[ib, ie) can reshape to out[ob, oe) as one group: equal static
/// products without dynamic dims; one dynamic output dim whose size follows
/// from the static input product; or dynamic dims on both sides with at most
/// one dynamic output dim.
static bool isValidReshapeGroup(ArrayRef<int64_t> in, ArrayRef<int64_t> out, unsigned ib,
                                unsigned ie, unsigned ob, unsigned oe) {
  int64_t pin = 1, pout = 1;
  int dynIn = 0, dynOut = 0;
  for (unsigned a = ib; a < ie; ++a)
    in[a] < 0 ? ++dynIn : pin *= in[a];
  for (unsigned b = ob; b < oe; ++b)
    out[b] < 0 ? ++dynOut : pout *= out[b];
  if (dynOut > 1 || (dynIn > 0 && dynOut == 0))
    return false;
  if (dynIn == 0 && dynOut == 0)
    return pin == pout;
  if (dynIn == 0)
    return pout > 0 && pin % pout == 0;
  return true;
}

/// Depth-first search for a split of in[i..) and out[j..) into valid groups,
/// smallest groups first (so the result is the finest grouping the greedy
/// order finds, backtracking where a dynamic group closed too early).
static bool searchReshapeGroups(ArrayRef<int64_t> in, ArrayRef<int64_t> out, unsigned i,
                                unsigned j, SmallVectorImpl<ReshapeGroup> &groups,
                                llvm::DenseSet<std::pair<unsigned, unsigned>> &failed) {
  if (i == in.size() && j == out.size())
    return true;
  if (i == in.size() || j == out.size() || failed.contains({i, j}))
    return false;
  unsigned maxTotal = (in.size() - i) + (out.size() - j);
  for (unsigned total = 2; total <= maxTotal; ++total) {
    for (unsigned di = 1; di < total; ++di) {
      unsigned ie = i + di, oe = j + (total - di);
      if (ie > in.size() || oe > out.size() || !isValidReshapeGroup(in, out, i, ie, j, oe))
        continue;
      groups.push_back(ReshapeGroup{i, ie, j, oe});
      if (searchReshapeGroups(in, out, ie, oe, groups, failed))
        return true;
      groups.pop_back();
    }
  }
  failed.insert({i, j});
  return false;
}

static FailureOr<SmallVector<ReshapeGroup>>
explainReshapeFailure(OptLoc loc, ArrayRef<int64_t> in, ArrayRef<int64_t> out);

FailureOr<SmallVector<ReshapeGroup>>
mlir::rlx::computeReshapeGroups(OptLoc loc, ArrayRef<int64_t> in,
                                ArrayRef<int64_t> out) {
  // The group products below are of partial shapes: bounded by the whole.
  if (failed(checkElementCount(loc, in)) || failed(checkElementCount(loc, out)))
    return failure();
  // Scalars (rank 0) form one group with all-ones shapes.
  if (in.empty() || out.empty())
    return explainReshapeFailure(loc, in, out);
  SmallVector<ReshapeGroup> groups;
  llvm::DenseSet<std::pair<unsigned, unsigned>> failed;
  if (searchReshapeGroups(in, out, 0, 0, groups, failed))
    return groups;
  // No valid split: the greedy grouping below names the first group at fault.
  auto greedy = explainReshapeFailure(loc, in, out);
  if (succeeded(greedy))
    return shapeError(loc, "reshape of " + shapeToString(in) + " to [" + shapeToString(out) +
                               "] has no grouping of dims with matching sizes");
  return failure();
}

static FailureOr<SmallVector<ReshapeGroup>>
explainReshapeFailure(OptLoc loc, ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  // Greedy grouping: grow the current group from whichever side has the
  // smaller static product, and close it when both sides agree (equal static
  // products with no dynamic dims, or one dynamic dim on each side). Dims left
  // over at the end join the last group.
  SmallVector<ReshapeGroup> groups;
  unsigned i = 0, j = 0;
  auto isDyn = [](int64_t d) { return d < 0; };
  while (i < in.size() || j < out.size()) {
    ReshapeGroup g{i, i, j, j};
    int64_t pin = 1, pout = 1;
    int dynIn = 0, dynOut = 0;
    auto takeIn = [&] {
      if (isDyn(in[i]))
        ++dynIn;
      else
        pin *= in[i];
      ++i;
    };
    auto takeOut = [&] {
      if (isDyn(out[j]))
        ++dynOut;
      else
        pout *= out[j];
      ++j;
    };
    if (i < in.size())
      takeIn();
    if (j < out.size())
      takeOut();
    while (true) {
      bool closable = (i > g.inBegin && j > g.outBegin) &&
                      ((dynIn == 0 && dynOut == 0 && pin == pout) ||
                       (dynIn > 0 && dynOut > 0));
      if (closable)
        break;
      bool canIn = i < in.size(), canOut = j < out.size();
      if (!canIn && !canOut)
        break;
      if (canIn && (!canOut || dynOut > dynIn ||
                    (dynIn == dynOut && pin < pout)))
        takeIn();
      else
        takeOut();
    }
    g.inEnd = i;
    g.outEnd = j;
    groups.push_back(g);
  }
  // A group that took dims from one side only (dims left over after the
  // other side ran out) joins the group before it.
  for (size_t g = 1; g < groups.size();) {
    if (groups[g].inBegin == groups[g].inEnd ||
        groups[g].outBegin == groups[g].outEnd) {
      groups[g - 1].inEnd = groups[g].inEnd;
      groups[g - 1].outEnd = groups[g].outEnd;
      groups.erase(groups.begin() + g);
    } else {
      ++g;
    }
  }
  for (auto &g : groups) {
    int64_t pin = 1, pout = 1;
    int dynIn = 0, dynOut = 0;
    for (unsigned a = g.inBegin; a < g.inEnd; ++a)
      in[a] < 0 ? ++dynIn : pin *= in[a];
    for (unsigned b = g.outBegin; b < g.outEnd; ++b)
      out[b] < 0 ? ++dynOut : pout *= out[b];
    if (dynOut > 1)
      return shapeError(loc, "reshape of " + shapeToString(in) + " to [" +
                                 shapeToString(out) +
                                 "] is ambiguous: one input group maps to "
                                 "several dynamic output dims");
    if (dynIn == 0 && dynOut == 0 && pin != pout)
      return shapeError(loc, "reshape of " + shapeToString(in) + " to " +
                                 shapeToString(out) +
                                 " changes the number of elements");
    if (dynIn == 0 && dynOut == 1 && (pout == 0 || pin % pout != 0))
      return shapeError(loc, "reshape of " + shapeToString(in) + " to " +
                                 shapeToString(out) + ": " + Twine(pin) +
                                 " elements do not divide into " +
                                 Twine(pout));
    if (dynIn > 0 && dynOut == 0)
      return shapeError(loc, "reshape of " + shapeToString(in) +
                                 " to static dims " + shapeToString(out) +
                                 " cannot be checked; use -1 for the dims "
                                 "that follow the dynamic input dims");
  }
  return groups;
}

FailureOr<Shape> mlir::rlx::inferReshape(OptLoc loc, ArrayRef<int64_t> in,
                                         ArrayRef<int64_t> pattern) {
  Shape out;
  for (int64_t d : pattern) {
    if (d == -1) {
      out.push_back(ShapedType::kDynamic);
    } else if (d < 0) {
      return shapeError(loc, "reshape dims must be >= 0 or -1 (dynamic), got " +
                                 Twine(d));
    } else {
      out.push_back(d);
    }
  }
  // Zero elements (a static 0 on either side): no dims to group, as in
  // torch.reshape every static shape with zero elements is reachable, and a
  // dynamic output dim has no size to infer.
  auto hasZero = [](ArrayRef<int64_t> s) { return llvm::is_contained(s, 0); };
  if (hasZero(in) || hasZero(out)) {
    if (llvm::any_of(out, isDynamicDim))
      return shapeError(loc, "reshape of " + shapeToString(in) + " to " + shapeToString(out) +
                                 ": a dynamic dim of a tensor with no elements cannot be "
                                 "inferred; give every dim");
    if (!hasZero(in) && llvm::any_of(in, isDynamicDim))
      return shapeError(loc, "reshape of " + shapeToString(in) + " to static dims " +
                                 shapeToString(out) + " cannot be checked");
    if (!hasZero(in))
      return shapeError(loc, "reshape of " + shapeToString(in) + " to " + shapeToString(out) +
                                 " changes the number of elements");
    if (!hasZero(out))
      return shapeError(loc, "reshape of " + shapeToString(in) + " to " + shapeToString(out) +
                                 " changes the number of elements");
    return out;
  }
  // Scalars reshape freely to all-ones shapes and back.
  if (in.empty() || out.empty()) {
    for (int64_t d : llvm::concat<const int64_t>(in, ArrayRef<int64_t>(out)))
      if (d != 1 && !isDynamicDim(d))
        return shapeError(loc, "reshape of " + shapeToString(in) + " to " +
                                   shapeToString(out) +
                                   " changes the number of elements");
    for (int64_t &d : out)
      d = 1;
    return out;
  }
  auto groups = computeReshapeGroups(loc, in, out);
  if (failed(groups))
    return failure();
  for (const ReshapeGroup &g : *groups) {
    int64_t pin = 1, pout = 1;
    bool dynIn = false;
    int dynPos = -1;
    for (unsigned a = g.inBegin; a < g.inEnd; ++a) {
      if (isDynamicDim(in[a]))
        dynIn = true;
      else
        pin *= in[a];
    }
    for (unsigned b = g.outBegin; b < g.outEnd; ++b) {
      if (isDynamicDim(out[b]))
        dynPos = b;
      else
        pout *= out[b];
    }
    if (dynPos >= 0 && !dynIn)
      out[dynPos] = pin / pout;
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferTranspose(OptLoc loc, ArrayRef<int64_t> in,
                                           ArrayRef<int64_t> perm) {
  if (perm.size() != in.size())
    return shapeError(loc, "permutation has " + Twine(perm.size()) +
                               " entries for an input of rank " +
                               Twine(in.size()));
  llvm::SmallSet<int64_t, 8> seen;
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || !seen.insert(p).second)
      return shapeError(loc, "permutation must be a permutation of 0.." +
                                 Twine(in.size() - 1));
    out.push_back(in[p]);
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferSlice(OptLoc loc, ArrayRef<int64_t> in,
                                       ArrayRef<int64_t> offsets,
                                       ArrayRef<int64_t> sizes,
                                       ArrayRef<int64_t> strides) {
  if (offsets.size() != in.size() || sizes.size() != in.size() ||
      strides.size() != in.size())
    return shapeError(loc, "offsets, sizes and strides need one entry per "
                           "input dim (" +
                               Twine(in.size()) + ")");
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (offsets[d] < 0)
      return shapeError(loc, "slice offset " + Twine(offsets[d]) +
                                 " at dim " + Twine(d) + " is negative");
    if (strides[d] < 1)
      return shapeError(loc, "slice stride at dim " + Twine(d) +
                                 " must be >= 1");
    if (sizes[d] < -1)
      return shapeError(loc, "slice size at dim " + Twine(d) +
                                 " must be >= 0 or -1 (to the end)");
    if (sizes[d] == -1) {
      if (isDynamicDim(in[d])) {
        out.push_back(ShapedType::kDynamic);
        continue;
      }
      if (offsets[d] > in[d])
        return shapeError(loc, "slice offset " + Twine(offsets[d]) +
                                   " is past the end of dim " + Twine(d) +
                                   " (size " + Twine(in[d]) + ")");
      // ceil((in - offset) / stride), without the sum that can overflow.
      int64_t rest = in[d] - offsets[d];
      out.push_back(rest == 0 ? 0 : (rest - 1) / strides[d] + 1);
      continue;
    }
    if (sizes[d] == 0) { // empty, like x[o:o] in torch
      if (!isDynamicDim(in[d]) && offsets[d] > in[d])
        return shapeError(loc, "slice offset " + Twine(offsets[d]) +
                                   " is past the end of dim " + Twine(d) +
                                   " (size " + Twine(in[d]) + ")");
      out.push_back(0);
      continue;
    }
    std::optional<int64_t> span = checkedMul(sizes[d] - 1, strides[d]);
    int64_t last;
    bool overflow = !span || llvm::AddOverflow(offsets[d], *span, last);
    if (!isDynamicDim(in[d]) && (overflow || last >= in[d]))
      return shapeError(loc, "slice [" + Twine(offsets[d]) + ", size " +
                                 Twine(sizes[d]) + ", stride " +
                                 Twine(strides[d]) + "] runs past dim " +
                                 Twine(d) + " of size " + Twine(in[d]));
    out.push_back(sizes[d]);
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferConcat(OptLoc loc,
                                        ArrayRef<ArrayRef<int64_t>> inputs,
                                        int64_t axis) {
  if (inputs.empty())
    return shapeError(loc, "concat needs at least one input");
  int64_t rank = inputs.front().size();
  auto ax = normalizeAxis(loc, axis, rank);
  if (failed(ax))
    return failure();
  Shape out(inputs.front().begin(), inputs.front().end());
  out[*ax] = 0;
  for (auto [idx, s] : llvm::enumerate(inputs)) {
    if (static_cast<int64_t>(s.size()) != rank)
      return shapeError(loc, "concat input " + Twine(idx) + " has rank " +
                                 Twine(s.size()) + ", expected " + Twine(rank));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *ax) {
        if (isDynamicDim(s[d]) || isDynamicDim(out[d]))
          out[d] = ShapedType::kDynamic;
        else
          out[d] += s[d];
        continue;
      }
      if (!dimsMatch(s[d], out[d]))
        return shapeError(loc, "concat input " + Twine(idx) + " " +
                                   shapeToString(s) + " differs at dim " +
                                   Twine(d));
      if (isDynamicDim(out[d]))
        out[d] = s[d];
    }
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferBroadcastTo(OptLoc loc, ArrayRef<int64_t> in,
                                             ArrayRef<int64_t> shape) {
  if (shape.size() < in.size())
    return shapeError(loc, "cannot broadcast " + shapeToString(in) +
                               " to a lower rank (" + Twine(shape.size()) +
                               ")");
  size_t lead = shape.size() - in.size();
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t t = shape[d];
    if (t < -1)
      return shapeError(loc, "broadcast dims must be >= 0 or -1, got " +
                                 Twine(t));
    if (d < lead) {
      if (t == -1)
        return shapeError(loc, "-1 at broadcast dim " + Twine(d) +
                                   " has no input dim to keep");
      out.push_back(t);
      continue;
    }
    int64_t s = in[d - lead];
    if (t == -1) {
      out.push_back(s);
    } else if (s == 1 || s == t || isDynamicDim(s)) {
      out.push_back(t);
    } else {
      return shapeError(loc, "cannot broadcast dim " + Twine(d - lead) +
                                 " of size " + Twine(s) + " to " + Twine(t));
    }
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferReduce(OptLoc loc, ArrayRef<int64_t> in,
                                        ArrayRef<int64_t> axes, bool keepDims) {
  int64_t rank = in.size();
  SmallVector<bool> reduced(rank, false);
  if (axes.empty())
    return shapeError(loc, "reduce needs at least one axis");
  for (int64_t a : axes) {
    auto n = normalizeAxis(loc, a, rank);
    if (failed(n))
      return failure();
    if (reduced[*n])
      return shapeError(loc, "axis " + Twine(a) + " is repeated");
    reduced[*n] = true;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      out.push_back(in[d]);
    else if (keepDims)
      out.push_back(1);
  }
  return out;
}

FailureOr<Shape> mlir::rlx::inferGather(OptLoc loc, ArrayRef<int64_t> table,
                                        ArrayRef<int64_t> ids) {
  if (table.size() < 1)
    return shapeError(loc, "table must have rank >= 1");
  Shape out(ids.begin(), ids.end());
  out.append(table.begin() + 1, table.end());
  return out;
}

LogicalResult mlir::rlx::inferAttentionTypes(OptLoc loc,
                                             const AttentionConfig &cfg,
                                             Value query, Value key,
                                             Value value, Value mask,
                                             SmallVectorImpl<Type> &results) {
  auto q = getRankedTensor(loc, query, "query");
  auto k = getRankedTensor(loc, key, "key");
  auto v = getRankedTensor(loc, value, "value");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  if (failed(checkSameElementType(loc, {*q, *k, *v}, {"query", "key", "value"})))
    return failure();
  std::optional<ArrayRef<int64_t>> maskShape;
  if (mask) {
    auto m = getRankedTensor(loc, mask, "mask");
    if (failed(m))
      return failure();
    Type me = m->getElementType();
    if (!me.isInteger(1) && me != q->getElementType())
      return shapeError(loc, "mask must be i1 (boolean) or " +
                                 typeToString(q->getElementType()) +
                                 " (additive), got " + typeToString(me));
    maskShape = m->getShape();
  }
  auto shape = inferAttention(loc, cfg, q->getShape(), k->getShape(),
                              v->getShape(), maskShape);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, q->getElementType()));
  return success();
}

FailureOr<RankedTensorType> mlir::rlx::checkNormOperands(OptLoc loc, Value input,
                                                         Value weight, double eps,
                                                         StringRef weightName) {
  auto x = getRankedTensor(loc, input, "input");
  if (failed(x) || failed(checkEps(loc, eps)))
    return failure();
  if (x->getRank() < 1)
    return shapeError(loc, "input must have rank >= 1");
  if (weight) {
    auto w = getRankedTensor(loc, weight, weightName);
    if (failed(w) ||
        failed(checkSameElementType(loc, {*x, *w}, {"input", weightName})) ||
        failed(checkChannelVector(loc, x->getShape(), w->getShape(), weightName)))
      return failure();
  }
  return x;
}

LogicalResult mlir::rlx::checkRopeTables(OptLoc loc, ArrayRef<int64_t> xs,
                                         Value cos, Value sin,
                                         int64_t rotaryDim) {
  auto c = getRankedTensor(loc, cos, "cos");
  auto s = getRankedTensor(loc, sin, "sin");
  if (failed(c) || failed(s))
    return failure();
  if (*c != *s)
    return shapeError(loc, "cos " + typeToString(*c) + " and sin " +
                               typeToString(*s) + " must have the same type");
  ArrayRef<int64_t> cs = c->getShape();
  bool ok = (cs.size() == 2 && dimsMatch(cs[0], xs[1])) ||
            (cs.size() == 3 && dimsMatch(cs[0], xs[0]) && dimsMatch(cs[1], xs[1]));
  if (!ok || !dimsMatch(cs.back(), rotaryDim / 2))
    return shapeError(loc, "cos/sin must be [S, rotary_dim/2] or [B, S, "
                           "rotary_dim/2] = [.., " +
                               Twine(rotaryDim / 2) + "] for input " +
                               shapeToString(xs) + ", got " + shapeToString(cs));
  return success();
}

FailureOr<RankedTensorType> mlir::rlx::checkLayerNormOperands(OptLoc loc, Value input,
                                                              Value weight, Value bias,
                                                              double eps) {
  auto x = checkNormOperands(loc, input, weight, eps);
  if (failed(x))
    return failure();
  if (bias) {
    auto b = getRankedTensor(loc, bias, "bias");
    if (failed(b) || failed(checkSameElementType(loc, {*x, *b}, {"input", "bias"})) ||
        failed(checkChannelVector(loc, x->getShape(), b->getShape(), "bias")))
      return failure();
  }
  return x;
}

FailureOr<RankedTensorType> mlir::rlx::checkResidualNormOperands(OptLoc loc, Value input,
                                                                 Value residual,
                                                                 Value weight, double eps) {
  auto x = checkNormOperands(loc, input, weight, eps);
  if (failed(x))
    return failure();
  auto r = getRankedTensor(loc, residual, "residual");
  if (failed(r))
    return failure();
  if (*r != *x)
    return shapeError(loc, "input " + typeToString(*x) + " and residual " +
                               typeToString(*r) + " must have the same type");
  return x;
}

LogicalResult mlir::rlx::inferGatherTypes(OptLoc loc, Value table, Value ids,
                                          std::optional<int64_t> tableRank,
                                          SmallVectorImpl<Type> &results) {
  auto t = getRankedTensor(loc, table, "table");
  auto i = getRankedTensor(loc, ids, "indices");
  if (failed(t) || failed(i))
    return failure();
  if (tableRank && t->getRank() != *tableRank)
    return shapeError(loc, "embedding table must be rank 2 [vocab, hidden], got " +
                               shapeToString(t->getShape()));
  auto shape = inferGather(loc, t->getShape(), i->getShape());
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, t->getElementType()));
  return success();
}

FailureOr<std::pair<int64_t, int64_t>>
mlir::rlx::inferNvfp4Dims(OptLoc loc, RankedTensorType w, RankedTensorType s, bool outIn,
                          std::optional<int64_t> k) {
  if (w.getRank() == 2 && s.getRank() == 4) {
    // Blocked scales (nvfp4_block_scales): NVIDIA's [N, K/2] weight layout.
    ArrayRef<int64_t> ws = w.getShape();
    if (!outIn)
      return shapeError(loc, "blocked NVFP4 scales go with NVIDIA's [N, K/2] weight layout");
    if (!k)
      k = isDynamicDim(ws[1]) ? ws[1] : checkedMul(2, ws[1]).value_or(ShapedType::kDynamic);
    if (isDynamicDim(*k) || *k % 16 != 0 || isDynamicDim(ws[0]))
      return shapeError(loc, "NVFP4 needs a static K that is a multiple of 16 and a static N");
    if (!dimsMatch(ws[1], *k / 2))
      return shapeError(loc, "packed weight " + shapeToString(ws) + " must hold K/2 = " +
                                 Twine(*k / 2) + " bytes per row along K");
    Shape blocked{(ws[0] + 127) / 128, (*k / 16 + 3) / 4, 32, 16};
    if (s.getShape() != ArrayRef<int64_t>(blocked))
      return shapeError(loc, "blocked scales " + shapeToString(s.getShape()) + " must be " +
                                 shapeToString(blocked) + " for N = " + Twine(ws[0]) +
                                 ", K = " + Twine(*k));
    return std::make_pair(ws[0], *k);
  }
  if (w.getRank() != 2 || s.getRank() != 2)
    return shapeError(loc, "NVFP4 weight and scales must have rank 2 (or blocked scales rank "
                           "4), got " +
                               shapeToString(w.getShape()) + " and " +
                               shapeToString(s.getShape()));
  ArrayRef<int64_t> ws = w.getShape(), ss = s.getShape();
  int64_t n = outIn ? ws[0] : ws[1];
  int64_t wk = outIn ? ws[1] : ws[0];
  int64_t sn = outIn ? ss[0] : ss[1];
  int64_t sk = outIn ? ss[1] : ss[0];
  if (!k)
    k = isDynamicDim(wk) ? wk : checkedMul(2, wk).value_or(ShapedType::kDynamic);
  if (isDynamicDim(*k) || *k % 16 != 0)
    return shapeError(loc, "NVFP4 needs a static K that is a multiple of 16, got K = " +
                               (isDynamicDim(*k) ? std::string("?") : std::to_string(*k)));
  if (!dimsMatch(wk, *k / 2))
    return shapeError(loc, "packed weight " + shapeToString(ws) + " must hold K/2 = " +
                               Twine(*k / 2) + " bytes per row along K");
  if (!dimsMatch(sk, *k / 16) || !dimsMatch(sn, n))
    return shapeError(loc, "scales " + shapeToString(ss) + " must be " +
                               (outIn ? "[N, K/16] = [" : "[K/16, N] = [") +
                               (outIn ? Twine(n) + ", " + Twine(*k / 16)
                                      : Twine(*k / 16) + ", " + Twine(n)) + "]");
  return std::make_pair(n, *k);
}
