//===- Assemble.cpp - rlx-nvvm-assemble ------------------------------------===//
//
// PTX → cubin with RLX's own ptxas run, so that ptxas's resource report
// (gpu-module-to-binary{format=bin} discards it) is kept on the kernels.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/NVVMTarget.h"
#include "RLX/Target/NVVM/Passes.h"
#include "RLX/Target/NVVM/Ptxas.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_NVVMASSEMBLE
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

struct NVVMAssemblePass : rlx::impl::NVVMAssembleBase<NVVMAssemblePass> {
  using NVVMAssembleBase::NVVMAssembleBase;

  LogicalResult assemble(gpu::BinaryOp binary) {
    SmallVector<Attribute> objects;
    bool changed = false;
    for (Attribute a : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(a);
      auto nvvmTarget = object ? dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()) : nullptr;
      if (!nvvmTarget || object.getFormat() != gpu::CompilationTarget::Assembly) {
        objects.push_back(a);
        continue;
      }
      std::string c = chip.empty() ? nvvmTarget.getChip().str() : chip;
      std::string f = features.empty() ? nvvmTarget.getFeatures().str() : features;
      std::string error;
      FailureOr<nvvm::NVVMTarget> target = nvvm::parseTarget(c, f, error);
      if (failed(target))
        return emitError(binary.getLoc(), "rlx-nvvm-assemble: ") << error;
      std::vector<nvvm::KernelResources> resources;
      FailureOr<std::string> cubin =
          nvvm::assemblePtx(object.getObject().getValue(), *target, optLevel, resources, error);
      if (failed(cubin)) {
        if (StringRef(error).contains("Unresolved extern function '__nv_"))
          error += "(libdevice was not linked into the module: point CUDA_ROOT at the CUDA "
                   "toolkit that has nvvm/libdevice)";
        return emitError(binary.getLoc()) << "rlx-nvvm-assemble: '" << binary.getName() << "': " << error;
      }
      if (failed(attachResources(binary, resources)))
        return failure();
      Builder b(binary);
      binary->setAttr("rlx.ptx", object.getObject());
      objects.push_back(gpu::ObjectAttr::get(b.getContext(), nvvmTarget,
                                             gpu::CompilationTarget::Binary,
                                             b.getStringAttr(*cubin), object.getProperties(),
                                             object.getKernels()));
      changed = true;
    }
    if (changed)
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    return success();
  }

  LogicalResult attachResources(gpu::BinaryOp binary,
                                ArrayRef<nvvm::KernelResources> resources) {
    Builder b(binary);
    SmallVector<NamedAttribute> kernels;
    bool bad = false;
    for (const nvvm::KernelResources &r : resources) {
      int64_t spills = r.spillStoreBytes + r.spillLoadBytes;
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("registers", b.getI64IntegerAttr(r.registers)),
          b.getNamedAttr("spill_bytes", b.getI64IntegerAttr(spills)),
          b.getNamedAttr("stack_bytes", b.getI64IntegerAttr(r.stackBytes)),
          b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(r.sharedBytes)),
          b.getNamedAttr("barriers", b.getI64IntegerAttr(r.barriers))};
      if (!r.warnings.empty())
        fields.push_back(b.getNamedAttr(
            "ptxas_warnings",
            b.getStrArrayAttr(SmallVector<StringRef>(r.warnings.begin(), r.warnings.end()))));
      kernels.push_back(b.getNamedAttr(r.kernel, b.getDictionaryAttr(fields)));
      for (const std::string &w : r.warnings)
        emitWarning(binary.getLoc()) << "kernel '" << r.kernel << "': " << w;
      if (report)
        emitRemark(binary.getLoc()) << "kernel '" << r.kernel << "': " << r.registers << " registers, "
                            << spills << " bytes spilled, " << r.stackBytes << " bytes stack, "
                            << r.sharedBytes << " bytes shared, " << r.barriers << " barriers";
      if ((spills > 0 || r.stackBytes > 0) && spills_ != Spills::Ignore) {
        InFlightDiagnostic d = spills_ == Spills::Error ? emitError(binary.getLoc())
                                                        : emitWarning(binary.getLoc());
        d << "kernel '" << r.kernel << "' spills " << spills << " bytes and has a "
          << r.stackBytes << "-byte stack frame (ptxas -v)";
        bad |= spills_ == Spills::Error;
      }
    }
    binary->setAttr("rlx.kernels", b.getDictionaryAttr(kernels));
    return failure(bad);
  }

  enum class Spills { Error, Warn, Ignore } spills_ = Spills::Warn;

  void runOnOperation() override {
    if (spills == "error")
      spills_ = Spills::Error;
    else if (spills == "warn")
      spills_ = Spills::Warn;
    else if (spills == "ignore")
      spills_ = Spills::Ignore;
    else {
      emitError(getOperation().getLoc()) << "rlx-nvvm-assemble: spills must be error, warn or ignore, "
                                    "not '"
                                 << spills << "'";
      return signalPassFailure();
    }
    SmallVector<gpu::BinaryOp> binaries(getOperation().getOps<gpu::BinaryOp>());
    for (gpu::BinaryOp binary : binaries)
      if (failed(assemble(binary)))
        return signalPassFailure();
  }
};

} // namespace
