//===- LinalgKernels.cpp - host linalg.generic as an element-wise kernel --===//
//
// What an import leaves as upstream linalg on buffers (tosa.cast, compares,
// selects, fills, reductions, ... through tosa-to-linalg) is a GPU kernel
// too, never dropped: one thread per point of the op's parallel loops, its
// reduced loops run in order in that thread, each operand read at its
// indexing map's position, the op's body cloned, each yielded value carried
// and finally stored at its output's position.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

/// Whether `generic`'s body can be cloned into a kernel: no nested regions,
/// and what it captures from the host function is constant or a buffer (a
/// table it loads from: a gather's, RoPE's, a dequantization's).
static bool clonableBody(linalg::LinalgOp generic) {
  for (Operation &inner : generic.getBlock()->without_terminator()) {
    if (inner.getNumRegions())
      return false;
    for (Value v : inner.getOperands()) {
      if (generic->isAncestor(v.getParentRegion()->getParentOp()) ||
          isa<MemRefType>(v.getType()))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>())
        return false;
    }
  }
  return true;
}

/// [lo, hi] of affine `e` over loop dims ranging over [0, domain[d]).
static std::optional<std::pair<int64_t, int64_t>> rangeOf(AffineExpr e,
                                                          ArrayRef<int64_t> domain) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return std::pair<int64_t, int64_t>{0, domain[d.getPosition()] - 1};
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::pair<int64_t, int64_t>{c.getValue(), c.getValue()};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  auto l = rangeOf(bin.getLHS(), domain), r = rangeOf(bin.getRHS(), domain);
  if (!l || !r)
    return std::nullopt;
  auto rc = dyn_cast<AffineConstantExpr>(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return std::pair<int64_t, int64_t>{l->first + r->first, l->second + r->second};
  case AffineExprKind::Mul: {
    int64_t a = l->first * r->first, b = l->first * r->second, c = l->second * r->first,
            d = l->second * r->second;
    return std::pair<int64_t, int64_t>{std::min({a, b, c, d}), std::max({a, b, c, d})};
  }
  case AffineExprKind::Mod:
    if (!rc || rc.getValue() <= 0)
      return std::nullopt;
    return std::pair<int64_t, int64_t>{0, rc.getValue() - 1};
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (!rc || rc.getValue() <= 0 || l->first < 0)
      return std::nullopt;
    int64_t c = rc.getValue(), up = e.getKind() == AffineExprKind::CeilDiv ? c - 1 : 0;
    return std::pair<int64_t, int64_t>{(l->first + up) / c, (l->second + up) / c};
  }
  default:
    return std::nullopt;
  }
}

/// Whether every index `map` yields over the loop domain is inside `shape`.
static bool inBounds(AffineMap map, ArrayRef<int64_t> domain, ArrayRef<int64_t> shape) {
  for (auto [e, size] : llvm::zip(map.getResults(), shape)) {
    auto r = rangeOf(e, domain);
    if (!r || r->first < 0 || r->second >= size)
      return false;
  }
  return true;
}

SmallVector<Value> mlir::rlx::gpu_kernels::capturedBuffers(Operation *op) {
  SmallVector<Value> captured;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<MemRefType>(v.getType()) && !op->isAncestor(v.getParentRegion()->getParentOp()) &&
          inner != op && !llvm::is_contained(captured, v))
        captured.push_back(v);
  });
  return captured;
}

