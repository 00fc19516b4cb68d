//===- PlanBuffers.cpp - rlx-lir-plan-buffers ------------------------------===//
//
// Lifetimes of the transient buffers (memref.alloc) of a function in buffer
// form, elementwise in-place reuse, placement in one arena (BufferPlan.h),
// and the rewrite: an arena argument, allocs → rlx_lir.view.
//
//===----------------------------------------------------------------------===//

#include "PlanReport.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/Common/IR/StorageSize.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/BufferPlan.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::rlx::lir {
#define GEN_PASS_DEF_LIRPLANBUFFERS
#include "RLX/Dialect/LIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::lir

using namespace mlir;
using namespace mlir::rlx::lir;
using mlir::rlx::getStorageBytes;

namespace {

/// Ops whose result is another view of their source's bytes.
Value viewSource(Operation *op) {
  if (auto v = dyn_cast<ViewLikeOpInterface>(op))
    return v.getViewSource();
  if (isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(op))
    return op->getOperand(0);
  return nullptr;
}

/// Bytes as the generated code stores them (StorageSize.h); collect() has
/// checked that every planned buffer has one.
int64_t byteSize(MemRefType t) { return *getStorageBytes(t); }


struct FunctionPlanner {
  func::FuncOp fn;
  int64_t alignment;
  bool inPlace;

  DenseMap<Operation *, int64_t> position;
  SmallVector<memref::AllocOp> allocs;
  DenseMap<Value, unsigned> rootOf; // alloc result or view of it → buffer index
  SmallVector<int64_t> first, last;
  SmallVector<SmallVector<Value>> views;

  /// Position of the top-level op that contains `op`.
  int64_t positionOf(Operation *op) {
    while (op->getParentOp() != fn)
      op = op->getParentOp();
    return position.lookup(op);
  }

  LogicalResult collect() {
    Block &entry = fn.getBody().front();
    int64_t p = 0;
    for (Operation &op : entry)
      position[&op] = p++;
    for (auto alloc : entry.getOps<memref::AllocOp>()) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape()) {
        std::string dims = rlx::joinedDimNames(fn);
        alloc.emitError() << "rlx-lir-plan-buffers needs static buffer sizes, got " << t
                          << "; bind " << (dims.empty() ? "the dynamic dims" : "the symbolic dims (" + dims + ")")
                          << " with rlx-mir-specialize{dims=<name>=<size>,...} before MIR → LIR";
        return failure();
      }
      if (!t.getLayout().isIdentity())
        continue;
      // Arena arithmetic (alignment, sums of live bytes) stays far from
      // int64_t overflow below 2^50 bytes per buffer.
      std::optional<int64_t> bytes = getStorageBytes(t);
      if (!bytes || *bytes >= (int64_t(1) << 50)) {
        alloc.emitError() << "rlx-lir-plan-buffers: " << t
                          << (bytes ? " needs 2^50 bytes or more" : " has no byte size");
        return failure();
      }
      allocs.push_back(alloc);
    }
    first.assign(allocs.size(), INT64_MAX);
    last.assign(allocs.size(), -1);
    views.resize(allocs.size());
    for (auto [i, alloc] : llvm::enumerate(allocs)) {
      SmallVector<Value> work{alloc.getResult()};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        rootOf[v] = i;
        for (Operation *user : v.getUsers()) {
          if (isa<memref::DeallocOp>(user))
            continue;
          if (viewSource(user) == v) {
            for (Value r : user->getResults()) {
              views[i].push_back(r);
              work.push_back(r);
            }
            continue;
          }
          int64_t at = positionOf(user);
          first[i] = std::min(first[i], at);
          last[i] = std::max(last[i], at);
        }
      }
    }
    return success();
  }

  /// Buffer index of `v` when it is a whole buffer (the alloc itself).
  std::optional<unsigned> wholeBuffer(Value v) {
    auto it = rootOf.find(v);
    if (it == rootOf.end() || allocs[it->second].getResult() != v)
      return std::nullopt;
    return it->second;
  }
};

struct LIRPlanBuffersPass : mlir::rlx::lir::impl::LIRPlanBuffersBase<LIRPlanBuffersPass> {
  using LIRPlanBuffersBase::LIRPlanBuffersBase;

