//===- Jvp.cpp - rlx-mir-jvp: forward mode on MIR --------------------------===//
//
// @f(args) -> (outs) becomes, next to it, @f_jvp(args, t_<wrt>...) ->
// (outs, t_<out>...): a copy of the body (fused ops unfused), then each op's
// DifferentiableOpInterface::jvp in program order. Applied to a gradient
// function (rlx-mir-grad) it gives Hessian-vector products (forward over
// reverse).
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "RLX/Dialect/Common/IR/IONames.h"
#include "RLX/Dialect/MIR/IR/Derivatives.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRJVP
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

constexpr StringLiteral kPass = "rlx-mir-jvp";

/// Builds @<fwd>_jvp after `fwd`; null after an error (reported).
func::FuncOp buildJvp(func::FuncOp fwd, ArrayRef<std::string> wrtNames) {
  auto picked = ad::selectArguments(fwd, wrtNames, kPass);
  if (failed(picked))
    return nullptr;
  SmallVector<unsigned> wrt = *picked;
  SmallVector<unsigned> outs; // results with tangents
  for (auto [i, t] : llvm::enumerate(fwd.getResultTypes()))
    if (ad::isFloatTensor(t))
      outs.push_back(i);

  OpBuilder b(fwd);
  b.setInsertionPointAfter(fwd);
  SmallVector<Type> ins(fwd.getArgumentTypes()), results(fwd.getResultTypes());
  for (unsigned i : wrt)
    ins.push_back(fwd.getArgument(i).getType());
  for (unsigned r : outs)
    results.push_back(fwd.getResultTypes()[r]);
  auto fn = func::FuncOp::create(b, fwd.getLoc(), (fwd.getSymName() + "_jvp").str(),
                                 b.getFunctionType(ins, results));
  unsigned n = fwd.getNumArguments();
  for (unsigned i = 0; i < n; ++i)
    fn.setArgAttrs(i, fwd.getArgAttrDict(i));
  for (unsigned r = 0; r < fwd.getNumResults(); ++r)
    fn.setResultAttrs(r, fwd.getResultAttrDict(r));
  for (auto [k, i] : llvm::enumerate(wrt))
    fn.setArgAttr(n + k, "rlx.input", b.getStringAttr("t_" + argumentName(fwd, i)));
  for (auto [k, r] : llvm::enumerate(outs))
    fn.setResultAttr(fwd.getNumResults() + k, "rlx.output",
                     b.getStringAttr("t_" + resultName(fwd, r)));

  // The body, fused ops unfused (elementwise regions have rules).
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  for (unsigned i = 0; i < n; ++i)
    map.map(fwd.getArgument(i), entry->getArgument(i));
  b.setInsertionPointToEnd(entry);
  for (Operation &op : fwd.getBody().front())
    b.clone(op, map); // the return too, so that unfusing updates it
  if (failed(ad::unfuse(fn, /*regions=*/false, ad::Rule::Jvp))) {
    fn.erase();
    return nullptr;
  }
  auto ret = cast<func::ReturnOp>(entry->getTerminator());
  SmallVector<Value> returned(ret.getOperands());
  SmallVector<Operation *> ops;
  for (Operation &op : entry->without_terminator())
    ops.push_back(&op);
  ret.erase();

  // Tangents in program order; null is zero.
  DenseMap<Value, Value> tangents;
  for (auto [k, i] : llvm::enumerate(wrt))
    tangents[entry->getArgument(i)] = entry->getArgument(n + k);
  b.setInsertionPointToEnd(entry);
  if (failed(ad::forward(b, ops, tangents, kPass))) {
    fn.erase();
    return nullptr;
  }

  MIRBuilder mb(b, fwd.getLoc(), /*diagnose=*/true);
  SmallVector<Value> results2(returned);
  for (unsigned r : outs) {
    Value t = tangents.lookup(returned[r]);
    results2.push_back(t ? t : mb.zerosLike(returned[r]));
  }
  if (mb.failed()) {
    fwd.emitError(kPass) << ": cannot build zero tangents for the outputs";
    fn.erase();
    return nullptr;
  }
  func::ReturnOp::create(b, fwd.getLoc(), results2);
  return fn;
}

struct MIRJvpPass : mir::impl::MIRJvpBase<MIRJvpPass> {
  using MIRJvpBase::MIRJvpBase;
  void runOnOperation() override {
    auto targets = ad::targetFunctions(getOperation(), function, kPass, "_jvp",
                                       [](func::FuncOp fn) {
                                         return !fn.getSymName().ends_with("_jvp") &&
                                                !fn.getSymName().ends_with("_pack_params");
                                       });
    if (failed(targets))
      return signalPassFailure();
    for (func::FuncOp fn : *targets)
      if (!buildJvp(fn, wrt))
        return signalPassFailure();
  }
};

} // namespace
