//===- ElementwiseRules.cpp - Derivatives and vmap of elementwise ops -----===//
//
// The default DifferentiableOpInterface and BatchableOpInterface rules, shared
// by every elementwise op: the op's scalar body (buildScalar, or the region
// of rlx_mir.elementwise) is emitted into a new rlx_mir.elementwise region
// and differentiated there in forward mode, one arith/math op at a time.
// The derivative of each scalar op is written once, in `ScalarTangents`; no
// elementwise MIR op has a rule of its own, and a fused region differentiates
// like the chain it came from (twice, for Hessian-vector products).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

bool isFloatValue(Value v) { return isa<FloatType>(v.getType()); }

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// Forward-mode derivatives of the scalar arith/math ops that elementwise
/// bodies use. A null tangent is zero; only float values have tangents.
class ScalarTangents {
public:
  ScalarTangents(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  void seed(Value primal, Value tangent) { map[primal] = tangent; }
  Value of(Value v) const { return map.lookup(v); }

  /// Emits the tangents of `op`'s results from those of its operands.
  LogicalResult propagate(Operation *op) {
    if (llvm::none_of(op->getOperands(), [&](Value v) { return of(v); }))
      return success();
    if (op->getNumResults() != 1 || !isFloatValue(op->getResult(0))) {
      // Comparisons and float→int conversions are piecewise constant; any
      // other way out of the floats (a bitcast) would lose the tangent.
      if (isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op))
        return success();
      return op->emitError("no derivative rule for the scalar op '")
             << op->getName() << "' in an elementwise body (its result is not one float)";
    }
    Value y = op->getResult(0);
    Value t = rule(op, y);
    if (unknown)
      return op->emitError("no derivative rule for the scalar op '")
             << op->getName() << "' in an elementwise body";
    if (t)
      map[y] = t;
    return success();
  }

  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    if (matchPattern(x, m_OneFloat()))
      return y;
    if (matchPattern(y, m_OneFloat()))
      return x;
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, loc, x, y);
  }

