//===- Bufferize.cpp - rlx-lir-bufferize: tensor kernels to buffers --------===//

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::rlx::lir {
#define GEN_PASS_DEF_LIRBUFFERIZE
#include "RLX/Dialect/LIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::lir

using namespace mlir;
using namespace mlir::rlx::lir;

namespace {

/// The IO manifest: argument names by role and the names of the results
/// (which become trailing out-parameters).
DictionaryAttr ioManifest(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<Attribute> inputs, params, outputs;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (auto s = fn.getArgAttrOfType<StringAttr>(i, "rlx.param"))
      params.push_back(s);
    else if (auto s = fn.getArgAttrOfType<StringAttr>(i, "rlx.input"))
      inputs.push_back(s);
    else
      inputs.push_back(StringAttr::get(ctx, rlx::argumentName(fn, i)));
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    outputs.push_back(StringAttr::get(ctx, rlx::resultName(fn, i)));
  Builder b(ctx);
  return b.getDictionaryAttr({b.getNamedAttr("inputs", b.getArrayAttr(inputs)),
                              b.getNamedAttr("params", b.getArrayAttr(params)),
                              b.getNamedAttr("outputs", b.getArrayAttr(outputs))});
}

/// Makes destinations available early: every tensor.empty moves to the top of
/// its block and every tensor.insert_slice right after its operands. Then a
/// kernel whose result is inserted into a larger tensor (a concat) sees that
/// tensor's slice before it runs, and empty-tensor elimination can make it
/// write there directly.
void scheduleDestinationsEarly(func::FuncOp fn) {
  if (fn.isExternal())
    return;
  Block &entry = fn.getBody().front();
  for (auto empty : llvm::make_early_inc_range(entry.getOps<tensor::EmptyOp>()))
    if (empty->getNumOperands() == 0)
      empty->moveBefore(&entry, entry.begin());
  for (auto insert : llvm::make_early_inc_range(entry.getOps<tensor::InsertSliceOp>())) {
    Operation *after = nullptr;
    for (Value v : insert->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &entry && (!after || after->isBeforeInBlock(def)))
          after = def;
    if (after)
      insert->moveAfter(after);
    else
      insert->moveBefore(&entry, entry.begin());
  }
}

struct LIRBufferizePass : mlir::rlx::lir::impl::LIRBufferizeBase<LIRBufferizePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Manifests and output names, while results still carry their attributes.
    llvm::DenseMap<StringAttr, std::pair<DictionaryAttr, SmallVector<Attribute>>> saved;
    for (auto fn : module.getOps<func::FuncOp>()) {
      // Already in buffer form (LIR given as input): nothing to record.
      if (fn.isExternal() || fn->hasAttr("rlx_lir.io"))
        continue;
      // Results become out-parameters and arguments IO buffers: both must
      // be buffers-to-be (scalars would stay results, unranked tensors have
      // no buffer type to plan).
      for (auto [what, types] : {std::pair<StringRef, ArrayRef<Type>>{"argument", fn.getArgumentTypes()},
                                 {"result", fn.getResultTypes()}})
        for (auto [i, t] : llvm::enumerate(types))
          if (!isa<RankedTensorType, MemRefType>(t)) {
            fn.emitError("rlx-lir-bufferize: ")
                << what << " " << i << " of @" << fn.getSymName() << " is " << t
                << "; RLX functions take and return ranked tensors (a scalar is "
                   "tensor<f32>)";
            return signalPassFailure();
          }
      DictionaryAttr io = ioManifest(fn);
      saved[fn.getSymNameAttr()] = {io, llvm::to_vector(
                                            cast<ArrayAttr>(io.get("outputs")).getValue())};
      scheduleDestinationsEarly(fn);
    }

    mlir::rlx::lir::separateReturnedTensors(module);
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    // Kernel bodies stay on tensors: they are the kernels' semantics.
    options.opFilter.denyOperation(
        [](Operation *op) { return op->getParentOfType<KernelOp>() != nullptr; });

    {
      bufferization::OneShotAnalysisState state(module, options);
      if (failed(bufferization::analyzeModuleOp(module, state))) {
        emitError(module.getLoc(), "rlx-lir-bufferize: One-Shot analysis failed");
        return signalPassFailure();
      }
      IRRewriter rewriter(ctx);
      if (failed(bufferization::eliminateEmptyTensors(rewriter, module, state)))
        return signalPassFailure();
    }
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(module, options, state)))
      return signalPassFailure();

    bufferization::BufferResultsToOutParamsOpts outParams;
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    if (failed(bufferization::promoteBufferResultsToOutParams(module, outParams)))
      return signalPassFailure();

    // Name the out-parameters before anything verifies the module (the
    // cleanup below does; rlx.packed_by counts a pack function's outputs).
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto it = saved.find(fn.getSymNameAttr());
      if (it == saved.end())
        continue;
      auto &[io, outputs] = it->second;
      fn->setAttr("rlx_lir.io", io);
      // The out-parameters are the trailing arguments, in result order.
      unsigned first = fn.getNumArguments() - outputs.size();
      for (auto [i, name] : llvm::enumerate(outputs))
        fn.setArgAttr(first + i, "rlx.output", name);
    }
    // One-Shot Bufferize trusts the tensor ops it rewrites, and some that
    // verify become memref ops that do not (tensor.expand_shape with an
    // output_shape its type contradicts): the pass fails here, with the
    // verifier's diagnostics, instead of handing invalid IR on.
    for (auto fn : module.getOps<func::FuncOp>())
      if (failed(verify(fn))) {
        fn.emitError() << "rlx-lir-bufferize: @" << fn.getSymName()
                       << " does not verify once bufferized (see the error above)";
        return signalPassFailure();
      }
    // A result written straight into its slice of a larger buffer leaves a
    // copy of that slice onto itself (two equal subviews): CSE makes them one
    // value, and the canonicalizer drops the self-copy.
    OpPassManager cleanup("builtin.module");
    cleanup.addPass(createCSEPass());
    cleanup.addPass(createCanonicalizerPass());
    if (failed(runPipeline(cleanup, module)))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rlx::lir::separateReturnedTensors(ModuleOp module) {
  module.walk([](func::ReturnOp ret) {
    OpBuilder b(ret);
    llvm::SmallPtrSet<Value, 8> seen;
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || (seen.insert(v).second && !isa<BlockArgument>(v)))
        continue;
      operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type, ValueRange(), v));
    }
  });
}