  void runOnOperation() override {
    if (alignment <= 0) {
      emitError(getOperation().getLoc(), "rlx-lir-plan-buffers: alignment must be > 0");
      return signalPassFailure();
    }
    for (auto fn : llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      if (fn.isExternal() || fn->hasAttr("rlx_lir.plan"))
        continue;
      if (llvm::any_of(fn.getArgumentTypes(), [](Type t) { return isa<TensorType>(t); })) {
        fn.emitError("rlx-lir-plan-buffers needs the buffer form; run rlx-lir-bufferize first");
        return signalPassFailure();
      }
      // The plan adds the arena argument: a call would no longer match.
      if (fn.getNumArguments() + fn.getNumResults() != 0 && hasCallers(fn)) {
        fn.emitError() << "rlx-lir-plan-buffers plans entry points, and @" << fn.getSymName()
                       << " has callers (its arena argument would not match them); inline "
                          "the calls first, before MIR → LIR, without the inliner's "
                          "canonicalization (--inline=\"default-pipeline=\": its folds "
                          "include an upstream TOSA cast fold that turns i1 true into -1.0)";
        return signalPassFailure();
      }
      if (failed(planFunction(fn)))
        return signalPassFailure();
    }
  }

  /// Whether a call names `fn` (other symbol uses, e.g. rlx.packed_by, do
  /// not pass arguments).
  bool hasCallers(func::FuncOp fn) {
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(fn, getOperation());
    return !uses || llvm::any_of(*uses, [](const SymbolTable::SymbolUse &use) {
      return isa<CallOpInterface>(use.getUser());
    });
  }

