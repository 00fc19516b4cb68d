//===- ShapeRules.h - Shape inference and checks for RLX ops ----*- C++ -*-===//
//
// The one place where RLX's shape rules live. Every op's result-type
// inference and verifier call these functions, for HIR and MIR alike, so the
// parser, the verifier and the builders report the same diagnostic. Each
// function takes an optional location: with one it emits an error there and
// returns failure; without one it fails silently (for "would this be legal?"
// queries from fusion patterns).
//
// Shapes use ShapedType::kDynamic for unknown dims. Two dims "match" when they
// are equal or either is dynamic.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_SHAPERULES_H
#define RLX_DIALECT_COMMON_IR_SHAPERULES_H

#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include <optional>
#include <string>

namespace mlir::rlx {

using Shape = SmallVector<int64_t>;
using OptLoc = std::optional<Location>;

/// Emits `msg` as an error at `loc` when it is set. Always returns failure.
LogicalResult shapeError(OptLoc loc, const Twine &msg);

/// The activation of a gated MLP (swiglu, moe_experts): silu, gelu,
/// gelu_tanh or relu; anything else is an error naming `op`.
LogicalResult checkGatedActivation(OptLoc loc, StringRef op, ActivationKind act);

inline bool isDynamicDim(int64_t d) { return ShapedType::isDynamic(d); }
/// True when the dims are equal or either is dynamic.
bool dimsMatch(int64_t a, int64_t b);
/// "1x?x2048", the way MLIR prints tensor shapes.
std::string shapeToString(ArrayRef<int64_t> shape);
/// "tensor<1x?x2048xf32>".
std::string typeToString(Type type);

/// Returns the value's type as a ranked tensor or emits "<what> must be a
/// ranked tensor".
FailureOr<RankedTensorType> getRankedTensor(OptLoc loc, Value v, StringRef what);

/// All `types` share one element type; `names` say which operand each is.
LogicalResult checkSameElementType(OptLoc loc, ArrayRef<Type> types,
                                   ArrayRef<StringRef> names);

/// Normalizes `axis` (which may be negative) against `rank`.
FailureOr<int64_t> normalizeAxis(OptLoc loc, int64_t axis, int64_t rank,
                                 StringRef what = "axis");

/// eps must be finite and > 0.
LogicalResult checkEps(OptLoc loc, double eps);

/// numpy broadcasting of two shapes.
FailureOr<Shape> broadcastShapes(OptLoc loc, ArrayRef<int64_t> a,
                                 ArrayRef<int64_t> b);

/// Batched matmul: lhs [..., M, K] (or [..., K, M] with transA), rhs
/// [..., K, N] (or [..., N, K] with transB).
FailureOr<Shape> inferMatmul(OptLoc loc, ArrayRef<int64_t> lhs,
                             ArrayRef<int64_t> rhs, bool transA, bool transB);

/// A linear layer's weight [out, in] (OutIn) or [in, out] (InOut) applied
/// to x [..., in]; bias, when present, must be [out].
FailureOr<Shape> inferLinear(OptLoc loc, ArrayRef<int64_t> x,
                             ArrayRef<int64_t> weight,
                             std::optional<ArrayRef<int64_t>> bias,
                             WeightLayout layout, StringRef weightName = "weight");

/// A per-channel weight of a norm must be [H] where H is x's last dim.
LogicalResult checkChannelVector(OptLoc loc, ArrayRef<int64_t> x,
                                 ArrayRef<int64_t> w, StringRef name);

/// Attention configuration shared by rlx_hir.attention and rlx_mir.attention.
struct AttentionConfig {
  int64_t numHeads = 0, numKvHeads = 0, headDim = 0;
  MaskKind maskKind = MaskKind::None;
  std::optional<int64_t> window;
  std::optional<double> scale, softcap;
  AttnLayout layout = AttnLayout::BSD;
};

/// Checks the attention configuration and operand shapes and returns the
/// output shape. `mask` is the optional mask operand's shape.
FailureOr<Shape> inferAttention(OptLoc loc, const AttentionConfig &cfg,
                                ArrayRef<int64_t> q, ArrayRef<int64_t> k,
                                ArrayRef<int64_t> v,
                                std::optional<ArrayRef<int64_t>> mask);

/// Reads the attention attributes from an op or adaptor of rlx_hir.attention
/// or rlx_mir.attention.
template <typename AttnLike>
AttentionConfig getAttentionConfig(AttnLike a) {
  AttentionConfig cfg;
  cfg.numHeads = a.getNumHeads();
  cfg.numKvHeads = a.getNumKvHeads();
  cfg.headDim = a.getHeadDim();
  cfg.maskKind = enumOr(a.getMaskKindAttr(), MaskKind::None);
  cfg.window = a.getWindow();
  if (auto s = a.getScale())
    cfg.scale = s->convertToDouble();
  if (auto c = a.getSoftcap())
    cfg.softcap = c->convertToDouble();
  cfg.layout = enumOr(a.getLayoutAttr(), AttnLayout::BSD);
  return cfg;
}

/// Full type check of an attention op's operands; pushes the result type.
LogicalResult inferAttentionTypes(OptLoc loc, const AttentionConfig &cfg,
                                  Value q, Value k, Value v, Value mask,
                                  SmallVectorImpl<Type> &results);

/// Checks a norm's input [..., H], optional weight [H] (same element type)
/// and eps; returns the input type.
FailureOr<RankedTensorType> checkNormOperands(OptLoc loc, Value input,
                                              Value weight, double eps,
                                              StringRef weightName = "weight");

/// LayerNorm: checkNormOperands plus an optional bias [H].
FailureOr<RankedTensorType> checkLayerNormOperands(OptLoc loc, Value input,
                                                   Value weight, Value bias,
                                                   double eps);

/// Residual RMSNorm: input and residual of one type, then checkNormOperands.
FailureOr<RankedTensorType> checkResidualNormOperands(OptLoc loc, Value input,
                                                      Value residual,
                                                      Value weight, double eps);

/// Rotary embedding on x [B, S, H·headDim]; checks head/rotary dims.
LogicalResult checkRopeDims(OptLoc loc, ArrayRef<int64_t> x, int64_t headDim,
                            int64_t rotaryDim);

/// cos/sin tables for RoPE on x [B, S, ...]: [S, rotaryDim/2] or
/// [B, S, rotaryDim/2], both of one type.
LogicalResult checkRopeTables(OptLoc loc, ArrayRef<int64_t> x, Value cos,
                              Value sin, int64_t rotaryDim);

/// Grouping of input dims to output dims for a row-major reshape. Each group
/// is a pair of half-open ranges [inBegin, inEnd) and [outBegin, outEnd).
struct ReshapeGroup {
  unsigned inBegin, inEnd, outBegin, outEnd;
};
FailureOr<SmallVector<ReshapeGroup>> computeReshapeGroups(
    OptLoc loc, ArrayRef<int64_t> in, ArrayRef<int64_t> outPattern);

/// Output shape of a reshape of `in` to `pattern` (-1 = dynamic output dim).
FailureOr<Shape> inferReshape(OptLoc loc, ArrayRef<int64_t> in,
                              ArrayRef<int64_t> pattern);
FailureOr<Shape> inferTranspose(OptLoc loc, ArrayRef<int64_t> in,
                                ArrayRef<int64_t> perm);
FailureOr<Shape> inferSlice(OptLoc loc, ArrayRef<int64_t> in,
                            ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides);
FailureOr<Shape> inferConcat(OptLoc loc, ArrayRef<ArrayRef<int64_t>> inputs,
                             int64_t axis);
FailureOr<Shape> inferBroadcastTo(OptLoc loc, ArrayRef<int64_t> in,
                                  ArrayRef<int64_t> shape);
FailureOr<Shape> inferReduce(OptLoc loc, ArrayRef<int64_t> in,
                             ArrayRef<int64_t> axes, bool keepDims);
/// Embedding/gather along axis 0: ids.shape + table.shape[1:].
FailureOr<Shape> inferGather(OptLoc loc, ArrayRef<int64_t> table,
                             ArrayRef<int64_t> ids);
/// The result type of gathering rows of `table` by `ids`; `tableRank`, when
/// set, is the rank the table must have.
LogicalResult inferGatherTypes(OptLoc loc, Value table, Value ids,
                               std::optional<int64_t> tableRank,
                               SmallVectorImpl<Type> &results);

/// The [N, K] that a packed NVFP4 weight and its E4M3 block scales describe:
/// with `outIn` (NVIDIA checkpoints) weight [N, K/2] and scales [N, K/16]
/// (or blocked: [ceil(N/128), ceil(K/64), 32, 16], the 128x4 tile layout of
/// nvfp4_block_scales), else weight [K/2, N] and scales [K/16, N]. `k`, when
/// set, is the K the weight must have (the input's last dim). Errors name
/// the shapes.
FailureOr<std::pair<int64_t, int64_t>> inferNvfp4Dims(OptLoc loc, RankedTensorType weight,
                                                      RankedTensorType scales, bool outIn,
                                                      std::optional<int64_t> k);

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_SHAPERULES_H
