//===- FusedOps.cpp - rlx_mir fused ops: fused_matmul, elementwise --------===//
//
// The ops fusion patterns produce. Their checks, like every other MIR op's,
// run in inferReturnTypes (fused_matmul) or the verifier (elementwise, whose
// result element types are its own).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

//===----------------------------------------------------------------------===//
// fused_matmul
//===----------------------------------------------------------------------===//

/// `v` must be a tensor of `shape` with element type `et`.
static LogicalResult expectOperand(std::optional<Location> loc, Value v, StringRef name,
                                   ArrayRef<int64_t> shape, Type et) {
  auto t = getRankedTensor(loc, v, name);
  if (failed(t))
    return failure();
  if (t->getElementType() != et)
    return shapeError(loc, "element type mismatch: lhs is " + typeToString(et) + " but " +
                               name + " is " + typeToString(t->getElementType()));
  bool ok = t->getRank() == static_cast<int64_t>(shape.size());
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = dimsMatch(t->getShape()[i], shape[i]);
  if (!ok)
    return shapeError(loc, Twine(name) + " must be " + shapeToString(shape) + ", got " +
                               shapeToString(t->getShape()));
  return success();
}

LogicalResult FusedMatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getLhs(), "lhs");
  auto w = getRankedTensor(loc, a.getRhs(), "rhs");
  if (failed(x) || failed(w))
    return failure();
  const bool nvfp4 = static_cast<bool>(a.getRhsScales());
  if (nvfp4 != static_cast<bool>(a.getRhsGlobalScale()))
    return shapeError(loc, "an NVFP4 weight needs both its scales and its global scale");
  if (nvfp4 != w->getElementType().isInteger(8))
    return shapeError(loc, nvfp4 ? "an NVFP4 weight is i8 (two E2M1 codes per byte), got " +
                                       typeToString(w->getElementType())
                                 : std::string("an i8 rhs needs nvfp4(scales, global_scale)"));
  if (!nvfp4 && failed(checkSameElementType(loc, {*x, *w}, {"lhs", "rhs"})))
    return failure();
  Type et = x->getElementType();
  if (x->getRank() < 1 || w->getRank() != 2)
    return shapeError(loc, "fused_matmul needs lhs [..., K] and a rank-2 rhs, got " +
                               shapeToString(x->getShape()) + " and " +
                               shapeToString(w->getShape()));
  bool tb = a.getTransposeB();
  int64_t k = x->getShape().back();
  int64_t n = tb ? w->getShape()[0] : w->getShape()[1];
  if (nvfp4) {
    auto s = getRankedTensor(loc, a.getRhsScales(), "rhs_scales");
    if (failed(s))
      return failure();
    // transpose_b is NVIDIA's [N, K/2] layout (out_in), without it [K/2, N].
    auto nk = inferNvfp4Dims(loc, *w, *s, tb, k);
    if (failed(nk))
      return failure();
    n = nk->first;
  } else {
    int64_t wk = tb ? w->getShape()[1] : w->getShape()[0];
    if (!dimsMatch(k, wk))
      return shapeError(loc, "contraction dims differ: lhs has K=" + Twine(k) + ", rhs " +
                                 shapeToString(w->getShape()) + " has K=" + Twine(wk));
  }
  // 1. norm prologue.
  if (a.getNormAttr()) {
    if (!a.getNormEps() || failed(checkEps(loc, a.getNormEps()->convertToDouble())))
      return a.getNormEps() ? failure() : shapeError(loc, "norm needs eps");
    if (a.getNormWeight() && failed(expectOperand(loc, a.getNormWeight(), "norm_weight", {k}, et)))
      return failure();
    if (a.getNormBias()) {
      if (a.getNormAttr().getValue() != NormKind::LayerNorm)
        return shapeError(loc, "norm_bias is only valid with layer_norm");
      if (failed(expectOperand(loc, a.getNormBias(), "norm_bias", {k}, et)))
        return failure();
    }
  } else if (a.getNormEps() || a.getNormWeight() || a.getNormBias()) {
    return shapeError(loc, "norm_weight, norm_bias and eps need a norm kind");
  }
  // 3. bias.
  if (a.getBias() && failed(expectOperand(loc, a.getBias(), "bias", {n}, et)))
    return failure();
  // 4. activation / glu.
  ActivationKind act = enumOr(a.getActivationAttr(), ActivationKind::None);
  int64_t nOut = n;
  if (a.getGlu()) {
    if (act == ActivationKind::None || act == ActivationKind::Tanh)
      return shapeError(loc, "glu needs a gating activation (silu, gelu, gelu_tanh, relu "
                             "or sigmoid)");
    if (!isDynamicDim(n) && n % 2 != 0)
      return shapeError(loc, "glu needs an even N, got " + Twine(n));
    nOut = isDynamicDim(n) ? n : n / 2;
  }
  // 5. / 6. head stages.
  std::optional<int64_t> headDim = a.getHeadDim();
  bool headStage = a.getHeadNormWeight() || a.getRopeCos() || a.getRopeSin();
  if (headStage && (!headDim || *headDim <= 0))
    return shapeError(loc, "head_norm and rope epilogues need head_dim > 0");
  if (a.getHeadNormWeight()) {
    auto hw = getRankedTensor(loc, a.getHeadNormWeight(), "head_norm_weight");
    if (failed(hw))
      return failure();
    if (hw->getRank() != 2)
      return shapeError(loc, "head_norm_weight must be [heads, head_dim], got " +
                                 shapeToString(hw->getShape()));
    int64_t hn = hw->getShape()[0];
    if (failed(expectOperand(loc, a.getHeadNormWeight(), "head_norm_weight",
                             {hn, *headDim}, et)))
      return failure();
    if (!a.getHeadNormEps() || failed(checkEps(loc, a.getHeadNormEps()->convertToDouble())))
      return a.getHeadNormEps() ? failure() : shapeError(loc, "head_norm needs head_norm_eps");
    if (!isDynamicDim(hn) && !isDynamicDim(nOut) && hn * *headDim > nOut)
      return shapeError(loc, Twine(hn) + " normalized heads of " + Twine(*headDim) +
                                 " do not fit in " + Twine(nOut) + " output columns");
  } else if (a.getHeadNormEps()) {
    return shapeError(loc, "head_norm_eps needs head_norm weights");
  }
  Shape outShape(x->getShape());
  outShape.back() = nOut;
  if (a.getRopeCos() || a.getRopeSin()) {
    if (!a.getRopeCos() || !a.getRopeSin() || !a.getRopeHeads())
      return shapeError(loc, "rope needs cos, sin and rope_heads");
    int64_t heads = *a.getRopeHeads();
    int64_t rot = a.getRotaryDim().value_or(*headDim);
    if (heads <= 0 || (!isDynamicDim(nOut) && heads * *headDim > nOut))
      return shapeError(loc, "rope_heads = " + Twine(heads) + " of " + Twine(*headDim) +
                                 " do not fit in " + Twine(nOut) + " output columns");
    if (outShape.size() != 3)
      return shapeError(loc, "a rope epilogue needs lhs [batch, seq, K]");
    Shape ropeView{outShape[0], outShape[1], heads * *headDim};
    if (failed(checkRopeDims(loc, ropeView, *headDim, rot)) ||
        failed(checkRopeTables(loc, outShape, a.getRopeCos(), a.getRopeSin(), rot)))
      return failure();
  } else if (a.getRopeHeads() || a.getRotaryDim()) {
    return shapeError(loc, "rope_heads and rotary_dim need rope tables");
  }
  // 7. residual.
  if (a.getResidual() && failed(expectOperand(loc, a.getResidual(), "residual", outShape, et)))
    return failure();
  out.push_back(RankedTensorType::get(outShape, et));
  return success();
}

