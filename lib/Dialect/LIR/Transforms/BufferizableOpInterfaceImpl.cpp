//===- BufferizableOpInterfaceImpl.cpp - One-Shot Bufferize for kernels ---===//
//
// rlx_lir.kernel on tensors is destination style: result i is the buffer of
// `outs` operand i. `outs` are written, never read (the body yields whole
// tensors), so One-Shot needs no copy of their contents; `ins` are read. The
// body stays on tensors: bufferization moves it unchanged into the buffer
// form of the op.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/LIR/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::rlx::lir;

namespace {

struct KernelOpInterface
    : DstBufferizableOpInterfaceExternalModel<KernelOpInterface, KernelOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<KernelOp>(op).isDpsInit(&operand);
  }

  /// Only the operands and results count: the body's tensor arguments are
  /// the kernel's semantics, not values to bufferize.
  bool hasTensorSemantics(Operation *op) const {
    auto isTensor = [](Type t) { return isa<TensorType>(t); };
    return llvm::any_of(op->getOperandTypes(), isTensor) ||
           llvm::any_of(op->getResultTypes(), isTensor);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto kernel = cast<KernelOp>(op);
    if (!kernel.hasPureTensorSemantics())
      return success();
    SmallVector<Value> ins, outs;
    for (Value in : kernel.getInputs()) {
      if (!isa<TensorType>(in.getType())) {
        ins.push_back(in);
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, in, options, state);
      if (failed(buffer))
        return failure();
      ins.push_back(*buffer);
    }
    for (OpOperand &out : kernel.getOutputsMutable()) {
      FailureOr<Value> buffer = getBuffer(rewriter, out.get(), options, state);
      if (failed(buffer))
        return failure();
      outs.push_back(*buffer);
    }
    rewriter.setInsertionPoint(kernel);
    auto buffered = KernelOp::create(rewriter, kernel.getLoc(), TypeRange{}, ins, outs,
                                     kernel.getNameAttr(), kernel.getInPlaceAttr());
    buffered->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(kernel.getBody(), buffered.getBody(),
                                buffered.getBody().end());
    replaceOpWithBufferizedValues(rewriter, op, outs);
    return success();
  }
};

} // namespace

void mlir::rlx::lir::registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, LIRDialect *) {
    KernelOp::attachInterface<KernelOpInterface>(*ctx);
  });
}
