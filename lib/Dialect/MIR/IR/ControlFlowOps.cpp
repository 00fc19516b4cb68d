//===- ControlFlowOps.cpp - rlx_mir.if, while, scan ------------------------===//
//
// Verifiers, the unrolled form (DecomposableOpInterface: the GPU path and
// vmap) and the derivative rules: each builds an op of the same kind whose
// regions are the derivatives of the original regions (ad::backward and
// ad::forward over a clone of the region's ops). The CPU path lowers the ops
// to scf (lib/Conversion/MIRToLinalg/ControlFlowLowering.cpp).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/Derivatives.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// The most steps the unrolled form builds.
constexpr int64_t kMaxUnrolledSteps = 4096;

static bool isFloat(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

static RankedTensorType stackedType(Type t, int64_t steps) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape{steps};
  llvm::append_range(shape, rt.getShape());
  return RankedTensorType::get(shape, rt.getElementType());
}

static RankedTensorType stepType(Type t) {
  auto rt = cast<RankedTensorType>(t);
  return RankedTensorType::get(rt.getShape().drop_front(), rt.getElementType());
}

static SmallVector<Type> stepTypes(TypeRange types) {
  return llvm::map_to_vector(types, [](Type t) -> Type { return stepType(t); });
}

/// The indices of the float tensors among `types`.
static SmallVector<unsigned> floatIndices(TypeRange types) {
  SmallVector<unsigned> out;
  for (auto [i, t] : llvm::enumerate(types))
    if (isFloat(t))
      out.push_back(i);
  return out;
}

template <typename T>
static SmallVector<T> pick(ArrayRef<T> all, ArrayRef<unsigned> indices) {
  return llvm::map_to_vector(indices, [&](unsigned i) { return all[i]; });
}

/// A new block of `region` taking `types`; the builder stays where it was.
static Block *addBlock(OpBuilder &b, Region &region, TypeRange types, Location loc) {
  OpBuilder::InsertionGuard guard(b);
  return b.createBlock(&region, region.end(), types, SmallVector<Location>(types.size(), loc));
}

/// `v`, or zeros of `like`'s type when `v` is null.
static Value orZeros(MIRBuilder &mb, Value v, Value like) { return v ? v : mb.zerosLike(like); }

/// The reverse mode of `block` (cloned at `b` on `primal`) for cotangents
/// `yieldCots` of its yields (null: none): one cotangent per primal (null:
/// zero). Fails after an error.
static FailureOr<SmallVector<Value>> blockVjp(OpBuilder &b, Location loc, Block &block,
                                              ValueRange primal, ArrayRef<Value> yieldCots) {
  SmallVector<Operation *> ops;
  SmallVector<Value> yields = ad::cloneYieldingBlock(b, block, primal, &ops);
  SmallVector<Value> seeds = llvm::filter_to_vector(primal, [](Value v) {
    return isFloat(v.getType());
  });
  DenseSet<Value> active = ad::activeValues(ops, seeds);
  DenseMap<Value, Value> grads;
  MIRBuilder mb(b, loc, /*diagnose=*/true);
  for (auto [y, c] : llvm::zip(yields, yieldCots)) {
    if (!c || !active.contains(y))
      continue;
    auto [slot, inserted] = grads.try_emplace(y, c);
    if (!inserted)
      slot->second = mb.add(slot->second, c);
  }
  if (mb.failed() || failed(ad::backward(b, ops, active, grads, "rlx-mir-grad")))
    return failure();
  return llvm::map_to_vector(primal, [&](Value p) { return grads.lookup(p); });
}

/// The forward mode of `block` (cloned at `b` on `primal`, whose tangents
/// are `tangents`, null: zero): its yields into `yields`, their tangents
/// returned (null: zero). Fails after an error.
static FailureOr<SmallVector<Value>> blockJvp(OpBuilder &b, Block &block, ValueRange primal,
                                              ArrayRef<Value> tangents,
                                              SmallVectorImpl<Value> &yields) {
  SmallVector<Operation *> ops;
  yields = ad::cloneYieldingBlock(b, block, primal, &ops);
  DenseMap<Value, Value> map;
  for (auto [p, t] : llvm::zip(primal, tangents))
    if (t)
      map[p] = t;
  if (failed(ad::forward(b, ops, map, "rlx-mir-jvp")))
    return failure();
  return llvm::map_to_vector(yields, [&](Value y) { return map.lookup(y); });
}

//===----------------------------------------------------------------------===//
// if
//===----------------------------------------------------------------------===//

LogicalResult IfOp::verifyRegions() {
  auto ct = cast<RankedTensorType>(getCond().getType());
  if (ct.getRank() != 0 || !ct.getElementType().isInteger(1))
    return emitOpError() << "expects a 0-d tensor<i1> condition, got " << ct;
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  TypeRange in = getInputs().getTypes(), out = getResultTypes();
  return success(succeeded(ad::verifyRegionSignature(*this, getThenRegion(), "then", in, out)) &&
                 succeeded(ad::verifyRegionSignature(*this, getElseRegion(), "else", in, out)));
}