private:
  Value orZero(Value t, Type type) { return t ? t : constant(type, 0.0); }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : Value(); }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    return x ? arith::SubFOp::create(b, loc, x, y).getResult() : neg(y);
  }
  Value div(Value x, Value y) { return x ? arith::DivFOp::create(b, loc, x, y) : Value(); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y, Type t) {
    if (!x && !y)
      return Value();
    return arith::SelectOp::create(b, loc, c, orZero(x, t), orZero(y, t));
  }

  Value rule(Operation *op, Value y) {
    Type type = y.getType();
    auto in = [&](unsigned i) { return op->getOperand(i); };
    auto t = [&](unsigned i) { return i < op->getNumOperands() ? of(in(i)) : Value(); };
    auto c = [&](double v) { return constant(type, v); };
    if (isa<arith::AddFOp>(op))
      return add(t(0), t(1));
    if (isa<arith::SubFOp>(op))
      return sub(t(0), t(1));
    if (isa<arith::NegFOp>(op))
      return neg(t(0));
    if (isa<arith::MulFOp>(op))
      return add(mul(t(0), in(1)), mul(in(0), t(1)));
    if (isa<arith::DivFOp>(op)) // (ta − y·tb) / b
      return div(sub(t(0), mul(y, t(1))), in(1));
    if (isa<math::FmaOp>(op))
      return add(add(mul(t(0), in(1)), mul(in(0), t(1))), t(2));
    // Ties send the tangent to the left operand, except against a constant
    // (relu's max(x, 0), clamps), where a tie gets none: relu'(0) = 0 as in
    // torch.
    if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(op)) {
      bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
      bool strict = matchPattern(in(1), m_Constant());
      auto pred = isMax ? (strict ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OGE)
                        : (strict ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OLE);
      return select(cmp(pred, in(0), in(1)), t(0), t(1), type);
    }
    if (isa<arith::SelectOp>(op))
      return select(in(0), t(1), t(2), type);
    if (isa<arith::ExtFOp>(op))
      return arith::ExtFOp::create(b, loc, type, t(0));
    if (isa<arith::TruncFOp>(op))
      return arith::TruncFOp::create(b, loc, type, t(0));
    if (isa<math::ExpOp>(op))
      return mul(t(0), y);
    if (isa<math::LogOp>(op))
      return div(t(0), in(0));
    if (isa<math::SqrtOp>(op)) // t / (2 √x)
      return div(mul(t(0), c(0.5)), y);
    if (isa<math::RsqrtOp>(op)) // −½ x^(−3/2) t = −½ y³ t
      return mul(t(0), mul(c(-0.5), mul(y, mul(y, y))));
    if (isa<math::TanhOp>(op))
      return mul(t(0), sub(c(1.0), mul(y, y)));
    if (isa<math::ErfOp>(op)) // 2/√π · exp(−x²)
      return mul(t(0), mul(c(M_2_SQRTPI),
                           math::ExpOp::create(b, loc, neg(mul(in(0), in(0))))));
    if (isa<math::SinOp>(op))
      return mul(t(0), math::CosOp::create(b, loc, in(0)));
    if (isa<math::CosOp>(op))
      return neg(mul(t(0), math::SinOp::create(b, loc, in(0))));
    if (isa<math::AbsFOp>(op)) { // sign(x) · t, 0 at 0
      Value zero = c(0.0);
      Value negative = select(cmp(arith::CmpFPredicate::OLT, in(0), zero), neg(t(0)), zero, type);
      return select(cmp(arith::CmpFPredicate::OGT, in(0), zero), t(0), negative, type);
    }
    if (isa<math::PowFOp>(op)) {
      // e · a^(e−1) · ta + y · log(a) · te, each only when set, with torch's
      // zeros where the formula has 0·inf: e = 0 for the base, a = 0 and
      // e ≥ 0 for the exponent.
      Value a = in(0), e = in(1), zero = c(0.0);
      Value da;
      if (t(0)) {
        Value d = mul(e, math::PowFOp::create(b, loc, a, sub(e, c(1.0))));
        d = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, e, zero), zero, d);
        da = mul(t(0), d);
      }
      Value de;
      if (t(1)) {
        Value d = mul(y, math::LogOp::create(b, loc, a));
        Value atZero = arith::AndIOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, a, zero),
                                             cmp(arith::CmpFPredicate::OGE, e, zero));
        de = mul(t(1), arith::SelectOp::create(b, loc, atZero, zero, d));
      }
      return add(da, de);
    }
    if (auto p = dyn_cast<math::FPowIOp>(op)) { // n · x^(n−1) · t; 0 for n = 0
      Value n = p.getRhs();
      APInt constN;
      if (matchPattern(n, m_ConstantInt(&constN)) && constN.isZero())
        return Value();
      Value one = arith::ConstantOp::create(b, loc, n.getType(), b.getIntegerAttr(n.getType(), 1));
      Value pw = math::FPowIOp::create(b, loc, in(0), arith::SubIOp::create(b, loc, n, one));
      Value d = mul(arith::SIToFPOp::create(b, loc, type, n), pw);
      Value nZero = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, n,
          arith::ConstantOp::create(b, loc, n.getType(), b.getIntegerAttr(n.getType(), 0)));
      return mul(t(0), arith::SelectOp::create(b, loc, nZero, c(0.0), d));
    }
    if (isa<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp, math::TruncOp>(op))
      return Value(); // piecewise constant
    // Piecewise constant in its float operands (comparisons feed selects,
    // conversions from integers): no tangent.
    if (isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp>(op))
      return Value();
    unknown = true;
    return Value();
  }

  OpBuilder &b;
  Location loc;
  DenseMap<Value, Value> map;
  bool unknown = false;
};

/// Emits the scalar body of elementwise `op` on `args` at `b`'s insertion
/// point (in a new region); the scalar results, or failure.
FailureOr<SmallVector<Value>> emitScalarBody(OpBuilder &b, Location loc, Operation *op,
                                             ValueRange args) {
  if (auto e = dyn_cast<ElementwiseOpInterface>(op))
    return SmallVector<Value>{e.buildScalar(b, loc, args)};
  auto region = dyn_cast<FusedElementwiseOp>(op);
  if (!region)
    return op->emitError("no elementwise body for '") << op->getName() << "'", failure();
  Block &body = region.getBody().front();
  IRMapping map;
  map.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator()) {
    // Scalar constants from outside the region (exporters hoist them).
    for (Value v : inner.getOperands())
      if (!map.contains(v) && v.getParentBlock() != &body)
        if (Operation *def = v.getDefiningOp(); def && matchPattern(v, m_Constant()))
          map.map(v, b.clone(*def)->getResult(0));
    b.clone(inner, map);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  return results;
}

