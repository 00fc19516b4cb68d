//===- MIRNormOps.td - rlx_mir composite norms -----------------*- tablegen -*-===//
//
// Norms defined as chains of primitive ops (DecomposableOpInterface): the
// chain, in lib/Dialect/MIR/IR/NormOps.cpp, is their one definition.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRNORMOPS_TD
#define RLX_DIALECT_MIR_IR_MIRNORMOPS_TD

def MIR_GroupNormOp : MIR_InferOp<"group_norm", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "group normalization over channels-first input";
  let description = [{
    `torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)`: the
    `C` channels of `input` `[N, C, *]` split into `num_groups` groups; each
    (sample, group) is normalized by its mean and biased variance over the
    group's channels and all positions, `(x − mean) · rsqrt(var + eps)`,
    then scaled and shifted per channel by the optional `weight` and `bias`
    `[C]`. Statistics in f32 (f64 for f64 input), one rounding at the end.
    Result: the input's type.

    Defined by its decomposition (reshape to `[N, G, −1]`, mean and variance,
    reshape back, per-channel affine), which the linalg lowering, the GPU
    path and autodiff all use.

    The verifier rejects rank < 2, `num_groups` < 1 or not dividing a static
    `C`, eps ≤ 0, weight/bias that are not `[C]` and mixed element types.

    Example:
    ```mlir
    %y = rlx_mir.group_norm %x weight(%w : tensor<64xf32>) bias(%b : tensor<64xf32>)
        num_groups = 32 eps = 1.0e-05 : tensor<2x64x16x16xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, Optional<RLX_FloatTensor>:$weight,
                   Optional<RLX_FloatTensor>:$bias, RLX_I64Attr:$num_groups, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `:` type($weight) `)`)? (`bias` `(` $bias^ `:` type($bias) `)`)?
    `num_groups` `=` $num_groups `eps` `=` $eps attr-dict `:` type($input)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRNORMOPS_TD