FailureOr<SmallVector<Value>> IfOp::decompose(MIRBuilder &mb) {
  SmallVector<Value> t = ad::cloneYieldingBlock(mb.builder(), getThenRegion().front(), getInputs());
  SmallVector<Value> e = ad::cloneYieldingBlock(mb.builder(), getElseRegion().front(), getInputs());
  SmallVector<Value> out;
  for (auto [x, y] : llvm::zip(t, e))
    out.push_back(mb.select(getCond(), x, y));
  if (mb.failed())
    return emitError("rlx_mir.if: cannot select between its regions' values"), failure();
  return out;
}

LogicalResult IfOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                        SmallVectorImpl<Value> &dx) {
  OpBuilder &b = mb.builder();
  Location loc = getLoc();
  unsigned n = getInputs().size();
  SmallVector<unsigned> fi = floatIndices(getInputs().getTypes());
  SmallVector<unsigned> fr = floatIndices(getResultTypes());
  SmallVector<Value> operands(getInputs());
  for (unsigned r : fr)
    operands.push_back(orZeros(mb, cotangents[r], getResult(r)));
  if (mb.failed())
    return emitError("rlx-mir-grad: cannot build the zero cotangents of rlx_mir.if");
  SmallVector<Type> argTypes(ValueRange(operands).getTypes());
  SmallVector<Type> gradTypes = pick<Type>(SmallVector<Type>(getInputs().getTypes()), fi);
  auto op = IfOp::create(b, loc, gradTypes, getCond(), operands);
  for (auto [from, to] : {std::pair{&getThenRegion(), &op.getThenRegion()},
                          std::pair{&getElseRegion(), &op.getElseRegion()}}) {
    Block *blk = addBlock(b, *to, argTypes, loc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    SmallVector<Value> cots(getNumResults(), Value());
    for (auto [k, r] : llvm::enumerate(fr))
      cots[r] = blk->getArgument(n + k);
    auto grads = blockVjp(b, loc, from->front(), blk->getArguments().take_front(n), cots);
    if (failed(grads))
      return failure();
    MIRBuilder rb(b, loc, /*diagnose=*/true);
    SmallVector<Value> yields;
    for (unsigned i : fi)
      yields.push_back(orZeros(rb, (*grads)[i], blk->getArgument(i)));
    if (rb.failed())
      return emitError("rlx-mir-grad: cannot build the gradient regions of rlx_mir.if");
    YieldOp::create(b, loc, yields);
  }
  dx.assign(getNumOperands(), Value());
  for (auto [k, i] : llvm::enumerate(fi))
    if (need[1 + i])
      dx[1 + i] = op.getResult(k);
  return success();
}

LogicalResult IfOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  OpBuilder &b = mb.builder();
  Location loc = getLoc();
  unsigned n = getInputs().size();
  SmallVector<unsigned> fi = floatIndices(getInputs().getTypes());
  SmallVector<unsigned> fr = floatIndices(getResultTypes());
  SmallVector<Value> operands(getInputs());
  for (unsigned i : fi)
    operands.push_back(orZeros(mb, tangents[1 + i], getInputs()[i]));
  if (mb.failed())
    return emitError("rlx-mir-jvp: cannot build the zero tangents of rlx_mir.if");
  SmallVector<Type> argTypes(ValueRange(operands).getTypes());
  SmallVector<Type> types(getResultTypes());
  llvm::append_range(types, pick<Type>(SmallVector<Type>(getResultTypes()), fr));
  auto op = IfOp::create(b, loc, types, getCond(), operands);
  for (auto [from, to] : {std::pair{&getThenRegion(), &op.getThenRegion()},
                          std::pair{&getElseRegion(), &op.getElseRegion()}}) {
    Block *blk = addBlock(b, *to, argTypes, loc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    SmallVector<Value> ts(n, Value());
    for (auto [k, i] : llvm::enumerate(fi))
      ts[i] = blk->getArgument(n + k);
    SmallVector<Value> yields;
    auto tys = blockJvp(b, from->front(), blk->getArguments().take_front(n), ts, yields);
    if (failed(tys))
      return failure();
    MIRBuilder rb(b, loc, /*diagnose=*/true);
    for (unsigned r : fr)
      yields.push_back(orZeros(rb, (*tys)[r], yields[r]));
    if (rb.failed())
      return emitError("rlx-mir-jvp: cannot build the tangent regions of rlx_mir.if");
    YieldOp::create(b, loc, yields);
  }
  dy.assign(getNumResults(), Value());
  for (auto [k, r] : llvm::enumerate(fr))
    dy[r] = op.getResult(getNumResults() + k);
  return success();
}

//===----------------------------------------------------------------------===//
// while
//===----------------------------------------------------------------------===//

LogicalResult WhileOp::verifyRegions() {
  TypeRange carries = getInputs().getTypes();
  auto i64 = RankedTensorType::get({}, IntegerType::get(getContext(), 64));
  SmallVector<Type> results(carries);
  results.push_back(i64);
  if (TypeRange(getResultTypes()) != TypeRange(results))
    return emitOpError() << "expects results of the carry types followed by " << i64
                         << " (the trip count)";
  if (getMaxIterations() && getMaxIterationsAttr().getInt() < 0)
    return emitOpError() << "expects max_iterations >= 0, got " << getMaxIterationsAttr().getInt();
  auto i1 = RankedTensorType::get({}, IntegerType::get(getContext(), 1));
  return success(
      succeeded(ad::verifyRegionSignature(*this, getCondRegion(), "cond", carries, {i1})) &&
      succeeded(ad::verifyRegionSignature(*this, getBody(), "body", carries, carries)));
}

/// The op with `max_iterations` as a scan of that many steps, each
/// `if cond(c) then body(c) else c`, the trip count carried too.
static ScanOp whileAsScan(WhileOp op, MIRBuilder &mb) {
  OpBuilder &b = mb.builder();
  Location loc = op.getLoc();
  unsigned nc = op.getNumCarries();
  Type i64 = b.getI64Type();
  SmallVector<Value> init(op.getInputs());
  init.push_back(mb.scalar(i64, 0.0));
  SmallVector<Type> types(ValueRange(init).getTypes());
  auto scan = ScanOp::create(b, loc, types, init, ValueRange(), ValueRange(),
                             b.getI64IntegerAttr(*op.getMaxIterations()), UnitAttr(), UnitAttr(),
                             IntegerAttr());
  Block *blk = addBlock(b, scan.getBody(), types, loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(blk);
  ValueRange c = blk->getArguments().take_front(nc);
  Value p = ad::cloneYieldingBlock(b, op.getCondRegion().front(), c)[0];
  SmallVector<Type> carryTypes(op.getInputs().getTypes());
  auto step = IfOp::create(b, loc, carryTypes, p, c);
  Block *then = addBlock(b, step.getThenRegion(), carryTypes, loc);
  Block *otherwise = addBlock(b, step.getElseRegion(), carryTypes, loc);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToEnd(then);
    YieldOp::create(b, loc, ad::cloneYieldingBlock(b, op.getBody().front(), then->getArguments()));
    b.setInsertionPointToEnd(otherwise);
    YieldOp::create(b, loc, otherwise->getArguments());
  }
  MIRBuilder sb(b, loc, /*diagnose=*/true);
  SmallVector<Value> next(step.getResults());
  next.push_back(sb.add(blk->getArgument(nc), sb.cast(p, i64)));
  if (sb.failed()) {
    scan.erase();
    return ScanOp();
  }
  YieldOp::create(b, loc, next);
  return scan;
}

/// Errors at `op` (prefixed with `pass`) unless its operands are static.
static LogicalResult needStatic(Operation *op, StringRef pass) {
  for (Type t : op->getOperandTypes())
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return op->emitError() << pass << ": " << op->getName() << " needs static shapes, got " << t;
  return success();
}

/// Errors with `message` at `op` when it has no trip cap.
static LogicalResult needCap(WhileOp op, StringRef message) {
  if (op.getMaxIterations())
    return success();
  return op.emitError() << message;
}

FailureOr<SmallVector<Value>> WhileOp::decompose(MIRBuilder &mb) {
  if (failed(needCap(*this, "rlx_mir.while without max_iterations: its unrolled form (the GPU "
                                   "path, rlx-mir-vmap) needs a trip cap")))
    return failure();
  int64_t m = *getMaxIterations();
  if (m > kMaxUnrolledSteps)
    return emitError() << "the unrolled form (the GPU path, rlx-mir-vmap) builds at most "
                       << kMaxUnrolledSteps << " trips, max_iterations is " << m,
           failure();
  Type i64 = mb.builder().getI64Type();
  SmallVector<Value> c(getInputs());
  Value trips = mb.scalar(i64, 0.0);
  for (int64_t i = 0; i < m && !mb.failed(); ++i) {
    Value p = ad::cloneYieldingBlock(mb.builder(), getCondRegion().front(), c)[0];
    SmallVector<Value> next = ad::cloneYieldingBlock(mb.builder(), getBody().front(), c);
    for (auto [x, y] : llvm::zip(c, next))
      x = mb.select(p, y, x);
    trips = mb.add(trips, mb.cast(p, i64));
  }
  c.push_back(trips);
  if (mb.failed())
    return emitError("rlx_mir.while: cannot build its unrolled form"), failure();
  return c;
}

LogicalResult WhileOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                           SmallVectorImpl<Value> &dx) {
  if (failed(needCap(*this, "rlx-mir-grad: an rlx_mir.while without max_iterations (unbounded "
                                   "trips) cannot be differentiated; give it a trip cap")) ||
      failed(needStatic(*this, "rlx-mir-grad")))
    return failure();
  ScanOp scan = whileAsScan(*this, mb);
  if (!scan)
    return emitError("rlx-mir-grad: cannot build rlx_mir.while as a scan of its trips");
  SmallVector<Value> cots(cotangents);
  SmallVector<bool> scanNeed(need);
  scanNeed.push_back(false);
  LogicalResult ok = scan.vjp(mb, cots, scanNeed, dx);
  if (scan->use_empty())
    scan.erase();
  if (failed(ok))
    return failure();
  dx.pop_back(); // the trip count's
  return success();
}