  LogicalResult planFunction(func::FuncOp fn) {
    FunctionPlanner fp;
    fp.fn = fn;
    fp.alignment = alignment;
    fp.inPlace = inPlace;
    if (failed(fp.collect()))
      return failure();
    size_t n = fp.allocs.size();

    // Elementwise kernels write over an input that dies there.
    llvm::EquivalenceClasses<unsigned> groups;
    for (unsigned i = 0; i < n; ++i)
      groups.insert(i);
    auto groupEnd = [&](unsigned b) {
      int64_t end = -1;
      for (auto it = groups.findLeader(b); it != groups.member_end(); ++it)
        end = std::max(end, fp.last[*it]);
      return end;
    };
    SmallVector<std::pair<KernelOp, SmallVector<int64_t>>> inPlaceAttrs;
    if (inPlace) {
      for (auto kernel : fn.getBody().front().getOps<KernelOp>()) {
        int64_t at = fp.position.lookup(kernel);
        SmallVector<int64_t> reuse(kernel.getOutputs().size(), -1);
        bool any = false;
        for (auto [o, out] : llvm::enumerate(kernel.getOutputs())) {
          auto y = fp.wholeBuffer(out);
          if (!y || fp.first[*y] != at)
            continue;
          // Another input reading the same bytes (a view of x) would see the
          // output's writes: only a buffer that this one input reads qualifies.
          auto readByOthers = [&](unsigned x, size_t i) {
            for (auto [j, other] : llvm::enumerate(kernel.getInputs())) {
              auto it = fp.rootOf.find(other);
              if (j != i && it != fp.rootOf.end() && it->second == x)
                return true;
            }
            return false;
          };
          for (auto [i, in] : llvm::enumerate(kernel.getInputs())) {
            auto x = fp.wholeBuffer(in);
            if (!x || *x == *y || groups.isEquivalent(*x, *y) || groupEnd(*x) != at ||
                readByOthers(*x, i) ||
                llvm::is_contained(reuse, static_cast<int64_t>(i)) ||
                byteSize(fp.allocs[*x].getType()) != byteSize(fp.allocs[*y].getType()) ||
                !kernel.isElementwiseInPlaceSafe(i, o))
              continue;
            groups.unionSets(*x, *y);
            reuse[o] = i;
            any = true;
            break;
          }
        }
        if (any)
          inPlaceAttrs.push_back({kernel, reuse});
      }
    }

    // One planned buffer per group.
    DenseMap<unsigned, unsigned> groupIndex;
    std::vector<PlannedBuffer> planned;
    SmallVector<unsigned> groupOf(n);
    for (unsigned i = 0; i < n; ++i) {
      unsigned leader = groups.getLeaderValue(i);
      auto [it, inserted] = groupIndex.try_emplace(leader, planned.size());
      if (inserted)
        planned.push_back({0, INT64_MAX, -1, -1});
      PlannedBuffer &g = planned[it->second];
      int64_t size = byteSize(fp.allocs[i].getType());
      g.size = std::max(g.size, size);
      // A buffer nobody touches still gets a (harmless) slot at its alloc.
      int64_t start = fp.last[i] < 0 ? fp.position.lookup(fp.allocs[i]) : fp.first[i];
      int64_t end = fp.last[i] < 0 ? start : fp.last[i];
      g.start = std::min(g.start, start);
      g.end = std::max(g.end, end);
      groupOf[i] = it->second;
    }
    PlanSummary summary = planArena(planned, alignment);
    // "Sum of buffers": every buffer on its own, before any in-place sharing.
    summary.sumBytes = 0;
    for (auto alloc : fp.allocs)
      summary.sumBytes += alignUp(byteSize(alloc.getType()), alignment);

    // Rewrite: the arena argument, views, attributes.
    MLIRContext *ctx = fn.getContext();
    OpBuilder b(ctx);
    auto arenaType = MemRefType::get({summary.arenaBytes}, b.getI8Type());
    Value arena;
    if (fn.getNumArguments() == 0 && fn.getNumResults() == 0) {
      // An entry point without arguments (e.g. for mlir-runner) owns its arena
      // (buffer deallocation frees it like any other alloc).
      Block &entry = fn.getBody().front();
      b.setInsertionPointToStart(&entry);
      auto alloc = memref::AllocOp::create(b, fn.getLoc(), arenaType, b.getI64IntegerAttr(64));
      alloc->setAttr("rlx_lir.arena", b.getUnitAttr());
      arena = alloc;
    } else {
      if (failed(fn.insertArgument(0, arenaType,
                                   b.getDictionaryAttr(
                                       b.getNamedAttr("rlx_lir.arena", b.getUnitAttr())),
                                   fn.getLoc())))
        return failure();
      arena = fn.getArgument(0);
    }
    PlanReport rep;
    rep.function = fn.getSymName().str();
    rep.summary = summary;
    rep.alignment = alignment;
    for (Operation &op : fn.getBody().front()) {
      std::string label = op.getName().getStringRef().str();
      if (auto k = dyn_cast<KernelOp>(op); k && k.getName())
        label += " \"" + k.getName()->str() + "\"";
      rep.schedule.push_back(label);
    }
    for (auto [i, alloc] : llvm::enumerate(fp.allocs)) {
      const PlannedBuffer &g = planned[groupOf[i]];
      ReportBuffer rb;
      rb.id = i;
      rb.type = llvm::formatv("{0}", alloc.getType()).str();
      rb.size = byteSize(alloc.getType());
      rb.offset = g.offset;
      rb.start = fp.first[i] == INT64_MAX ? g.start : fp.first[i];
      rb.end = fp.last[i] < 0 ? g.start : fp.last[i];
      rb.group = groupOf[i];
      for (Value v : fp.views[i])
        rb.views.push_back(v.getDefiningOp()->getName().getStringRef().str());
      rep.buffers.push_back(rb);
      b.setInsertionPoint(alloc);
      auto view = ViewOp::create(b, alloc.getLoc(), alloc.getType(), arena, g.offset);
      alloc.getResult().replaceAllUsesWith(view.getResult());
    }
    for (auto alloc : fp.allocs)
      alloc.erase();
    fn.walk([](memref::DeallocOp d) {
      if (d.getMemref().getDefiningOp<ViewOp>())
        d.erase();
    });
    (void)arena;
    for (auto &[kernel, reuse] : inPlaceAttrs)
      kernel.setInPlaceAttr(DenseI64ArrayAttr::get(ctx, reuse));
    fn->setAttr("rlx_lir.plan",
                b.getDictionaryAttr(
                    {b.getNamedAttr("arena_bytes", b.getI64IntegerAttr(summary.arenaBytes)),
                     b.getNamedAttr("lower_bound_bytes",
                                    b.getI64IntegerAttr(summary.lowerBoundBytes)),
                     b.getNamedAttr("sum_bytes", b.getI64IntegerAttr(summary.sumBytes)),
                     b.getNamedAttr("alignment", b.getI64IntegerAttr(alignment))}));
    if (auto io = fn->getAttrOfType<DictionaryAttr>("rlx_lir.io"))
      rep.io = io;
    if (report)
      mlir::emitRemark(fn.getLoc()) << "@" << fn.getSymName() << ": " << summaryLine(rep);
    if (!reportDir.empty() && failed(writeReport(rep, reportDir, fn)))
      return failure();
    return success();
  }
};

} // namespace
