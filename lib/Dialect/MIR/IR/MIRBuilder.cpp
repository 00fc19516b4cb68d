//===- MIRBuilder.cpp - Terse construction of rlx_mir graphs --------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

Value MIRBuilder::scalar(Type et, double value) {
  auto t = RankedTensorType::get({}, et);
  Attribute attr = isa<FloatType>(et) ? Attribute(b.getFloatAttr(et, value))
                                      : Attribute(b.getIntegerAttr(et, static_cast<int64_t>(value)));
  return record(ConstantOp::create(b, loc, DenseElementsAttr::get(t, attr)));
}

Value MIRBuilder::constantF32(ArrayRef<int64_t> shape, ArrayRef<float> values) {
  auto t = RankedTensorType::get(shape, b.getF32Type());
  return record(ConstantOp::create(b, loc, DenseElementsAttr::get(t, values)));
}

Value MIRBuilder::activation(ActivationKind kind, Value x) {
  switch (kind) {
  case ActivationKind::None:
    return x;
  case ActivationKind::Relu:
    return unary<ReluOp>(x);
  case ActivationKind::Gelu:
    return unary<GeluOp>(x);
  case ActivationKind::GeluTanh:
    return unary<GeluTanhOp>(x);
  case ActivationKind::Silu:
    return unary<SiluOp>(x);
  case ActivationKind::Sigmoid:
    return unary<SigmoidOp>(x);
  case ActivationKind::Tanh:
    return unary<TanhOp>(x);
  }
  llvm_unreachable("unknown activation");
}

Value MIRBuilder::cast(Value x, Type elementType) {
  if (hasFailed || !x)
    return fail();
  return record(CastOp::create(b, loc, x, elementType));
}

LogicalResult mlir::rlx::mir::replaceWithBuilt(RewriterBase &rw, Operation *op, MIRBuilder &mb,
                                               ValueRange values) {
  bool ok = !mb.failed() && values.size() == op->getNumResults() && !anyNullValue(values) &&
            llvm::all_of(llvm::zip(values, op->getResultTypes()),
                         [](auto p) { return std::get<0>(p).getType() == std::get<1>(p); });
  if (!ok) {
    mb.discardUnused(&rw);
    return failure();
  }
  rw.replaceOp(op, values);
  return success();
}

void MIRBuilder::discardUnused(RewriterBase *rw) {
  for (Operation *op : llvm::reverse(created)) {
    if (!op->use_empty())
      continue;
    if (rw)
      rw->eraseOp(op);
    else
      op->erase();
  }
  created.clear();
}

Value MIRBuilder::reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes, bool keepDims) {
  return create<ReduceOp>(x, ReduceKindAttr::get(b.getContext(), kind),
                          b.getDenseI64ArrayAttr(axes), keepDims ? b.getUnitAttr() : UnitAttr());
}

Value MIRBuilder::sliceLast(Value x, int64_t offset, int64_t size) {
  if (!x)
    return fail();
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> offsets(rank, 0), sizes(rank, -1), strides(rank, 1);
  offsets.back() = offset;
  sizes.back() = size;
  return slice(x, offsets, sizes, strides);
}

Value MIRBuilder::softplus(Value x) {
  if (!x)
    return fail();
  Type et = elementType(x);
  return add(create<MaxOp>(x, scalar(et, 0.0)),
             unary<LogOp>(add(scalar(et, 1.0), unary<ExpOp>(unary<NegOp>(unary<AbsOp>(x))))));
}

SmallVector<int64_t> MIRBuilder::pattern(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> p;
  for (int64_t d : shape)
    p.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return p;
}