/// Erases the ops of `block` whose results are unused (the primal scalar
/// ops no tangent read), newest first.
void eraseDeadScalarOps(Block *block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isPure(op))
      op->erase();
}

/// A new rlx_mir.elementwise over `inputs` (the op's operands first) with
/// result `types`, whose body starts with `op`'s scalar body on its
/// operands; the builder is left at the body's end.
struct PrimalRegion {
  FusedElementwiseOp region;
  Block *block = nullptr;
  SmallVector<Operation *> ops; // the primal scalar ops, in order
  SmallVector<Value> ys;        // the op's scalar results

  static FailureOr<PrimalRegion> build(OpBuilder &b, Location loc, Operation *op,
                                       ValueRange inputs, TypeRange types) {
    PrimalRegion p;
    p.region = FusedElementwiseOp::create(b, loc, types, inputs);
    p.block = b.createBlock(&p.region.getBody());
    for (Value in : inputs)
      p.block->addArgument(elementTypeOf(in), loc);
    auto r = emitScalarBody(b, loc, op, p.block->getArguments().take_front(op->getNumOperands()));
    if (failed(r)) {
      p.region.erase();
      return failure();
    }
    for (Operation &inner : *p.block)
      p.ops.push_back(&inner);
    p.ys.assign(r->begin(), r->end());
    return p;
  }
  /// The tangents of every primal op; erases the region on failure.
  LogicalResult propagate(ScalarTangents &tan) {
    for (Operation *inner : ops)
      if (failed(tan.propagate(inner))) {
        region.erase();
        return failure();
      }
    return success();
  }
  /// Yields `values` and drops the scalar ops nothing reads.
  void finish(OpBuilder &b, Location loc, ValueRange values) {
    YieldOp::create(b, loc, values);
    eraseDeadScalarOps(block);
  }
};

RankedTensorType withElementType(Value like, Type et) {
  return RankedTensorType::get(cast<RankedTensorType>(like.getType()).getShape(), et);
}

} // namespace

LogicalResult mlir::rlx::mir::detail::elementwiseJvp(Operation *op, MIRBuilder &mb,
                                                     ValueRange tangents,
                                                     SmallVectorImpl<Value> &dy) {
  dy.assign(op->getNumResults(), Value());
  SmallVector<Value> inputs(op->getOperands());
  SmallVector<unsigned> seeded;
  for (auto [i, t] : llvm::enumerate(tangents))
    if (t && i < op->getNumOperands()) {
      inputs.push_back(t);
      seeded.push_back(i);
    }
  SmallVector<unsigned> floats;
  SmallVector<Type> types;
  for (OpResult r : op->getResults())
    if (isa<FloatType>(elementTypeOf(r))) {
      floats.push_back(r.getResultNumber());
      types.push_back(r.getType());
    }
  if (seeded.empty() || floats.empty())
    return success();

  OpBuilder &b = mb.builder();
  OpBuilder::InsertionGuard guard(b);
  Location loc = mb.getLoc();
  auto p = PrimalRegion::build(b, loc, op, inputs, types);
  if (failed(p))
    return failure();
  ScalarTangents tan(b, loc);
  for (auto [k, i] : llvm::enumerate(seeded))
    tan.seed(p->block->getArgument(i), p->block->getArgument(op->getNumOperands() + k));
  if (failed(p->propagate(tan)))
    return failure();
  SmallVector<Value> yields;
  for (unsigned r : floats) {
    Value t = tan.of(p->ys[r]);
    yields.push_back(t ? t : tan.constant(p->ys[r].getType(), 0.0));
  }
  p->finish(b, loc, yields);
  for (auto [k, r] : llvm::enumerate(floats))
    dy[r] = p->region.getResult(k);
  return success();
}

