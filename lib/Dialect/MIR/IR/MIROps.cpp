//===- MIROps.cpp - rlx_mir shape inference, folders, canonicalizers ------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "mlir/IR/TypeUtilities.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

//===----------------------------------------------------------------------===//
// Elementwise families
//===----------------------------------------------------------------------===//

LogicalResult mlir::rlx::mir::detail::inferBinaryType(std::optional<Location> loc, Value lhs,
                                      Value rhs, SmallVectorImpl<Type> &types) {
  auto l = getRankedTensor(loc, lhs, "lhs");
  auto r = getRankedTensor(loc, rhs, "rhs");
  if (failed(l) || failed(r) ||
      failed(checkSameElementType(loc, {*l, *r}, {"lhs", "rhs"})))
    return failure();
  auto shape = broadcastShapes(loc, l->getShape(), r->getShape());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, l->getElementType()));
  return success();
}

LogicalResult mlir::rlx::mir::detail::inferUnaryType(std::optional<Location> loc, Value input,
                                     SmallVectorImpl<Type> &types) {
  auto t = getRankedTensor(loc, input, "input");
  if (failed(t))
    return failure();
  types.push_back(*t);
  return success();
}

/// True when `v` is a constant splat equal to `value`.
static bool isSplatOf(Value v, double value) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return false;
  Type et = attr.getElementType();
  if (isa<FloatType>(et))
    return attr.getSplatValue<APFloat>().convertToDouble() == value;
  if (isa<IntegerType>(et))
    return attr.getSplatValue<APInt>().getSExtValue() == static_cast<int64_t>(value);
  return false;
}

/// x op identity -> x, when that does not change the result type.
static OpFoldResult foldIdentityOperand(Operation *op, double identity,
                                        bool commutative) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type resultType = op->getResult(0).getType();
  if (isSplatOf(rhs, identity) && lhs.getType() == resultType)
    return lhs;
  if (commutative && isSplatOf(lhs, identity) && rhs.getType() == resultType)
    return rhs;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor) { return foldIdentityOperand(*this, 0.0, true); }
OpFoldResult MulOp::fold(FoldAdaptor) { return foldIdentityOperand(*this, 1.0, true); }

void CastOp::build(OpBuilder &b, OperationState &state, Value input, Type elementType) {
  auto t = cast<RankedTensorType>(input.getType());
  build(b, state, RankedTensorType::get(t.getShape(), elementType), input);
}

LogicalResult CastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getShape() != out.getShape())
    return emitOpError("cannot change the shape: ")
           << in << " to " << out;
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  // A float splat (an exporter's f64 eps or scale) converts as arith.truncf /
  // extf would: round to nearest even.
  // (Not to f8/f4: those conversions saturate at runtime, which APFloat's
  // NaN-only f8E4M3FN does not.)
  auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput());
  auto to = dyn_cast<FloatType>(getType().getElementType());
  if (!splat || !to || to.getWidth() < 16 || !isa<FloatType>(splat.getElementType()))
    return {};
  APFloat v = splat.getSplatValue<APFloat>();
  bool lost = false;
  v.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return DenseElementsAttr::get(getType(), v);
}

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor a, SmallVectorImpl<Type> &out) {
  auto t = dyn_cast<RankedTensorType>(a.getValue().getType());
  if (!t)
    return shapeError(loc, "constant value must have a ranked tensor type");
  out.push_back(t);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto l = getRankedTensor(loc, a.getLhs(), "lhs");
  auto r = getRankedTensor(loc, a.getRhs(), "rhs");
  if (failed(l) || failed(r) ||
      failed(checkSameElementType(loc, {*l, *r}, {"lhs", "rhs"})))
    return failure();
  auto shape = inferMatmul(loc, l->getShape(), r->getShape(), a.getTransposeA(),
                           a.getTransposeB());
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(*shape, l->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  auto shape = inferReduce(loc, x->getShape(), a.getAxes(), a.getKeepDims());
  if (failed(shape))
    return failure();
  ReduceKind kind = a.getKind();
  if (kind == ReduceKind::Max || kind == ReduceKind::Min)
    for (int64_t axis : a.getAxes()) {
      int64_t d = axis < 0 ? axis + x->getRank() : axis;
      if (x->getDimSize(d) == 0)
        return shapeError(loc, "a " + stringifyReduceKind(kind) +
                                   " reduction over an empty axis has no value (axis " +
                                   Twine(axis) + " has size 0)");
    }
  out.push_back(RankedTensorType::get(*shape, x->getElementType()));
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(normalizeAxis(loc, a.getAxis(), x->getRank())))
    return failure();
  out.push_back(*x);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = checkNormOperands(loc, a.getInput(), a.getWeight(),
                             a.getEps().convertToDouble());
  if (failed(x))
    return failure();
  out.push_back(*x);
  return success();
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  return inferAttentionTypes(loc, getAttentionConfig(a), a.getQuery(), a.getKey(),
                             a.getValue(), a.getMask(), out);
}