LogicalResult WhileOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  if (failed(needCap(*this, "rlx-mir-jvp: an rlx_mir.while without max_iterations (unbounded "
                                   "trips) cannot be differentiated; give it a trip cap")) ||
      failed(needStatic(*this, "rlx-mir-jvp")))
    return failure();
  ScanOp scan = whileAsScan(*this, mb);
  if (!scan)
    return emitError("rlx-mir-jvp: cannot build rlx_mir.while as a scan of its trips");
  SmallVector<Value> ts(tangents);
  ts.push_back(Value());
  LogicalResult ok = scan.jvp(mb, ts, dy);
  if (scan->use_empty())
    scan.erase();
  return ok;
}

//===----------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------===//

int64_t ScanOp::getNumSteps() {
  if (getLength())
    return getLengthAttr().getInt();
  for (Value x : getXs())
    if (int64_t l = cast<RankedTensorType>(x.getType()).getDimSize(0); !ShapedType::isDynamic(l))
      return l;
  return ShapedType::kDynamic;
}

LogicalResult ScanOp::verifyRegions() {
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  int64_t steps = ShapedType::kDynamic;
  for (Value x : getXs()) {
    auto xt = cast<RankedTensorType>(x.getType());
    if (xt.getRank() == 0)
      return emitOpError() << "expects xs of rank >= 1 (steps along the leading axis), got " << xt;
    int64_t l = xt.getDimSize(0);
    if (!ShapedType::isDynamic(l) && !ShapedType::isDynamic(steps) && l != steps)
      return emitOpError() << "expects every xs to have the same leading size, got " << steps
                           << " and " << l;
    if (!ShapedType::isDynamic(l))
      steps = l;
  }
  if (getLength()) {
    int64_t length = getLengthAttr().getInt();
    if (length < 0)
      return emitOpError() << "expects length >= 0, got " << length;
    if (!ShapedType::isDynamic(steps) && steps != length)
      return emitOpError() << "has length " << length << " but its xs have " << steps
                           << " steps";
    steps = length;
  } else if (getXs().empty()) {
    return emitOpError("expects a length when it has no xs");
  }
  if (getNumCheckpoints()) {
    int64_t s = getNumCheckpointsAttr().getInt();
    if (s < 1)
      return emitOpError() << "expects num_checkpoints >= 1, got " << s;
    if (!ShapedType::isDynamic(steps) && steps % s != 0)
      return emitOpError() << "expects num_checkpoints to divide the " << steps
                           << " steps, got " << s;
  }
  unsigned nc = getInit().size();
  if (getNumResults() < nc * (getTrajectory() ? 2 : 1))
    return emitOpError() << "expects at least " << nc * (getTrajectory() ? 2 : 1)
                         << " results (the carries" << (getTrajectory() ? " and their trajectory" : "")
                         << "), got " << getNumResults();
  TypeRange carries = getInit().getTypes(), results = getResultTypes();
  if (results.take_front(nc) != carries)
    return emitOpError("expects its first results to have the carry types");
  SmallVector<Type> yields(carries);
  auto stacked = [&](Type t, StringRef what) -> FailureOr<Type> {
    auto rt = cast<RankedTensorType>(t);
    if (rt.getRank() == 0)
      return emitOpError() << "expects " << what << " results stacked along a leading axis, got "
                           << rt;
    int64_t l = rt.getDimSize(0);
    if (!ShapedType::isDynamic(steps) && l != steps)
      return emitOpError() << "expects " << what << " results with a leading size of " << steps
                           << " (the steps), got " << rt;
    return Type(stepType(rt));
  };
  for (Type t : results.slice(nc, getNumYs())) {
    auto y = stacked(t, "per-step");
    if (failed(y))
      return failure();
    yields.push_back(*y);
  }
  if (getTrajectory())
    for (auto [t, c] : llvm::zip(results.take_back(nc), carries)) {
      auto y = stacked(t, "trajectory");
      if (failed(y))
        return failure();
      if (*y != c)
        return emitOpError() << "expects trajectory results of the carry types stacked, got " << t;
    }
  SmallVector<Type> args(carries);
  llvm::append_range(args, stepTypes(getXs().getTypes()));
  llvm::append_range(args, getConsts().getTypes());
  return ad::verifyRegionSignature(*this, getBody(), "body", args, yields);
}

