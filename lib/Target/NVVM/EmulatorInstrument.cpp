//===- EmulatorInstrument.cpp - rlx-emulator-instrument --------------------===//
//
// On the LLVM dialect of the outlined kernels: an access check before every
// load and store, and the packed entries the emulator launches.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_EMULATORINSTRUMENT
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

constexpr int64_t kScratchBytes = 256;

struct EmulatorInstrumentPass : rlx::impl::EmulatorInstrumentBase<EmulatorInstrumentPass> {
  using EmulatorInstrumentBase::EmulatorInstrumentBase;

  LLVM::LLVMFuncOp accessHook(OpBuilder &b, ModuleOp m) {
    if (auto f = m.lookupSymbol<LLVM::LLVMFuncOp>("__rlx_emu_access"))
      return f;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(m.getBody());
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    return LLVM::LLVMFuncOp::create(
        b, m.getLoc(), "__rlx_emu_access",
        LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr, b.getI64Type(), b.getI32Type()}));
  }

  /// `ptr` if the emulator allows the access, else the function's scratch slot.
  /// The access's alignment (its `alignment`, else the type's ABI alignment)
  /// is checked too: a misaligned address faults on the GPU.
  Value checked(OpBuilder &b, Location loc, LLVM::LLVMFuncOp hook, Value ptr, Type accessType,
                bool write, std::optional<uint64_t> alignment, Value scratch,
                const DataLayout &layout, bool atomic = false) {
    int64_t bytes = layout.getTypeSize(accessType);
    uint64_t align = alignment.value_or(0) ? *alignment : layout.getTypeABIAlignment(accessType);
    // The flags of include/RLX/Runtime/Emulator.h: write 1, atomic 4.
    uint32_t flags = (write ? 1u : 0u) | (atomic ? 4u : 0u) |
                     (llvm::Log2_64(std::max<uint64_t>(align, 1)) + 1) << 8;
    Value n = LLVM::ConstantOp::create(b, loc, b.getI64Type(), bytes);
    Value flag = LLVM::ConstantOp::create(b, loc, b.getI32Type(), flags);
    Value ok = LLVM::CallOp::create(b, loc, hook, ValueRange{ptr, n, flag}).getResult();
    Value zero = LLVM::ConstantOp::create(b, loc, b.getI32Type(), 0);
    Value allowed = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, ok, zero);
    return LLVM::SelectOp::create(b, loc, allowed, ptr, scratch);
  }

  /// Constant tables (LLVM globals of the library) are not kernel memory.
  static bool isGlobalConstant(Value ptr) {
    while (auto gep = ptr.getDefiningOp<LLVM::GEPOp>())
      ptr = gep.getBase();
    return ptr.getDefiningOp<LLVM::AddressOfOp>() != nullptr;
  }

  LogicalResult instrument(LLVM::LLVMFuncOp fn, LLVM::LLVMFuncOp hook, const DataLayout &layout) {
    OpBuilder b(fn.getContext());
    b.setInsertionPointToStart(&fn.getBody().front());
    Location loc = fn.getLoc();
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), kScratchBytes);
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    Value scratch = LLVM::AllocaOp::create(b, loc, ptrTy, b.getI8Type(), one, /*alignment=*/64);
    WalkResult r = fn.walk([&](Operation *op) {
      if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
        if (isGlobalConstant(load.getAddr()))
          return WalkResult::advance();
        if (layout.getTypeSize(load.getType()) > kScratchBytes)
          return WalkResult(load.emitError("rlx-emulator-instrument: a load wider than ")
                            << kScratchBytes << " bytes");
        b.setInsertionPoint(load);
        load.getAddrMutable().assign(
            checked(b, load.getLoc(), hook, load.getAddr(), load.getType(), false,
                    load.getAlignment(), scratch, layout));
      } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        Type t = store.getValue().getType();
        if (layout.getTypeSize(t) > kScratchBytes)
          return WalkResult(store.emitError("rlx-emulator-instrument: a store wider than ")
                            << kScratchBytes << " bytes");
        b.setInsertionPoint(store);
        store.getAddrMutable().assign(
            checked(b, store.getLoc(), hook, store.getAddr(), t, true, store.getAlignment(),
                    scratch, layout));
      } else if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op)) {
        Type t = rmw.getVal().getType();
        b.setInsertionPoint(rmw);
        rmw.getPtrMutable().assign(checked(b, rmw.getLoc(), hook, rmw.getPtr(), t, true,
                                           rmw.getAlignment(), scratch, layout,
                                           /*atomic=*/true));
      } else if (isa<LLVM::AtomicCmpXchgOp, LLVM::MemcpyOp, LLVM::MemsetOp,
                     LLVM::MemmoveOp>(op)) {
        return WalkResult(op->emitError("rlx-emulator-instrument: no access check for '")
                          << op->getName() << "' yet");
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// `<kernel>__emu(ptr params)`: parameter i is `*params[i]`.
  void addEntry(LLVM::LLVMFuncOp body, ModuleOp m) {
    OpBuilder b(m.getContext());
    b.setInsertionPointToEnd(m.getBody());
    Location loc = body.getLoc();
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    StringRef kernel = body.getName().drop_back(strlen("__body"));
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, (kernel + "__emu").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()), {ptrTy}));
    Block *blk = entry.addEntryBlock(b);
    b.setInsertionPointToStart(blk);
    SmallVector<Value> args;
    for (auto [i, t] : llvm::enumerate(body.getFunctionType().getParams())) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, blk->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value p = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      args.push_back(LLVM::LoadOp::create(b, loc, t, p));
    }
    LLVM::CallOp::create(b, loc, body, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }

  void runOnOperation() override {
    ModuleOp m = getOperation();
    DataLayout layout(m);
    OpBuilder b(m.getContext());
    LLVM::LLVMFuncOp hook = checks ? accessHook(b, m) : nullptr;
    SmallVector<LLVM::LLVMFuncOp> bodies;
    for (auto fn : m.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && fn.getName().ends_with("__body"))
        bodies.push_back(fn);
    for (LLVM::LLVMFuncOp fn : bodies) {
      if (checks && failed(instrument(fn, hook, layout)))
        return signalPassFailure();
      addEntry(fn, m);
    }
  }
};

} // namespace