LogicalResult AttentionPartialOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                   Adaptor a, SmallVectorImpl<Type> &out) {
  SmallVector<Type> attn;
  AttentionConfig cfg = getAttentionConfig(a);
  if (failed(inferAttentionTypes(loc, cfg, a.getQuery(), a.getKey(), a.getValue(), a.getMask(),
                                 attn)))
    return failure();
  if (a.getKvSplits() < 1)
    return emitOptionalError(loc, "kv_splits must be at least 1, got ", a.getKvSplits());
  if (auto c = a.getKvChunk()) {
    auto k = cast<RankedTensorType>(a.getKey().getType());
    int64_t sk = k.getShape()[cfg.layout == AttnLayout::BHSD ? 2 : 1];
    if (*c < 1)
      return emitOptionalError(loc, "kv_chunk must be at least 1, got ", *c);
    if (!ShapedType::isDynamic(sk) && *c * a.getKvSplits() < sk)
      return emitOptionalError(loc, "kv_splits (", a.getKvSplits(), ") · kv_chunk (", *c,
                               ") must cover the ", sk, " keys");
  }
  // [B, H, Sq, Dv] from the attention result in its layout.
  ArrayRef<int64_t> o = cast<RankedTensorType>(attn[0]).getShape();
  int64_t b = o[0], h = cfg.numHeads, sq, dv;
  switch (cfg.layout) {
  case AttnLayout::BSD:
    sq = o[1];
    dv = ShapedType::isDynamic(o[2]) ? ShapedType::kDynamic : o[2] / h;
    break;
  case AttnLayout::BSHD:
    sq = o[1], dv = o[3];
    break;
  case AttnLayout::BHSD:
    sq = o[2], dv = o[3];
    break;
  }
  Type f32 = Float32Type::get(ctx);
  out.push_back(RankedTensorType::get({a.getKvSplits(), b, h, sq, dv}, f32));
  out.push_back(RankedTensorType::get({a.getKvSplits(), b, h, sq}, f32));
  return success();
}

SmallVector<int64_t> AttentionCombineOp::resultShape(ArrayRef<int64_t> s, AttnLayout layout) {
  auto mulDims = [](int64_t x, int64_t y) {
    return ShapedType::isDynamic(x) || ShapedType::isDynamic(y) ? ShapedType::kDynamic : x * y;
  };
  switch (layout) {
  case AttnLayout::BSD:
    return {s[1], s[3], mulDims(s[2], s[4])};
  case AttnLayout::BSHD:
    return {s[1], s[3], s[2], s[4]};
  case AttnLayout::BHSD:
    return {s[1], s[2], s[3], s[4]};
  }
  llvm_unreachable("unknown layout");
}

