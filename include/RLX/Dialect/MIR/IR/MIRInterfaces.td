//===- MIRInterfaces.td - rlx_mir op interfaces -------------*- tablegen -*-===//
//
// ElementwiseOpInterface: the scalar semantics of an elementwise MIR op,
// shared by elementwise-chain fusion, the linalg lowering and GPU kernels.
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

#endif // RLX_DIALECT_MIR_IR_MIRINTERFACES_TD
