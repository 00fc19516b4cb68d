//===- AttentionLogits.cpp - The attention logit transform on scalars -----===//

#include "RLX/Dialect/MIR/IR/AttentionLogits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;

static Value cmpI(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}

attention_logits::KeyRange attention_logits::causalKeyRange(OpBuilder &b, Location loc,
                                                             std::optional<int64_t> window, Value i,
                                                             int64_t diagonal, bool chunked) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i.getType(), v));
  };
  KeyRange r;
  r.last = arith::AddIOp::create(b, loc, i, cst(diagonal));
  if (chunked && window) {
    // The query's chunk starts at ⌊i'/c⌋·c (i' < 0 for rows before every
    // key: a floor division keeps them keyless).
    Value c = cst(*window);
    r.first = arith::MulIOp::create(b, loc, arith::FloorDivSIOp::create(b, loc, r.last, c), c);
    return r;
  }
  // A window past every key hides none (and diagonal − window + 1 would
  // overflow for windows near INT64_MAX).
  int64_t shift;
  if (window && !llvm::SubOverflow(diagonal + 1, *window, shift))
    r.first = arith::AddIOp::create(b, loc, i, cst(shift));
  return r;
}

Value attention_logits::causalVisible(OpBuilder &b, Location loc, std::optional<int64_t> window, Value i,
                               Value j, int64_t diagonal, bool chunked) {
  KeyRange r = causalKeyRange(b, loc, window, i, diagonal, chunked);
  Value visible = cmpI(b, loc, arith::CmpIPredicate::sle, j, r.last);
  if (r.first)
    visible = arith::AndIOp::create(b, loc, visible, cmpI(b, loc, arith::CmpIPredicate::sge, j, r.first));
  return visible;
}

Value attention_logits::scalarAttentionLogit(OpBuilder &b, Location loc, const AttentionConfig &cfg,
                                      double scale, const ScalarLogit &in) {
  Type ft = in.dot.getType();
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  };
  const double inf = std::numeric_limits<double>::infinity();
  Value visible = in.visible;
  auto hide = [&](Value v) {
    visible = visible ? arith::AndIOp::create(b, loc, visible, v).getResult() : v;
  };
  const bool additive = in.mask && !in.mask.getType().isInteger(1);
  LogitSteps<Value> steps;
  steps.mul = [&](Value x, double k) -> Value { return arith::MulFOp::create(b, loc, x, c(k)); };
  steps.div = [&](Value x, double k) -> Value { return arith::DivFOp::create(b, loc, x, c(k)); };
  steps.tanh = [&](Value x) -> Value { return math::TanhOp::create(b, loc, x); };
  steps.causal = [&](Value x) {
    hide(causalVisible(b, loc, cfg.window, in.i, in.j, in.diagonal,
                       cfg.maskKind == MaskKind::Chunked));
    return x;
  };
  steps.mask = [&](Value x) -> Value {
    if (!additive) {
      hide(in.mask);
      return x;
    }
    return arith::AddFOp::create(b, loc, x, in.mask);
  };
  steps.post = [&](Value x, double k) -> Value {
    Value scaled = arith::MaximumFOp::create(b, loc, arith::MulFOp::create(b, loc, x, c(k)),
                                             c(-std::numeric_limits<float>::max()));
    Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, c(-inf));
    return arith::SelectOp::create(b, loc, isNegInf, x, scaled);
  };
  Value s = attentionLogit(steps, cfg, scale, in.dot, bool(in.mask), additive, in.post);
  return visible ? arith::SelectOp::create(b, loc, visible, s, c(-inf)).getResult() : s;
}
