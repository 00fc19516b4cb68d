//===- Autodiff.h - Shared pieces of MIR autodiff and vmap (internal) -----===//
//
// The unfusing that rlx-mir-prepare-for-ad applies (and rlx-mir-grad,
// rlx-mir-jvp and rlx-mir-vmap apply to their copy of the function), the
// input checks and argument selection those passes share. The rules
// themselves are the ops' DifferentiableOpInterface and BatchableOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H
#define RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rlx::mir::ad {

/// The rule a pass differentiates with; custom_fn ops that carry it stay.
enum class Rule { None, Vjp, Jvp };

/// Rewrites every fused op of `fn` into primitives (see
/// rlx-mir-prepare-for-ad); elementwise regions too with `regions` (their
/// rules differentiate them as they are otherwise); custom_fn ops inlined
/// unless they carry the rule `keep`. Emits an error at the first op it
/// cannot unfuse.
LogicalResult unfuse(func::FuncOp fn, bool regions = true, Rule keep = Rule::None);

/// Errors (at the offending op) unless `fn` is MIR on tensors: no rlx_hir or
/// rlx_lir op, no memref argument.
LogicalResult checkIsMir(func::FuncOp fn, StringRef pass);

/// The arguments of `fn` named in `names` (their rlx.input/rlx.param names,
/// or argN), or every floating-point tensor argument when `names` is empty.
/// Errors at `fn`, prefixed with `pass`, for an unknown name or a named
/// argument that is not a float tensor.
FailureOr<SmallVector<unsigned>> selectArguments(func::FuncOp fn, ArrayRef<std::string> names,
                                                 StringRef pass);

/// True for a ranked tensor of a float element type.
bool isFloatTensor(Type t);

/// The functions a transform pass applies to: the one named `function`, or
/// every public function with a body that `pick` accepts. Errors at the
/// module (prefixed with `pass`) when there is none; checks each is MIR.
FailureOr<SmallVector<func::FuncOp>> targetFunctions(ModuleOp module, StringRef function,
                                                     StringRef pass, StringRef suffix,
                                                     function_ref<bool(func::FuncOp)> pick);

} // namespace mlir::rlx::mir::ad

#endif // RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H
