//===- LIROps.cpp - rlx_lir ops -------------------------------------------===//

#include "RLX/Dialect/LIR/IR/LIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::rlx::lir;

//===----------------------------------------------------------------------===//
// view
//===----------------------------------------------------------------------===//

static int64_t elementByteSize(Type t) {
  return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
}

int64_t ViewOp::getByteSize() {
  auto t = cast<MemRefType>(getResult().getType());
  Type et = t.getElementType();
  // Sub-byte types (f4E2M1FN) are packed two per byte.
  int64_t bits = et.getIntOrFloatBitWidth();
  return (t.getNumElements() * bits + 7) / 8;
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
  int64_t eltBytes = elementByteSize(result.getElementType());
  if (offset % eltBytes != 0)
    return emitOpError("byte_offset ")
           << offset << " is not a multiple of the element size (" << eltBytes
           << " bytes)";
  int64_t end = offset + getByteSize();
  if (end > arena.getNumElements())
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

static RankedTensorType tensorFor(MemRefType t) {
  return RankedTensorType::get(t.getShape(), t.getElementType());
}

LogicalResult KernelOp::verify() {
  if (getOutputs().empty())
    return emitOpError("needs at least one output buffer");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments()))) {
    auto [input, arg] = pair;
    auto expected = tensorFor(cast<MemRefType>(input.getType()));
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
    auto expected = tensorFor(cast<MemRefType>(output.getType()));
    if (value.getType() != expected)
      return emitOpError("yielded value ")
             << i << " must be " << expected << " to match output " << i
             << " of type " << output.getType() << ", got " << value.getType();
  }
  return success();
}

void KernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  for (OpOperand &operand : getInputsMutable())
    effects.emplace_back(MemoryEffects::Read::get(), &operand,
                         SideEffects::DefaultResource::get());
  for (OpOperand &operand : getOutputsMutable())
    effects.emplace_back(MemoryEffects::Write::get(), &operand,
                         SideEffects::DefaultResource::get());
}

#define GET_OP_CLASSES
#include "RLX/Dialect/LIR/IR/LIROps.cpp.inc"
