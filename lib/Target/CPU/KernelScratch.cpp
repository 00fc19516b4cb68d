//===- KernelScratch.cpp - rlx-cpu-kernel-scratch -------------------------===//
//
// Kernels' temporaries as views of the arena of their caller (see the pass
// description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUKERNELSCRATCH
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {

constexpr int64_t kAlign = 64;
constexpr llvm::StringLiteral kArenaAttr = "rlx_lir.arena";
constexpr llvm::StringLiteral kPlanAttr = "rlx_lir.plan";

int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// The caller's arena argument: a static 1-D i8 buffer marked rlx_lir.arena.
BlockArgument arenaOf(func::FuncOp fn) {
  if (fn.isExternal())
    return nullptr;
  for (BlockArgument arg : fn.getArguments()) {
    auto t = dyn_cast<MemRefType>(arg.getType());
    if (fn.getArgAttr(arg.getArgNumber(), kArenaAttr) && t && t.getRank() == 1 &&
        t.hasStaticShape() && t.getElementType().isInteger(8) && t.getLayout().isIdentity())
      return arg;
  }
  return nullptr;
}

/// The bytes of a static, identity-layout buffer of a type with a byte size
/// that does not outlive the call (not returned).
std::optional<int64_t> bytesOf(memref::AllocOp alloc) {
  if (llvm::any_of(alloc->getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); }))
    return std::nullopt;
  MemRefType t = alloc.getType();
  if (!t.hasStaticShape() || !t.getLayout().isIdentity() || !alloc.getDynamicSizes().empty() ||
      !alloc.getSymbolOperands().empty() || t.getMemorySpace() ||
      !t.getElementType().isIntOrFloat() || t.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  if (auto a = alloc.getAlignment(); a && kAlign % int64_t(*a) != 0)
    return std::nullopt;
  return t.getNumElements() * (t.getElementTypeBitWidth() / 8);
}

struct CpuKernelScratch : rlx::impl::CpuKernelScratchBase<CpuKernelScratch> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    // Callee → the scratch it needs; caller → the most any callee needs.
    llvm::MapVector<func::FuncOp, int64_t> scratch;
    for (auto fn : module.getOps<func::FuncOp>()) {
      // (A function with its own arena is a caller; its type must not
      // change under its callers.)
      if (fn.isExternal() || fn.isPublic() || arenaOf(fn))
        continue;
      ArrayRef<Operation *> calls = users.getUsers(fn);
      if (calls.empty() || llvm::any_of(calls, [](Operation *u) {
            auto call = dyn_cast<func::CallOp>(u);
            return !call || !arenaOf(call->getParentOfType<func::FuncOp>());
          }))
        continue;
      int64_t bytes = 0;
      for (auto alloc : fn.getBody().front().getOps<memref::AllocOp>())
        if (std::optional<int64_t> b = bytesOf(alloc))
          bytes = alignUp(bytes) + *b;
      if (bytes > 0)
        scratch[fn] = alignUp(bytes);
    }
    if (scratch.empty())
      return;
    llvm::MapVector<func::FuncOp, int64_t> callerNeeds;
    for (auto &[fn, bytes] : scratch)
      for (Operation *u : users.getUsers(fn)) {
        auto caller = u->getParentOfType<func::FuncOp>();
        callerNeeds[caller] = std::max(callerNeeds.lookup(caller), bytes);
      }

    // Each kernel: a trailing scratch argument, its allocations views of it.
    MLIRContext *ctx = module.getContext();
    Type i8 = IntegerType::get(ctx, 8);
    for (auto &[fn, bytes] : scratch) {
      auto scratchType = MemRefType::get({bytes}, i8);
      unsigned argNo = fn.getNumArguments();
      if (failed(fn.insertArgument(argNo, scratchType, {}, fn.getLoc())))
        return signalPassFailure();
      BlockArgument buf = fn.getArgument(argNo);
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      int64_t offset = 0;
      for (auto alloc : llvm::make_early_inc_range(fn.getBody().front().getOps<memref::AllocOp>())) {
        std::optional<int64_t> size = bytesOf(alloc);
        if (!size)
          continue;
        offset = alignUp(offset);
        b.setInsertionPoint(alloc);
        Value at = arith::ConstantIndexOp::create(b, alloc.getLoc(), offset);
        auto view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), buf, at,
                                           ValueRange());
        // The kernel's own frees of it go (the arena outlives the call).
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc.replaceAllUsesWith(view.getResult());
        alloc.erase();
        offset += *size;
      }
    }
    // Each caller: its arena grown by its kernels' largest scratch, passed
    // to every call as the view past the planned bytes.
    for (auto &[caller, needs] : callerNeeds) {
      BlockArgument arena = arenaOf(caller);
      int64_t planned = cast<MemRefType>(arena.getType()).getNumElements();
      int64_t base = alignUp(planned);
      auto grown = MemRefType::get({base + needs}, i8);
      arena.setType(grown);
      SmallVector<Type> inputs(caller.getArgumentTypes());
      inputs[arena.getArgNumber()] = grown;
      caller.setType(FunctionType::get(ctx, inputs, caller.getResultTypes()));
      caller.walk([&](func::CallOp call) {
        auto callee = dyn_cast_or_null<func::FuncOp>(
            tables.lookupNearestSymbolFrom(call, call.getCalleeAttr()));
        auto it = callee ? scratch.find(callee) : scratch.end();
        if (it == scratch.end())
          return;
        OpBuilder b(call);
        Value at = arith::ConstantIndexOp::create(b, call.getLoc(), base);
        Value view = memref::ViewOp::create(b, call.getLoc(),
                                            MemRefType::get({it->second}, i8), arena, at,
                                            ValueRange());
        call.getOperandsMutable().append(view);
      });
      NamedAttrList plan;
      if (auto old = caller->getAttrOfType<DictionaryAttr>(kPlanAttr))
        plan.append(old.getValue());
      plan.set("scratch_bytes", IntegerAttr::get(IntegerType::get(ctx, 64), needs));
      caller->setAttr(kPlanAttr, plan.getDictionary(ctx));
    }
  }
};

} // namespace