LogicalResult AttentionCombineOp::verify() {
  auto o = cast<RankedTensorType>(getPartialOutput().getType());
  auto l = cast<RankedTensorType>(getLse().getType());
  auto r = cast<RankedTensorType>(getOutput().getType());
  if (!o.getElementType().isF32() || !l.getElementType().isF32())
    return emitOpError("partial_output and lse must be f32");
  if (o.getRank() != 5)
    return emitOpError("partial_output must be [kv_splits, B, H, Sq, Dv], got rank ")
           << o.getRank();
  if (l.getShape() != o.getShape().drop_back())
    return emitOpError("lse must be partial_output's shape without its last dim (")
           << typeToString(RankedTensorType::get(o.getShape().drop_back(), o.getElementType()))
           << "), got " << typeToString(l);
  if (getSinks()) {
    auto t = cast<RankedTensorType>(getSinks().getType());
    if (!t.getElementType().isF32() || t.getRank() != 1 ||
        failed(verifyCompatibleShape(t.getShape(), o.getShape().slice(2, 1))))
      return emitOpError("sinks must be f32 [H] with partial_output's H, got ") << typeToString(t);
  }
  SmallVector<int64_t> want = resultShape(o.getShape(), getLayout());
  if (failed(verifyCompatibleShape(r.getShape(), want)))
    return emitOpError("result shape must be ")
           << typeToString(RankedTensorType::get(want, r.getElementType()))
           << " (partial_output in layout " << stringifyAttnLayout(getLayout()) << "), got "
           << typeToString(r);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Shared body of the single-input shape ops: check the input, apply `rule`.
template <typename Rule>
static LogicalResult inferShapeOp(std::optional<Location> loc, Value input,
                                  SmallVectorImpl<Type> &out, Rule rule) {
  auto x = getRankedTensor(loc, input, "input");
  if (failed(x))
    return failure();
  FailureOr<Shape> shape = rule(x->getShape());
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(*shape, x->getElementType()));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &out) {
  return inferShapeOp(loc, a.getInput(), out, [&](ArrayRef<int64_t> s) {
    return inferReshape(loc, s, a.getShape());
  });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  auto in = cast<RankedTensorType>(getInput().getType());
  if (in == getType() && in.hasStaticShape())
    return getInput();
  if (!getType().hasStaticShape())
    return {};
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  // A resource constant (frozen weights from an exporter) is the same bytes
  // in any shape: the view shares the blob.
  if (auto res = dyn_cast_or_null<DenseResourceElementsAttr>(adaptor.getInput()))
    return DenseResourceElementsAttr::get(getType(), res.getRawHandle());
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x): the intermediate shape is irrelevant.
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshapeOp>();
    if (!producer)
      return failure();
    // Only when the outer pattern is still unambiguous on the inner input.
    if (failed(inferReshape(std::nullopt,
                            cast<RankedTensorType>(producer.getInput().getType()).getShape(),
                            op.getShape())))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), producer.getInput(),
                                           op.getShapeAttr());
    return success();
  }
};

/// reshape(reduce(x) without keep_dims) that only puts the reduced axes
/// back with size 1 -> reduce(x) keep_dims (linalg reductions drop the axis
/// and exporters expand it again; norms and softmax are recognized on the
/// keep_dims form).
struct KeepDimsOfReduce : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto red = op.getInput().getDefiningOp<ReduceOp>();
    // (With other users, a second reduction would be computed.)
    if (!red || red.getKeepDims() || !red->hasOneUse())
      return failure();
    auto in = cast<RankedTensorType>(red.getInput().getType());
    SmallVector<int64_t> kept(in.getShape());
    for (int64_t a : red.getAxes())
      kept[(a + in.getRank()) % in.getRank()] = 1;
    if (op.getType().getShape() != ArrayRef<int64_t>(kept) ||
        llvm::any_of(kept, ShapedType::isDynamic))
      return failure();
    rewriter.replaceOpWithNewOp<ReduceOp>(op, op.getType(), red.getInput(), red.getKindAttr(),
                                          red.getAxesAttr(), rewriter.getUnitAttr());
    return success();
  }
};

