//===- NVVMPipeline.cpp - The rlx-lower-to-nvvm pipeline -------------------===//
//
// Any RLX stage → planned LIR → gpu.func kernels and a launch plan
// (convert-rlx-lir-to-gpu) → target check → NVVM → PTX → cubin with ptxas's
// resource report. The host side stays planned LIR with gpu.launch_func ops:
// the GPU artifact writer turns it into a launch plan, not upstream's
// gpu-to-llvm host lowering.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/NVVMTarget.h"
#include "RLX/Target/NVVM/Passes.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"
#include "RLX/Target/Frontend.h"
#include "RLX/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {
/// The features nvvm-attach-target gets: always an explicit PTX ISA (its
/// default, +ptx60, is fatal for sm_90a: ../shared/GPU.md pitfall 3).
std::string attachFeatures(const CompileOptions &options) {
  if (!options.features.empty())
    return options.features;
  if (std::optional<int> ptx = nvvm::defaultPtxVersion(options.chip))
    return "+ptx" + std::to_string(*ptx);
  return "";
}
/// The kernel body's structured ops to branches and plain memrefs: the same
/// on the way to NVVM and to the emulator, so both run the same code.
void addKernelBodyLowering(OpPassManager &pm) {
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}
} // namespace

void mlir::rlx::buildNVVMKernelPipeline(OpPassManager &pm, const CompileOptions &options) {
  FrontendOptions front(options);
  front.gpuCollectives = true;
  front.fftKernels = true;
  // GPU kernels are LIR kernels on the planned arena.
  front.lir = true;
  // Split-KV for the target's SMs (an unknown chip fails later, located, in
  // convert-rlx-lir-to-gpu).
  std::string error;
  FailureOr<nvvm::NVVMTarget> target = nvvm::parseTarget(options.chip, options.features, error);
  front.splitKVSMs = succeeded(target) ? target->smCount() : 0;
  front.blockNvfp4Scales =
      succeeded(target) && target->hasBlockScaledFP4Mma() && options.tensorCores;
  front.splitKVWgmma = succeeded(target) && target->hasWgmma() && options.tensorCores &&
                       (options.attentionKernel == "auto" || options.attentionKernel == "wgmma");
  // MIR ops without a kernel template: their linalg lowering, one kernel
  // per linalg op (the generic path).
  front.beforeLIR = [&](OpPassManager &p) {
    // Control flow as straight-line MIR (static shapes by now): every op of
    // a body a kernel of its own.
    p.addPass(mir::createMIRUnrollControlFlow());
    GpuGenericKernelsOptions generic;
    generic.force.assign(options.genericKernels.begin(), options.genericKernels.end());
    p.addPass(createGpuGenericKernels(generic));
  };
  buildFrontendPipeline(pm, front);
  ConvertRLXLIRToGPUOptions toGpu;
  toGpu.chip = options.chip;
  toGpu.features = options.features;
  toGpu.tensorCores = options.tensorCores;
  toGpu.matmulKernel = options.matmulKernel;
  toGpu.splitK = options.splitK;
  toGpu.attentionKernel = options.attentionKernel;
  toGpu.strictKernels = options.strictKernels;
  pm.addPass(createConvertRLXLIRToGPU(toGpu));
  // Workgroup buffers past 48 KiB as dynamic shared memory (R1).
  pm.addPass(createGPUDynamicShared());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // f8/f4 conversions as integer arithmetic (case L1), narrow math in f32.
  kernels.addPass(createExpandLowPrecisionFloats());
  kernels.addPass(math::createMathExtendToSupportedTypes());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  NVVMCheckTargetOptions check;
  check.chip = options.chip;
  check.features = options.features;
  pm.addPass(createNVVMCheckTarget(check));
}

void mlir::rlx::buildNVVMCodegenPipeline(OpPassManager &pm, const CompileOptions &options) {
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip;
  attach.features = attachFeatures(options);
  attach.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  addKernelBodyLowering(kernels);
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  // libdevice (math functions) comes from the toolkit RLX's ptxas belongs
  // to; without it gpu-module-to-binary silently leaves __nv_* calls extern.
  binary.toolkitPath = nvvm::findCudaRoot();
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (options.assemble) {
    NVVMAssembleOptions assemble;
    assemble.chip = options.chip;
    assemble.features = attachFeatures(options);
    assemble.optLevel = options.optLevel;
    assemble.spills = options.spills;
    assemble.report = options.report;
    pm.addPass(createNVVMAssemble(assemble));
  }
}

void mlir::rlx::buildEmulatorCodegenPipeline(OpPassManager &pm, bool checks) {
  pm.addPass(createGPUOutlineForEmulator());
  addKernelBodyLowering(pm);
  // bf16 conversions as integer arithmetic (round to nearest even, as
  // cvt.rn.bf16.f32): no __truncsfbf2 from a compiler runtime needed.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  EmulatorInstrumentOptions instrument;
  instrument.checks = checks;
  pm.addPass(createEmulatorInstrument(instrument));
}

void mlir::rlx::registerNVVMPipelines() {
  registerRLXNVVMPasses();
  registerCompilePipeline<NVVMPipelineOptions>(
      "rlx-lower-to-nvvm",
      "Compile an RLX module (HIR, MIR or LIR) for an NVIDIA GPU: fusion, the arena plan, "
      "gpu.func kernels and a launch plan, the target check, NVVM, PTX and a cubin per "
      "gpu.module with ptxas's resource report",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildNVVMKernelPipeline(pm, options);
        buildNVVMCodegenPipeline(pm, options);
      });
  registerCompilePipeline<NVVMPipelineOptions>(
      "rlx-lower-to-emulator",
      "Compile an RLX module's GPU kernels (the ones rlx-lower-to-nvvm compiles, after the "
      "target check) for the CPU GPU emulator: LLVM dialect functions <kernel>__emu with "
      "every memory access checked",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildNVVMKernelPipeline(pm, options);
        buildEmulatorCodegenPipeline(pm, /*checks=*/true);
      });
}