FailureOr<SmallVector<Value>> ScanOp::decompose(MIRBuilder &mb) {
  for (Value v : getOperands())
    if (failed(MIRBuilder::requireStaticShape(*this, cast<ShapedType>(v.getType()))))
      return failure();
  int64_t steps = getNumSteps();
  if (steps > kMaxUnrolledSteps)
    return emitError() << "the unrolled form (the GPU path, rlx-mir-vmap) builds at most "
                       << kMaxUnrolledSteps << " steps, the scan has " << steps,
           failure();
  unsigned nc = getInit().size(), ny = getNumYs();
  SmallVector<Value> c(getInit());
  // Per output, its value at each step index.
  SmallVector<SmallVector<Value>> ys(ny, SmallVector<Value>(steps)),
      traj(nc, SmallVector<Value>(steps));
  for (int64_t s = 0; s < steps && !mb.failed(); ++s) {
    int64_t t = getReverse() ? steps - 1 - s : s;
    SmallVector<Value> args(c);
    for (Value x : getXs()) {
      SmallVector<int64_t> shape(MIRBuilder::shapeOf(x)), offsets(shape.size(), 0);
      offsets[0] = t;
      shape[0] = 1;
      Value piece = mb.slice(x, offsets, shape, SmallVector<int64_t>(shape.size(), 1));
      args.push_back(mb.reshape(piece, ArrayRef<int64_t>(shape).drop_front()));
    }
    llvm::append_range(args, getConsts());
    if (mb.failed())
      break;
    SmallVector<Value> r = ad::cloneYieldingBlock(mb.builder(), getBody().front(), args);
    for (unsigned i = 0; i < nc; ++i)
      traj[i][t] = c[i] = r[i];
    for (unsigned j = 0; j < ny; ++j)
      ys[j][t] = r[nc + j];
  }
  auto stack = [&](ArrayRef<Value> values, Type type) -> Value {
    auto rt = cast<RankedTensorType>(type);
    if (values.empty())
      return mb.broadcast(mb.scalar(rt.getElementType(), 0.0), rt.getShape());
    SmallVector<Value> rows;
    for (Value v : values) {
      SmallVector<int64_t> shape{1};
      llvm::append_range(shape, MIRBuilder::shapeOf(v));
      rows.push_back(mb.reshape(v, shape));
    }
    return rows.size() == 1 ? rows[0] : mb.concat(rows, 0);
  };
  SmallVector<Value> out(c);
  for (unsigned j = 0; j < ny; ++j)
    out.push_back(stack(ys[j], getResult(nc + j).getType()));
  if (getTrajectory())
    for (unsigned i = 0; i < nc; ++i)
      out.push_back(stack(traj[i], getResult(nc + ny + i).getType()));
  if (mb.failed())
    return emitError("rlx_mir.scan: cannot build its unrolled form"), failure();
  return out;
}

