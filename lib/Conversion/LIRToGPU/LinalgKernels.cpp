//===- LinalgKernels.cpp - host linalg.generic as an element-wise kernel --===//
//
// What an import leaves as upstream linalg on buffers (tosa.cast, compares,
// selects, fills, ... through tosa-to-linalg) is a GPU kernel too, never dropped:
// one thread per point of the op's (all-parallel) iteration space, each
// operand read at its indexing map's position, the op's body cloned, each
// yielded value stored at its output's position.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

FailureOr<LaunchConfig>
mlir::rlx::gpu_kernels::buildLinalgElementwiseKernel(gpu::GPUFuncOp fn, OpBuilder &b,
                                                     Operation *op, ValueRange args) {
  auto generic = dyn_cast<linalg::LinalgOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      args.size() != generic->getNumOperands())
    return failure();
  SmallVector<int64_t> domain = generic.getStaticLoopRanges();
  if (llvm::any_of(domain, ShapedType::isDynamic))
    return failure();
  for (AffineMap map : generic.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(e))
        return failure();
  KernelBuilder kb(b, fn.getLoc());
  bool bad = false;
  LaunchConfig launch = forEachElementGroup(kb, domain, 1, [&](ArrayRef<Value> pos) {
    auto at = [&](AffineMap map) {
      SmallVector<Value> p;
      for (AffineExpr e : map.getResults())
        p.push_back(isa<AffineDimExpr>(e) ? pos[cast<AffineDimExpr>(e).getPosition()]
                                          : kb.idx(cast<AffineConstantExpr>(e).getValue()));
      return p;
    };
    IRMapping map;
    Block &body = *generic.getBlock();
    for (OpOperand &o : generic->getOpOperands()) {
      unsigned i = o.getOperandNumber();
      if (isa<MemRefType>(o.get().getType()))
        map.map(body.getArgument(i), kb.load(args[i], at(generic.getMatchingIndexingMap(&o))));
      else
        map.map(body.getArgument(i), args[i]); // a scalar operand
    }
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), pos[index.getDim()]);
        continue;
      }
      if (inner.getNumRegions()) {
        bad = true;
        return;
      }
      // Constants the body captures from the host function come along.
      for (Value v : inner.getOperands()) {
        if (map.contains(v) || generic->isAncestor(v.getParentRegion()->getParentOp()))
          continue;
        Operation *def = v.getDefiningOp();
        if (!def || !def->hasTrait<OpTrait::ConstantLike>()) {
          bad = true;
          return;
        }
        b.clone(*def, map);
      }
      b.clone(inner, map);
    }
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    for (auto [k, out] : llvm::enumerate(cast<DestinationStyleOpInterface>(op).getDpsInitsMutable()))
      kb.store(map.lookupOrDefault(yield.getOperand(k)), args[out.getOperandNumber()],
               at(generic.getMatchingIndexingMap(&out)));
  });
  if (bad)
    return failure();
  return launch;
}
