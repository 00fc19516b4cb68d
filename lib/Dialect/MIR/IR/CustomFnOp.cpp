//===- CustomFnOp.cpp - rlx_mir.custom_fn -----------------------------------===//
//
// A user function as one op: its body inlined is its definition for every
// backend (DecomposableOpInterface); its vjp/jvp regions, when present, are
// its derivative rules.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/Derivatives.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"


using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// `region`'s block cloned at the builder's insertion point on `args`; the
/// values its yield names.
static SmallVector<Value> inlineRegion(MIRBuilder &mb, Region &region, ValueRange args) {
  return ad::cloneYieldingBlock(mb.builder(), region.front(), args);
}

static LogicalResult verifyRegion(CustomFnOp op, Region &region, StringRef what, TypeRange args,
                                  TypeRange yields) {
  return ad::verifyRegionSignature(op, region, what, args, yields);
}

LogicalResult CustomFnOp::verifyRegions() {
  if (getName().empty())
    return emitOpError("expects a non-empty name");
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  TypeRange in = getInputs().getTypes(), out = getOutputs().getTypes();
  SmallVector<Type> vjpArgs(in), jvpArgs(in);
  vjpArgs.append(out.begin(), out.end());
  vjpArgs.append(out.begin(), out.end());
  jvpArgs.append(in.begin(), in.end());
  return success(succeeded(verifyRegion(*this, getBody(), "body", in, out)) &&
                 succeeded(verifyRegion(*this, getVjp(), "vjp", vjpArgs, in)) &&
                 succeeded(verifyRegion(*this, getJvp(), "jvp", jvpArgs, out)));
}

FailureOr<SmallVector<Value>> CustomFnOp::decompose(MIRBuilder &mb) {
  return inlineRegion(mb, getBody(), getInputs());
}

LogicalResult CustomFnOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                              SmallVectorImpl<Value> &dx) {
  if (getVjp().empty())
    return emitOpError() << "'" << getName()
                         << "' has no vjp region; rlx-mir-grad differentiates its body";
  SmallVector<Value> args(getInputs());
  args.append(getOutputs().begin(), getOutputs().end());
  for (auto [c, r] : llvm::zip(cotangents, getOutputs()))
    args.push_back(c ? c : mb.zerosLike(r));
  SmallVector<Value> grads = inlineRegion(mb, getVjp(), args);
  for (auto [g, wanted] : llvm::zip(grads, need))
    dx.push_back(wanted ? g : Value());
  return success();
}

LogicalResult CustomFnOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  if (getJvp().empty())
    return emitOpError() << "'" << getName()
                         << "' has no jvp region; rlx-mir-jvp differentiates its body";
  SmallVector<Value> args(getInputs());
  for (auto [t, x] : llvm::zip(tangents, getInputs()))
    args.push_back(t ? t : mb.zerosLike(x));
  llvm::append_range(dy, inlineRegion(mb, getJvp(), args));
  return success();
}
