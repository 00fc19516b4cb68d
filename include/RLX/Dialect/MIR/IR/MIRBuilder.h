//===- MIRBuilder.h - Terse construction of rlx_mir graphs ------*- C++ -*-===//
//
// A small helper that builds rlx_mir ops at one insertion point and location,
// used by the HIR→MIR lowering, the fusion patterns and autodiff so that
// graph-building code reads like the math it implements. Every method infers
// result types through the ops' shape rules and fails cleanly (a null Value,
// failed()) when they reject the operands, so that input the caller did not
// check never reaches an ODS builder's fatal error.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRBUILDER_H
#define RLX_DIALECT_MIR_IR_MIRBUILDER_H

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/Common/IR/TryCreate.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

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
  /// An NVFP4 weight: `rhs` holds the packed codes (transposeB: NVIDIA's
  /// [N, K/2] layout), these its E4M3 block scales and f32 global scale.
  Value rhsScales, rhsGlobalScale;

  /// The spec of `op`: a fused_matmul, a plain matmul with a rank-2 rhs and
  /// no transpose_a, or an nvfp4_matmul. Fails for anything else.
  static FailureOr<FusedMatmulSpec> of(Operation *op);
  /// True when a stage besides the matmul is set.
  bool hasStages() const;
  /// True when an epilogue stage (anything after the matmul) is set.
  bool hasEpilogue() const;
  bool isNvfp4() const { return static_cast<bool>(rhsScales); }
};

class MIRBuilder {
public:
  /// With `diagnose`, an op the shape rules reject is reported at `loc`
  /// (passes that turn such input into an error); without, it fails silently
  /// (fusion patterns that then do not apply).
  MIRBuilder(OpBuilder &builder, Location loc, bool diagnose = false)
      : b(builder), loc(loc), diagnose(diagnose) {}

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  /// True once any op could not be built. Every method then returns a null
  /// Value (and so does any method given a null Value), so a chain of calls
  /// needs one check at its end. What was built before the failure stays;
  /// callers fail the pass or erase it.
  bool failed() const { return hasFailed; }