/// transpose(transpose(x)) -> transpose(x) with the composed permutation (or x).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> inner = producer.getPermutation(), outer = op.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : outer)
      composed.push_back(inner[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), producer.getInput(),
                                             rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<ComposeReshapes, KeepDimsOfReduce>(ctx);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  return inferShapeOp(loc, a.getInput(), out, [&](ArrayRef<int64_t> s) {
    return inferTranspose(loc, s, a.getPermutation());
  });
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *ctx) {
  results.add<ComposeTransposes>(ctx);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor a, SmallVectorImpl<Type> &out) {
  return inferShapeOp(loc, a.getInput(), out, [&](ArrayRef<int64_t> s) {
    return inferSlice(loc, s, a.getOffsets(), a.getSizes(), a.getStrides());
  });
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return {};
  bool identity = llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
                  llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  return identity ? OpFoldResult(getInput()) : OpFoldResult();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  SmallVector<ArrayRef<int64_t>> shapes;
  SmallVector<Type> types;
  SmallVector<std::string> nameStore;
  for (auto [i, v] : llvm::enumerate(a.getInputs())) {
    nameStore.push_back("input " + std::to_string(i));
    auto t = getRankedTensor(loc, v, nameStore.back());
    if (failed(t))
      return failure();
    shapes.push_back(t->getShape());
    types.push_back(*t);
  }
  SmallVector<StringRef> names(nameStore.begin(), nameStore.end());
  if (failed(checkSameElementType(loc, types, names)))
    return failure();
  auto shape = inferConcat(loc, shapes, a.getAxis());
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(
      *shape, cast<RankedTensorType>(types.front()).getElementType()));
  return success();
}

/// The row-major bytes of a constant of byte-sized elements (a splat is
/// expanded into `storage`); nullopt for sub-byte types or a resource whose
/// blob is not loaded.
static std::optional<ArrayRef<char>> constantBytes(Attribute attr,
                                                   SmallVectorImpl<char> &storage) {
  auto typed = dyn_cast_or_null<TypedAttr>(attr);
  auto type = typed ? dyn_cast<ShapedType>(typed.getType()) : ShapedType();
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t elemBytes = type.getElementTypeBitWidth() / 8;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.isSplat())
      return dense.getRawData();
    ArrayRef<char> one = dense.getRawData();
    for (int64_t i = 0, n = type.getNumElements(); i < n; ++i)
      storage.append(one.begin(), one.begin() + elemBytes);
    return ArrayRef<char>(storage);
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      if (static_cast<int64_t>(blob->getData().size()) == type.getNumElements() * elemBytes)
        return blob->getData();
  return std::nullopt;
}

/// The bytes of broadcast(`attr` → `out`) (numpy rules), for a constant of
/// at most 2^20 elements after the broadcast.
static std::optional<ArrayRef<char>> broadcastBytes(Attribute attr, ShapedType out,
                                                    SmallVectorImpl<char> &storage) {
  constexpr int64_t kMaxElements = int64_t(1) << 20;
  if (!out.hasStaticShape() || out.getNumElements() > kMaxElements)
    return std::nullopt;
  SmallVector<char> inStorage;
  auto bytes = constantBytes(attr, inStorage);
  if (!bytes)
    return std::nullopt;
  auto in = cast<ShapedType>(cast<TypedAttr>(attr).getType());
  int64_t elemBytes = out.getElementTypeBitWidth() / 8, rank = out.getRank(),
          off = rank - in.getRank();
  if (off < 0)
    return std::nullopt;
  storage.assign(out.getNumElements() * elemBytes, 0);
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t flat = 0, n = out.getNumElements(); flat < n; ++flat) {
    int64_t src = 0;
    for (int64_t d = 0; d < in.getRank(); ++d)
      src = src * in.getDimSize(d) + (in.getDimSize(d) == 1 ? 0 : idx[d + off]);
    std::memcpy(storage.data() + flat * elemBytes, bytes->data() + src * elemBytes, elemBytes);
    for (int64_t d = rank - 1; d >= 0 && ++idx[d] == out.getDimSize(d); --d)
      idx[d] = 0;
  }
  return ArrayRef<char>(storage);
}