/// `v` [L, ...] as [segments, L / segments, ...].
static Value segmented(MIRBuilder &mb, Value v, int64_t segments) {
  SmallVector<int64_t> shape(MIRBuilder::shapeOf(v));
  int64_t steps = shape[0];
  shape[0] = steps / segments;
  shape.insert(shape.begin(), segments);
  return mb.reshape(v, shape);
}

/// The vjp with the carry kept at `segments` checkpoints (see the op's
/// description): a scan over the segments, each an inner scan of its steps,
/// stacks the carry entering each; a scan the other way over the segments
/// takes the vjp of each segment's inner scan from its checkpoint.
static LogicalResult checkpointedVjp(ScanOp op, MIRBuilder &mb, ValueRange cotangents,
                                     ArrayRef<bool> need, SmallVectorImpl<Value> &dx,
                                     int64_t segments) {
  OpBuilder &b = mb.builder();
  Location loc = op.getLoc();
  int64_t steps = op.getNumSteps(), k = steps / segments;
  unsigned nc = op.getInit().size(), nx = op.getXs().size(), nk = op.getConsts().size(),
           ny = op.getNumYs();
  SmallVector<Type> carryTypes(op.getInit().getTypes()), xsTypes(op.getXs().getTypes()),
      constTypes(op.getConsts().getTypes()), yTypes(TypeRange(op.getResultTypes()).slice(nc, ny));
  SmallVector<unsigned> fc = floatIndices(carryTypes), fx = floatIndices(xsTypes),
                        fk = floatIndices(constTypes), fy = floatIndices(yTypes);
  SmallVector<unsigned> ft;
  if (op.getTrajectory())
    for (unsigned i : fc)
      if (cotangents[nc + ny + i])
        ft.push_back(i);
  IntegerAttr segmentSteps = b.getI64IntegerAttr(k);
  auto segmentType = [&](Type stacked) -> Type { return stackedType(stepType(stacked), k); };
  /// An inner scan of one segment's k steps (the op's body) at `b`.
  auto segmentScan = [&](ValueRange init, ValueRange xs, ValueRange consts, bool trajectory) {
    SmallVector<Type> types(carryTypes);
    for (Type t : yTypes)
      types.push_back(segmentType(t));
    if (trajectory)
      for (Type t : carryTypes)
        types.push_back(stackedType(t, k));
    auto inner = ScanOp::create(b, loc, types, init, xs, consts, segmentSteps,
                                op.getReverseAttr(), trajectory ? b.getUnitAttr() : UnitAttr(),
                                IntegerAttr());
    IRMapping map;
    op.getBody().cloneInto(&inner.getBody(), map);
    return inner;
  };

  SmallVector<Value> segXs = llvm::map_to_vector(
      op.getXs(), [&](Value x) { return segmented(mb, x, segments); });
  // The checkpoints: the carry entering each segment, stacked.
  SmallVector<Type> ckptTypes(carryTypes);
  for (Type t : carryTypes)
    ckptTypes.push_back(stackedType(t, segments));
  IntegerAttr numSegments = b.getI64IntegerAttr(segments);
  auto ckpt = ScanOp::create(b, loc, ckptTypes, op.getInit(), segXs, op.getConsts(), numSegments,
                             op.getReverseAttr(), UnitAttr(), IntegerAttr());
  {
    SmallVector<Type> args(carryTypes);
    llvm::append_range(args, stepTypes(ValueRange(segXs).getTypes()));
    llvm::append_range(args, constTypes);
    Block *blk = addBlock(b, ckpt.getBody(), args, loc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    ValueRange a = blk->getArguments();
    ScanOp inner = segmentScan(a.take_front(nc), a.slice(nc, nx), a.take_back(nk), false);
    SmallVector<Value> yields(inner.getResults().take_front(nc));
    llvm::append_range(yields, a.take_front(nc));
    YieldOp::create(b, loc, yields);
  }
  ValueRange checkpoints = ckpt.getResults().take_back(nc);

  SmallVector<Value> init, xs(checkpoints);
  for (unsigned i : fc)
    init.push_back(orZeros(mb, cotangents[i], op.getInit()[i]));
  for (unsigned kk : fk)
    init.push_back(mb.zerosLike(op.getConsts()[kk]));
  llvm::append_range(xs, segXs);
  for (unsigned j : fy)
    xs.push_back(segmented(mb, orZeros(mb, cotangents[nc + j], op.getResult(nc + j)), segments));
  for (unsigned i : ft)
    xs.push_back(segmented(mb, cotangents[nc + ny + i], segments));
  if (mb.failed())
    return op.emitError("rlx-mir-grad: cannot build the checkpointed vjp of rlx_mir.scan");
  SmallVector<Type> types(ValueRange(init).getTypes());
  for (unsigned x : fx)
    types.push_back(segXs[x].getType());
  auto bwd = ScanOp::create(b, loc, types, init, xs, op.getConsts(), numSegments,
                            op.getReverse() ? UnitAttr() : b.getUnitAttr(), UnitAttr(),
                            IntegerAttr());
  {
    SmallVector<Type> args(ValueRange(init).getTypes());
    llvm::append_range(args, stepTypes(ValueRange(xs).getTypes()));
    llvm::append_range(args, constTypes);
    Block *blk = addBlock(b, bwd.getBody(), args, loc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    unsigned at = 0;
    auto next = [&](size_t count) {
      ValueRange r = blk->getArguments().slice(at, count);
      at += count;
      return r;
    };
    ValueRange dc = next(fc.size()), acc = next(fk.size()), start = next(nc), xt = next(nx),
               dy = next(fy.size()), dtraj = next(ft.size()), consts = next(nk);
    ScanOp inner = segmentScan(start, xt, consts, !ft.empty());
    SmallVector<Value> cots(inner.getNumResults(), Value());
    for (auto [m, i] : llvm::enumerate(fc))
      cots[i] = dc[m];
    for (auto [m, j] : llvm::enumerate(fy))
      cots[nc + j] = dy[m];
    for (auto [m, i] : llvm::enumerate(ft))
      cots[nc + ny + i] = dtraj[m];
    SmallVector<bool> innerNeed(nc + nx + nk, true);
    SmallVector<Value> g;
    MIRBuilder rb(b, loc, /*diagnose=*/true);
    LogicalResult ok = inner.vjp(rb, cots, innerNeed, g);
    if (inner->use_empty())
      inner.erase();
    if (failed(ok))
      return failure();
    SmallVector<Value> yields;
    for (unsigned i : fc)
      yields.push_back(orZeros(rb, g[i], start[i]));
    for (auto [m, kk] : llvm::enumerate(fk))
      yields.push_back(g[nc + nx + kk] ? rb.add(acc[m], g[nc + nx + kk]) : acc[m]);
    for (unsigned x : fx)
      yields.push_back(orZeros(rb, g[nc + x], xt[x]));
    if (rb.failed())
      return op.emitError("rlx-mir-grad: cannot build the checkpointed vjp of rlx_mir.scan");
    YieldOp::create(b, loc, yields);
  }
  dx.assign(op->getNumOperands(), Value());
  unsigned r = 0;
  auto take = [&](unsigned operand, bool stacked) {
    Value g = bwd.getResult(r++);
    if (need[operand])
      dx[operand] = stacked ? mb.reshape(g, MIRBuilder::shapeOf(op->getOperand(operand))) : g;
  };
  for (unsigned i : fc)
    take(i, false);
  for (unsigned kk : fk)
    take(nc + nx + kk, false);
  for (unsigned x : fx)
    take(nc + x, true);
  return success(!mb.failed());
}

LogicalResult ScanOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                          SmallVectorImpl<Value> &dx) {
  for (Type t : llvm::concat<Type>(getOperandTypes(), getResultTypes()))
    if (!cast<RankedTensorType>(t).hasStaticShape())
      return emitError() << "rlx-mir-grad: rlx_mir.scan needs static shapes, got " << t;
  int64_t steps = getNumSteps();
  if (getNumCheckpoints() && getNumCheckpointsAttr().getInt() > 1 &&
      getNumCheckpointsAttr().getInt() < steps && !getInit().empty())
    return checkpointedVjp(*this, mb, cotangents, need, dx, getNumCheckpointsAttr().getInt());
  OpBuilder &b = mb.builder();
  Location loc = getLoc();
  unsigned nc = getInit().size(), nx = getXs().size(), nk = getConsts().size(), ny = getNumYs();
  IntegerAttr length = b.getI64IntegerAttr(steps);

  // The carries each step starts from, stacked: the forward scan again,
  // also yielding them.
  SmallVector<Type> fwdTypes(TypeRange(getResultTypes()).take_front(nc + ny));
  for (Value c : getInit())
    fwdTypes.push_back(stackedType(c.getType(), steps));
  auto fwd = ScanOp::create(b, loc, fwdTypes, getInit(), getXs(), getConsts(), length,
                            getReverseAttr(), UnitAttr(), IntegerAttr());
  {
    IRMapping map;
    getBody().cloneInto(&fwd.getBody(), map);
    Block &blk = fwd.getBody().front();
    auto yield = cast<YieldOp>(blk.getTerminator());
    SmallVector<Value> values(yield.getValues());
    llvm::append_range(values, blk.getArguments().take_front(nc));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(yield);
    YieldOp::create(b, yield.getLoc(), values);
    yield.erase();
  }
  ValueRange carriesIn = fwd.getResults().take_back(nc);

  SmallVector<Type> initTypes(getInit().getTypes()), xsTypes(getXs().getTypes()),
      constTypes(getConsts().getTypes());
  SmallVector<Type> yTypes(TypeRange(getResultTypes()).slice(nc, ny));
  SmallVector<unsigned> fc = floatIndices(initTypes), fx = floatIndices(xsTypes),
                        fk = floatIndices(constTypes), fy = floatIndices(yTypes);
  // The trajectory's cotangents that are there.
  SmallVector<unsigned> ft;
  if (getTrajectory())
    for (unsigned i : fc)
      if (cotangents[nc + ny + i])
        ft.push_back(i);

  SmallVector<Value> init, xs(carriesIn), consts(getConsts());
  for (unsigned i : fc)
    init.push_back(orZeros(mb, cotangents[i], getInit()[i]));
  for (unsigned k : fk)
    init.push_back(mb.zerosLike(getConsts()[k]));
  llvm::append_range(xs, getXs());
  for (unsigned j : fy)
    xs.push_back(orZeros(mb, cotangents[nc + j], getResult(nc + j)));
  for (unsigned i : ft)
    xs.push_back(cotangents[nc + ny + i]);
  SmallVector<Type> types(ValueRange(init).getTypes());
  for (unsigned x : fx)
    types.push_back(xsTypes[x]);
  if (mb.failed())
    return emitError("rlx-mir-grad: cannot build the zero cotangents of rlx_mir.scan");
  auto bwd = ScanOp::create(b, loc, types, init, xs, consts, length,
                            getReverse() ? UnitAttr() : b.getUnitAttr(), UnitAttr(), IntegerAttr());

  // Its step: (dc, dconsts so far, carry in, x, dy, dtrajectory, consts) →
  // (dcarry in, dconsts so far + this step's; dx).
  SmallVector<Type> args(ValueRange(init).getTypes());
  llvm::append_range(args, stepTypes(ValueRange(xs).getTypes()));
  llvm::append_range(args, constTypes);
  Block *blk = addBlock(b, bwd.getBody(), args, loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(blk);
  MIRBuilder rb(b, loc, /*diagnose=*/true);
  unsigned at = 0;
  auto next = [&](size_t count) {
    ValueRange r = blk->getArguments().slice(at, count);
    at += count;
    return r;
  };
  ValueRange dc = next(fc.size()), acc = next(fk.size()), cin = next(nc), xt = next(nx),
             dy = next(fy.size()), dtraj = next(ft.size()), k = next(nk);
  SmallVector<Value> yieldCots(nc + ny, Value());
  for (auto [m, i] : llvm::enumerate(fc))
    yieldCots[i] = dc[m];
  for (auto [m, i] : llvm::enumerate(ft))
    yieldCots[i] = rb.add(yieldCots[i], dtraj[m]);
  for (auto [m, j] : llvm::enumerate(fy))
    yieldCots[nc + j] = dy[m];
  SmallVector<Value> primal(cin);
  llvm::append_range(primal, xt);
  llvm::append_range(primal, k);
  auto grads = blockVjp(b, loc, getBody().front(), primal, yieldCots);
  if (failed(grads))
    return failure();
  SmallVector<Value> yields;
  for (unsigned i : fc)
    yields.push_back(orZeros(rb, (*grads)[i], cin[i]));
  for (auto [m, kk] : llvm::enumerate(fk)) {
    Value g = (*grads)[nc + nx + kk];
    yields.push_back(g ? rb.add(acc[m], g) : acc[m]);
  }
  for (unsigned x : fx)
    yields.push_back(orZeros(rb, (*grads)[nc + x], xt[x]));
  if (rb.failed())
    return emitError("rlx-mir-grad: cannot build the backward step of rlx_mir.scan");
  YieldOp::create(b, loc, yields);
  b.setInsertionPointAfter(bwd);

  // Results: the init cotangents (fc), the consts' (fk), the xs' (fx).
  dx.assign(getNumOperands(), Value());
  unsigned r = 0;
  auto take = [&](unsigned operand) {
    Value g = bwd.getResult(r++);
    if (need[operand])
      dx[operand] = g;
  };
  for (unsigned i : fc)
    take(i);
  for (unsigned kk : fk)
    take(nc + nx + kk);
  for (unsigned x : fx)
    take(nc + x);
  return success();
}

LogicalResult ScanOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  OpBuilder &b = mb.builder();
  Location loc = getLoc();
  unsigned nc = getInit().size(), nx = getXs().size(), nk = getConsts().size(), ny = getNumYs();
  SmallVector<Type> initTypes(getInit().getTypes()), xsTypes(getXs().getTypes()),
      constTypes(getConsts().getTypes()), yTypes(TypeRange(getResultTypes()).slice(nc, ny));
  SmallVector<unsigned> fc = floatIndices(initTypes), fx = floatIndices(xsTypes),
                        fk = floatIndices(constTypes), fy = floatIndices(yTypes);
  SmallVector<Value> init(getInit()), xs(getXs()), consts(getConsts());
  for (unsigned i : fc)
    init.push_back(orZeros(mb, tangents[i], getInit()[i]));
  for (unsigned x : fx)
    xs.push_back(orZeros(mb, tangents[nc + x], getXs()[x]));
  for (unsigned kk : fk)
    consts.push_back(orZeros(mb, tangents[nc + nx + kk], getConsts()[kk]));
  if (mb.failed())
    return emitError("rlx-mir-jvp: cannot build the zero tangents of rlx_mir.scan");
  SmallVector<Type> carryTypes(ValueRange(init).getTypes()), types(carryTypes);
  llvm::append_range(types, yTypes);
  llvm::append_range(types, pick<Type>(yTypes, fy));
  if (getTrajectory()) { // the primal's trajectory types, then its float carries'
    TypeRange traj = TypeRange(getResultTypes()).take_back(nc);
    llvm::append_range(types, traj);
    for (unsigned i : fc)
      types.push_back(traj[i]);
  }
  auto op = ScanOp::create(b, loc, types, init, xs, consts, getLengthAttr(), getReverseAttr(),
                           getTrajectoryAttr(), IntegerAttr());
  SmallVector<Type> args(carryTypes);
  llvm::append_range(args, stepTypes(ValueRange(xs).getTypes()));
  llvm::append_range(args, ValueRange(consts).getTypes());
  Block *blk = addBlock(b, op.getBody(), args, loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    unsigned at = 0;
    auto next = [&](size_t count) {
      ValueRange r = blk->getArguments().slice(at, count);
      at += count;
      return r;
    };
    ValueRange c = next(nc), tc = next(fc.size()), x = next(nx), tx = next(fx.size()),
               k = next(nk), tk = next(fk.size());
    SmallVector<Value> primal(c), ts(nc + nx + nk, Value());
    llvm::append_range(primal, x);
    llvm::append_range(primal, k);
    for (auto [m, i] : llvm::enumerate(fc))
      ts[i] = tc[m];
    for (auto [m, i] : llvm::enumerate(fx))
      ts[nc + i] = tx[m];
    for (auto [m, i] : llvm::enumerate(fk))
      ts[nc + nx + i] = tk[m];
    SmallVector<Value> yields;
    auto tys = blockJvp(b, getBody().front(), primal, ts, yields);
    if (failed(tys))
      return failure();
    MIRBuilder rb(b, loc, /*diagnose=*/true);
    SmallVector<Value> out(ArrayRef<Value>(yields).take_front(nc));
    for (unsigned i : fc)
      out.push_back(orZeros(rb, (*tys)[i], yields[i]));
    llvm::append_range(out, ArrayRef<Value>(yields).drop_front(nc));
    for (unsigned j : fy)
      out.push_back(orZeros(rb, (*tys)[nc + j], yields[nc + j]));
    if (rb.failed())
      return emitError("rlx-mir-jvp: cannot build the tangent step of rlx_mir.scan");
    YieldOp::create(b, loc, out);
  }
  unsigned nct = carryTypes.size(), nyt = ny + fy.size();
  dy.assign(getNumResults(), Value());
  for (auto [m, i] : llvm::enumerate(fc)) {
    dy[i] = op.getResult(nc + m);
    if (getTrajectory())
      dy[nc + ny + i] = op.getResult(nct + nyt + nc + m);
  }
  for (auto [m, j] : llvm::enumerate(fy))
    dy[nc + j] = op.getResult(nct + ny + m);
  return success();
}
