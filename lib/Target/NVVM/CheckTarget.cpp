//===- CheckTarget.cpp - rlx-nvvm-check-target -----------------------------===//
//
// Every (op, chip, PTX ISA) combination RLX hands to LLVM's NVPTX backend is
// checked here first: LLVM 22 aborts the process on several that MLIR's
// verifiers accept (../shared/GPU.md, pitfall 4), so each becomes a located
// diagnostic naming the op, what it needs and the target it got (case L2).
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/NVVMTarget.h"
#include "RLX/Target/NVVM/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_NVVMCHECKTARGET
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;
using nvvm::NVVMTarget;

namespace {

/// One requirement: ops whose name starts with `prefix` (and contains
/// `contains`, when set) need `holds(target)`, described as `needs`.
struct Rule {
  const char *prefix;
  const char *contains;
  bool (*holds)(const NVVMTarget &);
  const char *needs;
};

bool isSm90Plus(const NVVMTarget &t) { return t.sm >= 90; }
bool isSm90a(const NVVMTarget &t) { return t.sm == 90 && t.suffix == 'a'; }
bool isSm120a(const NVVMTarget &t) { return t.sm >= 120 && t.suffix == 'a'; }

// First match wins: the specific entries come before the general ones.
const Rule kRules[] = {
    {"nvvm.wgmma.", nullptr, isSm90a, "sm_90a (wgmma is specific to it)"},
    {"nvgpu.warpgroup.", nullptr, isSm90a, "sm_90a (warpgroup MMA lowers to wgmma)"},
    {"nvvm.setmaxregister", nullptr,
     [](const NVVMTarget &t) { return isSm90a(t) || t.hasTcgen05(); }, "sm_90a or sm_100a"},
    {"nvvm.tcgen05.", nullptr, [](const NVVMTarget &t) { return t.hasTcgen05(); },
     "sm_100a, sm_101a or sm_103a (tcgen05)"},
    {"nvvm.convert.", "f4x2", [](const NVVMTarget &t) { return t.hasF4Convert(); },
     "an sm_100-family 'a' or 'f' chip and PTX ISA 8.6 (e2m1 conversions)"},
    {"nvvm.convert.", "f6x2", [](const NVVMTarget &t) { return t.hasF4Convert(); },
     "an sm_100-family 'a' or 'f' chip and PTX ISA 8.6 (e2m3/e3m2 conversions)"},
    {"nvvm.convert.", "f8x2", [](const NVVMTarget &t) { return t.hasF8Convert(); },
     "sm_89 or newer and PTX ISA 8.1 (e4m3/e5m2 conversions)"},
    {"nvvm.mma.block_scale", nullptr, isSm120a, "sm_120a (block-scaled mma.sync)"},
    {"nvvm.cp.async.bulk", nullptr, isSm90Plus, "sm_90 or newer (TMA)"},
    {"nvgpu.tma.", nullptr, isSm90Plus, "sm_90 or newer (TMA)"},
    {"nvvm.elect.sync", nullptr, isSm90Plus, "sm_90 or newer"},
    {"nvvm.stmatrix", nullptr, isSm90Plus, "sm_90 or newer"},
    {"nvvm.fence.proxy", nullptr, isSm90Plus, "sm_90 or newer"},
    {"nvvm.mbarrier.try_wait", nullptr, isSm90Plus, "sm_90 or newer"},
    {"nvvm.cluster", nullptr, isSm90Plus, "sm_90 or newer (clusters)"},
};

/// 8-, 6- and 4-bit floats: upstream has no NVVM lowering for arithmetic on
/// them (case L1); rlx-expand-low-precision-floats rewrites what RLX emits.
bool isNarrowFloat(Type t) {
  t = getElementTypeOrSelf(t);
  auto f = dyn_cast<FloatType>(t);
  return f && f.getWidth() < 16;
}

std::string describe(const NVVMTarget &t) {
  return llvm::formatv("{0} with PTX ISA {1}", t.chip, t.ptxString()).str();
}

struct NVVMCheckTargetPass : rlx::impl::NVVMCheckTargetBase<NVVMCheckTargetPass> {
  using NVVMCheckTargetBase::NVVMCheckTargetBase;