FailureOr<LaunchConfig>
mlir::rlx::gpu_kernels::buildLinalgElementwiseKernel(gpu::GPUFuncOp fn, OpBuilder &b,
                                                     Operation *op, ValueRange args) {
  auto generic = dyn_cast<linalg::LinalgOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() || !clonableBody(generic))
    return failure();
  // The kernel argument of each buffer operand; scalar operands must be
  // constants, cloned into the kernel.
  SmallVector<Value> operandArgs;
  size_t nextArg = 0;
  for (Value v : op->getOperands()) {
    if (isa<MemRefType>(v.getType())) {
      if (nextArg == args.size())
        return failure();
      operandArgs.push_back(args[nextArg++]);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      return failure();
    operandArgs.push_back(b.clone(*def)->getResult(0));
  }
  // Buffers the body captures: the kernel arguments after the operands'.
  IRMapping capturedArgs;
  for (Value v : capturedBuffers(op)) {
    if (nextArg == args.size())
      return failure();
    capturedArgs.map(v, args[nextArg++]);
  }
  SmallVector<int64_t> domain = generic.getStaticLoopRanges();
  if (llvm::any_of(domain, ShapedType::isDynamic))
    return failure();
  // Input maps may be any affine map of the loop dims (RoPE's pair partner
  // is (d + half) mod rotary), evaluated per point with arith, as long as
  // they stay inside their operand; outputs are written at projected
  // permutations of the parallel dims (one thread per element, no races).
  for (OpOperand &o : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&o);
    auto t = dyn_cast<MemRefType>(o.get().getType());
    if (map.getNumSymbols() != 0 || (t && !inBounds(map, domain, t.getShape())))
      return failure();
    if (generic.isDpsInit(&o) && !map.isProjectedPermutation())
      return failure();
  }
  // Threads over the parallel loops; the reduced loops run in each thread.
  SmallVector<unsigned> parallel, reduced;
  SmallVector<int64_t> threads, reducedSizes;
  for (auto [d, kind] : llvm::enumerate(generic.getIteratorTypesArray())) {
    bool isParallel = kind == utils::IteratorType::parallel;
    (isParallel ? parallel : reduced).push_back(d);
    (isParallel ? threads : reducedSizes).push_back(domain[d]);
  }
  int64_t reducedCount = 1;
  for (int64_t n : reducedSizes)
    reducedCount *= n;
  auto inits = cast<DestinationStyleOpInterface>(op).getDpsInitsMutable();
  Block &body = *generic.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  KernelBuilder kb(b, fn.getLoc());
  return forEachElementGroup(kb, threads, 1, [&](ArrayRef<Value> threadPos) {
    SmallVector<Value> pos(domain.size());
    for (auto [k, d] : llvm::enumerate(parallel))
      pos[d] = threadPos[k];
    auto at = [&](AffineMap map) {
      SmallVector<Value> p;
      for (AffineExpr e : map.getResults()) {
        if (auto d = dyn_cast<AffineDimExpr>(e))
          p.push_back(pos[d.getPosition()]);
        else if (auto c = dyn_cast<AffineConstantExpr>(e))
          p.push_back(kb.idx(c.getValue()));
        else
          p.push_back(affine::expandAffineExpr(b, kb.loc, e, pos, {}));
      }
      return p;
    };
    // One point of the iteration space: the body on the inputs there and
    // the outputs' running values; returns what it yields.
    auto point = [&](ValueRange outs) {
      IRMapping map = capturedArgs;
      for (OpOperand &o : generic->getOpOperands()) {
        unsigned i = o.getOperandNumber();
        if (generic.isDpsInit(&o))
          map.map(body.getArgument(i), outs[i - generic.getNumDpsInputs()]);
        else if (isa<MemRefType>(o.get().getType()))
          map.map(body.getArgument(i), kb.load(operandArgs[i], at(generic.getMatchingIndexingMap(&o))));
        else
          map.map(body.getArgument(i), operandArgs[i]); // a scalar operand
      }
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          map.map(index.getResult(), pos[index.getDim()]);
          continue;
        }
        // Constants the body captures from the host function come along.
        for (Value v : inner.getOperands())
          if (!map.contains(v) && !generic->isAncestor(v.getParentRegion()->getParentOp()))
            b.clone(*v.getDefiningOp(), map);
        // A load from a captured buffer reads at data-dependent indices:
        // clamped into the buffer, as gather defines its reads.
        if (auto load = dyn_cast<memref::LoadOp>(inner); load && capturedArgs.contains(load.getMemRef())) {
          auto t = cast<MemRefType>(load.getMemRef().getType());
          SmallVector<Value> idx;
          for (auto [i, v] : llvm::enumerate(load.getIndices())) {
            Value c = arith::MaxSIOp::create(b, kb.loc, map.lookupOrDefault(v), kb.idx(0));
            idx.push_back(arith::MinSIOp::create(b, kb.loc, c, kb.idx(t.getDimSize(i) - 1)));
          }
          map.map(load.getResult(),
                  memref::LoadOp::create(b, kb.loc, map.lookup(load.getMemRef()), idx).getResult());
          continue;
        }
        b.clone(inner, map);
      }
      SmallVector<Value> next;
      for (Value v : yield.getOperands())
        next.push_back(map.lookupOrDefault(v));
      return next;
    };
    SmallVector<Value> outs;
    for (OpOperand &out : inits)
      outs.push_back(kb.load(operandArgs[out.getOperandNumber()], at(generic.getMatchingIndexingMap(&out))));
    if (reduced.empty()) {
      outs = point(outs);
    } else {
      outs = kb.forLoop(kb.idx(0), kb.idx(reducedCount), kb.idx(1), outs,
                        [&](Value iv, ValueRange carried) {
                          for (auto [k, v] : llvm::enumerate(kb.delinearize(iv, reducedSizes)))
                            pos[reduced[k]] = v;
                          return point(carried);
                        });
    }
    for (auto [k, out] : llvm::enumerate(inits))
      kb.store(outs[k], operandArgs[out.getOperandNumber()], at(generic.getMatchingIndexingMap(&out)));
  });
}
