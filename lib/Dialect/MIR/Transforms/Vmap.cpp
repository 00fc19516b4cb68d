//===- Vmap.cpp - rlx-mir-vmap: a function over a batch --------------------===//
//
// @f(args) -> (outs) becomes, next to it, @f_vmap(args with a batch axis) ->
// (outs with a batch axis): each op that reads a batched value is replaced by
// its BatchableOpInterface rule, the others are copied; parameters (and any
// argument not named in `args`) are shared by the whole batch.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRVMAP
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

constexpr StringLiteral kPass = "rlx-mir-vmap";

/// The permutation of a rank-`rank` value that moves axis `from` to `to`.
SmallVector<int64_t> moveAxis(int64_t rank, int64_t from, int64_t to) {
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != from)
      perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return perm;
}

struct VmapOptions {
  int64_t batchSize;
  int64_t axis;
  ArrayRef<std::string> args;
};

/// The arguments that carry the batch: those named, or every argument that
/// is not a parameter (rlx.param).
FailureOr<SmallVector<bool>> batchedArguments(func::FuncOp fn, ArrayRef<std::string> names) {
  SmallVector<bool> batched(fn.getNumArguments(), false);
  if (names.empty()) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      batched[i] = !fn.getArgAttr(i, "rlx.param") &&
                   isa<RankedTensorType>(fn.getArgument(i).getType());
    return batched;
  }
  for (const std::string &name : names) {
    bool found = false;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (argumentName(fn, i) == name && isa<RankedTensorType>(fn.getArgument(i).getType()))
        batched[i] = found = true;
    if (!found)
      return fn.emitError(kPass) << ": no tensor argument named '" << name << "' (args)",
             failure();
  }
  return batched;
}

