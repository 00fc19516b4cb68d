//===- SwishGateOps.td - An out-of-tree dialect with one RLX op -----------===//
//
// The `demo` dialect: one fused op, demo.swish_gate, that joins RLX's
// pipelines by implementing RLX's op interfaces (from the installed RLX
// package's .td files). Nothing in RLX knows this op by name.
//
//===----------------------------------------------------------------------===//

#ifndef DEMO_SWISHGATE_OPS_TD
#define DEMO_SWISHGATE_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "RLX/Dialect/MIR/IR/MIRInterfaces.td"
include "RLX/Dialect/Common/IR/RLXInterfaces.td"

def Demo_Dialect : Dialect {
  let name = "demo";
  let cppNamespace = "::demo";
  let summary = "An example dialect whose op runs through RLX-MLIR";
}

def Demo_SwishGateOp : Op<Demo_Dialect, "swish_gate", [
    Pure,
    // The result type from numpy broadcasting, as rlx_mir's binary ops.
    InferTypeOpAdaptor,
    // The scalar body: RLX fuses, lowers (CPU, GPU kernels, the emulator)
    // and differentiates the op from it.
    DeclareOpInterfaceMethods<MIR_ElementwiseOpInterface>,
    // VJP and JVP: the defaults differentiate buildScalar's body.
    MIR_DifferentiableOpInterface,
    // vmap: the default elementwise rule.
    MIR_BatchableOpInterface,
    // The result may take an operand's buffer in the arena plan.
    RLX_ElementLocalOpInterface]> {
  let summary = "SwiGLU's gate: silu(gate) · up";
  let description = [{
    `out = gate · sigmoid(gate) · up` elementwise after numpy broadcasting
    of the two operands, the gated activation of SwiGLU MLPs (Shazeer 2020,
    "GLU Variants Improve Transformer"; HF LlamaMLP's
    `act_fn(gate_proj(x)) * up_proj(x)` with act_fn = silu). One float
    element type; the verifier rejects other element types, mixed ones and
    shapes that do not broadcast.

    ```mlir
    %y = demo.swish_gate %gate, %up : tensor<2x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$gate, AnyRankedTensor:$up);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($gate) `,` type($up)";
  let hasVerifier = 1;
}

#endif // DEMO_SWISHGATE_OPS_TD