FailureOr<FusedMatmulSpec> FusedMatmulSpec::of(Operation *op) {
  FusedMatmulSpec s;
  if (auto mm = dyn_cast_or_null<MatmulOp>(op)) {
    if (mm.getTransposeA() || cast<RankedTensorType>(mm.getRhs().getType()).getRank() != 2)
      return failure();
    s.lhs = mm.getLhs();
    s.rhs = mm.getRhs();
    s.transposeB = mm.getTransposeB();
    return s;
  }
  if (auto q = dyn_cast_or_null<Nvfp4MatmulOp>(op)) {
    s.lhs = q.getInput();
    s.rhs = q.getWeight();
    s.rhsScales = q.getScales();
    s.rhsGlobalScale = q.getGlobalScale();
    s.transposeB = q.getLayout() == WeightLayout::OutIn;
    return s;
  }
  auto f = dyn_cast_or_null<FusedMatmulOp>(op);
  if (!f)
    return failure();
  s.lhs = f.getLhs();
  s.rhs = f.getRhs();
  s.transposeB = f.getTransposeB();
  if (f.getNormAttr())
    s.norm = f.getNormAttr().getValue();
  if (f.getNormEps())
    s.normEps = f.getNormEps()->convertToDouble();
  s.normWeight = f.getNormWeight();
  s.normBias = f.getNormBias();
  s.bias = f.getBias();
  s.activation = f.getActivation();
  s.glu = f.getGlu();
  s.headDim = f.getHeadDim();
  s.headNormWeight = f.getHeadNormWeight();
  if (f.getHeadNormEps())
    s.headNormEps = f.getHeadNormEps()->convertToDouble();
  s.ropeCos = f.getRopeCos();
  s.ropeSin = f.getRopeSin();
  s.ropeHeads = f.getRopeHeads();
  s.rotaryDim = f.getRotaryDim();
  s.ropeStyle = f.getRopeStyle();
  s.residual = f.getResidual();
  s.rhsScales = f.getRhsScales();
  s.rhsGlobalScale = f.getRhsGlobalScale();
  return s;
}

bool FusedMatmulSpec::hasEpilogue() const {
  return bias || activation != ActivationKind::None || glu || headNormWeight || ropeCos ||
         residual;
}

bool FusedMatmulSpec::hasStages() const { return norm.has_value() || hasEpilogue(); }

Value MIRBuilder::fusedMatmul(const FusedMatmulSpec &s) {
  MLIRContext *ctx = b.getContext();
  if (!s.hasStages() && s.isNvfp4())
    return create<Nvfp4MatmulOp>(
        s.lhs, s.rhs, s.rhsScales, s.rhsGlobalScale,
        WeightLayoutAttr::get(ctx, s.transposeB ? WeightLayout::OutIn : WeightLayout::InOut));
  if (!s.hasStages())
    return matmul(s.lhs, s.rhs, false, s.transposeB);
  auto f64 = [&](std::optional<double> v) -> FloatAttr {
    return v ? b.getF64FloatAttr(*v) : FloatAttr();
  };
  auto i64 = [&](std::optional<int64_t> v) -> IntegerAttr {
    return v ? b.getI64IntegerAttr(*v) : IntegerAttr();
  };
  if (!s.lhs || !s.rhs)
    return fail();
  return createWithOptional<FusedMatmulOp>(
      s.lhs, s.rhs, s.normWeight, s.normBias, s.bias, s.headNormWeight, s.ropeCos,
      s.ropeSin, s.residual, s.rhsScales, s.rhsGlobalScale,
      s.transposeB ? b.getUnitAttr() : UnitAttr(),
      s.norm ? NormKindAttr::get(ctx, *s.norm) : NormKindAttr(), f64(s.normEps),
      ActivationKindAttr::get(ctx, s.activation), s.glu ? b.getUnitAttr() : UnitAttr(),
      i64(s.headDim), f64(s.headNormEps), i64(s.ropeHeads), i64(s.rotaryDim),
      RopeStyleAttr::get(ctx, s.ropeStyle));
}

/// x in `layout` with `heads` heads -> [B, heads, S, D].
static Value toBHSD(MIRBuilder &mb, Value x, AttnLayout layout, int64_t heads) {
  if (!x || heads <= 0 || MIRBuilder::typeOf(x).getRank() != (layout == AttnLayout::BSD ? 3 : 4))
    return mb.fail();
  ArrayRef<int64_t> s = MIRBuilder::shapeOf(x);
  switch (layout) {
  case AttnLayout::BSD: {
    int64_t d = s[2] / heads;
    Value r = mb.reshape(x, {s[0] < 0 ? -1 : s[0], s[1] < 0 ? -1 : s[1], heads, d});
    return mb.transpose(r, {0, 2, 1, 3});
  }
  case AttnLayout::BSHD:
    return mb.transpose(x, {0, 2, 1, 3});
  case AttnLayout::BHSD:
    return x;
  }
  llvm_unreachable("unknown layout");
}

/// [B, Hkv, S, D] -> [B, Hkv·group, S, D] by repeating each kv head (HF repeat_kv).
static Value repeatKv(MIRBuilder &mb, Value x, int64_t group) {
  if (group == 1 || !x)
    return x;
  SmallVector<int64_t> p = MIRBuilder::pattern(MIRBuilder::shapeOf(x));
  int64_t hkv = p[1];
  Value r = mb.reshape(x, {p[0], hkv, 1, p[2], p[3]});
  Value b = mb.broadcast(r, {p[0], hkv, group, p[2], p[3]});
  return mb.reshape(b, {p[0], hkv * group, p[2], p[3]});
}