  /// The options' target, else the module's first #nvvm.target, else sm_90a.
  FailureOr<NVVMTarget> targetFor(gpu::GPUModuleOp gm) {
    std::string c = chip, f = features;
    if (c.empty()) {
      c = "sm_90a";
      if (ArrayAttr targets = gm.getTargetsAttr())
        for (Attribute a : targets)
          if (auto t = dyn_cast<NVVM::NVVMTargetAttr>(a)) {
            c = t.getChip().str();
            if (f.empty())
              f = t.getFeatures().str();
            break;
          }
    }
    std::string error;
    FailureOr<NVVMTarget> target = nvvm::parseTarget(c, f, error);
    if (failed(target))
      gm.emitError("rlx-nvvm-check-target: ") << error;
    return target;
  }

  LogicalResult checkOp(Operation *op, const NVVMTarget &target) {
    StringRef name = op->getName().getStringRef();
    for (const Rule &r : kRules) {
      if (!name.starts_with(r.prefix) || (r.contains && !name.contains(r.contains)))
        continue;
      if (r.holds(target))
        break;
      return op->emitError() << "'" << name << "' needs " << r.needs << "; the target is "
                             << describe(target);
    }
    // Block-scaled FP4 MMA (mxf4nvf4) also needs PTX ISA 8.8.
    if (name.starts_with("nvvm.tcgen05.mma") && target.hasTcgen05() &&
        !target.hasBlockScaledFP4Mma()) {
      for (NamedAttribute a : op->getAttrs()) {
        std::string text;
        llvm::raw_string_ostream os(text);
        a.getValue().print(os);
        if (StringRef(text).contains("mxf4nvf4"))
          return op->emitError() << "'" << name
                                 << "' with mxf4nvf4 block scaling needs PTX ISA 8.8 (+ptx88); "
                                    "the target is "
                                 << describe(target);
      }
    }
    StringRef dialect = op->getName().getDialectNamespace();
    // A bitcast between a narrow float and the integer of its width is the
    // storage byte itself: the LLVM type converter stores these floats as
    // integers, so it lowers to nothing (it is how the expansion reads them).
    auto storageCast = [&] {
      auto cast = dyn_cast<arith::BitcastOp>(op);
      return cast && getElementTypeOrSelf(cast.getIn().getType()).getIntOrFloatBitWidth() ==
                         getElementTypeOrSelf(cast.getType()).getIntOrFloatBitWidth();
    };
    if ((dialect == "arith" || dialect == "math") && !storageCast()) {
      auto narrow = [](TypeRange types) { return llvm::any_of(types, isNarrowFloat); };
      if (narrow(op->getOperandTypes()) || narrow(op->getResultTypes()))
        return op->emitError() << "'" << name
                               << "' on an 8-, 6- or 4-bit float has no NVVM lowering; run "
                                  "rlx-expand-low-precision-floats on the gpu.module first";
    }
    return success();
  }

  LogicalResult checkKernel(gpu::GPUFuncOp fn, const NVVMTarget &target) {
    int64_t shared = 0;
    for (BlockArgument a : fn.getWorkgroupAttributions()) {
      auto type = dyn_cast<MemRefType>(a.getType());
      if (!type || !type.hasStaticShape())
        return fn.emitError("rlx-nvvm-check-target: a workgroup buffer needs a static shape");
      unsigned bits = type.getElementTypeBitWidth();
      shared += (type.getNumElements() * bits + 7) / 8;
    }
    // Static shared memory is limited to 48 KiB on every chip; beyond that a
    // kernel must use dynamic shared memory and opt in at launch (ptxas
    // would fail with "uses too much shared data").
    if (shared > NVVMTarget::kDefaultSharedMemoryLimit)
      return fn.emitError() << "kernel '" << fn.getName() << "' uses " << shared
                            << " bytes of static shared memory; at most "
                            << NVVMTarget::kDefaultSharedMemoryLimit
                            << " are allowed (larger needs dynamic shared memory)";
    return success();
  }

  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](gpu::GPUModuleOp gm) {
      FailureOr<NVVMTarget> target = targetFor(gm);
      if (failed(target)) {
        failedAny = true;
        return;
      }
      gm.walk([&](Operation *op) {
        if (auto fn = dyn_cast<gpu::GPUFuncOp>(op))
          failedAny |= failed(checkKernel(fn, *target));
        else
          failedAny |= failed(checkOp(op, *target));
      });
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
