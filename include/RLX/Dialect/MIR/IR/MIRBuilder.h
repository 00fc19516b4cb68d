//===- MIRBuilder.h - Terse construction of rlx_mir graphs ------*- C++ -*-===//
//
// A small helper that builds rlx_mir ops at one insertion point and location,
// used by the HIR→MIR lowering, the fusion patterns and autodiff so that
// graph-building code reads like the math it implements. Every method infers
// result types through the ops' shape rules; callers build from verified IR,
// so the shapes are known to be legal.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRBUILDER_H
#define RLX_DIALECT_MIR_IR_MIRBUILDER_H

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "mlir/IR/Builders.h"

namespace mlir::rlx::mir {

/// Every stage of an rlx_mir.fused_matmul as plain data: fusion patterns read
/// the spec of a producer, add one stage, and build the result.
struct FusedMatmulSpec {
  Value lhs, rhs;
  bool transposeB = false;
  std::optional<NormKind> norm;
  std::optional<double> normEps;
  Value normWeight, normBias;
  Value bias;
  ActivationKind activation = ActivationKind::None;
  bool glu = false;
  std::optional<int64_t> headDim;
  Value headNormWeight;
  std::optional<double> headNormEps;
  Value ropeCos, ropeSin;
  std::optional<int64_t> ropeHeads, rotaryDim;
  RopeStyle ropeStyle = RopeStyle::NeoX;
  Value residual;

  /// The spec of `op`: a fused_matmul, or a plain matmul with a rank-2 rhs and
  /// no transpose_a. Fails for anything else.
  static FailureOr<FusedMatmulSpec> of(Operation *op);
  /// True when a stage besides the matmul is set.
  bool hasStages() const;
  /// True when an epilogue stage (anything after the matmul) is set.
  bool hasEpilogue() const;
};

class MIRBuilder {
public:
  MIRBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }

  static RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
  static Type elementType(Value v) { return typeOf(v).getElementType(); }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }

  /// A rank-0 constant of element type `et`.
  Value scalar(Type et, double value);
  /// A constant tensor of f32 values with `shape`.
  Value constantF32(ArrayRef<int64_t> shape, ArrayRef<float> values);

  Value matmul(Value lhs, Value rhs, bool transA = false, bool transB = false) {
    return MatmulOp::create(b, loc, lhs, rhs, transA, transB);
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) { return SelectOp::create(b, loc, c, x, y); }
  template <typename UnaryOpT>
  Value unary(Value x) {
    return UnaryOpT::create(b, loc, x);
  }
  /// Applies `kind` (identity for none).
  Value activation(ActivationKind kind, Value x);
  Value cast(Value x, Type elementType) { return CastOp::create(b, loc, x, elementType); }
  Value reshape(Value x, ArrayRef<int64_t> pattern) {
    return ReshapeOp::create(b, loc, x, pattern);
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return TransposeOp::create(b, loc, x, perm);
  }
  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides) {
    return SliceOp::create(b, loc, x, offsets, sizes, strides);
  }
  /// x[..., offset:offset+size] along the last axis.
  Value sliceLast(Value x, int64_t offset, int64_t size);
  Value concat(ValueRange xs, int64_t axis) { return ConcatOp::create(b, loc, xs, axis); }
  Value broadcast(Value x, ArrayRef<int64_t> shape) {
    return BroadcastOp::create(b, loc, x, shape);
  }
  Value softmax(Value x, int64_t axis) { return SoftmaxOp::create(b, loc, x, axis); }

  /// Attention per `cfg` as the primitive chain that attention recognition
  /// folds back: q, k, v → [B, H, S, D] (reshape/transpose; K/V heads
  /// repeated by a broadcast for GQA) → matmul(q, kᵀ) → · scale →
  /// [softcap] → [causal_mask] → [+ additive mask | select(bool mask)] →
  /// softmax → matmul(p, v) → back to the query layout.
  Value attentionChain(const AttentionConfig &cfg, Value q, Value k, Value v, Value mask);

  /// The scalar `body` (block arguments: one scalar per input; terminator:
  /// the results) applied to whole tensors: one MIR op per arith/math op
  /// (addf → add, math.exp → exp, a scalar constant → rank-0 constant, ...),
  /// results broadcast to `resultTypes`. Fails, building nothing, when an op
  /// has no MIR counterpart or a value comes from outside the body; the op is
  /// then reported as an error prefixed with `who` (silently when `who` is
  /// empty, as a pattern that does not apply).
  FailureOr<SmallVector<Value>> expandScalarBody(Block &body, ValueRange inputs,
                                                 TypeRange resultTypes, StringRef who);

  /// Builds `spec`: a plain matmul when no stage is set, else fused_matmul.
  Value fusedMatmul(const FusedMatmulSpec &spec);

  /// A reshape pattern for `shape`: static dims as they are, -1 for dynamic.
  static SmallVector<int64_t> pattern(ArrayRef<int64_t> shape);

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_IR_MIRBUILDER_H
