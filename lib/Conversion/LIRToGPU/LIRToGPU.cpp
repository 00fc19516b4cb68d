//===- LIRToGPU.cpp - convert-rlx-lir-to-gpu ------------------------------===//
//
// Every planned function gets one gpu.module of kernels; each rlx_lir.kernel
// (and each host-side memref.copy) becomes a gpu.func built by its template
// and a gpu.launch_func in its place. What stays in the host function is the
// launch plan: arena views, views of IO buffers, constants and launches in
// schedule order. A tensor-parallel program's all-reduce kernels stay as they
// are, in schedule order: they are collective steps of the plan (run by the
// runtime's communicator: NCCL on the device), not GPU kernels.
//
//===----------------------------------------------------------------------===//

#include "RLX/Conversion/LIRToGPU/LIRToGPU.h"

#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/Common/IR/SourceLocations.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/InterleavedRange.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CONVERTRLXLIRTOGPU
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

const std::vector<std::unique_ptr<KernelTemplate>> &mlir::rlx::gpu_kernels::builtinKernelTemplates() {
  static const std::vector<std::unique_ptr<KernelTemplate>> all = [] {
    std::vector<std::unique_ptr<KernelTemplate>> t;
    addMatmulTemplates(t);
    addAttentionTemplates(t);
    addNvfp4Templates(t);
    addNormTemplates(t);
    addSoftmaxTemplates(t);
    addFftTemplates(t);
    addReduceTemplates(t);
    addDataMovementTemplates(t);
    addElementwiseTemplates(t);
    return t;
  }();
  return all;
}

Value KernelContext::addTensorMapParam(LaunchConfig &launch, const TensorMapParam &param) {
  launch.tensorMaps.push_back(param);
  unsigned at = fn.getNumArguments();
  if (failed(fn.insertArgument(at, LLVM::LLVMPointerType::get(fn.getContext()), DictionaryAttr(),
                               fn.getLoc())))
    return Value();
  return fn.getArgument(at);
}

namespace {

/// A symbol-friendly kernel name: <fn>_<index>_<kernel name>.
std::string kernelName(func::FuncOp fn, unsigned index, StringRef what) {
  std::string s = (fn.getSymName() + "_" + Twine(index) + "_" + what).str();
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return s;
}

gpu::GPUFuncOp createKernelFunc(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                                StringRef name, TypeRange argTypes) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  return fn;
}

/// The host side of a tensor-map parameter: `memref` (its leading dims
/// collapsed into one, or its last dim split in two, to the map's shape) →
/// unranked → nvgpu.tma.create.descriptor → the kernel's !llvm.ptr; null
/// (with a located error) when the memref cannot take the map's shape.
Value hostTensorMap(OpBuilder &b, Location loc, Value memref, const TensorMapParam &t) {
  auto type = cast<MemRefType>(memref.getType());
  if (t.shape.size() == static_cast<size_t>(type.getRank() + 1)) {
    // [d0, ..., dn-1] -> [d0, ..., dn-2, h, dn-1 / h].
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups.push_back({d});
    groups.push_back({type.getRank() - 1, type.getRank()});
    FailureOr<MemRefType> expanded =
        memref::ExpandShapeOp::computeExpandedType(type, t.shape, groups);
    if (failed(expanded)) {
      emitError(loc) << "convert-rlx-lir-to-gpu: a tensor map cannot see " << type << " as ["
                     << llvm::interleaved(t.shape) << "]";
      return Value();
    }
    memref = memref::ExpandShapeOp::create(b, loc, *expanded, memref, groups);
    type = *expanded;
  } else if (type.getShape() != ArrayRef<int64_t>(t.shape)) {
    // Leading dimensions into one: [d0, ..., dn-2, dn-1] -> [d0·…·dn-2, dn-1].
    SmallVector<ReassociationIndices> groups(1);
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups[0].push_back(d);
    groups.push_back({type.getRank() - 1});
    memref = memref::CollapseShapeOp::create(b, loc, memref, groups);
  }
  Type et = type.getElementType();
  Value unranked = memref::CastOp::create(b, loc, UnrankedMemRefType::get(et, Attribute()), memref);
  SmallVector<Value> box;
  for (int64_t v : t.box)
    box.push_back(arith::ConstantIndexOp::create(b, loc, v));
  auto smem = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto descType = nvgpu::TensorMapDescriptorType::get(
      b.getContext(), MemRefType::get(t.box, et, MemRefLayoutAttrInterface(), smem),
      static_cast<nvgpu::TensorMapSwizzleKind>(t.swizzle), nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
      nvgpu::TensorMapOOBKind::OOB_ZERO, nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value desc = nvgpu::TmaCreateDescriptorOp::create(b, loc, descType, unranked, box);
  return UnrealizedConversionCastOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), desc)
      .getResult(0);
}

