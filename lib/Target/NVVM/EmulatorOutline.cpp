//===- EmulatorOutline.cpp - rlx-gpu-outline-for-emulator ------------------===//
//
// gpu.func kernels → CPU functions whose GPU operations are calls into the
// emulator runtime (include/RLX/Runtime/Emulator.h). The kernel body is the
// one the NVVM path compiles, cloned op for op: only the GPU-specific ops
// change.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_GPUOUTLINEFOREMULATOR
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// The memref type without its memory space (workgroup, private).
Type stripMemorySpace(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    if (m.getMemorySpace())
      return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
  return t;
}

struct Hooks {
  func::FuncOp id, barrier, shuffle;
};

func::FuncOp declare(OpBuilder &b, ModuleOp m, StringRef name, FunctionType type) {
  if (auto f = m.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(m.getBody());
  auto f = func::FuncOp::create(b, m.getLoc(), name, type);
  f.setPrivate();
  return f;
}

Value idCall(OpBuilder &b, Location loc, const Hooks &h, unsigned kind, unsigned dim) {
  Value which = arith::ConstantIntOp::create(b, loc, kind * 4 + dim, 32);
  Value id = func::CallOp::create(b, loc, h.id, ValueRange{which}).getResult(0);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), id);
}

unsigned dimOf(gpu::Dimension d) { return static_cast<unsigned>(d); }

LogicalResult rewriteGpuOp(Operation *op, const Hooks &h) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value repl;
  if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
    repl = idCall(b, loc, h, 0, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
    repl = idCall(b, loc, h, 1, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
    repl = idCall(b, loc, h, 2, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::GridDimOp>(op))
    repl = idCall(b, loc, h, 3, dimOf(o.getDimension()));
  else if (isa<gpu::LaneIdOp>(op))
    repl = idCall(b, loc, h, 4, 0);
  else if (isa<gpu::BarrierOp>(op)) {
    func::CallOp::create(b, loc, h.barrier, ValueRange{});
    op->erase();
    return success();
  } else if (auto r = dyn_cast<gpu::ReturnOp>(op)) {
    func::ReturnOp::create(b, loc, r.getOperands());
    op->erase();
    return success();
  } else if (auto s = dyn_cast<gpu::ShuffleOp>(op)) {
    Type t = s.getValue().getType();
    if (t.getIntOrFloatBitWidth() != 32)
      return op->emitError("rlx-gpu-outline-for-emulator: gpu.shuffle of ")
             << t << " (the emulator shuffles 32-bit values, as shfl.sync.b32)";
    Value v = s.getValue();
    if (!t.isInteger(32))
      v = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
    Value mode = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(s.getMode()), 32);
    Value r = func::CallOp::create(b, loc, h.shuffle,
                                   ValueRange{mode, v, s.getOffset(), s.getWidth()})
                  .getResult(0);
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), r);
    Value c32 = arith::ConstantIntOp::create(b, loc, 32, 64);
    Value valid = arith::TruncIOp::create(b, loc, b.getI1Type(),
                                          arith::ShRUIOp::create(b, loc, r, c32));
    if (!t.isInteger(32))
      lo = arith::BitcastOp::create(b, loc, t, lo);
    s.getShuffleResult().replaceAllUsesWith(lo);
    s.getValid().replaceAllUsesWith(valid);
    op->erase();
    return success();
  } else {
    return op->emitError("rlx-gpu-outline-for-emulator: no emulation for '")
           << op->getName() << "'";
  }
  op->getResult(0).replaceAllUsesWith(repl);
  op->erase();
  return success();
}

struct GPUOutlineForEmulatorPass
    : rlx::impl::GPUOutlineForEmulatorBase<GPUOutlineForEmulatorPass> {
  using GPUOutlineForEmulatorBase::GPUOutlineForEmulatorBase;

  LogicalResult outline(gpu::GPUFuncOp kernel, ModuleOp module, const Hooks &hooks) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> inputs(kernel.getArgumentTypes());
    for (BlockArgument a : kernel.getWorkgroupAttributions())
      inputs.push_back(stripMemorySpace(a.getType()));
    auto fn = func::FuncOp::create(b, kernel.getLoc(), (kernel.getName() + "__body").str(),
                                   b.getFunctionType(inputs, {}));
    // The body as it is; its entry block's arguments are the parameters,
    // the workgroup buffers (now function arguments) and the private
    // buffers (now allocas).
    IRMapping map;
    kernel.getBody().cloneInto(&fn.getBody(), map);
    Block *entry = &fn.getBody().front();
    unsigned numArgs = inputs.size();
    b.setInsertionPointToStart(entry);
    while (entry->getNumArguments() > numArgs) {
      BlockArgument a = entry->getArgument(numArgs);
      auto type = cast<MemRefType>(stripMemorySpace(a.getType()));
      a.replaceAllUsesWith(memref::AllocaOp::create(b, kernel.getLoc(), type).getResult());
      entry->eraseArgument(numArgs);
    }
    // Address spaces do not exist on the CPU; GPU ops become emulator calls.
    SmallVector<Operation *> gpuOps;
    fn.walk([&](Operation *op) {
      for (Value r : op->getResults())
        r.setType(stripMemorySpace(r.getType()));
      for (Region &reg : op->getRegions())
        for (Block &blk : reg)
          for (BlockArgument a : blk.getArguments())
            a.setType(stripMemorySpace(a.getType()));
      if (isa<gpu::GPUDialect>(op->getDialect()))
        gpuOps.push_back(op);
    });
    for (Operation *op : gpuOps)
      if (failed(rewriteGpuOp(op, hooks)))
        return failure();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Hooks hooks;
    hooks.id = declare(b, module, "__rlx_emu_id",
                       b.getFunctionType({b.getI32Type()}, {b.getI64Type()}));
    hooks.barrier = declare(b, module, "__rlx_emu_barrier", b.getFunctionType({}, {}));
    Type i32 = b.getI32Type();
    hooks.shuffle =
        declare(b, module, "__rlx_emu_shuffle", b.getFunctionType({i32, i32, i32, i32},
                                                                  {b.getI64Type()}));
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    SmallVector<memref::GlobalOp> globals;
    for (gpu::GPUModuleOp gm : gpuModules) {
      // Constant tables of the GPU module move along, renamed per module.
      llvm::StringMap<std::string> renamed;
      for (auto g : gm.getOps<memref::GlobalOp>()) {
        std::string name = (gm.getName() + "__" + g.getSymName()).str();
        renamed[g.getSymName()] = name;
        b.setInsertionPointToEnd(module.getBody());
        auto copy = cast<memref::GlobalOp>(b.clone(*g));
        copy.setSymName(name);
        copy.setType(cast<MemRefType>(stripMemorySpace(copy.getType())));
        globals.push_back(copy);
      }
      for (auto kernel : gm.getOps<gpu::GPUFuncOp>()) {
        if (failed(outline(kernel, module, hooks)))
          return signalPassFailure();
        auto fn = module.lookupSymbol<func::FuncOp>((kernel.getName() + "__body").str());
        fn.walk([&](memref::GetGlobalOp get) {
          auto it = renamed.find(get.getName());
          if (it != renamed.end())
            get.setNameAttr(FlatSymbolRefAttr::get(b.getContext(), it->second));
        });
      }
    }
    // Only the kernels remain: host functions and the GPU modules go.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (auto g = dyn_cast<memref::GlobalOp>(op); g && llvm::is_contained(globals, g))
        continue;
      auto fn = dyn_cast<func::FuncOp>(op);
      if (!fn || !(fn.getName().starts_with("__rlx_emu_") || fn.getName().ends_with("__body")))
        op.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
