//===- MIROps.h - rlx_mir ops -----------------------------------*- C++ -*-===//
//
// The ops of rlx_mir and the ElementwiseOpInterface through which fusion,
// lowering and code generation read each elementwise op's scalar body.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIROPS_H
#define RLX_DIALECT_MIR_IR_MIROPS_H

#include "RLX/Dialect/Common/IR/RLXInterfaces.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::rlx::mir {
class MIRBuilder;
namespace detail {
/// The default rules of DifferentiableOpInterface and BatchableOpInterface:
/// those of an elementwise op (an ElementwiseOpInterface op or
/// rlx_mir.elementwise). ElementwiseRules.cpp.
LogicalResult elementwiseVjp(Operation *op, MIRBuilder &mb, ValueRange cotangents,
                             ArrayRef<bool> need, SmallVectorImpl<Value> &dx);
LogicalResult elementwiseJvp(Operation *op, MIRBuilder &mb, ValueRange tangents,
                             SmallVectorImpl<Value> &dy);
LogicalResult elementwiseBatch(Operation *op, MIRBuilder &mb, ValueRange operands,
                               ArrayRef<bool> batched, SmallVectorImpl<Value> &results);
} // namespace detail
} // namespace mlir::rlx::mir

#include "RLX/Dialect/MIR/IR/MIRInterfaces.h.inc"

namespace mlir::rlx::mir::detail {
/// Result type of a broadcasting binary elementwise op.
LogicalResult inferBinaryType(std::optional<Location> loc, Value lhs, Value rhs,
                              SmallVectorImpl<Type> &types);
/// Result type of a unary elementwise op (the operand's type).
LogicalResult inferUnaryType(std::optional<Location> loc, Value input,
                             SmallVectorImpl<Type> &types);
} // namespace mlir::rlx::mir::detail

#define GET_OP_CLASSES
#include "RLX/Dialect/MIR/IR/MIROps.h.inc"

namespace mlir::rlx::mir {
/// Emits `v` converted to `to` (a scalar float or integer type) with the
/// rounding rules of rlx_mir.cast.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to);
/// Emits activation `kind` on scalar `x` (identity for none); f16/bf16 are
/// computed in f32 and rounded once.
Value buildActivationScalar(OpBuilder &b, Location loc, ActivationKind kind, Value x);
/// The one definition of a kernel: true for the MIR ops that
/// convert-rlx-mir-to-lir turns into an rlx_lir.kernel, i.e. every op but
/// the data movement that becomes views or copies (reshape, slice, concat),
/// constants and the scalar ops inside elementwise regions. Fusion reports,
/// rlx-run, the Python statistics and the LIR conversion all use it, so "6
/// kernels" means six rlx_lir.kernel ops.
bool isKernelOp(Operation *op);

/// True for an op of rlx_mir, and for an op of another dialect that joins
/// MIR through RLX's interfaces: one that implements ElementwiseOpInterface
/// (a custom op from a dialect plugin, examples/custom-op). Kernels, the
/// LIR conversion and the linalg lowering take both alike.
bool isMIROp(Operation *op);

/// True for an op of another dialect directly in a function body that
/// computes a tensor (an imported linalg.generic or TOSA op that nothing
/// raised): one kernel of its own. Constants, tensor.empty, linalg.fill
/// inits and reshapes (tensor, TOSA) are not.
bool isForeignKernelOp(Operation *op);
} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_IR_MIROPS_H