//===----------------------------------------------------------------------===//
// elementwise
//===----------------------------------------------------------------------===//

LogicalResult FusedElementwiseOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ") << body.getNumArguments() << " arguments for "
                                    << getInputs().size() << " inputs";
  Shape shape;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments()))) {
    auto [input, arg] = pair;
    auto t = cast<RankedTensorType>(input.getType());
    if (arg.getType() != t.getElementType())
      return emitOpError("body argument ") << i << " must be " << t.getElementType()
                                           << ", got " << arg.getType();
    if (i == 0) {
      shape.assign(t.getShape().begin(), t.getShape().end());
      continue;
    }
    auto b = broadcastShapes(getLoc(), shape, t.getShape());
    if (failed(b))
      return failure();
    shape = *b;
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != getOutputs().size())
    return emitOpError("body must yield one scalar per result");
  if (getOutputs().empty())
    return emitOpError("needs at least one result");
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOutputs(), yield.getValues()))) {
    auto [result, value] = pair;
    auto t = cast<RankedTensorType>(result.getType());
    if (value.getType() != t.getElementType())
      return emitOpError("yielded value ") << i << " must be " << t.getElementType()
                                           << ", got " << value.getType();
    bool ok = t.getRank() == static_cast<int64_t>(shape.size());
    for (size_t d = 0; ok && d < shape.size(); ++d)
      ok = dimsMatch(t.getShape()[d], shape[d]);
    if (!ok)
      return emitOpError("result ") << i << " must have the broadcast input shape "
                                    << shapeToString(shape) << ", got " << t;
  }
  return success();
}

bool FusedMatmulOp::readsOnlyWrittenElement(unsigned operand, unsigned result) {
  // The residual add is the last stage (case G5b): element i of the
  // residual is read only to write element i of the result.
  Value residual = getResidual();
  return residual && operand < getNumOperands() && getOperand(operand) == residual &&
         getResidualMutable().size() == 1 &&
         getResidualMutable()[0].getOperandNumber() == operand &&
         cast<ShapedType>(residual.getType()).getShape() ==
             cast<ShapedType>(getResult().getType()).getShape();
}
