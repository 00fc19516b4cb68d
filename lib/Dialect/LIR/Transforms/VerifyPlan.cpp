//===- VerifyPlan.cpp - rlx-lir-verify-plan: an independent plan checker --===//
//
// Shares no code with the planner: byte ranges come from the rlx_lir.view
// ops, liveness from the memory effects of the ops that touch a view or any
// alias of it, in the order of the function body.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rlx::lir {
#define GEN_PASS_DEF_LIRVERIFYPLAN
#include "RLX/Dialect/LIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::lir

using namespace mlir;
using namespace mlir::rlx::lir;

namespace {

struct CheckedView {
  ViewOp op;
  int64_t begin = 0, end = 0;           // bytes [begin, end)
  int64_t firstTouch = -1, lastTouch = -1; // op positions, inclusive
};

/// An op that only makes another memref of its operand's bytes: it has no
/// memory effects and returns memrefs.
bool isPureAlias(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || !effects.hasNoEffect())
    return false;
  return op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(), [](Type t) { return isa<MemRefType>(t); });
}

/// Elements spanned by a static strided memref: last reachable index + 1.
std::optional<int64_t> elementSpan(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!t.hasStaticShape() || failed(t.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  if (t.getNumElements() == 0)
    return 0;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(t.getShape(), strides))
    last += (size - 1) * stride;
  return last + 1;
}

LogicalResult checkFunction(func::FuncOp fn) {
  // The arena: an argument marked rlx_lir.arena, or an alloc so marked in a
  // function without arguments.
  Value arena;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, "rlx_lir.arena"))
      arena = fn.getArgument(i);
  for (Operation &op : fn.getBody().front())
    if (op.hasAttr("rlx_lir.arena") && op.getNumResults() == 1)
      arena = op.getResult(0);
  if (!arena)
    return success();
  auto arenaType = dyn_cast<MemRefType>(arena.getType());
  if (!arenaType || !arenaType.hasStaticShape() || arenaType.getRank() != 1)
    return fn.emitError("rlx-lir-verify-plan: the arena must be a static memref<Nxi8>");
  int64_t arenaBytes = arenaType.getNumElements();
  int64_t alignment = 1;
  auto plan = fn->getAttrOfType<DictionaryAttr>("rlx_lir.plan");
  if (plan) {
    if (auto a = dyn_cast_or_null<IntegerAttr>(plan.get("alignment")))
      alignment = std::max<int64_t>(1, a.getInt());
    auto planned = dyn_cast_or_null<IntegerAttr>(plan.get("arena_bytes"));
    if (!planned || planned.getInt() != arenaBytes)
      return fn.emitError("rlx-lir-verify-plan: rlx_lir.plan says the arena has ")
             << (planned ? planned.getInt() : -1) << " bytes, the argument has " << arenaBytes;
  }

  Block &entry = fn.getBody().front();
  DenseMap<Operation *, int64_t> order;
  int64_t n = 0;
  for (Operation &op : entry)
    order[&op] = n++;
  auto topLevel = [&](Operation *op) {
    while (op->getBlock() != &entry)
      op = op->getParentOp();
    return op;
  };

  SmallVector<CheckedView> views;
  bool ok = true;
  for (OpOperand &use : arena.getUses()) {
    auto view = dyn_cast<ViewOp>(use.getOwner());
    if (!view) {
      use.getOwner()->emitError("rlx-lir-verify-plan: the arena may only be used through "
                                "rlx_lir.view");
      ok = false;
      continue;
    }
    CheckedView cv{view, view.getByteOffset(), view.getByteOffset() + view.getByteSize()};
    if (cv.begin % alignment != 0) {
      view.emitError() << "rlx-lir-verify-plan: offset " << cv.begin
                       << " is not aligned to " << alignment << " bytes";
      ok = false;
    }
    if (cv.begin < 0 || cv.end > arenaBytes) {
      view.emitError() << "rlx-lir-verify-plan: bytes [" << cv.begin << ", " << cv.end
                       << ") are outside the " << arenaBytes << "-byte arena";
      ok = false;
    }
    // Touches: every op with an effect on the view or on an alias of it.
    int64_t viewElements = cast<MemRefType>(view.getType()).getNumElements();
    SmallVector<Value> work{view.getResult()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isPureAlias(user)) {
          for (Value r : user->getResults()) {
            auto span = elementSpan(cast<MemRefType>(r.getType()));
            if (span && *span > viewElements) {
              user->emitError() << "rlx-lir-verify-plan: this view of a " << viewElements
                                << "-element buffer reaches element " << *span - 1;
              ok = false;
            }
            work.push_back(r);
          }
          continue;
        }
        int64_t at = order.lookup(topLevel(user));
        cv.firstTouch = cv.firstTouch < 0 ? at : std::min(cv.firstTouch, at);
        cv.lastTouch = std::max(cv.lastTouch, at);
      }
    }
    views.push_back(cv);
  }

  // Use lists run newest first: report in the order of the function body.
  llvm::sort(views, [&](const CheckedView &a, const CheckedView &b) {
    return a.op->isBeforeInBlock(b.op);
  });
  // Recorded in-place pairs: (kernel position, input view, output view).
  auto inPlacePair = [&](CheckedView &a, CheckedView &b) {
    if (a.lastTouch != b.firstTouch || a.begin != b.begin || a.end != b.end)
      return false;
    auto kernel = dyn_cast<KernelOp>(&*std::next(entry.begin(), a.lastTouch));
    if (!kernel || !kernel.getInPlace())
      return false;
    for (auto [o, in] : llvm::enumerate(*kernel.getInPlace())) {
      if (in < 0)
        continue;
      if (kernel.getInputs()[in] == a.op.getResult() &&
          kernel.getOutputs()[o] == b.op.getResult() &&
          kernel.isElementwiseInPlaceSafe(in, o))
        return true;
    }
    return false;
  };
  for (size_t i = 0; i < views.size(); ++i) {
    for (size_t j = 0; j < views.size(); ++j) {
      if (i == j)
        continue;
      CheckedView &a = views[i], &b = views[j];
      if (a.firstTouch < 0 || b.firstTouch < 0 || j < i)
        continue;
      bool bytes = a.begin < b.end && b.begin < a.end;
      bool time = a.firstTouch <= b.lastTouch && b.firstTouch <= a.lastTouch;
      if (!bytes || !time || inPlacePair(a, b) || inPlacePair(b, a))
        continue;
      InFlightDiagnostic d = b.op.emitError()
                             << "rlx-lir-verify-plan: bytes [" << b.begin << ", " << b.end
                             << ") live at ops " << b.firstTouch << ".." << b.lastTouch
                             << " overlap bytes [" << a.begin << ", " << a.end
                             << ") live at ops " << a.firstTouch << ".." << a.lastTouch;
      d.attachNote(a.op.getLoc()) << "the other buffer";
      ok = false;
    }
  }
  return success(ok);
}

struct LIRVerifyPlanPass : mlir::rlx::lir::impl::LIRVerifyPlanBase<LIRVerifyPlanPass> {
  void runOnOperation() override {
    bool ok = true;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal())
        ok &= succeeded(checkFunction(fn));
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
