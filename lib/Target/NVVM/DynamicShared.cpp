//===- DynamicShared.cpp - rlx-gpu-dynamic-shared --------------------------===//
//
// Workgroup attributions past the 48 KiB static shared memory limit become
// views of dynamic shared memory (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/NVVMTarget.h"
#include "RLX/Target/NVVM/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_GPUDYNAMICSHARED
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

constexpr int64_t kAlign = 128;

std::optional<int64_t> constantSize(Value v) {
  if (!v)
    return 0;
  if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
    return c.value();
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  return std::nullopt;
}

struct GPUDynamicShared : rlx::impl::GPUDynamicSharedBase<GPUDynamicShared> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    module.walk([&](gpu::GPUFuncOp fn) {
      if (fn.isKernel() && fn.getNumWorkgroupAttributions() > 0)
        kernels.push_back(fn);
    });
    for (gpu::GPUFuncOp fn : kernels)
      if (failed(convert(module, fn)))
        return signalPassFailure();
  }

  LogicalResult convert(ModuleOp module, gpu::GPUFuncOp fn) {
    int64_t total = 0;
    SmallVector<int64_t> offsets;
    for (BlockArgument a : fn.getWorkgroupAttributions()) {
      auto type = dyn_cast<MemRefType>(a.getType());
      if (!type || !type.hasStaticShape())
        return success(); // rlx-nvvm-check-target names it
      if (!type.getElementType().isIntOrFloat())
        return fn.emitError("rlx-gpu-dynamic-shared: a workgroup buffer of kernel '")
               << fn.getName() << "' holds " << type.getElementType()
               << " (integer or float elements only: their size is known)";
      offsets.push_back(total);
      total += llvm::alignTo((type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8,
                             kAlign);
    }
    // A kernel that also uses dynamic shared memory gets its workgroup
    // buffers there too: NVPTX demotes the dynamic-memory symbol to an
    // ordinary .shared variable of the kernel, which ptxas may place where
    // the static buffers are, so the dynamic region (larger than its
    // declared size) overlapped them on the GPU (a race compute-sanitizer
    // showed in the wgmma norm prologue's row statistics).
    bool usesDynamic = false;
    fn.walk([&](gpu::DynamicSharedMemoryOp) { usesDynamic = true; });
    if (total <= nvvm::NVVMTarget::kDefaultSharedMemoryLimit && !usesDynamic)
      return success();
    for (BlockArgument a : fn.getWorkgroupAttributions())
      if (!cast<MemRefType>(a.getType()).getLayout().isIdentity())
        return fn.emitError("rlx-gpu-dynamic-shared: a workgroup buffer of kernel '")
               << fn.getName() << "' has a layout: " << a.getType();
    // Its launches, and the dynamic shared memory the kernel takes already.
    auto gm = fn->getParentOfType<gpu::GPUModuleOp>();
    SmallVector<gpu::LaunchFuncOp> launches;
    int64_t base = 0;
    bool failedLaunch = false;
    module.walk([&](gpu::LaunchFuncOp l) {
      if (l.getKernelModuleName() != gm.getSymName() || l.getKernelName() != fn.getName())
        return;
      std::optional<int64_t> size = constantSize(l.getDynamicSharedMemorySize());
      if (!size) {
        l.emitError("rlx-gpu-dynamic-shared: the launch of '")
            << fn.getName() << "' has a dynamic shared memory size that is not a constant";
        failedLaunch = true;
        return;
      }
      base = std::max(base, static_cast<int64_t>(llvm::alignTo(*size, kAlign)));
      launches.push_back(l);
    });
    if (failedLaunch)
      return failure();
    // The views, at the top of the kernel.
    Block &entry = fn.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = fn.getLoc();
    auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    Value memory = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(), space));
    unsigned first = fn.getNumArguments();
    unsigned count = fn.getNumWorkgroupAttributions();
    for (unsigned i = 0; i < count; ++i) {
      BlockArgument a = entry.getArgument(first + i);
      Value offset = arith::ConstantIndexOp::create(b, loc, base + offsets[i]);
      Value view = memref::ViewOp::create(b, loc, a.getType(), memory, offset, ValueRange());
      a.replaceAllUsesWith(view);
    }
    entry.eraseArguments(first, count);
    fn->setAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(),
                b.getI64IntegerAttr(0));
    for (gpu::LaunchFuncOp l : launches) {
      OpBuilder lb(l);
      Value size = arith::ConstantIntOp::create(lb, l.getLoc(), lb.getI32Type(), base + total);
      l.getDynamicSharedMemorySizeMutable().assign(size);
    }
    return success();
  }
};

} // namespace
