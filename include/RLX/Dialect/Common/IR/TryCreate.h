//===- TryCreate.h - Build a type-inferring op or fail cleanly --*- C++ -*-===//
//
// ODS builders of ops with InferTypeOpInterface call report_fatal_error when
// inference rejects the operands ("Failed to infer result type(s)"), which
// kills the process. Passes that build ops from input they have not fully
// checked (importers, autodiff, unfusing, fusion patterns) build through
// tryCreate instead: the op's own shape rules decide, and a rejection is a
// failure the caller turns into a located diagnostic or a pattern that does
// not apply.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_TRYCREATE_H
#define RLX_DIALECT_COMMON_IR_TRYCREATE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::rlx {

namespace detail {
/// The result count of an op with a fixed number of results.
template <typename OpTy>
constexpr unsigned fixedResultCount() {
  if constexpr (OpTy::template hasTrait<OpTrait::ZeroResults>())
    return 0;
  else if constexpr (OpTy::template hasTrait<OpTrait::OneResult>())
    return 1;
  else if constexpr (OpTy::template hasTrait<OpTrait::NResults<2>::Impl>())
    return 2;
  else if constexpr (OpTy::template hasTrait<OpTrait::NResults<3>::Impl>())
    return 3;
  else
    static_assert(sizeof(OpTy) == 0, "tryCreate needs an op with 0-3 fixed results");
}

inline bool isNull(Value v) { return !v; }
inline bool isNull(ValueRange vs) {
  return llvm::any_of(vs, [](Value v) { return !v; });
}
template <typename T>
bool isNull(const T &) {
  return false;
}
} // namespace detail

/// Runs the verifier of a freshly built op (not its regions); its errors are
/// emitted only with `diagnose`.
LogicalResult verifyBuilt(Operation *op, bool diagnose);

/// True when any Value (or value in a ValueRange) among `args` is null.
template <typename... Args>
bool anyNullValue(const Args &...args) {
  return (detail::isNull(args) || ...);
}

/// Builds `OpTy` from the arguments of its type-inferring ODS builder
/// (`OpTy::create(b, loc, args...)`), or returns failure, building nothing,
/// when the op's shape rules or its verifier reject them. Null values stand
/// for absent optional operands, as in ODS builders. With
/// `diagnose` the shape rules' error is emitted at `loc`; without, the
/// failure is silent (a pattern asking "would this be legal?").
template <typename OpTy, typename... Args>
FailureOr<OpTy> tryCreate(OpBuilder &b, Location loc, bool diagnose, Args &&...args) {
  MLIRContext *ctx = b.getContext();
  OperationState state(loc, OpTy::getOperationName());
  // The builder that takes result types does not infer; the placeholders
  // are replaced by the inferred types below.
  SmallVector<Type, 3> placeholders(detail::fixedResultCount<OpTy>(), NoneType::get(ctx));
  OpTy::build(b, state, TypeRange(placeholders), std::forward<Args>(args)...);
  SmallVector<Type, 3> types;
  if (failed(OpTy::inferReturnTypes(ctx, diagnose ? std::optional<Location>(loc) : std::nullopt,
                                    state.operands, state.attributes.getDictionary(ctx),
                                    state.getRawProperties(), state.regions, types)) ||
      types.size() != placeholders.size())
    return failure();
  state.types.assign(types.begin(), types.end());
  // Verified before it is inserted, so that a rewriter's listener only ever
  // sees ops that stay.
  Operation *op = Operation::create(state);
  if (failed(verifyBuilt(op, diagnose))) {
    op->destroy();
    return failure();
  }
  return cast<OpTy>(b.insert(op));
}

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_TRYCREATE_H
