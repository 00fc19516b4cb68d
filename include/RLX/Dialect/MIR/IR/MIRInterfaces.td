//===- MIRInterfaces.td - rlx_mir op interfaces -------------*- tablegen -*-===//
//
// ElementwiseOpInterface: the scalar semantics of an elementwise MIR op,
// shared by elementwise-chain fusion, the linalg lowering and GPU kernels.
// DifferentiableOpInterface and BatchableOpInterface: an op's reverse-mode,
// forward-mode and vmap rules, next to the op; rlx-mir-grad, rlx-mir-jvp and
// rlx-mir-vmap dispatch through them.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRINTERFACES_TD
#define RLX_DIALECT_MIR_IR_MIRINTERFACES_TD

include "mlir/IR/OpBase.td"

def MIR_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::mlir::rlx::mir";
  let description = [{
    An op applied independently to every element of its (numpy-broadcast)
    operands. `buildScalar` emits the per-element computation with `arith`
    and `math` ops on scalars of the operands' element types and returns the
    scalar result (of the result's element type).
  }];
  let methods = [
    InterfaceMethod<"Emit the scalar body of this op.", "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::ValueRange":$operands)>
  ];
}

def MIR_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::rlx::mir";
  let description = [{
    The derivative rules of a MIR op, built with a `MIRBuilder` at its
    insertion point (after the op, whose results the rules may read).

    `vjp` (reverse mode): `cotangents` has one entry per result (null: zero);
    it fills `dx` with one entry per operand, null where `need` is false, the
    operand is not a float tensor, or its gradient is zero. A gradient may
    have the shape the operand was broadcast to; callers sum it down
    (`MIRBuilder::sumTo`).

    `jvp` (forward mode): `tangents` has one entry per operand (null: zero;
    never set for non-float operands); it fills `dy` with one tangent per
    result, of the result's exact type, null when it is zero.

    Both fail with an error at the op when no rule applies to these
    operands. The default implementations are the elementwise rules: the
    op's scalar body (`ElementwiseOpInterface::buildScalar`, or the region of
    `rlx_mir.elementwise`) differentiated in forward mode, scalar op by
    scalar op, so an elementwise op needs no rule of its own.
  }];
  let methods = [
    InterfaceMethod<"Reverse mode: operand cotangents from result cotangents.",
      "::llvm::LogicalResult", "vjp",
      (ins "::mlir::rlx::mir::MIRBuilder &":$mb, "::mlir::ValueRange":$cotangents,
           "::llvm::ArrayRef<bool>":$need, "::llvm::SmallVectorImpl<::mlir::Value> &":$dx),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::mlir::rlx::mir::detail::elementwiseVjp($_op, mb, cotangents, need, dx);
      }]>,
    InterfaceMethod<"Forward mode: result tangents from operand tangents.",
      "::llvm::LogicalResult", "jvp",
      (ins "::mlir::rlx::mir::MIRBuilder &":$mb, "::mlir::ValueRange":$tangents,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$dy),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::mlir::rlx::mir::detail::elementwiseJvp($_op, mb, tangents, dy);
      }]>
  ];
}

def MIR_BatchableOpInterface : OpInterface<"BatchableOpInterface"> {
  let cppNamespace = "::mlir::rlx::mir";
  let description = [{
    The vmap rule of a MIR op: `operands` are the op's operands after
    batching, those with `batched` set carrying a new leading axis (the
    batch, the same size for all); `results` gets one value per result, each
    with the batch as its leading axis. Built with a `MIRBuilder` at its
    insertion point; fails with an error at the op when the op cannot be
    batched this way. The default implementation is the elementwise rule
    (batched operands get size-1 axes so that numpy broadcasting lines them
    up under the batch axis).
  }];
  let methods = [
    InterfaceMethod<"The op applied to a batch along a new leading axis.",
      "::llvm::LogicalResult", "batch",
      (ins "::mlir::rlx::mir::MIRBuilder &":$mb, "::mlir::ValueRange":$operands,
           "::llvm::ArrayRef<bool>":$batched,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$results),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::mlir::rlx::mir::detail::elementwiseBatch($_op, mb, operands, batched, results);
      }]>
  ];
}

def MIR_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let cppNamespace = "::mlir::rlx::mir";
  let description = [{
    A composite op defined by a chain of other MIR ops: `decompose` builds
    the chain (with a `MIRBuilder` at its insertion point, on the op's
    operands) and returns the values that replace the op's results. The
    chain is the op's one definition: the linalg lowering (CPU path, GPU
    generic path) lowers it, and autodiff and vmap (which unfuse first)
    differentiate and batch it, so such an op needs no rules of its own.
    Fails (with an error at the op) when the chain cannot be built.
  }];
  let methods = [
    InterfaceMethod<"Build the op as a chain of MIR ops; the replacement values.",
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "decompose",
      (ins "::mlir::rlx::mir::MIRBuilder &":$mb)>
  ];
}

#endif // RLX_DIALECT_MIR_IR_MIRINTERFACES_TD
