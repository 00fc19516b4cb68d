//===- Grad.cpp - rlx-mir-grad: reverse mode on MIR ------------------------===//
//
// @f(args) -> loss becomes, next to it, @f_grad(args, d_output) ->
// (loss, d_<wrt>...): a copy of the forward body (unfused into primitives),
// then the rules of GradRules.cpp applied in reverse order, gradients of
// values with several uses summed, broadcast operands summed down.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/MIR/IR/Derivatives.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRGRAD
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

class GradBuilder {
public:
  explicit GradBuilder(func::FuncOp fwd) : fwd(fwd) {}

  /// Builds @<fwd>_grad after `fwd`; returns null after an error.
  func::FuncOp build(ArrayRef<std::string> wrtNames) {
    auto picked = ad::selectArguments(fwd, wrtNames, "rlx-mir-grad");
    if (failed(picked))
      return nullptr;
    SmallVector<unsigned> wrt = *picked;
    auto lossType = dyn_cast<RankedTensorType>(
        fwd.getNumResults() == 1 ? fwd.getResultTypes()[0] : Type());
    if (!lossType || !lossType.hasStaticShape() || lossType.getNumElements() != 1 ||
        !isa<FloatType>(lossType.getElementType())) {
      fwd.emitError("rlx-mir-grad: @")
          << fwd.getSymName()
          << " must return one floating-point scalar (the loss), e.g. tensor<f32> or tensor<1xf32>";
      return nullptr;
    }

    // The signature: forward args + d_output -> loss, d_<wrt>...
    OpBuilder b(fwd);
    b.setInsertionPointAfter(fwd);
    SmallVector<Type> ins(fwd.getArgumentTypes()), outs{lossType};
    ins.push_back(lossType);
    for (unsigned i : wrt)
      outs.push_back(fwd.getArgument(i).getType());
    auto fn = func::FuncOp::create(b, fwd.getLoc(), (fwd.getSymName() + "_grad").str(),
                                   b.getFunctionType(ins, outs));
    for (unsigned i = 0; i < fwd.getNumArguments(); ++i)
      fn.setArgAttrs(i, fwd.getArgAttrDict(i));
    fn.setArgAttr(fwd.getNumArguments(), "rlx.input", b.getStringAttr("d_output"));
    fn.setResultAttr(0, "rlx.output", b.getStringAttr("loss"));
    for (auto [k, i] : llvm::enumerate(wrt))
      fn.setResultAttr(k + 1, "rlx.output", b.getStringAttr("d_" + argumentName(fwd, i)));

    // The forward body, unfused.
    Block *entry = fn.addEntryBlock();
    IRMapping map;
    for (unsigned i = 0; i < fwd.getNumArguments(); ++i)
      map.map(fwd.getArgument(i), entry->getArgument(i));
    b.setInsertionPointToEnd(entry);
    for (Operation &op : fwd.getBody().front())
      b.clone(op, map); // the return too, so that unfusing updates the loss
    if (failed(ad::unfuse(fn, /*regions=*/false, ad::Rule::Vjp))) {
      fn.erase();
      return nullptr;
    }
    auto ret = cast<func::ReturnOp>(entry->getTerminator());
    Value loss = ret.getOperand(0);
    ret.erase();

    // Values that depend on a wrt argument: the only ones that get gradients.
    SmallVector<Operation *> ops;
    for (Operation &op : *entry)
      ops.push_back(&op);
    SmallVector<Value> seeds;
    for (unsigned i : wrt)
      seeds.push_back(entry->getArgument(i));
    DenseSet<Value> active = ad::activeValues(ops, seeds);

    // Backward, in reverse order.
    b.setInsertionPointToEnd(entry);
    MIRBuilder mb(b, fwd.getLoc(), /*diagnose=*/true);
    DenseMap<Value, Value> grads;
    grads[loss] = entry->getArgument(fwd.getNumArguments());
    if (failed(ad::backward(b, ops, active, grads, "rlx-mir-grad"))) {
      fn.erase();
      return nullptr;
    }

    SmallVector<Value> results{loss};
    for (unsigned i : wrt) {
      Value g = grads.lookup(entry->getArgument(i));
      results.push_back(g ? g : mb.zerosLike(entry->getArgument(i)));
    }
    if (mb.failed()) {
      fwd.emitError("rlx-mir-grad: cannot build zero gradients for the unused arguments");
      fn.erase();
      return nullptr;
    }
    func::ReturnOp::create(b, fwd.getLoc(), results);
    return fn;
  }

private:
  func::FuncOp fwd;
};

struct MIRGradPass : mir::impl::MIRGradBase<MIRGradPass> {
  using MIRGradBase::MIRGradBase;
  void runOnOperation() override {
    auto targets = ad::targetFunctions(
        getOperation(), function, "rlx-mir-grad", "_grad", [](func::FuncOp fn) {
          return fn.getNumResults() == 1 && !fn.getSymName().ends_with("_grad") &&
                 !fn.getSymName().ends_with("_pack_params");
        });
    if (failed(targets))
      return signalPassFailure();
    for (func::FuncOp fn : *targets) {
      if (!GradBuilder(fn).build(wrt))
        return signalPassFailure();
    }
  }
};

} // namespace