Value MIRBuilder::attentionChain(const AttentionConfig &cfg, Value q, Value k, Value v,
                                 Value mask, Value sinks) {
  MIRBuilder &mb = *this;
  if (!q || !k || !v || cfg.numKvHeads <= 0 || cfg.numHeads % cfg.numKvHeads != 0 ||
      cfg.headDim <= 0)
    return fail();
  Type et = MIRBuilder::elementType(q);
  Value qh = toBHSD(mb, q, cfg.layout, cfg.numHeads);
  Value kh = repeatKv(mb, toBHSD(mb, k, cfg.layout, cfg.numKvHeads),
                      cfg.numHeads / cfg.numKvHeads);
  Value vh = repeatKv(mb, toBHSD(mb, v, cfg.layout, cfg.numKvHeads),
                      cfg.numHeads / cfg.numKvHeads);
  Value s = mb.matmul(qh, kh, false, true);
  const bool boolMask = mask && MIRBuilder::elementType(mask).isInteger(1);
  // One constant per value (softcap's c divides and multiplies).
  std::map<double, Value> constants;
  auto scalarOf = [&](double c) {
    Value &constant = constants[c];
    if (!constant)
      constant = mb.scalar(et, c);
    return constant;
  };
  attention_logits::LogitSteps<Value> steps;
  steps.mul = [&](Value x, double c) { return mb.mul(x, scalarOf(c)); };
  steps.div = [&](Value x, double c) { return mb.div(x, scalarOf(c)); };
  steps.tanh = [&](Value x) { return mb.unary<TanhOp>(x); };
  steps.causal = [&](Value x) {
    return create<CausalMaskOp>(x, cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr(),
                                cfg.maskKind == MaskKind::Chunked);
  };
  steps.mask = [&](Value x) {
    // Masks of rank 3 are [B, Sq, Sk]: give them the head axis first.
    Value m = mask;
    if (MIRBuilder::typeOf(m).getRank() == 3) {
      SmallVector<int64_t> p = MIRBuilder::pattern(MIRBuilder::shapeOf(m));
      m = mb.reshape(m, {p[0], 1, p[1], p[2]});
    }
    return boolMask ? mb.select(m, x, mb.scalar(et, -std::numeric_limits<double>::infinity()))
                    : mb.add(x, m);
  };
  s = attention_logits::attentionLogit(steps, cfg, attention_logits::logitScale(cfg, cfg.headDim),
                                       s, bool(mask), mask && !boolMask);
  Value p;
  if (!sinks) {
    p = mb.softmax(s, -1);
  } else {
    // Each head's sink logit joins the denominator (gpt-oss), in f32 for
    // narrower types: p = exp(s − m) / (Σ exp(s − m) + exp(sink − m)),
    // m = max(max s, sink).
    Type ct = et.isF64() ? et : b.getF32Type();
    Value sf = et == ct ? s : mb.cast(s, ct);
    Value sink = mb.reshape(MIRBuilder::elementType(sinks) == ct ? sinks : mb.cast(sinks, ct),
                            {1, cfg.numHeads, 1, 1});
    Value m = mb.create<MaxOp>(mb.reduce(ReduceKind::Max, sf, {3}, /*keepDims=*/true), sink);
    Value e = mb.unary<ExpOp>(mb.sub(sf, m));
    Value denom = mb.add(mb.reduce(ReduceKind::Sum, e, {3}, /*keepDims=*/true),
                         mb.unary<ExpOp>(mb.sub(sink, m)));
    p = mb.div(e, denom);
    if (et != ct)
      p = mb.cast(p, et);
  }
  Value o = mb.matmul(p, vh);
  if (!o)
    return fail();
  switch (cfg.layout) {
  case AttnLayout::BSD: {
    ArrayRef<int64_t> qs = MIRBuilder::shapeOf(q);
    int64_t dv = MIRBuilder::shapeOf(o)[3];
    Value t = mb.transpose(o, {0, 2, 1, 3});
    return mb.reshape(t, {qs[0] < 0 ? -1 : qs[0], qs[1] < 0 ? -1 : qs[1], cfg.numHeads * dv});
  }
  case AttnLayout::BSHD:
    return mb.transpose(o, {0, 2, 1, 3});
  case AttnLayout::BHSD:
    return o;
  }
  llvm_unreachable("unknown layout");
}

