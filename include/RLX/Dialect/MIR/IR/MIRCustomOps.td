//===- MIRCustomOps.td - rlx_mir.custom_fn ---------------------*- tablegen -*-===//
//
// A user function as one op, with optional user derivative rules (the
// original RLX's CustomFn).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRCUSTOMOPS_TD
#define RLX_DIALECT_MIR_IR_MIRCUSTOMOPS_TD

def MIR_CustomFnOp : MIR_Op<"custom_fn", [IsolatedFromAbove, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<MIR_DifferentiableOpInterface, ["vjp", "jvp"]>]> {
  let summary = "a function body as one op, with optional user VJP and JVP rules";
  let description = [{
    The original RLX's `CustomFn` (and what `torch.autograd.Function` is to
    PyTorch): `body` computes the results from the inputs with MIR ops on
    tensors; every backend runs the body as it is inlined (the op is a
    `DecomposableOpInterface` op: the linalg lowering on the CPU path and the
    GPU generic path, and vmap, see the body).

    The derivative rules are the body's own unless the op carries them:
    - `vjp`: arguments are the inputs, the results and one cotangent per
      result (zeros where a result has none); it yields one cotangent per
      input, of the input's type. `rlx-mir-grad` uses it instead of
      differentiating the body.
    - `jvp`: arguments are the inputs and one tangent per input (zeros where
      an input has none); it yields one tangent per result. `rlx-mir-jvp`
      uses it.
    A straight-through estimator, a numerically stable gradient or a
    gradient that stops at a boundary are written this way.

    `name` names the function for diagnostics and reports.

    The verifier rejects an op without results, a body whose arguments are
    not the input types or whose `rlx_mir.yield` is not the result types,
    and rule regions whose arguments or yields do not have the types above.

    `rlx-mir-vmap` and `rlx-mir-prepare-for-ad` inline the op; where it
    carries rules they warn that the rules no longer apply.

    Example (a hard clamp whose gradient passes straight through):
    ```mlir
    %y = rlx_mir.custom_fn "ste_clamp" ins(%x : tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<8xf32>):
      %lo = rlx_mir.constant dense<-1.0> : tensor<f32>
      %hi = rlx_mir.constant dense<1.0> : tensor<f32>
      %m = rlx_mir.max %a, %lo : tensor<8xf32>, tensor<f32>
      %c = rlx_mir.min %m, %hi : tensor<8xf32>, tensor<f32>
      rlx_mir.yield %c : tensor<8xf32>
    } vjp {
    ^bb0(%a: tensor<8xf32>, %r: tensor<8xf32>, %dr: tensor<8xf32>):
      rlx_mir.yield %dr : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$inputs, StrAttr:$name);
  let results = (outs Variadic<RLX_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body, MaxSizedRegion<1>:$vjp, MaxSizedRegion<1>:$jvp);
  let assemblyFormat = [{
    $name `ins` `(` $inputs `:` type($inputs) `)` `->` type($outputs) attr-dict-with-keyword
    $body (`vjp` $vjp^)? (`jvp` $jvp^)?
  }];
  let hasRegionVerifier = 1;
}

#endif // RLX_DIALECT_MIR_IR_MIRCUSTOMOPS_TD
