//===- WhileToMIR.cpp - scf.while on tensors as rlx_mir.while --------------===//
//
// torch.while_loop reaches RLX as torch-mlir writes it (torch.prim.Loop, then
// TorchToSCF): an scf.while whose condition is carried as an i1 (the first
// test before the loop, the next at the end of each trip) and whose regions
// read constants and values from outside. It becomes an rlx_mir.while
// (isolated from above): scalars carried as 0-d tensors, the values from
// outside cloned in when they are constants (or empty/filled tensors of
// constants) and carried unchanged otherwise. Any scf.while whose condition
// forwards its own block arguments takes the same way; others stay (and are
// reported as not raised).
//
//===----------------------------------------------------------------------===//

#include "ImportUtils.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// A tensor of an element type rlx_mir takes, or such a scalar.
bool isCarryType(Type t) {
  Type et = isa<RankedTensorType>(t) ? cast<RankedTensorType>(t).getElementType() : t;
  if (auto i = dyn_cast<IntegerType>(et))
    return llvm::is_contained({1u, 8u, 32u, 64u}, i.getWidth()) && i.isSignless();
  return isa<Float32Type, Float16Type, BFloat16Type, Float64Type>(et);
}

Type carryType(Type t) { return isa<RankedTensorType>(t) ? t : RankedTensorType::get({}, t); }

/// True for a value from outside that the regions can rebuild: a constant,
/// an empty tensor of static shape, or a fill of such values.
bool rebuildable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (auto e = dyn_cast<tensor::EmptyOp>(def))
    return e.getDynamicSizes().empty();
  if (auto f = dyn_cast<linalg::FillOp>(def))
    return llvm::all_of(f->getOperands(), rebuildable);
  return false;
}

/// Clones the ops that define rebuildable `v` at `b` (once, in `map`).
Value rebuild(OpBuilder &b, Value v, IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    rebuild(b, operand, map);
  b.clone(*def, map);
  return map.lookup(v);
}

class WhileRaiser {
public:
  explicit WhileRaiser(scf::WhileOp loop) : loop(loop) {}

  LogicalResult raise() {
    Block &before = loop.getBefore().front(), &after = loop.getAfter().front();
    scf::ConditionOp condition = loop.getConditionOp();
    // The condition forwards the before block's arguments (carries).
    for (Value v : condition.getArgs()) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &before)
        return failure();
      forwarded.push_back(arg.getArgNumber());
    }
    if (!llvm::all_of(loop.getInits().getTypes(), isCarryType) ||
        llvm::none_of(loop.getInits().getTypes(), llvm::IsaPred<RankedTensorType>))
      return failure();
    // Only loops of the program itself (not inside a payload region).
    for (Operation *p = loop->getParentOp(); p && !isa<FunctionOpInterface>(p); p = p->getParentOp())
      if (!isa<scf::WhileOp, scf::ForOp, scf::IfOp, mir::WhileOp, mir::ScanOp, mir::IfOp>(p))
        return failure();
    // Values from outside: rebuilt in each region, or carried.
    SetVector<Value> outside;
    forEachOperandInside([&](Value v) {
      Operation *owner = v.getDefiningOp() ? v.getDefiningOp() : v.getParentBlock()->getParentOp();
      if (!loop->isAncestor(owner))
        outside.insert(v);
    });
    for (Value v : outside)
      if (!rebuildable(v)) {
        if (!isCarryType(v.getType()))
          return failure();
        captured.push_back(v);
      }

    OpBuilder b(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> init;
    for (Value v : llvm::concat<Value>(loop.getInits(), captured))
      init.push_back(toTensor(b, loc, v));
    SmallVector<Type> types(ValueRange(init).getTypes());
    SmallVector<Type> results(types);
    results.push_back(RankedTensorType::get({}, b.getI64Type()));
    auto raised = mir::WhileOp::create(b, loc, results, init, IntegerAttr());
    unsigned n = loop.getInits().size();

    // cond: the before block on the carries.
    fillRegion(b, raised.getCondRegion(), types, loc, [&](Block *blk, IRMapping &map) {
      for (unsigned i = 0; i < n; ++i)
        map.map(before.getArgument(i), fromTensor(b, loc, blk->getArgument(i), before.getArgument(i).getType()));
      for (Operation &op : before.without_terminator())
        b.clone(op, map);
      return SmallVector<Value>{toTensor(b, loc, map.lookup(condition.getCondition()))};
    });
    // body: the after block on the forwarded carries, yielding every carry.
    fillRegion(b, raised.getBody(), types, loc, [&](Block *blk, IRMapping &map) {
      for (auto [j, i] : llvm::enumerate(forwarded))
        map.map(after.getArgument(j), fromTensor(b, loc, blk->getArgument(i), after.getArgument(j).getType()));
      for (Operation &op : after.without_terminator())
        b.clone(op, map);
      SmallVector<Value> yields;
      for (Value v : after.getTerminator()->getOperands())
        yields.push_back(toTensor(b, loc, map.lookup(v)));
      for (unsigned k = 0; k < captured.size(); ++k)
        yields.push_back(blk->getArgument(n + k));
      return yields;
    });
    b.setInsertionPointAfter(raised);
    SmallVector<Value> replacements;
    for (auto [j, i] : llvm::enumerate(forwarded))
      replacements.push_back(fromTensor(b, loc, raised.getResult(i), loop.getResult(j).getType()));
    loop->replaceAllUsesWith(replacements);
    loop->erase();
    return success();
  }

private:
  /// `f` on every operand of the ops in the loop's regions.
  void forEachOperandInside(function_ref<void(Value)> f) {
    for (Region &region : loop->getRegions())
      region.walk([&](Operation *op) {
        for (Value v : op->getOperands())
          f(v);
      });
  }

  static Value toTensor(OpBuilder &b, Location loc, Value v) {
    if (isa<RankedTensorType>(v.getType()))
      return v;
    return tensor::FromElementsOp::create(b, loc, carryType(v.getType()), ValueRange{v});
  }
  static Value fromTensor(OpBuilder &b, Location loc, Value v, Type want) {
    if (v.getType() == want)
      return v;
    return tensor::ExtractOp::create(b, loc, v, ValueRange());
  }

  /// A block of `types` in `region` filled by `body` (the captured values
  /// mapped to their carries, the rebuildable ones cloned in first); its
  /// yields end it.
  void fillRegion(OpBuilder &b, Region &region, TypeRange types, Location loc,
                  function_ref<SmallVector<Value>(Block *, IRMapping &)> body) {
    OpBuilder::InsertionGuard guard(b);
    Block *blk = b.createBlock(&region, region.end(), types, SmallVector<Location>(types.size(), loc));
    IRMapping map;
    unsigned n = loop.getInits().size();
    for (auto [k, v] : llvm::enumerate(captured))
      map.map(v, fromTensor(b, loc, blk->getArgument(n + k), v.getType()));
    forEachOperandInside([&](Value v) {
      if (!map.contains(v) && rebuildable(v) && !loop->isAncestor(v.getDefiningOp()))
        rebuild(b, v, map);
    });
    mir::YieldOp::create(b, loc, body(blk, map));
  }

  scf::WhileOp loop;
  SmallVector<unsigned> forwarded;
  SmallVector<Value> captured;
};

} // namespace

void mlir::rlx::import_detail::raiseWhileLoops(Operation *root) {
  SmallVector<scf::WhileOp> loops;
  root->walk([&](scf::WhileOp loop) { loops.push_back(loop); }); // inner loops first
  for (scf::WhileOp loop : loops)
    (void)WhileRaiser(loop).raise();
}