FailureOr<SmallVector<Value>> MIRBuilder::expandScalarBody(Block &body, ValueRange inputs,
                                                        TypeRange resultTypes, StringRef who) {
  MIRBuilder &mb = *this;
  // Check every op first, so that nothing is built for a body that fails.
  for (Operation &inner : body.without_terminator()) {
    auto c = dyn_cast<arith::ConstantOp>(inner);
    bool ok = c ? isa<FloatAttr>(c.getValue())
                : isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
                      arith::MaximumFOp, arith::MinimumFOp,
                      math::PowFOp, arith::NegFOp, math::ExpOp, math::LogOp, math::SqrtOp,
                      math::RsqrtOp, math::TanhOp, math::ErfOp, math::SinOp, math::CosOp,
                      math::AbsFOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp>(inner);
    // x² and x³ as math.fpowi (torch-mlir's aten.pow with an integer
    // exponent) are x·x and x·x·x.
    if (auto powi = dyn_cast<math::FPowIOp>(inner)) {
      APInt e;
      ok = matchPattern(powi.getRhs(), m_ConstantInt(&e)) && (e == 2 || e == 3);
    }
    if (!ok) {
      if (!who.empty())
        inner.emitError(who) << ": '" << inner.getName()
                             << "' in an elementwise body has no MIR counterpart";
      return failure();
    }
  }
  // Every value used must be an input's block argument, computed in the
  // body, or a scalar float constant from outside (exporters hoist those).
  auto outsideConstant = [&](Value v) -> std::optional<double> {
    FloatAttr f;
    if (v.getParentBlock() != &body && matchPattern(v, m_Constant(&f)))
      return f.getValueAsDouble();
    return std::nullopt;
  };
  auto known = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &body && arg.getArgNumber() < inputs.size();
    return v.getParentBlock() == &body || outsideConstant(v).has_value();
  };
  for (Operation &inner : body) {
    // fpowi's exponent is the integer constant checked above.
    ValueRange used = isa<math::FPowIOp>(inner) ? inner.getOperands().take_front()
                                                 : inner.getOperands();
    if (!llvm::all_of(used, known))
      return failure();
  }
  DenseMap<Value, Value> map;
  for (auto [arg, in] : llvm::zip(body.getArguments(), inputs))
    map[arg] = in;
  for (Operation &inner : body.without_terminator()) {
    for (Value v : inner.getOperands())
      if (auto c = outsideConstant(v); c && !map.count(v) && isa<FloatType>(v.getType()))
        map[v] = mb.scalar(v.getType(), *c);
    auto operand = [&](unsigned i) { return map.lookup(inner.getOperand(i)); };
    Type resultType = inner.getNumResults() ? inner.getResult(0).getType() : Type();
    Value r;
    if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      auto f = dyn_cast<FloatAttr>(c.getValue());
      if (f)
        r = mb.scalar(f.getType(), f.getValueAsDouble());
    } else if (isa<arith::AddFOp>(inner)) {
      r = mb.add(operand(0), operand(1));
    } else if (isa<arith::SubFOp>(inner)) {
      r = mb.sub(operand(0), operand(1));
    } else if (isa<arith::MulFOp>(inner)) {
      r = mb.mul(operand(0), operand(1));
    } else if (isa<arith::DivFOp>(inner)) {
      r = mb.div(operand(0), operand(1));
    } else if (isa<arith::MaximumFOp>(inner)) {
      r = mb.create<MaxOp>(operand(0), operand(1));
    } else if (isa<arith::MinimumFOp>(inner)) {
      r = mb.create<MinOp>(operand(0), operand(1));
    } else if (auto powi = dyn_cast<math::FPowIOp>(inner)) {
      APInt e;
      matchPattern(powi.getRhs(), m_ConstantInt(&e));
      r = mb.mul(operand(0), operand(0));
      if (e == 3)
        r = mb.mul(r, operand(0));
    } else if (isa<math::PowFOp>(inner)) {
      r = mb.create<PowOp>(operand(0), operand(1));
    } else if (isa<arith::NegFOp>(inner)) {
      r = mb.unary<NegOp>(operand(0));
    } else if (isa<math::ExpOp>(inner)) {
      r = mb.unary<ExpOp>(operand(0));
    } else if (isa<math::LogOp>(inner)) {
      r = mb.unary<LogOp>(operand(0));
    } else if (isa<math::SqrtOp>(inner)) {
      r = mb.unary<SqrtOp>(operand(0));
    } else if (isa<math::RsqrtOp>(inner)) {
      r = mb.unary<RsqrtOp>(operand(0));
    } else if (isa<math::TanhOp>(inner)) {
      r = mb.unary<TanhOp>(operand(0));
    } else if (isa<math::ErfOp>(inner)) {
      r = mb.unary<ErfOp>(operand(0));
    } else if (isa<math::SinOp>(inner)) {
      r = mb.unary<SinOp>(operand(0));
    } else if (isa<math::CosOp>(inner)) {
      r = mb.unary<CosOp>(operand(0));
    } else if (isa<math::AbsFOp>(inner)) {
      r = mb.unary<AbsOp>(operand(0));
    } else if (isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp>(inner)) {
      r = mb.cast(operand(0), resultType);
    }
    if (!r)
      return failure();
    map[inner.getResult(0)] = r;
  }
  SmallVector<Value> results;
  for (auto [v, resultType] : llvm::zip(body.getTerminator()->getOperands(), resultTypes)) {
    if (auto c = outsideConstant(v); c && !map.count(v))
      map[v] = mb.scalar(v.getType(), *c);
    Value r = map.lookup(v);
    if (!r)
      return failure();
    auto want = llvm::cast<RankedTensorType>(resultType);
    if (MIRBuilder::typeOf(r).getShape() != want.getShape())
      r = mb.broadcast(r, MIRBuilder::pattern(want.getShape()));
    if (r && MIRBuilder::elementType(r) != want.getElementType())
      r = mb.cast(r, want.getElementType());
    if (!r || MIRBuilder::typeOf(r) != want)
      return failure();
    results.push_back(r);
  }
  return results;
}

