//===- RLXInterfaces.td - Interfaces shared by the RLX dialects -*- tablegen -*-===//
//
// What one level asks of another without depending on it: LIR kernels ask
// the compute op in their body (an MIR op) whether an output may take an
// input's buffer.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_RLXINTERFACES_TD
#define RLX_DIALECT_COMMON_IR_RLXINTERFACES_TD

include "mlir/IR/OpBase.td"

def RLX_ElementLocalOpInterface : OpInterface<"ElementLocalOpInterface"> {
  let cppNamespace = "::mlir::rlx";
  let description = [{
    An op that may read some operand only at the element of a result it is
    writing: then the result may be written over that operand's buffer
    (in place), which rlx_lir.kernel's plan asks of its root op.
  }];
  let methods = [
    InterfaceMethod<[{True when element i of result `result` is computed
      before, and from nothing but element i of, operand `operand` (no
      broadcast, no other element read).}],
      "bool", "readsOnlyWrittenElement", (ins "unsigned":$operand, "unsigned":$result),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        // An elementwise op: every same-shape (not broadcast) operand.
        return ::llvm::cast<::mlir::ShapedType>($_op->getOperand(operand).getType()).getShape() ==
               ::llvm::cast<::mlir::ShapedType>($_op->getResult(result).getType()).getShape();
      }]>
  ];
}

#endif // RLX_DIALECT_COMMON_IR_RLXINTERFACES_TD
