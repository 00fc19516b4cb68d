//===- PackWeights.cpp - Parameter transforms computed once ---------------===//
//
// Merging matmuls concatenates their weights. Doing that inside the model
// function would copy every weight on every call (the original RLX pays about
// 25 ms and 152 MiB per Llama-3.2-1B layer for it). Instead, every value that
// depends only on parameters is computed by a separate function,
// `@<fn>_pack_params`, which a weight loader runs once; the model function
// takes its results as parameters.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

static constexpr llvm::StringLiteral kParamAttr = "rlx.param";
static constexpr llvm::StringLiteral kPackedByAttr = "rlx.packed_by";
static constexpr llvm::StringLiteral kPackedFromAttr = "rlx.packed_from";

/// The [N, K] weight `op` reads with transpose_b when it is a matmul or a
/// non-NVFP4 fused_matmul (null otherwise).
static OpOperand *linearWeight(Operation *op) {
  if (auto mm = dyn_cast<MatmulOp>(op); mm && mm.getTransposeB() && !mm.getTransposeA())
    return &mm.getRhsMutable();
  if (auto fm = dyn_cast<FusedMatmulOp>(op); fm && fm.getTransposeB() && !fm.getRhsScales())
    return &fm.getRhsMutable();
  return nullptr;
}

/// With kn-weights: when `op` reads a 2-D f32 parameter-only weight with
/// transpose_b, and every reader of that weight does so (a tied embedding,
/// also gathered from, keeps one [N, K] copy), makes `op` read
/// `transpose(w, [1, 0])` without transpose_b. One transpose per weight
/// (`transposed`); returns it when it is new.
static Operation *transposeLinearWeight(Operation &op,
                                        const llvm::SmallPtrSetImpl<Value> &paramOnly,
                                        llvm::DenseMap<Value, Value> &transposed) {
  OpOperand *rhs = linearWeight(&op);
  Value w = rhs ? rhs->get() : Value();
  auto t = w ? dyn_cast<RankedTensorType>(w.getType()) : RankedTensorType();
  if (!t || t.getRank() != 2 || !t.getElementType().isF32() || !paramOnly.contains(w))
    return nullptr;
  Operation *created = nullptr;
  auto it = transposed.find(w);
  if (it == transposed.end()) {
    if (!llvm::all_of(w.getUses(),
                      [](OpOperand &use) { return linearWeight(use.getOwner()) == &use; }))
      return nullptr;
    OpBuilder b(&op);
    created = TransposeOp::create(b, w.getLoc(), w, ArrayRef<int64_t>{1, 0});
    it = transposed.try_emplace(w, created->getResult(0)).first;
  }
  rhs->set(it->second);
  op.removeAttr("transpose_b");
  return created;
}