SmallVector<Value>
MIRBuilder::elementwise(TypeRange types, ValueRange inputs,
                        function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  if (hasFailed || llvm::any_of(inputs, [](Value v) { return !v; })) {
    hasFailed = true;
    return SmallVector<Value>(types.size(), Value());
  }
  auto op = FusedElementwiseOp::create(b, loc, types, inputs);
  record(op);
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&op.getBody());
  for (Value v : inputs)
    block->addArgument(elementType(v), loc);
  YieldOp::create(b, loc, body(b, loc, block->getArguments()));
  return SmallVector<Value>(op->getResults());
}

Value MIRBuilder::iota(int64_t n, Type elementType) {
  auto t = RankedTensorType::get({n}, elementType);
  SmallVector<Attribute> values;
  values.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    values.push_back(isa<FloatType>(elementType)
                         ? Attribute(b.getFloatAttr(elementType, double(i)))
                         : Attribute(b.getIntegerAttr(elementType, i)));
  return record(ConstantOp::create(b, loc, DenseElementsAttr::get(t, values)));
}

Value MIRBuilder::zerosLike(Value like) {
  if (!like)
    return fail();
  auto t = typeOf(like);
  if (t.hasStaticShape())
    return record(ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), 0.0))));
  // Dynamic: a region that yields 0 for every element (like·0 would be NaN
  // where `like` is ±inf, as masked scores are).
  return elementwise(TypeRange{t}, ValueRange{like},
                     [&](OpBuilder &b, Location loc, ValueRange) -> SmallVector<Value> {
                       return {arith::ConstantOp::create(
                           b, loc, t.getElementType(), b.getFloatAttr(t.getElementType(), 0.0))};
                     })[0];
}

Value MIRBuilder::sumTo(Value g, RankedTensorType target) {
  if (!g)
    return fail();
  auto gt = typeOf(g);
  if (gt == target)
    return g;
  int64_t lead = gt.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < gt.getRank(); ++d) {
    if (d < lead) {
      axes.push_back(d);
      continue;
    }
    int64_t want = target.getDimSize(d - lead), have = gt.getDimSize(d);
    if (want == 1 && have != 1)
      axes.push_back(d);
  }
  Value r = axes.empty() ? g : reduce(ReduceKind::Sum, g, axes, /*keepDims=*/true);
  if (r && typeOf(r).getShape() != target.getShape())
    r = reshape(r, pattern(target.getShape()));
  return r;
}

Value MIRBuilder::expandAfterLeading(Value x, int64_t rank) {
  if (!x)
    return fail();
  auto shape = shapeOf(x);
  if (static_cast<int64_t>(shape.size()) >= rank)
    return x;
  SmallVector<int64_t> want{shape.front()};
  want.append(rank - shape.size(), 1);
  want.append(shape.begin() + 1, shape.end());
  return reshape(x, pattern(want));
}