/// The tensor `inputs` are unit-stride slices of, laid end to end along
/// `axis` in order from offset 0 to its end and whole along every other
/// dim: their concatenation is that tensor (a packed q|k|v split into q, k
/// and v and merged again). Null otherwise.
static Value tiledSource(ValueRange inputs, int64_t axis, Type resultType) {
  Value source;
  int64_t next = 0;
  for (Value in : inputs) {
    auto slice = in.getDefiningOp<SliceOp>();
    if (!slice || (source && slice.getInput() != source))
      return {};
    source = slice.getInput();
    auto t = dyn_cast<RankedTensorType>(source.getType());
    if (!t || !t.hasStaticShape() || axis >= t.getRank())
      return {};
    // Sizes from the slice's type (its `sizes` may say -1: to the end).
    auto part = cast<RankedTensorType>(slice.getType());
    if (!part.hasStaticShape())
      return {};
    for (int64_t d = 0; d < t.getRank(); ++d) {
      bool onAxis = d == axis;
      if (slice.getStrides()[d] != 1 || slice.getOffsets()[d] != (onAxis ? next : 0) ||
          (!onAxis && part.getDimSize(d) != t.getDimSize(d)))
        return {};
    }
    next += part.getDimSize(axis);
  }
  if (!source || source.getType() != resultType ||
      next != cast<RankedTensorType>(source.getType()).getDimSize(axis))
    return {};
  return source;
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  if (int64_t rank = getType().getRank(); rank > 0)
    if (Value whole = tiledSource(getInputs(), (static_cast<int64_t>(getAxis()) % rank + rank) % rank,
                                  getType()))
      return whole;
  // Constants (weights frozen by an exporter, merged by QKV / gate-up
  // merging) fold into one constant: per outer index, each input's slab.
  auto type = getType();
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return {};
  int64_t rank = type.getRank();
  int64_t axis = (static_cast<int64_t>(getAxis()) % rank + rank) % rank;
  int64_t elemBytes = type.getElementTypeBitWidth() / 8;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getShape()[d];
  SmallVector<SmallVector<char>> storage(getInputs().size());
  SmallVector<ArrayRef<char>> bytes;
  SmallVector<int64_t> slab;
  bool anyResource = false;
  for (auto [i, in] : llvm::enumerate(adaptor.getInputs())) {
    // A broadcast constant (a per-head norm weight repeated over heads, as
    // QKV merging writes it) counts as the constant it makes.
    std::optional<ArrayRef<char>> b;
    auto t = cast<ShapedType>(getInputs()[i].getType());
    if (in) {
      b = constantBytes(in, storage[i]);
      anyResource |= isa<DenseResourceElementsAttr>(in);
    } else if (auto bc = getInputs()[i].getDefiningOp<BroadcastOp>()) {
      Attribute src;
      if (matchPattern(bc.getInput(), m_Constant(&src))) {
        b = broadcastBytes(src, t, storage[i]);
        anyResource |= isa<DenseResourceElementsAttr>(src);
      }
    }
    if (!b)
      return {};
    bytes.push_back(*b);
    slab.push_back(t.getNumElements() / std::max<int64_t>(outer, 1) * elemBytes);
  }
  int64_t total = type.getNumElements() * elemBytes;
  if (outer == 0 || total == 0)
    return {};
  auto blob = HeapAsmResourceBlob::allocate(total, alignof(uint64_t), /*dataIsMutable=*/true);
  MutableArrayRef<char> out = blob.getMutableData();
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [b, n] : llvm::zip(bytes, slab)) {
      std::memcpy(out.data() + pos, b.data() + o * n, n);
      pos += n;
    }
  if (!anyResource)
    return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out.data(), total));
  return DenseResourceElementsAttr::get(type, "rlx_concat", std::move(blob));
}