/// Packs one function; returns failure (with a diagnostic) when it cannot.
static LogicalResult packFunction(func::FuncOp fn, SymbolTable &symbols, bool knWeights) {
  if (fn.isExternal())
    return success();
  Block &entry = fn.getBody().front();
  // Weights with static shapes: a parameter with a symbolic dim has no fixed
  // value to pack once (its dims would have to be bound in the pack function
  // too), so what reads it stays per call.
  llvm::SmallPtrSet<Value, 16> paramOnly;
  llvm::SmallPtrSet<Value, 16> unusedBefore;
  for (BlockArgument arg : entry.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (fn.getArgAttr(arg.getArgNumber(), kParamAttr) && t && t.hasStaticShape())
      paramOnly.insert(arg);
    if (arg.use_empty())
      unusedBefore.insert(arg);
  }
  if (paramOnly.empty())
    return success();
  // Ops whose every operand is parameter-only (or that have none, constants)
  // compute parameter transforms. Only pure MIR ops qualify.
  llvm::SetVector<Operation *> transformOps;
  llvm::DenseMap<Value, Value> transposedWeights;
  for (Operation &op : entry.without_terminator()) {
    if (knWeights)
      if (Operation *t = transposeLinearWeight(op, paramOnly, transposedWeights)) {
        transformOps.insert(t);
        paramOnly.insert(t->getResult(0));
      }
    if (!isa_and_nonnull<MIRDialect>(op.getDialect()) || op.getNumOperands() == 0 ||
        op.getNumRegions() != 0)
      continue;
    if (!llvm::all_of(op.getOperands(), [&](Value v) {
          return paramOnly.contains(v) || matchPattern(v, m_Constant());
        }))
      continue;
    transformOps.insert(&op);
    for (Value r : op.getResults())
      paramOnly.insert(r);
  }
  // Roots: transform results read by the rest of the function.
  SmallVector<Value> roots;
  for (Operation *op : transformOps)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !transformOps.contains(u); }))
        roots.push_back(r);
  if (roots.empty())
    return success();
  // Only the transforms the roots need (duplicates left by earlier rewrites
  // are dropped with the rest).
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Value> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !transformOps.contains(def) || !needed.insert(def).second)
      continue;
    llvm::append_range(work, def->getOperands());
  }
  if (!SymbolTable::symbolKnownUseEmpty(fn, fn->getParentOp()))
    return fn.emitWarning() << "parameter transforms left in place: @" << fn.getSymName()
                            << " has callers, so its parameters cannot change";

  // The pack function: original parameters in, packed tensors out.
  SmallVector<BlockArgument> usedParams;
  for (BlockArgument arg : entry.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(), kParamAttr) &&
        llvm::any_of(arg.getUsers(), [&](Operation *u) { return needed.contains(u); }))
      usedParams.push_back(arg);
  OpBuilder b(fn);
  std::string packName = (fn.getSymName() + "_pack_params").str();
  auto packType = b.getFunctionType(
      llvm::map_to_vector(usedParams, [](BlockArgument a) { return a.getType(); }),
      llvm::map_to_vector(roots, [](Value v) { return v.getType(); }));
  auto pack = func::FuncOp::create(b, fn.getLoc(), packName, packType);
  symbols.insert(pack);
  Block *packBody = pack.addEntryBlock();
  IRMapping map;
  for (auto [i, arg] : llvm::enumerate(usedParams)) {
    map.map(arg, packBody->getArgument(i));
    pack.setArgAttr(i, kParamAttr, fn.getArgAttr(arg.getArgNumber(), kParamAttr));
  }
  OpBuilder pb = OpBuilder::atBlockEnd(packBody);
  // Constants read by transforms are cloned along.
  for (Operation *op : transformOps) {
    if (!needed.contains(op))
      continue;
    for (Value v : op->getOperands())
      if (!map.contains(v) && v.getDefiningOp() && !transformOps.contains(v.getDefiningOp()))
        map.map(v, pb.clone(*v.getDefiningOp(), map)->getResult(0));
    pb.clone(*op, map);
  }
  SmallVector<Value> packed;
  for (Value v : roots)
    packed.push_back(map.lookup(v));
  func::ReturnOp::create(pb, fn.getLoc(), packed);

  // The model function takes the packed tensors as parameters.
  MLIRContext *ctx = fn.getContext();
  for (auto [i, root] : llvm::enumerate(roots)) {
    unsigned argNo = entry.getNumArguments();
    SmallVector<Attribute> from;
    llvm::SetVector<Value> sources;
    SmallVector<Value> stack{root};
    while (!stack.empty()) {
      Value v = stack.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        sources.insert(arg);
        continue;
      }
      if (transformOps.contains(v.getDefiningOp()))
        llvm::append_range(stack, v.getDefiningOp()->getOperands());
    }
    SmallVector<Value> ordered(sources.begin(), sources.end());
    llvm::sort(ordered, [](Value a, Value b) {
      return cast<BlockArgument>(a).getArgNumber() < cast<BlockArgument>(b).getArgNumber();
    });
    for (Value src : ordered)
      from.push_back(fn.getArgAttr(cast<BlockArgument>(src).getArgNumber(), kParamAttr));
    NamedAttrList attrs;
    attrs.set(kParamAttr, StringAttr::get(ctx, packName + "." + std::to_string(i)));
    attrs.set(kPackedByAttr,
              DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "fn"),
                                                       FlatSymbolRefAttr::get(pack)),
                                        NamedAttribute(StringAttr::get(ctx, "result"),
                                                       IntegerAttr::get(IntegerType::get(ctx, 64), i))}));
    attrs.set(kPackedFromAttr, ArrayAttr::get(ctx, from));
    if (failed(fn.insertArgument(argNo, root.getType(), attrs.getDictionary(ctx), root.getLoc())))
      return failure();
    llvm::SmallPtrSet<Operation *, 16> keep(transformOps.begin(), transformOps.end());
    root.replaceAllUsesExcept(entry.getArgument(argNo), keep);
  }
  for (Operation *op : llvm::reverse(transformOps))
    if (op->use_empty())
      op->erase();
  // The parameters only the pack function reads now leave the signature;
  // one the function never read stays (the caller passes every weight).
  llvm::BitVector dead(entry.getNumArguments());
  for (BlockArgument arg : entry.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(), kParamAttr) && arg.use_empty() &&
        !unusedBefore.contains(arg) && !fn.getArgAttr(arg.getArgNumber(), kPackedByAttr))
      dead.set(arg.getArgNumber());
  return fn.eraseArguments(dead);
}

