//===- Frontend.cpp - From any RLX stage to planned LIR -------------------===//

#include "RLX/Target/Frontend.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::rlx;

void mlir::rlx::addTensorParallelPasses(OpPassManager &pm, int64_t tp, int64_t ep) {
  mir::MIRShardOptions shard;
  shard.tp = tp;
  shard.ep = ep;
  pm.addPass(mir::createMIRShard(shard));
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(shard::createShardingPropagation());
  fpm.addPass(mir::createMIRStepwiseReshard());
  fpm.addPass(shard::createPartition());
  pm.addPass(mir::createMIRFlattenGrid());
}

void mlir::rlx::addImportPasses(OpPassManager &pm, ArrayRef<std::string> weightArgs) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(tosa::createTosaInferShapesPass());
  // arith/math ops on whole tensors (math.exp of a tensor) as linalg.generic,
  // which the import raises or the linalg path compiles (they reached
  // bufferization as they were: "op was not bufferized").
  fpm.addPass(createConvertElementwiseToLinalgPass());
  RLXImportToMIROptions import;
  import.weights.assign(weightArgs.begin(), weightArgs.end());
  pm.addPass(createRLXImportToMIR(import));
}

void mlir::rlx::buildFrontendPipeline(OpPassManager &pm, const FrontendOptions &options) {
  ConvertRLXHIRToMIROptions hir;
  // Sharding runs on primitive MIR (fusion follows on each rank).
  hir.fusionPolicy = options.tp > 0 ? FusionPolicy::Fusable : options.policy();
  pm.addPass(createConvertRLXHIRToMIR(hir));
  // TOSA / linalg from exporters: raised to MIR blocks; what is not raised is
  // lowered by upstream's TOSA passes and compiled as it is.
  if (options.importUpstream)
    addImportPasses(pm, options.weightArgs);
  // Before tensor parallelism splits the tables.
  pm.addPass(mir::createMIRIndexBounds());
  if (options.importUpstream) {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(tosa::createTosaToLinalgNamed());
    fpm.addPass(tosa::createTosaToLinalg());
    fpm.addPass(createTosaToArithPass());
    fpm.addPass(createTosaToTensorPass());
  }
  auto specialize = [&] {
    mir::MIRSpecializeOptions spec;
    spec.dims.assign(options.dims.begin(), options.dims.end());
    spec.requireStatic = true;
    pm.addPass(mir::createMIRSpecialize(spec));
  };
  // The GPU path's collectives are planned on static shapes: with --tp,
  // dims are bound before the program is split.
  bool specializeFirst = options.tp > 0 && options.gpuCollectives && !options.dims.empty();
  if (specializeFirst)
    specialize();
  if (options.tp > 0) {
    addTensorParallelPasses(pm, options.tp, options.ep);
    if (options.gpuCollectives || options.rank >= 0) {
      mir::MIRBindRankOptions bind;
      bind.rank = options.rank;
      pm.addPass(mir::createMIRBindRank(bind));
    }
    if (options.gpuCollectives)
      pm.addPass(mir::createMIRGpuCollectives());
  }
  if (options.blockNvfp4Scales)
    pm.addPass(mir::createMIRBlockNvfp4Scales());
  // Composite ops whose chains fusion and the matmul kernels should see.
  mir::MIRDecomposeOptions decompose;
  decompose.kernelFfts = options.fftKernels;
  pm.addPass(mir::createMIRDecompose(decompose));
  if (options.fuse)
    pm.addPass(mir::createMIRFuse());
  if (!options.dims.empty() && !specializeFirst) {
    specialize();
    // The composite ops whose shapes only now became static.
    pm.addPass(mir::createMIRDecompose(decompose));
  }
  if (options.splitKVSMs > 0) {
    mir::MIRSplitKVOptions split;
    split.smCount = options.splitKVSMs;
    split.kvSplits = options.kvSplits;
    split.wgmma = options.splitKVWgmma;
    pm.addPass(mir::createMIRSplitKV(split));
  }
  // Kernels that tile a contraction or reduced axis need one element of it.
  pm.addPass(mir::createMIRFillEmptyAxes());
  if (options.beforeLIR)
    options.beforeLIR(pm);
  if (options.lir) {
    pm.addPass(createConvertRLXMIRToLIR());
    pm.addPass(lir::createLIRBufferize());
    lir::LIRPlanBuffersOptions plan;
    plan.alignment = options.alignment;
    plan.reportDir = options.planDir;
    pm.addPass(lir::createLIRPlanBuffers(plan));
    pm.addPass(lir::createLIRVerifyPlan());
  }
}