LogicalResult mlir::rlx::mir::detail::elementwiseVjp(Operation *op, MIRBuilder &mb,
                                                     ValueRange cotangents,
                                                     ArrayRef<bool> need,
                                                     SmallVectorImpl<Value> &dx) {
  // Per element the Jacobian of each operand is a scalar, so dxᵢ = Σᵣ dyᵣ ·
  // ∂yᵣ/∂xᵢ, one result of one region per operand that needs it.
  dx.assign(op->getNumOperands(), Value());
  SmallVector<Value> inputs(op->getOperands());
  SmallVector<unsigned> withCotangent;
  for (auto [r, ct] : llvm::enumerate(cotangents))
    if (ct && r < op->getNumResults()) {
      inputs.push_back(ct);
      withCotangent.push_back(r);
    }
  SmallVector<unsigned> wanted;
  SmallVector<Type> types;
  Value shapeLike = op->getResult(0);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (i < need.size() && need[i] && isa<FloatType>(elementTypeOf(op->getOperand(i)))) {
      wanted.push_back(i);
      types.push_back(withElementType(shapeLike, elementTypeOf(op->getOperand(i))));
    }
  if (wanted.empty() || withCotangent.empty())
    return success();

  OpBuilder &b = mb.builder();
  OpBuilder::InsertionGuard guard(b);
  Location loc = mb.getLoc();
  auto p = PrimalRegion::build(b, loc, op, inputs, types);
  if (failed(p))
    return failure();
  Block *block = p->block;
  SmallVector<Value> yields;
  for (unsigned i : wanted) {
    ScalarTangents tan(b, loc);
    Value x = block->getArgument(i);
    tan.seed(x, tan.constant(x.getType(), 1.0));
    if (failed(p->propagate(tan)))
      return failure();
    Value sum;
    for (auto [k, r] : llvm::enumerate(withCotangent)) {
      // Each term in the operand's type (results may differ in type).
      Value term = tan.mul(block->getArgument(op->getNumOperands() + k), tan.of(p->ys[r]));
      sum = tan.add(sum, term ? convertScalar(b, loc, term, x.getType()) : Value());
    }
    yields.push_back(sum ? sum : tan.constant(x.getType(), 0.0));
  }
  p->finish(b, loc, yields);
  auto region = p->region;
  // A cotangent passed through unchanged (add, sub's lhs, broadcast-free
  // selects) is used as it is; the region goes when nothing else is left.
  bool allForwarded = true;
  for (auto [k, i] : llvm::enumerate(wanted)) {
    auto arg = dyn_cast<BlockArgument>(yields[k]);
    if (arg && arg.getOwner() == block && arg.getArgNumber() >= op->getNumOperands() &&
        inputs[arg.getArgNumber()].getType() == types[k]) {
      dx[i] = inputs[arg.getArgNumber()];
      continue;
    }
    dx[i] = region.getResult(k);
    allForwarded = false;
  }
  if (allForwarded)
    region.erase();
  return success();
}

LogicalResult mlir::rlx::mir::detail::elementwiseBatch(Operation *op, MIRBuilder &mb,
                                                       ValueRange operands,
                                                       ArrayRef<bool> batched,
                                                       SmallVectorImpl<Value> &results) {
  // Batched operands get size-1 axes after the batch so that broadcasting
  // aligns their dims with the result's; unbatched ones broadcast as before.
  int64_t batch = ShapedType::kDynamic;
  for (auto [v, isBatched] : llvm::zip(operands, batched))
    if (isBatched)
      batch = MIRBuilder::shapeOf(v).front();
  auto resultShape = MIRBuilder::shapeOf(op->getResult(0));
  int64_t rank = static_cast<int64_t>(resultShape.size()) + 1;
  IRMapping map;
  for (auto [old, v, isBatched] : llvm::zip(op->getOperands(), operands, batched))
    map.map(old, isBatched ? mb.expandAfterLeading(v, rank) : v);
  if (mb.failed())
    return op->emitError("cannot batch '") << op->getName() << "': its operands do not reshape";
  Operation *clone = mb.builder().clone(*op, map);
  for (OpResult r : clone->getResults()) {
    SmallVector<int64_t> shape{batch};
    llvm::append_range(shape, MIRBuilder::shapeOf(r));
    r.setType(RankedTensorType::get(shape, elementTypeOf(r)));
  }
  results.assign(clone->result_begin(), clone->result_end());
  return success();
}