LogicalResult mlir::rlx::mir::packWeights(Operation *module, bool knWeights) {
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> fns;
  for (auto fn : module->getRegion(0).getOps<func::FuncOp>())
    if (!fn.getSymName().ends_with("_pack_params"))
      fns.push_back(fn);
  for (func::FuncOp fn : fns)
    if (failed(packFunction(fn, symbols, knWeights)))
      return failure();
  return success();
}

void mlir::rlx::mir::splitPackFunctions(ModuleOp module) {
  SymbolTable symbols(module);
  MLIRContext *ctx = module.getContext();
  SmallVector<func::FuncOp> packs;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && fn.getNumResults() > 1 && fn.getSymName().ends_with("_pack_params"))
      packs.push_back(fn);
  for (func::FuncOp pack : packs) {
    SmallVector<func::FuncOp> parts;
    for (unsigned i = 0; i < pack.getNumResults(); ++i) {
      auto part = cast<func::FuncOp>(pack->clone());
      part.setSymName((pack.getSymName() + "_" + Twine(i)).str());
      Block &body = part.getBody().front();
      Operation *ret = body.getTerminator();
      Value kept = ret->getOperand(i);
      ret->setOperands(kept);
      // What the other results needed goes, then the parameters it read.
      SmallVector<Operation *> ops;
      for (Operation &op : body.without_terminator())
        ops.push_back(&op);
      for (Operation *op : llvm::reverse(ops))
        if (op->use_empty() && isMemoryEffectFree(op))
          op->erase();
      llvm::BitVector unused(part.getNumArguments());
      for (BlockArgument arg : part.getArguments())
        if (arg.use_empty())
          unused.set(arg.getArgNumber());
      (void)part.eraseArguments(unused);
      part.setType(FunctionType::get(ctx, part.getArgumentTypes(), kept.getType()));
      symbols.insert(part, pack->getIterator());
      parts.push_back(part);
    }
    // The packed parameters: result i of the pack is result 0 of part i.
    for (auto fn : module.getOps<func::FuncOp>())
      for (unsigned a = 0; a < fn.getNumArguments(); ++a) {
        auto by = fn.getArgAttrOfType<DictionaryAttr>(a, "rlx.packed_by");
        auto ref = by ? dyn_cast_or_null<FlatSymbolRefAttr>(by.get("fn")) : nullptr;
        auto index = by ? dyn_cast_or_null<IntegerAttr>(by.get("result")) : nullptr;
        if (!ref || !index || ref.getValue() != pack.getSymName() ||
            index.getInt() >= static_cast<int64_t>(parts.size()))
          continue;
        NamedAttrList attrs(by);
        attrs.set("fn", FlatSymbolRefAttr::get(parts[index.getInt()]));
        attrs.set("result", IntegerAttr::get(IntegerType::get(ctx, 64), 0));
        fn.setArgAttr(a, "rlx.packed_by", attrs.getDictionary(ctx));
      }
    symbols.erase(pack);
  }
}