  static RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
  static Type elementType(Value v) { return typeOf(v).getElementType(); }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }

  /// Builds OpTy from the arguments of its type-inferring builder, checked by
  /// its shape rules (TryCreate.h); the first result, or null on failure.
  /// A null Value among `args` is taken for a failed earlier step.
  template <typename OpTy, typename... Args>
  Value create(Args &&...args) {
    if (anyNullValue(args...))
      return fail();
    return createWithOptional<OpTy>(std::forward<Args>(args)...);
  }
  /// As create, for ops with optional operands: null Values are absent
  /// operands (the caller checks the required ones).
  template <typename OpTy, typename... Args>
  Value createWithOptional(Args &&...args) {
    if (hasFailed)
      return Value();
    FailureOr<OpTy> op = tryCreate<OpTy>(b, loc, diagnose, std::forward<Args>(args)...);
    if (mlir::failed(op)) {
      hasFailed = true;
      return Value();
    }
    return record(*op);
  }
  /// Erases, newest first, every op this builder created that has no uses
  /// (what a failed rewrite leaves behind), through `rw` when given.
  void discardUnused(RewriterBase *rw = nullptr);
  /// Records a failure of a composite step (e.g. a shape the step needs is
  /// not known) and returns a null Value.
  Value fail() {
    hasFailed = true;
    return Value();
  }

  /// A rank-0 constant of element type `et`.
  Value scalar(Type et, double value);
  /// A constant tensor of f32 values with `shape`.
  Value constantF32(ArrayRef<int64_t> shape, ArrayRef<float> values);

  Value matmul(Value lhs, Value rhs, bool transA = false, bool transB = false) {
    return create<MatmulOp>(lhs, rhs, transA, transB);
  }
  Value add(Value x, Value y) { return create<AddOp>(x, y); }
  Value sub(Value x, Value y) { return create<SubOp>(x, y); }
  Value mul(Value x, Value y) { return create<MulOp>(x, y); }
  Value div(Value x, Value y) { return create<DivOp>(x, y); }
  Value select(Value c, Value x, Value y) { return create<SelectOp>(c, x, y); }
  template <typename UnaryOpT>
  Value unary(Value x) {
    return create<UnaryOpT>(x);
  }
  /// Applies `kind` (identity for none).
  Value activation(ActivationKind kind, Value x);
  /// PyTorch's softplus, log(1 + exp(x)), as max(x, 0) + log(1 + exp(−|x|)):
  /// no overflow.
  Value softplus(Value x);
  Value cast(Value x, Type elementType);
  /// `x` in `elementType` unless it is already (null stays null).
  Value widen(Value x, Type elementType) {
    return x && MIRBuilder::elementType(x) != elementType ? cast(x, elementType) : x;
  }
  /// The type a decomposition computes `in` in: f64 stays, others are f32.
  Type computeType(Type in) { return in.isF64() ? in : b.getF32Type(); }
  /// Decompositions build static shapes: an error at `op` when `t` has a
  /// dynamic dim.
  static LogicalResult requireStaticShape(Operation *op, ShapedType t) {
    if (t.hasStaticShape())
      return success();
    return op->emitError() << op->getName().stripDialect()
                           << ": the decomposition needs static shapes; bind the dims first "
                              "(rlx-mir-specialize)";
  }
  Value reshape(Value x, ArrayRef<int64_t> pattern) { return create<ReshapeOp>(x, pattern); }
  Value transpose(Value x, ArrayRef<int64_t> perm) { return create<TransposeOp>(x, perm); }
  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides) {
    return create<SliceOp>(x, offsets, sizes, strides);
  }
  /// x[..., offset:offset+size] along the last axis.
  Value sliceLast(Value x, int64_t offset, int64_t size);
  Value concat(ValueRange xs, int64_t axis) { return create<ConcatOp>(xs, axis); }
  Value broadcast(Value x, ArrayRef<int64_t> shape) { return create<BroadcastOp>(x, shape); }
  Value softmax(Value x, int64_t axis) { return create<SoftmaxOp>(x, axis); }
  /// A reduction over `axes` (kept as size-1 dims with `keepDims`).
  Value reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes, bool keepDims);

  /// Attention per `cfg` as the primitive chain that attention recognition
  /// folds back: q, k, v → [B, H, S, D] (reshape/transpose; K/V heads
  /// repeated by a broadcast for GQA) → matmul(q, kᵀ) → · scale →
  /// [softcap] → [causal_mask] → [+ additive mask | select(bool mask)] →
  /// softmax → matmul(p, v) → back to the query layout. With `sinks`
  /// ([num_heads], rlx_hir.attention's) the softmax is written out with each
  /// head's sink logit in its denominator (no recognition folds it back).
  Value attentionChain(const AttentionConfig &cfg, Value q, Value k, Value v, Value mask,
                       Value sinks = {});

  /// The scalar `body` (block arguments: one scalar per input; terminator:
  /// the results) applied to whole tensors: one MIR op per arith/math op
  /// (addf → add, math.exp → exp, a scalar constant → rank-0 constant, ...),
  /// results broadcast to `resultTypes`. Fails, building nothing, when an op
  /// has no MIR counterpart or a value comes from outside the body; the op is
  /// then reported as an error prefixed with `who` (silently when `who` is
  /// empty, as a pattern that does not apply).
  FailureOr<SmallVector<Value>> expandScalarBody(Block &body, ValueRange inputs,
                                                 TypeRange resultTypes, StringRef who);

  /// Sums `g` over the axes along which a value of `target`'s shape was
  /// broadcast to `g`'s shape, and reshapes to `target` (autodiff's sum of a
  /// broadcast operand's gradient).
  Value sumTo(Value g, RankedTensorType target);
  /// A zero tensor of `like`'s type (a constant when static).
  Value zerosLike(Value like);
  /// `x` of `rank` dims (a batch axis leading, `x`'s other dims trailing)
  /// with size-1 axes inserted after its leading axis up to `rank`, so that
  /// numpy broadcasting lines it up with a rank-`rank` batched value.
  Value expandAfterLeading(Value x, int64_t rank);

  /// Builds `spec`: a plain matmul when no stage is set, else fused_matmul.
  Value fusedMatmul(const FusedMatmulSpec &spec);

  /// A reshape pattern for `shape`: static dims as they are, -1 for dynamic.
  static SmallVector<int64_t> pattern(ArrayRef<int64_t> shape);

  /// Takes `op` (built at this builder's point) as one of its own: erased
  /// by discardUnused. Its first result.
  Value record(Operation *op) {
    created.push_back(op);
    return op->getResult(0);
  }
  /// An rlx_mir.elementwise over `inputs` (numpy-broadcast) with results of
  /// `types`, its scalar body built by `body` from the block's arguments
  /// (one per input, of its element type); the results (null after a failure).
  SmallVector<Value>
  elementwise(TypeRange types, ValueRange inputs,
              function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body);
  /// 0, 1, ..., n - 1 as a [n] constant of `elementType`.
  Value iota(int64_t n, Type elementType);

private:
  OpBuilder &b;
  Location loc;
  bool diagnose;
  bool hasFailed = false;
  SmallVector<Operation *> created;
};

/// Replaces `op` by `values` when `mb` built every one of them; otherwise
/// erases what `mb` built and fails, leaving `op` as it is (the rewrite does
/// not apply).
LogicalResult replaceWithBuilt(RewriterBase &rw, Operation *op, MIRBuilder &mb,
                               ValueRange values);

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_IR_MIRBUILDER_H
