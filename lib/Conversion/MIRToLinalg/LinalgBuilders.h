//===- LinalgBuilders.h - Helpers of the MIR→linalg lowering ----*- C++ -*-===//
//
// Internal to lib/Conversion/MIRToLinalg: small builders for the linalg ops
// the MIR lowerings are made of (elementwise generics with numpy broadcasting,
// row reductions, 2-D matmuls with f32 accumulation, row views).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_MIRTOLINALG_LINALGBUILDERS_H
#define RLX_LIB_CONVERSION_MIRTOLINALG_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::rlx::linalg_builders {

using BodyFn = function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

inline RankedTensorType tensorTypeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// An uninitialized tensor of `type` (static shape).
Value empty(OpBuilder &b, Location loc, RankedTensorType type);
/// A tensor of `type` filled with `value`.
Value filled(OpBuilder &b, Location loc, RankedTensorType type, double value);

/// The type statistics and accumulators use for element type `et`: f32,
/// or f64 for f64 data (so f64 programs, e.g. finite-difference checks, keep
/// their precision).
inline Type statsType(OpBuilder &b, Type et) { return et.isF64() ? et : b.getF32Type(); }

/// The map that reads an input of `inShape` for an iteration space of
/// `outShape` under numpy broadcasting (size-1 dims read index 0).
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape);

/// One parallel linalg.generic producing `resultTypes` (one shape) from
/// broadcast `inputs`; `body` maps input scalars to result scalars.
SmallVector<Value> elementwise(OpBuilder &b, Location loc, ValueRange inputs,
                               TypeRange resultTypes, BodyFn body);

/// Converts every element to `elementType` (rlx_mir.cast semantics).
Value castTo(OpBuilder &b, Location loc, Value x, Type elementType);

/// Reduces the last dim of `x` [..., N] into [...] starting from `init`;
/// `combine(acc, element)` is the scalar step (element already mapped by
/// `map` when given). Accumulates in `accType`.
Value reduceLast(OpBuilder &b, Location loc, Value x, Type accType, double init,
                 function_ref<Value(OpBuilder &, Location, Value acc, Value elt)> combine);

/// [M, K] x [K, N] (or [N, K] with transB) accumulated in f32 (or the inputs'
/// type when wider); returns [M, N] of the accumulation type.
Value matmul2D(OpBuilder &b, Location loc, Value lhs, Value rhs, bool transB);

/// Collapses all leading dims: [d0, ..., dn-1, K] -> [prod, K].
Value collapseRows(OpBuilder &b, Location loc, Value x);
/// Expands [prod, N] back to `shape` (whose last dim is N).
Value expandRows(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape);

/// A rank-reducing extract_slice of `src` with the given offsets/sizes (unit
/// strides) whose result drops the size-1 dims listed in `dropped`.
Value sliceDrop(OpBuilder &b, Location loc, Value src, ArrayRef<OpFoldResult> offsets,
                ArrayRef<int64_t> sizes, RankedTensorType resultType);

/// Constant index / float helpers.
Value cIndex(OpBuilder &b, Location loc, int64_t v);
Value cFloat(OpBuilder &b, Location loc, Type t, double v);

/// Arith fast-math flags that let LLVM vectorize float reductions.
arith::FastMathFlagsAttr reductionFlags(MLIRContext *ctx);

} // namespace mlir::rlx::linalg_builders

#endif // RLX_LIB_CONVERSION_MIRTOLINALG_LINALGBUILDERS_H
