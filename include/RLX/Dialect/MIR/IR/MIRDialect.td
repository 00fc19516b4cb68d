//===- MIRDialect.td - rlx_mir dialect definition -----------*- tablegen -*-===//
//
// rlx_mir is the tensor graph: primitive ops (matmul, elementwise, reductions,
// data movement) and the fused ops that fusion patterns produce. HIR lowers
// here; One-Shot Bufferize takes it to rlx_lir; autodiff runs on it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRDIALECT_TD
#define RLX_DIALECT_MIR_IR_MIRDIALECT_TD

include "RLX/Dialect/Common/IR/RLXBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "RLX/Dialect/MIR/IR/MIRInterfaces.td"
include "RLX/Dialect/Common/IR/RLXInterfaces.td"

def MIR_Dialect : Dialect {
  let name = "rlx_mir";
  let cppNamespace = "::mlir::rlx::mir";
  let summary = "RLX mid-level IR: a tensor graph of primitive and fused ops.";
  let description = [{
    MIR values are builtin ranked tensors; dynamic dims are allowed until
    `rlx-mir-specialize` binds them. Ops are pure and infer their result
    types. Elementwise ops broadcast numpy-style and implement
    `ElementwiseOpInterface`, which gives each op's scalar body to the
    elementwise-chain fusion, the linalg lowering and the GPU kernels, so the
    semantics of `silu` are written once.
  }];
  let dependentDialects = ["::mlir::rlx::RLXDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let hasConstantMaterializer = 1;
}

class MIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<MIR_Dialect, mnemonic, !listconcat(traits, [Pure])>;

// An op whose result types follow from its operands and attributes. All of its
// checks live in inferReturnTypes, which the parser, the builders and the
// verifier all run.
class MIR_InferOp<string mnemonic, list<Trait> traits = []>
    : MIR_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])>;

#endif // RLX_DIALECT_MIR_IR_MIRDIALECT_TD