/// Ends `fn`'s body, records the block size and launches it from `at`.
LogicalResult finishAndLaunch(OpBuilder &b, gpu::GPUFuncOp fn, const LaunchConfig &launch,
                              Operation *at, ValueRange args) {
  Block &entry = fn.getBody().front();
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, fn.getLoc());
  SmallVector<int32_t> block(launch.block.begin(), launch.block.end());
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(block));
  SmallVector<int32_t> grid(launch.grid.begin(), launch.grid.end());
  fn.setKnownGridSizeAttr(b.getDenseI32ArrayAttr(grid));
  b.setInsertionPoint(at);
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, at->getLoc(), v); };
  gpu::KernelDim3 gridDim{idx(launch.grid[0]), idx(launch.grid[1]), idx(launch.grid[2])};
  gpu::KernelDim3 blockDim{idx(launch.block[0]), idx(launch.block[1]), idx(launch.block[2])};
  SmallVector<Value> operands(args);
  for (const TensorMapParam &t : launch.tensorMaps) {
    operands.push_back(hostTensorMap(b, at->getLoc(), args[t.memrefArg], t));
    if (!operands.back())
      return failure();
  }
  Value smem = launch.dynamicSharedBytes
                   ? Value(arith::ConstantIntOp::create(b, at->getLoc(), b.getI32Type(),
                                                        launch.dynamicSharedBytes))
                   : Value();
  gpu::LaunchFuncOp::create(b, at->getLoc(), fn, gridDim, blockDim, smem, operands);
  return success();
}

