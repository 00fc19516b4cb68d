//===- LIROps.cpp - rlx_lir ops -------------------------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"

#include "RLX/Dialect/Common/IR/StorageSize.h"
#include "RLX/Dialect/Common/IR/RLXInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::lir;

//===----------------------------------------------------------------------===//
// view
//===----------------------------------------------------------------------===//

int64_t ViewOp::getByteSize() {
  // As the generated code stores it (StorageSize.h): i1 and f4 take a byte.
  return getStorageBytes(cast<MemRefType>(getResult().getType())).value_or(-1);
}

LogicalResult ViewOp::verify() {
  auto arena = cast<MemRefType>(getArena().getType());
  auto result = cast<MemRefType>(getResult().getType());
  if (!arena.hasStaticShape() || !arena.getLayout().isIdentity())
    return emitOpError("arena must be a static, contiguous memref<Nxi8>, got ")
           << arena;
  if (!result.getLayout().isIdentity())
    return emitOpError("view must have the identity layout, got ") << result;
  if (!result.getElementType().isIntOrFloat())
    return emitOpError("view element type must be an integer or float, got ")
           << result.getElementType();
  if (arena.getMemorySpace() != result.getMemorySpace())
    return emitOpError("view and arena must be in the same memory space");
  int64_t offset = getByteOffset();
  if (offset < 0)
    return emitOpError("byte_offset must be >= 0, got ") << offset;
  std::optional<int64_t> bytes = getStorageBytes(result);
  if (!bytes)
    return emitOpError("view of ") << result << " has no byte size that fits in 64 bits";
  int64_t eltBytes = *getElementStorageBytes(result.getElementType());
  if (offset % eltBytes != 0)
    return emitOpError("byte_offset ")
           << offset << " is not a multiple of the element size (" << eltBytes
           << " bytes)";
  int64_t end;
  if (llvm::AddOverflow(offset, *bytes, end) || end > arena.getNumElements())
    return emitOpError("view [")
           << offset << ", " << end << ") runs past the end of the "
           << arena.getNumElements() << "-byte arena";
  return success();
}

Value ViewOp::getViewSource() { return getArena(); }

//===----------------------------------------------------------------------===//
// kernel
//===----------------------------------------------------------------------===//

YieldOp KernelOp::getYield() {
  return dyn_cast<YieldOp>(getBody().front().getTerminator());
}

Operation *KernelOp::getRootOp() {
  Operation *root = nullptr;
  for (Operation &op : getBody().front().without_terminator()) {
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (root)
      return nullptr;
    root = &op;
  }
  return root;
}

static RankedTensorType tensorFor(Type t) {
  auto shaped = cast<ShapedType>(t);
  return RankedTensorType::get(shaped.getShape(), shaped.getElementType());
}

LogicalResult KernelOp::verify() {
  if (getOutputs().empty())
    return emitOpError("needs at least one output");
  bool tensorOuts = isa<RankedTensorType>(getOutputs().front().getType());
  for (Value out : getOutputs())
    if (isa<RankedTensorType>(out.getType()) != tensorOuts ||
        !isa<RankedTensorType, MemRefType>(out.getType()))
      return emitOpError("outputs must be all ranked tensors or all memrefs");
  for (Value in : getInputs())
    if (!isa<RankedTensorType, MemRefType>(in.getType()))
      return emitOpError("inputs must be ranked tensors or memrefs, got ") << in.getType();
  if (tensorOuts) {
    if (getResults().size() != getOutputs().size())
      return emitOpError("on tensors returns one result per output, got ")
             << getResults().size() << " results for " << getOutputs().size() << " outputs";
    for (auto [i, pair] : llvm::enumerate(llvm::zip(getOutputs(), getResults()))) {
      auto [out, res] = pair;
      if (out.getType() != res.getType())
        return emitOpError("result ") << i << " must have the type of output " << i << ", "
                                      << out.getType() << ", got " << res.getType();
    }
  } else {
    if (!getResults().empty())
      return emitOpError("on buffers has no results");
    for (Value in : getInputs())
      if (!isa<MemRefType>(in.getType()))
        return emitOpError("on buffers takes memref inputs, got ") << in.getType();
  }
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments()))) {
    auto [input, arg] = pair;
    auto expected = tensorFor(input.getType());
    if (arg.getType() != expected)
      return emitOpError("body argument ")
             << i << " must be " << expected << " to match input " << i
             << " of type " << input.getType() << ", got " << arg.getType();
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with rlx_lir.yield");
  if (yield.getValues().size() != getOutputs().size())
    return emitOpError("body yields ")
           << yield.getValues().size() << " values for " << getOutputs().size()
           << " outputs";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOutputs(), yield.getValues()))) {
    auto [output, value] = pair;
    auto expected = tensorFor(output.getType());
    if (value.getType() != expected)
      return emitOpError("yielded value ")
             << i << " must be " << expected << " to match output " << i
             << " of type " << output.getType() << ", got " << value.getType();
  }
  if (auto inPlace = getInPlace()) {
    if (inPlace->size() != getOutputs().size())
      return emitOpError("in_place needs one entry per output (")
             << getOutputs().size() << "), got " << inPlace->size();
    for (int64_t idx : *inPlace)
      if (idx < -1 || idx >= static_cast<int64_t>(getInputs().size()))
        return emitOpError("in_place entry ")
               << idx << " is not an input index (or -1); the kernel has "
               << getInputs().size() << " inputs";
  }
  return success();
}

static int64_t elementBits(Type t) { return cast<ShapedType>(t).getElementTypeBitWidth(); }

bool KernelOp::isElementwiseInPlaceSafe(unsigned input, unsigned output) {
  if (input >= getInputs().size() || output >= getOutputs().size())
    return false;
  auto in = cast<ShapedType>(getInputs()[input].getType());
  auto out = cast<ShapedType>(getOutputs()[output].getType());
  if (in.getShape() != out.getShape() || elementBits(in) != elementBits(out))
    return false;
  Operation *root = getRootOp();
  if (!root)
    return false;
  // The root produces the output directly.
  Value yielded = getYield().getValues()[output];
  if (yielded.getDefiningOp() != root)
    return false;
  BlockArgument arg = getBody().front().getArgument(input);
  // The root says which operands it reads only at the element it writes
  // (an elementwise op's same-shape operands; fused_matmul's residual, its
  // last stage, case G5b): the input may then be overwritten by the output
  // when every use of it in the body is such an operand.
  auto local = dyn_cast<ElementLocalOpInterface>(root);
  if (!local)
    return false;
  unsigned result = cast<OpResult>(yielded).getResultNumber();
  for (OpOperand &use : arg.getUses())
    if (use.getOwner() != root || !local.readsOnlyWrittenElement(use.getOperandNumber(), result))
      return false;
  return true;
}

void KernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  // On tensors the op is pure; on buffers it reads ins and writes outs.
  for (OpOperand &operand : getInputsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  for (OpOperand &operand : getOutputsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
}

#define GET_OP_CLASSES
#include "RLX/Dialect/LIR/IR/LIROps.cpp.inc"