func::FuncOp buildVmap(func::FuncOp fwd, const VmapOptions &opt) {
  auto batchedArgs = batchedArguments(fwd, opt.args);
  if (failed(batchedArgs))
    return nullptr;
  // The batch axis of each batched argument, negative axes counted from
  // the end as torch.vmap's in_dims are (-1: a new last axis).
  SmallVector<int64_t> argAxis(fwd.getNumArguments(), 0);
  for (auto [i, isBatched] : llvm::enumerate(*batchedArgs)) {
    if (!isBatched)
      continue;
    int64_t rank = cast<RankedTensorType>(fwd.getArgument(i).getType()).getRank();
    int64_t a = opt.axis < 0 ? opt.axis + rank + 1 : opt.axis;
    if (a < 0 || a > rank)
      return fwd.emitError(kPass) << ": axis " << opt.axis << " is outside [" << -rank - 1
                                  << ", " << rank << "] for argument '" << argumentName(fwd, i)
                                  << "'",
             nullptr;
    argAxis[i] = a;
  }

  // An unfused copy of the body to batch from.
  OpBuilder b(fwd);
  b.setInsertionPointAfter(fwd);
  auto copy = cast<func::FuncOp>(b.clone(*fwd));
  copy.setSymName((fwd.getSymName() + "_vmap_unfused").str());
  auto cleanup = llvm::make_scope_exit([&] { copy.erase(); });
  if (failed(ad::unfuse(copy, /*regions=*/false)))
    return nullptr;

  SmallVector<Type> ins;
  for (auto [i, t] : llvm::enumerate(copy.getArgumentTypes())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!(*batchedArgs)[i]) {
      ins.push_back(t);
      continue;
    }
    SmallVector<int64_t> shape(rt.getShape());
    shape.insert(shape.begin() + argAxis[i], opt.batchSize);
    ins.push_back(RankedTensorType::get(shape, rt.getElementType()));
  }
  auto fn = func::FuncOp::create(b, fwd.getLoc(), (fwd.getSymName() + "_vmap").str(),
                                 b.getFunctionType(ins, {}));
  for (unsigned i = 0; i < fwd.getNumArguments(); ++i)
    fn.setArgAttrs(i, fwd.getArgAttrDict(i));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  auto fail = [&]() -> func::FuncOp {
    fn.erase();
    return nullptr;
  };

  // Values with the batch leading; `isBatched` marks them.
  IRMapping map;
  DenseSet<Value> isBatched;
  MIRBuilder top(b, fwd.getLoc(), /*diagnose=*/true);
  for (unsigned i = 0; i < copy.getNumArguments(); ++i) {
    Value a = entry->getArgument(i);
    if ((*batchedArgs)[i]) {
      int64_t rank = MIRBuilder::typeOf(a).getRank();
      if (argAxis[i] != 0)
        a = top.transpose(a, moveAxis(rank, argAxis[i], 0));
      isBatched.insert(a);
    }
    map.map(copy.getArgument(i), a);
  }
  Operation *ret = nullptr;
  for (Operation &op : copy.getBody().front()) {
    if (isa<func::ReturnOp>(op)) {
      ret = &op;
      break;
    }
    SmallVector<Value> operands;
    SmallVector<bool> flags;
    for (Value v : op.getOperands()) {
      operands.push_back(map.lookup(v));
      flags.push_back(isBatched.contains(operands.back()));
    }
    if (llvm::none_of(flags, [](bool f) { return f; })) {
      b.clone(op, map);
      continue;
    }
    auto rules = dyn_cast<BatchableOpInterface>(&op);
    if (!rules) {
      op.emitError(kPass) << ": no batching rule for '" << op.getName()
                          << "' (it implements no BatchableOpInterface)";
      return fail();
    }
    MIRBuilder mb(b, op.getLoc(), /*diagnose=*/true);
    SmallVector<Value> results;
    if (failed(rules.batch(mb, operands, flags, results)))
      return fail(); // the rule said why
    if (mb.failed() || results.size() != op.getNumResults() ||
        llvm::any_of(results, [](Value v) { return !v; })) {
      op.emitError(kPass) << ": the batching rule of '" << op.getName()
                          << "' did not build its results";
      return fail();
    }
    for (auto [old, r] : llvm::zip(op.getResults(), results)) {
      map.map(old, r);
      isBatched.insert(r);
    }
  }

  SmallVector<Value> outs;
  for (Value v : ret->getOperands()) {
    Value r = map.lookup(v);
    if (!isBatched.contains(r)) { // the same for every batch entry
      SmallVector<int64_t> shape{opt.batchSize};
      llvm::append_range(shape, MIRBuilder::pattern(MIRBuilder::shapeOf(r)));
      r = top.broadcast(r, shape);
    }
    if (r && opt.axis != 0) {
      int64_t rank = MIRBuilder::typeOf(r).getRank();
      int64_t a = opt.axis < 0 ? opt.axis + rank : opt.axis;
      if (a < 0 || a >= rank) {
        fwd.emitError(kPass) << ": axis " << opt.axis << " is outside the batched outputs' "
                             << rank << " dims";
        return fail();
      }
      r = top.transpose(r, moveAxis(rank, 0, a));
    }
    outs.push_back(r);
  }
  if (top.failed()) {
    fwd.emitError(kPass) << ": cannot move the batch axis of the arguments or outputs";
    return fail();
  }
  func::ReturnOp::create(b, fwd.getLoc(), outs);
  fn.setType(b.getFunctionType(ins, ValueRange(outs).getTypes()));
  for (unsigned r = 0; r < fwd.getNumResults(); ++r)
    fn.setResultAttrs(r, fwd.getResultAttrDict(r));
  return fn;
}

struct MIRVmapPass : mir::impl::MIRVmapBase<MIRVmapPass> {
  using MIRVmapBase::MIRVmapBase;
  void runOnOperation() override {
    if (batchSize <= 0) {
      emitError(getOperation().getLoc(), kPass)
          << ": batch-size must be positive (got " << static_cast<int64_t>(batchSize) << ")";
      return signalPassFailure();
    }
    auto targets = ad::targetFunctions(getOperation(), function, kPass, "_vmap",
                                       [](func::FuncOp fn) {
                                         return !fn.getSymName().ends_with("_vmap") &&
                                                !fn.getSymName().ends_with("_pack_params");
                                       });
    if (failed(targets))
      return signalPassFailure();
    VmapOptions opt{batchSize, axis, args};
    for (func::FuncOp fn : *targets)
      if (!buildVmap(fn, opt))
        return signalPassFailure();
  }
};

} // namespace
