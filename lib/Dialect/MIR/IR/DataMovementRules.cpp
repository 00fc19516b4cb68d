//===- DataMovementRules.cpp - Derivatives and vmap of data movement -------===//
//
// DifferentiableOpInterface and BatchableOpInterface for reshape, transpose,
// slice, concat and broadcast. All are linear: the tangent is the op applied
// to the tangent; the cotangent goes back through the transposed movement.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::mir::rules;

namespace {

/// One result `v` of a rule in `mode`, or its error.
LogicalResult one(Operation *op, MIRBuilder &mb, Value v, Mode mode, SmallVectorImpl<Value> &out) {
  if (!v && !mb.failed()) { // a zero (co)tangent in, none out
    out.assign(1, Value());
    return success();
  }
  return single(op, mb, v, mode, out);
}

/// `shape` with the batch `n` in front, as a reshape/broadcast pattern.
SmallVector<int64_t> withBatch(int64_t n, ArrayRef<int64_t> pattern) {
  SmallVector<int64_t> r{ShapedType::isDynamic(n) ? -1 : n};
  llvm::append_range(r, pattern);
  return r;
}

} // namespace

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                             SmallVectorImpl<Value> &dx) {
  Value dy = firstOf(cotangents);
  return one(*this, mb,
             dy ? mb.reshape(dy, MIRBuilder::pattern(getInput().getType().getShape())) : Value(),
             Mode::Reverse, dx);
}
LogicalResult ReshapeOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return one(*this, mb, mb.reshape(tangents[0], getShape()), Mode::Forward, dy);
}
LogicalResult ReshapeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                               SmallVectorImpl<Value> &results) {
  int64_t n = batchSize(operands, batched);
  if (ShapedType::isDynamic(n) && llvm::is_contained(getShape(), -1))
    return noRule(*this, Mode::Batching, "a dynamic batch and a dynamic dim");
  return single(*this, mb, mb.reshape(operands[0], withBatch(n, getShape())), Mode::Batching,
                results);
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                               SmallVectorImpl<Value> &dx) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = static_cast<int64_t>(i);
  Value dy = firstOf(cotangents);
  return one(*this, mb, dy ? mb.transpose(dy, inv) : Value(), Mode::Reverse, dx);
}
LogicalResult TransposeOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return one(*this, mb, mb.transpose(tangents[0], getPermutation()), Mode::Forward, dy);
}
LogicalResult TransposeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                                 SmallVectorImpl<Value> &results) {
  SmallVector<int64_t> perm{0};
  for (int64_t p : getPermutation())
    perm.push_back(p + 1);
  return single(*this, mb, mb.transpose(operands[0], perm), Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                           SmallVectorImpl<Value> &dx) {
  Value g = firstOf(cotangents);
  if (!g)
    return one(*this, mb, g, Mode::Reverse, dx);
  // Zeros around dy, one axis at a time (unit strides).
  auto xt = getInput().getType();
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    if (getStrides()[d] != 1)
      return noRule(*this, Mode::Reverse, "strided slices are not differentiated");
    if (!g)
      break;
    int64_t off = getOffsets()[d], size = MIRBuilder::typeOf(g).getDimSize(d);
    int64_t full = xt.getDimSize(d);
    if (off == 0 && size == full && !ShapedType::isDynamic(full))
      continue;
    if (ShapedType::isDynamic(full) || ShapedType::isDynamic(size))
      return noRule(*this, Mode::Reverse,
                    "a slice of a dynamic axis; bind the dims first (rlx-mir-specialize)");
    auto piece = [&](int64_t len) {
      SmallVector<int64_t> shape(MIRBuilder::shapeOf(g));
      shape[d] = len;
      auto t = RankedTensorType::get(shape, xt.getElementType());
      OpBuilder &b = mb.builder();
      return ConstantOp::create(b, mb.getLoc(),
                                DenseElementsAttr::get(t, b.getFloatAttr(xt.getElementType(), 0.0)))
          .getResult();
    };
    SmallVector<Value> parts;
    if (off > 0)
      parts.push_back(piece(off));
    parts.push_back(g);
    if (full - off - size > 0)
      parts.push_back(piece(full - off - size));
    g = parts.size() == 1 ? g : mb.concat(parts, d);
  }
  return single(*this, mb, g, Mode::Reverse, dx);
}
LogicalResult SliceOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return one(*this, mb, mb.slice(tangents[0], getOffsets(), getSizes(), getStrides()),
             Mode::Forward, dy);
}
LogicalResult SliceOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                             SmallVectorImpl<Value> &results) {
  SmallVector<int64_t> offsets{0}, sizes{-1}, strides{1};
  llvm::append_range(offsets, getOffsets());
  llvm::append_range(sizes, getSizes());
  llvm::append_range(strides, getStrides());
  return single(*this, mb, mb.slice(operands[0], offsets, sizes, strides), Mode::Batching,
                results);
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                            SmallVectorImpl<Value> &dx) {
  dx.assign(getNumOperands(), Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  int64_t rank = MIRBuilder::typeOf(dy).getRank();
  int64_t axis = axisFromZero(static_cast<int64_t>(getAxis()), rank);
  int64_t off = 0;
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    int64_t n = MIRBuilder::typeOf(in).getDimSize(axis);
    if (ShapedType::isDynamic(n))
      return noRule(*this, Mode::Reverse,
                    "a concat along a dynamic axis; bind the dims first (rlx-mir-specialize)");
    if (wants(need, i)) {
      SmallVector<int64_t> offsets(rank, 0), sizes(rank, -1), strides(rank, 1);
      offsets[axis] = off;
      sizes[axis] = n;
      dx[i] = mb.slice(dy, offsets, sizes, strides);
    }
    off += n;
  }
  return mb.failed() ? noRule(*this, Mode::Reverse, "the slices of the cotangent fail")
                     : success();
}
LogicalResult ConcatOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  SmallVector<Value> parts;
  for (auto [t, in] : llvm::zip(tangents, getInputs()))
    parts.push_back(t ? t : mb.zerosLike(in));
  return one(*this, mb, mb.concat(parts, static_cast<int64_t>(getAxis())), Mode::Forward, dy);
}
LogicalResult ConcatOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                              SmallVectorImpl<Value> &results) {
  int64_t n = batchSize(operands, batched);
  SmallVector<Value> parts;
  for (auto [v, isBatched] : llvm::zip(operands, batched))
    parts.push_back(isBatched ? v
                              : mb.broadcast(v, withBatch(n, MIRBuilder::pattern(
                                                                  MIRBuilder::shapeOf(v)))));
  int64_t axis = axisFromZero(static_cast<int64_t>(getAxis()), getType().getRank()) + 1;
  return single(*this, mb, mb.concat(parts, axis), Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// broadcast
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                               SmallVectorImpl<Value> &dx) {
  // The caller sums the cotangent down to the operand's shape.
  dx.assign({firstOf(cotangents)});
  return success();
}
LogicalResult BroadcastOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  return one(*this, mb, mb.broadcast(tangents[0], getShape()), Mode::Forward, dy);
}
LogicalResult BroadcastOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                                 SmallVectorImpl<Value> &results) {
  int64_t rank = getType().getRank() + 1;
  Value x = mb.expandAfterLeading(operands[0], rank);
  return single(*this, mb, mb.broadcast(x, withBatch(ShapedType::kDynamic, getShape())),
                Mode::Batching, results);
}
