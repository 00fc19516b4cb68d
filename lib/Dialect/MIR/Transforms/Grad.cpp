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

using ad::isFloatTensor;

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
    DenseSet<Value> active;
    for (unsigned i : wrt)
      active.insert(entry->getArgument(i));
    SmallVector<Operation *> ops;
    for (Operation &op : *entry) {
      ops.push_back(&op);
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (isFloatTensor(r.getType()))
            active.insert(r);
    }

    // Backward, in reverse order.
    b.setInsertionPointToEnd(entry);
    MIRBuilder mb(b, fwd.getLoc(), /*diagnose=*/true);
    DenseMap<Value, Value> grads;
    grads[loss] = entry->getArgument(fwd.getNumArguments());
    for (Operation *op : llvm::reverse(ops)) {
      SmallVector<Value> cotangents;
      for (Value r : op->getResults())
        cotangents.push_back(grads.lookup(r));
      if (llvm::none_of(cotangents, [](Value v) { return v; }))
        continue;
      SmallVector<bool> need;
      for (Value v : op->getOperands())
        need.push_back(active.contains(v));
      if (llvm::none_of(need, [](bool x) { return x; }))
        continue;
      auto rules = dyn_cast<DifferentiableOpInterface>(op);
      if (!rules) {
        op->emitError("rlx-mir-grad: no reverse-mode rule for '")
            << op->getName() << "' (it implements no DifferentiableOpInterface)";
        fn.erase();
        return nullptr;
      }
      MIRBuilder opb(b, op->getLoc(), /*diagnose=*/true);
      SmallVector<Value> dx;
      if (failed(rules.vjp(opb, cotangents, need, dx))) {
        fn.erase();
        return nullptr;
      }
      if (opb.failed()) {
        op->emitError("rlx-mir-grad: cannot build the gradient of '")
            << op->getName() << "' for these operand types";
        fn.erase();
        return nullptr;
      }
      for (auto [v, g] : llvm::zip(op->getOperands(), dx)) {
        if (!g || !active.contains(v))
          continue;
        g = opb.sumTo(g, cast<RankedTensorType>(v.getType()));
        auto [slot, inserted] = grads.try_emplace(v, g);
        if (!inserted)
          slot->second = opb.add(slot->second, g);
      }
      if (opb.failed()) {
        op->emitError("rlx-mir-grad: cannot sum the gradients of the operands of '")
            << op->getName() << "'";
        fn.erase();
        return nullptr;
      }
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
