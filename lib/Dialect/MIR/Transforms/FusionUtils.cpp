//===- FusionUtils.cpp - Helpers and the report of MIR fusion --------------===//

#include "FusionUtils.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

void FusionReport::missed(Operation *op, StringRef fusion, const Twine &reason) {
  std::string text = ("[" + fusion + "] " + reason).str();
  auto &list = misses[op];
  if (!llvm::is_contained(list, text))
    list.push_back(std::move(text));
}

void FusionReport::missedMultiUse(Operation *op, StringRef fusion, Value value) {
  unsigned uses = std::distance(value.use_begin(), value.use_end());
  bool output = llvm::any_of(value.getUsers(), [](Operation *u) {
    return u->hasTrait<OpTrait::ReturnLike>();
  });
  if (output)
    missed(op, fusion, "graph output: the intermediate is returned from the function");
  else
    missed(op, fusion, "multi-use: the intermediate has " + Twine(uses) + " uses");
}

void FusionReport::emitRemarks() {
  for (auto &[op, reasons] : misses)
    for (const std::string &reason : reasons)
      mlir::emitRemark(op->getLoc()) << op->getName() << " not fused: " << reason;
  misses.clear();
}

LogicalResult mlir::rlx::mir::replaceWithFusedMatmul(RewriterBase &rw, Operation *root,
                                                      const FusedMatmulSpec &spec,
                                                      Operation *producer) {
  rw.setInsertionPoint(root);
  MIRBuilder mb(rw, root->getLoc());
  if (failed(replaceWithBuilt(rw, root, mb, mb.fusedMatmul(spec))))
    return failure();
  rw.eraseOp(producer);
  return success();
}

std::optional<ActivationKind> mlir::rlx::mir::activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return ActivationKind::Relu;
  if (isa<GeluOp>(op))
    return ActivationKind::Gelu;
  if (isa<GeluTanhOp>(op))
    return ActivationKind::GeluTanh;
  if (isa<SiluOp>(op))
    return ActivationKind::Silu;
  if (isa<SigmoidOp>(op))
    return ActivationKind::Sigmoid;
  if (isa<TanhOp>(op))
    return ActivationKind::Tanh;
  return std::nullopt;
}

bool mlir::rlx::mir::matchSplat(Value v, double &out) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return false;
  out = attr.getSplatValue<APFloat>().convertToDouble();
  return true;
}

Operation *mlir::rlx::mir::ancestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

Operation *mlir::rlx::mir::findInsertionPoint(Block *block, ArrayRef<Value> operands,
                                              ArrayRef<Operation *> ops) {
  Operation *lastDef = nullptr;
  for (Value v : operands) {
    if (!v)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def) {
      // A block argument dominates `block` when its block is `block` or
      // encloses it.
      if (!cast<BlockArgument>(v).getOwner()->getParent()->isAncestor(block->getParent()))
        return nullptr;
      continue;
    }
    def = ancestorIn(block, def);
    if (!def)
      continue; // Defined in an enclosing region: dominates the block.
    if (!lastDef || lastDef->isBeforeInBlock(def))
      lastDef = def;
  }
  Operation *firstUse = nullptr;
  for (Operation *op : ops)
    for (Operation *user : op->getUsers()) {
      Operation *u = ancestorIn(block, user);
      if (!u)
        return nullptr;
      if (!firstUse || u->isBeforeInBlock(firstUse))
        firstUse = u;
    }
  if (!firstUse)
    firstUse = block->getTerminator();
  if (lastDef && !lastDef->isBeforeInBlock(firstUse))
    return nullptr;
  return firstUse;
}