LogicalResult BroadcastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  return inferShapeOp(loc, a.getInput(), out, [&](ArrayRef<int64_t> s) {
    return inferBroadcastTo(loc, s, a.getShape());
  });
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat() && getType().hasStaticShape())
      return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return {};
}

//===----------------------------------------------------------------------===//
// select, layer_norm, residual_rms_norm, gather, rope, causal_mask
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  auto c = getRankedTensor(loc, a.getCondition(), "condition");
  auto t = getRankedTensor(loc, a.getOnTrue(), "on_true");
  auto f = getRankedTensor(loc, a.getOnFalse(), "on_false");
  if (failed(c) || failed(t) || failed(f) ||
      failed(checkSameElementType(loc, {*t, *f}, {"on_true", "on_false"})))
    return failure();
  auto tf = broadcastShapes(loc, t->getShape(), f->getShape());
  if (failed(tf))
    return failure();
  auto all = broadcastShapes(loc, c->getShape(), *tf);
  if (failed(all))
    return failure();
  out.push_back(RankedTensorType::get(*all, t->getElementType()));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = checkLayerNormOperands(loc, a.getInput(), a.getWeight(), a.getBias(),
                                  a.getEps().convertToDouble());
  if (failed(x))
    return failure();
  out.push_back(*x);
  return success();
}

LogicalResult ResidualRmsNormOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location> loc,
                                                  Adaptor a,
                                                  SmallVectorImpl<Type> &out) {
  auto x = checkResidualNormOperands(loc, a.getInput(), a.getResidual(), a.getWeight(),
                                     a.getEps().convertToDouble());
  if (failed(x))
    return failure();
  out.append({*x, *x});
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor a, SmallVectorImpl<Type> &out) {
  return inferGatherTypes(loc, a.getTable(), a.getIndices(), std::nullopt, out);
}

LogicalResult RopeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  int64_t rot = a.getRotaryDim().value_or(a.getHeadDim());
  if (failed(checkRopeDims(loc, x->getShape(), a.getHeadDim(), rot)) ||
      failed(checkRopeTables(loc, x->getShape(), a.getCos(), a.getSin(), rot)))
    return failure();
  out.push_back(*x);
  return success();
}

LogicalResult CausalMaskOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  if (x->getRank() < 2)
    return shapeError(loc, "causal_mask needs scores of rank >= 2 [..., Sq, Sk], got " +
                               shapeToString(x->getShape()));
  if (a.getWindow() && *a.getWindow() <= 0)
    return shapeError(loc, "window must be > 0, got " + Twine(*a.getWindow()));
  if (a.getChunked() && !a.getWindow())
    return shapeError(loc, "causal_mask chunked needs a window (the chunk size)");
  out.push_back(*x);
  return success();
}

bool mlir::rlx::mir::isMIROp(Operation *op) {
  return isa_and_nonnull<MIRDialect>(op->getDialect()) || isa<ElementwiseOpInterface>(op);
}

bool mlir::rlx::mir::isKernelOp(Operation *op) {
  return isMIROp(op) &&
         !isa<ReshapeOp, SliceOp, ConcatOp, ConstantOp, YieldOp>(op) &&
         !op->getParentOfType<FusedElementwiseOp>() && !op->getParentOfType<CustomFnOp>() &&
         !op->getParentOfType<IfOp>() && !op->getParentOfType<WhileOp>() &&
         !op->getParentOfType<ScanOp>();
}