struct ConvertRLXLIRToGPUPass : rlx::impl::ConvertRLXLIRToGPUBase<ConvertRLXLIRToGPUPass> {
  using ConvertRLXLIRToGPUBase::ConvertRLXLIRToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    FailureOr<nvvm::NVVMTarget> target = nvvm::parseTarget(chip, features, error);
    if (failed(target)) {
      emitError(module.getLoc()) << "convert-rlx-lir-to-gpu: " << error;
      return signalPassFailure();
    }
    if (!llvm::is_contained({"auto", "gemv", "simt", "tensor-cores", "wgmma", "tcgen05"},
                            StringRef(matmulKernel))) {
      emitError(module.getLoc()) << "convert-rlx-lir-to-gpu: matmul-kernel must be auto, gemv, "
                                    "simt, tensor-cores, wgmma or tcgen05, got '"
                                 << matmulKernel << "'";
      return signalPassFailure();
    }
    if (!llvm::is_contained(SmallVector<StringRef>{"auto", "simt", "flash", "wgmma"},
                            StringRef(attentionKernel))) {
      emitError(module.getLoc()) << "convert-rlx-lir-to-gpu: attention-kernel must be auto, "
                                    "simt, flash or wgmma, got '"
                                 << attentionKernel << "'";
      return signalPassFailure();
    }
    if (splitK < 0 || splitK > 16) {
      emitError(module.getLoc()) << "convert-rlx-lir-to-gpu: split-k must be 0 (the heuristic) "
                                    "or 1..16, got "
                                 << static_cast<int64_t>(splitK);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> fns;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn->hasAttr("rlx_lir.plan"))
        fns.push_back(fn);
    if (fns.empty()) {
      // Point at the first function that has a body: that is what is unplanned.
      Location loc = module.getLoc();
      for (auto fn : module.getOps<func::FuncOp>())
        if (!fn.isExternal()) {
          loc = fn.getLoc();
          break;
        }
      emitError(loc) << "convert-rlx-lir-to-gpu needs planned LIR (run "
                        "rlx-lir-plan-buffers first)";
      return signalPassFailure();
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(&getContext()));
    for (func::FuncOp fn : fns)
      if (failed(convertFunction(fn, *target)))
        return signalPassFailure();
  }

  static bool isEmptyBuffer(Value v) {
    auto t = dyn_cast<MemRefType>(v.getType());
    return t && t.hasStaticShape() && t.getNumElements() == 0;
  }

  LogicalResult convertFunction(func::FuncOp fn, const nvvm::NVVMTarget &target) {
    OpBuilder b(fn);
    b.setInsertionPointAfter(fn);
    auto gm = gpu::GPUModuleOp::create(b, fn.getLoc(), (fn.getSymName() + "_kernels").str());
    SymbolTable(fn->getParentOfType<ModuleOp>()).insert(gm);
    unsigned index = 0;
    for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
      if (auto kernel = dyn_cast<lir::KernelOp>(op)) {
        if (Operation *root = kernel.getRootOp(); root && root->getDialect() &&
                                                  isa<shard::ShardDialect>(root->getDialect())) {
          if (failed(checkCollective(kernel, root)))
            return failure();
          continue;
        }
        // A kernel that writes nothing (every output has a size-0 dim)
        // launches nothing.
        if (!kernel.getOutputs().empty() && llvm::all_of(kernel.getOutputs(), isEmptyBuffer)) {
          kernel.erase();
          continue;
        }
        if (failed(convertKernel(b, kernel, fn, gm, index++, target)))
          return failure();
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        // Upstream linalg an import left on the host (tosa.cast, compares,
        // selects): an element-wise kernel, or a located error; never
        // dropped from the plan.
        if (llvm::all_of(linalgOp.getDpsInits(), isEmptyBuffer)) {
          op.erase();
          continue;
        }
        // Buffers are kernel arguments; scalar operands (a fill's value) are
        // constants the kernel builds itself.
        SmallVector<Value> args;
        for (Value v : op.getOperands())
          if (isa<MemRefType>(v.getType()))
            args.push_back(v);
        llvm::append_range(args, capturedBuffers(&op));
        gpu::GPUFuncOp k = createKernelFunc(b, op.getLoc(), gm, kernelName(fn, index++, "linalg"),
                                            ValueRange(args).getTypes());
        b.setInsertionPointToStart(&k.getBody().front());
        FailureOr<LaunchConfig> launch =
            buildLinalgElementwiseKernel(k, b, &op, k.getArguments());
        if (failed(launch))
          return op.emitError("convert-rlx-lir-to-gpu: no GPU kernel for this '")
                 << op.getName()
                 << "' (the GPU path runs linalg ops with static shapes, affine indexing maps "
                    "without symbols that stay inside their operands, outputs at projected "
                    "permutations of the parallel loops, and a body without regions)";
        if (failed(finishAndLaunch(b, k, *launch, &op, args)))
          return failure();
        op.erase();
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (isEmptyBuffer(copy.getTarget())) {
          copy.erase();
          continue;
        }
        SmallVector<Value> args{copy.getSource(), copy.getTarget()};
        gpu::GPUFuncOp k = createKernelFunc(b, copy.getLoc(), gm, kernelName(fn, index++, "copy"),
                                            ValueRange(args).getTypes());
        b.setInsertionPointToStart(&k.getBody().front());
        FailureOr<LaunchConfig> launch =
            buildCopyKernel(k, b, k.getArgument(0), k.getArgument(1), target);
        if (failed(launch))
          return copy.emitError("convert-rlx-lir-to-gpu: this copy has no GPU kernel");
        if (failed(finishAndLaunch(b, k, *launch, copy, args)))
          return failure();
        copy.erase();
      }
    }
    // A function without kernels (only views, or none) gets no gpu.module.
    if (gm.getBody()->getOperations().empty())
      gm.erase();
    return success();
  }

  /// A collective the runtime runs as a step of the plan, over every axis
  /// of a 1-D grid from one static buffer into another: a sum all-reduce
  /// (same types), or an all-gather of contiguous blocks (every dim before
  /// the gather axis 1: rlx-mir-gpu-collectives makes them so), as NCCL
  /// and MPI run them. Other collectives are located errors.
  LogicalResult checkCollective(lir::KernelOp kernel, Operation *root) {
    if (!kernel.hasPureBufferSemantics())
      return kernel.emitError("convert-rlx-lir-to-gpu needs kernels on buffers (run "
                              "rlx-lir-bufferize and rlx-lir-plan-buffers first)");
    auto plain = [](Value v) {
      auto t = cast<MemRefType>(v.getType());
      Type et = t.getElementType();
      return t.hasStaticShape() && t.getLayout().isIdentity() &&
             (et.isF32() || et.isF16() || et.isBF16());
    };
    if (kernel.getInputs().size() != 1 || kernel.getOutputs().size() != 1 ||
        !plain(kernel.getInputs()[0]) || !plain(kernel.getOutputs()[0]))
      return kernel.emitError("convert-rlx-lir-to-gpu: a collective reads one static, "
                              "contiguous f32/f16/bf16 buffer and writes one");
    auto oneDimGrid = [&](FlatSymbolRefAttr name, ArrayRef<int16_t> axes) {
      auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(root, name);
      return grid && grid.getRank() == 1 && axes.size() == 1;
    };
    if (auto ar = dyn_cast<shard::AllReduceOp>(root)) {
      if (ar.getReduction() != shard::ReductionKind::Sum ||
          !oneDimGrid(ar.getGridAttr(), ar.getGridAxes()))
        return kernel.emitError("convert-rlx-lir-to-gpu: a GPU all-reduce must be a sum over a "
                                "1-D grid (the tensor-parallel ranks)");
      if (kernel.getInputs()[0].getType() != kernel.getOutputs()[0].getType())
        return kernel.emitError("convert-rlx-lir-to-gpu: an all-reduce writes a buffer of its "
                                "input's type");
      return success();
    }
    if (auto ag = dyn_cast<shard::AllGatherOp>(root)) {
      auto in = cast<MemRefType>(kernel.getInputs()[0].getType());
      int64_t axis = ag.getGatherAxis().getSExtValue();
      if (!oneDimGrid(ag.getGridAttr(), ag.getGridAxes()) ||
          !llvm::all_of(in.getShape().take_front(axis), [](int64_t d) { return d == 1; }))
        return kernel.emitError("convert-rlx-lir-to-gpu: a GPU all-gather gathers contiguous "
                                "blocks over a 1-D grid (run rlx-mir-gpu-collectives)");
      return success();
    }
    return kernel.emitError("convert-rlx-lir-to-gpu: '")
           << root->getName() << "' has no GPU collective (the GPU runs sum all-reduces and "
           << "all-gathers)";
  }

  LogicalResult convertKernel(OpBuilder &b, lir::KernelOp kernel, func::FuncOp fn,
                              gpu::GPUModuleOp gm, unsigned index,
                              const nvvm::NVVMTarget &target) {
    if (!kernel.hasPureBufferSemantics())
      return kernel.emitError("convert-rlx-lir-to-gpu needs kernels on buffers (run "
                              "rlx-lir-bufferize and rlx-lir-plan-buffers first)");
    Operation *root = kernel.getRootOp();
    if (!root)
      return kernel.emitError("convert-rlx-lir-to-gpu: a kernel body must be one MIR op "
                              "(plus constants)");
    const KernelTemplate *chosen = nullptr;
    for (const auto &t : builtinKernelTemplates())
      if (t->matches(root)) {
        chosen = t.get();
        break;
      }
    if (!chosen)
      return kernel.emitError("convert-rlx-lir-to-gpu: no GPU kernel template for '")
             << root->getName() << "'";
    SmallVector<Value> args(kernel.getInputs());
    llvm::append_range(args, kernel.getOutputs());
    gpu::GPUFuncOp k =
        createKernelFunc(b, fusedOrigins(kernel), gm,
                         kernelName(fn, index, kernel.getName().value_or(chosen->name())),
                         ValueRange(args).getTypes());
    b.setInsertionPointToStart(&k.getBody().front());
    KernelContext ctx{kernel, root,        k,           b,      target,
                      {},     {},          tensorCores, matmulKernel, splitK, attentionKernel,
                      strictKernels};
    unsigned nIn = kernel.getInputs().size();
    for (unsigned i = 0; i < args.size(); ++i)
      (i < nIn ? ctx.inputs : ctx.outputs).push_back(k.getArgument(i));
    FailureOr<LaunchConfig> launch = chosen->build(ctx);
    if (failed(launch))
      return failure();
    if (launch->dynamicSharedBytes + 0 > target.maxSharedMemoryPerBlock())
      return kernel.emitError("convert-rlx-lir-to-gpu: the ")
             << chosen->name() << " kernel needs " << launch->dynamicSharedBytes
             << " bytes of shared memory; " << target.chip << " allows "
             << target.maxSharedMemoryPerBlock();
    if (failed(finishAndLaunch(b, k, *launch, kernel, args)))
      return failure();
    kernel.erase();
    return success();
  }
};

} // namespace
