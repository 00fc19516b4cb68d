//===- Derivatives.cpp - reverse and forward mode over a list of ops -------===//

#include "RLX/Dialect/MIR/IR/Derivatives.h"

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

static bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

DenseSet<Value> ad::activeValues(ArrayRef<Operation *> ops, ValueRange seeds) {
  DenseSet<Value> active(seeds.begin(), seeds.end());
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return active.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r.getType()))
          active.insert(r);
  return active;
}

LogicalResult ad::backward(OpBuilder &b, ArrayRef<Operation *> ops, const DenseSet<Value> &active,
                           DenseMap<Value, Value> &grads, StringRef pass) {
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> cotangents;
    for (Value r : op->getResults())
      cotangents.push_back(grads.lookup(r));
    if (llvm::none_of(cotangents, [](Value v) { return v; }))
      continue;
    SmallVector<bool> need;
    for (Value v : op->getOperands())
      need.push_back(active.contains(v));
    if (llvm::none_of(need, [](bool x) { return x; }))
      continue;
    auto rules = dyn_cast<DifferentiableOpInterface>(op);
    if (!rules)
      return op->emitError(pass) << ": no reverse-mode rule for '" << op->getName()
                                 << "' (it implements no DifferentiableOpInterface)";
    MIRBuilder mb(b, op->getLoc(), /*diagnose=*/true);
    SmallVector<Value> dx;
    if (failed(rules.vjp(mb, cotangents, need, dx)))
      return failure();
    if (mb.failed())
      return op->emitError(pass) << ": cannot build the gradient of '" << op->getName()
                                 << "' for these operand types";
    for (auto [v, g] : llvm::zip(op->getOperands(), dx)) {
      if (!g || !active.contains(v))
        continue;
      g = mb.sumTo(g, cast<RankedTensorType>(v.getType()));
      auto [slot, inserted] = grads.try_emplace(v, g);
      if (!inserted)
        slot->second = mb.add(slot->second, g);
    }
    if (mb.failed())
      return op->emitError(pass) << ": cannot sum the gradients of the operands of '"
                                 << op->getName() << "'";
  }
  return success();
}

LogicalResult ad::forward(OpBuilder &b, ArrayRef<Operation *> ops,
                          DenseMap<Value, Value> &tangents, StringRef pass) {
  for (Operation *op : ops) {
    SmallVector<Value> ts;
    for (Value v : op->getOperands())
      ts.push_back(isFloatTensor(v.getType()) ? tangents.lookup(v) : Value());
    if (llvm::none_of(ts, [](Value v) { return v; }))
      continue;
    auto rules = dyn_cast<DifferentiableOpInterface>(op);
    if (!rules)
      return op->emitError(pass) << ": no forward-mode rule for '" << op->getName()
                                 << "' (it implements no DifferentiableOpInterface)";
    MIRBuilder mb(b, op->getLoc(), /*diagnose=*/true);
    SmallVector<Value> dy;
    if (failed(rules.jvp(mb, ts, dy))) // the rule said why
      return failure();
    if (mb.failed() || dy.size() != op->getNumResults())
      return op->emitError(pass) << ": the forward-mode rule of '" << op->getName()
                                 << "' did not build its tangents";
    for (auto [r, t] : llvm::zip(op->getResults(), dy))
      if (t)
        tangents[r] = t;
  }
  return success();
}

SmallVector<Value> ad::cloneYieldingBlock(OpBuilder &b, Block &block, ValueRange args,
                                          SmallVectorImpl<Operation *> *cloned) {
  IRMapping map;
  map.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator()) {
    Operation *copy = b.clone(op, map);
    if (cloned)
      cloned->push_back(copy);
  }
  return llvm::map_to_vector(block.getTerminator()->getOperands(),
                             [&](Value v) { return map.lookupOrDefault(v); });
}

static std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os);
  return text;
}

LogicalResult ad::verifyRegionSignature(Operation *op, Region &region, StringRef what,
                                        TypeRange args, TypeRange yields) {
  if (region.empty())
    return success();
  Block &block = region.front();
  if (block.empty() || !isa<YieldOp>(block.back()))
    return op->emitOpError() << "expects its " << what << " region to end in rlx_mir.yield";
  if (TypeRange(block.getArgumentTypes()) != args)
    return op->emitOpError() << "expects its " << what << " region to take (" << typeList(args)
                             << "), got (" << typeList(block.getArgumentTypes()) << ")";
  auto yield = cast<YieldOp>(block.back());
  if (TypeRange(yield.getValues().getTypes()) != yields)
    return op->emitOpError() << "expects its " << what << " region to yield ("
                             << typeList(yields) << "), got ("
                             << typeList(yield.getValues().getTypes()) << ")";
  return success();
}