bool mlir::rlx::mir::isForeignKernelOp(Operation *op) {
  if (isMIROp(op) || op->hasTrait<OpTrait::ConstantLike>() ||
      !isa_and_nonnull<FunctionOpInterface>(op->getParentOp()) ||
      llvm::none_of(op->getResultTypes(), [](Type t) { return isa<TensorType>(t); }))
    return false;
  static constexpr StringLiteral kNotKernels[] = {
      "tensor.empty",  "tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape",
      "tensor.cast",   "tosa.reshape",        "tosa.const_shape",      "linalg.fill"};
  return !llvm::is_contained(kNotKernels, op->getName().getStringRef());
}

#define GET_OP_CLASSES
#include "RLX/Dialect/MIR/IR/MIROps.cpp.inc"

//===----------------------------------------------------------------------===//
// NVFP4
//===----------------------------------------------------------------------===//

LogicalResult Nvfp4DequantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                  Adaptor a, SmallVectorImpl<Type> &out) {
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  auto s = getRankedTensor(loc, a.getScales(), "scales");
  if (failed(w) || failed(s))
    return failure();
  bool outIn = enumOr(a.getLayoutAttr(), WeightLayout::OutIn) == WeightLayout::OutIn;
  auto nk = inferNvfp4Dims(loc, *w, *s, outIn, std::nullopt);
  if (failed(nk))
    return failure();
  auto [n, k] = *nk;
  out.push_back(RankedTensorType::get(outIn ? Shape{n, k} : Shape{k, n}, Float32Type::get(ctx)));
  return success();
}

LogicalResult Nvfp4BlockScalesOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                   Adaptor a, SmallVectorImpl<Type> &out) {
  auto s = getRankedTensor(loc, a.getScales(), "scales");
  if (failed(s))
    return failure();
  if (s->getRank() != 2 || !s->hasStaticShape())
    return shapeError(loc, "nvfp4_block_scales needs static [N, K/16] scales, got " +
                               shapeToString(s->getShape()) +
                               " (blocked scales are rank 4 and are not blocked again)");
  int64_t n = s->getShape()[0], kb = s->getShape()[1];
  out.push_back(RankedTensorType::get({(n + 127) / 128, (kb + 3) / 4, 32, 16},
                                      s->getElementType()));
  return success();
}

LogicalResult Nvfp4QuantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  bool outIn = enumOr(a.getLayoutAttr(), WeightLayout::OutIn) == WeightLayout::OutIn;
  if (x->getRank() != 2 || !x->hasStaticShape())
    return shapeError(loc, "nvfp4_quantize needs a static rank-2 weight, got " +
                               shapeToString(x->getShape()));
  int64_t n = x->getShape()[outIn ? 0 : 1], k = x->getShape()[outIn ? 1 : 0];
  if (k % 16 != 0)
    return shapeError(loc, "NVFP4 needs a static K that is a multiple of 16, got K = " + Twine(k));
  Builder b(ctx);
  out.push_back(RankedTensorType::get(outIn ? Shape{n, k / 2} : Shape{k / 2, n}, b.getI8Type()));
  out.push_back(RankedTensorType::get(outIn ? Shape{n, k / 16} : Shape{k / 16, n},
                                      b.getType<Float8E4M3FNType>()));
  out.push_back(RankedTensorType::get({}, b.getF32Type()));
  return success();
}

LogicalResult Nvfp4MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  auto s = getRankedTensor(loc, a.getScales(), "scales");
  if (failed(x) || failed(w) || failed(s))
    return failure();
  if (x->getRank() < 1)
    return shapeError(loc, "nvfp4_matmul input must have rank >= 1");
  auto nk = inferNvfp4Dims(loc, *w, *s,
                           enumOr(a.getLayoutAttr(), WeightLayout::OutIn) == WeightLayout::OutIn,
                           x->getShape().back());
  if (failed(nk))
    return failure();
  Shape result(x->getShape());
  result.back() = nk->first;
  out.push_back(RankedTensorType::get(result, x->getElementType()));
  return success();
}
