//===- CpuPipeline.cpp - The rlx-lower-to-cpu pipeline ---------------------===//

#include "RLX/Target/CPU/CpuPipeline.h"
#include "RLX/Target/CPU/Passes.h"
#include "RLX/Target/Frontend.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"
#include "RLX/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"


using namespace mlir;
using namespace mlir::rlx;

void mlir::rlx::buildCpuBufferPipeline(OpPassManager &pm, const CompileOptions &options) {
  FrontendOptions front(options);
  buildFrontendPipeline(pm, front);
  // LIR kernels (planned here or given as input) run as their bodies.
  CpuOutlineKernelsOptions outline;
  outline.trace = options.trace;
  pm.addPass(createCpuOutlineKernels(outline));
  ConvertRLXMIRToLinalgOptions linalg;
  linalg.rowTile = options.rowTile;
  pm.addPass(createConvertRLXMIRToLinalg(linalg));
  pm.addPass(createCanonicalizerPass());
  // The collectives of a partitioned (tensor-parallel) program become MPI
  // calls (upstream's lowering; nothing to do without `shard` ops).
  pm.addPass(createCpuExpandAllGather());
  pm.addPass(createConvertShardToMPIPass());
  pm.addPass(createCpuPrepareMPI());
  // Empty-tensor elimination before CSE: once CSE has merged two equal
  // `fill(tensor.empty)` inits, eliminating the empty into one consumer's
  // destination also redirects the other consumer's init there (two
  // reductions of the same shape then accumulate into one buffer).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(createCSEPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // rlx_mir.while/scan carries (ControlFlowLowering.cpp): a step may yield
  // a new buffer; the deallocation pipeline frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // The caller owns outputs: results become trailing out-parameters.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  // topk and cumsum as the runtime's sort and running sum (their linalg
  // forms are quadratic in the axis).
  pm.addPass(createCpuTopkCumsum());
  if (options.blas) {
    CpuMatmulToBlasOptions blas;
    blas.minFlops = options.blasMinFlops;
    pm.addPass(createCpuMatmulToBlas(blas));
  }
  // Kernels' temporaries in their caller's arena (before deallocation
  // would free them per call).
  pm.addPass(createCpuKernelScratch());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
}

void mlir::rlx::buildCpuPipeline(OpPassManager &pm, const CompileOptions &options) {
  buildCpuBufferPipeline(pm, options);
  buildCpuLLVMPipeline(pm, options);
}

void mlir::rlx::buildCpuLLVMPipeline(OpPassManager &pm, const CompileOptions &options) {
  // MPI calls (Open MPI's ABI: see the module's DLTI) before memrefs lower.
  ConvertToLLVMPassOptions mpi;
  mpi.filterDialects = {"mpi"};
  pm.addPass(createConvertToLLVMPass(mpi));
  pm.addPass(createCpuOpenMPISymbols());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createLowerAffinePass());
  if (options.approximateMath)
    pm.addPass(createMathApproximations());
  // bf16 too: the same bits on every CPU (no subnormal flush, no
  // compiler-rt call per element).
  ExpandLowPrecisionFloatsOptions floats;
  floats.includeBf16 = true;
  pm.addPass(createExpandLowPrecisionFloats(floats));
  // Vector ops a module brings (vector.transfer_read, vector.print in an
  // @main that prints its result).
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCpuCheckLLVM());
}

void mlir::rlx::registerCpuPipelines() {
  registerRLXCpuPasses();
  registerCompilePipeline<CpuPipelineOptions>(
      "rlx-lower-to-cpu",
      "Compile an RLX module (HIR, MIR or LIR) for the CPU: fusion, LIR kernels, "
      "One-Shot Bufferize, the arena plan, linalg, BLAS sgemm for f32 matmuls, loops, "
      "LLVM dialect",
      buildCpuPipeline);
}
