//===- MIRSsmOps.td - rlx_mir state-space model ops -------*- tablegen -*-===//
//
// The building blocks of state-space and linear-attention layers (Mamba,
// Mamba-2, gated delta rule), each defined by its chain of MIR ops
// (DecomposableOpInterface, lib/Dialect/MIR/IR/SsmOps.cpp): the linalg
// lowering (CPU path, GPU generic path), autodiff and vmap use it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRSSMOPS_TD
#define RLX_DIALECT_MIR_IR_MIRSSMOPS_TD

def MIR_CausalConv1dOp : MIR_InferOp<"causal_conv1d", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "causal depthwise 1-D convolution with a decode state (Mamba's conv1d)";
  let description = [{
    The short convolution of Mamba, Mamba-2 and gated-delta-rule layers
    (`causal_conv1d_fn` / `causal_conv1d_update` of the causal-conv1d
    package; transformers' `MambaMixer.slow_forward`): per channel `d` of
    `input` `[B, D, L]`, with `weight` `[D, K]` (PyTorch's depthwise
    `Conv1d` weight `[D, 1, K]` without its middle axis),

    `output[b, d, t] = act(bias[d] + Σ_{k<K} weight[d, k] · xp[b, d, t + k])`

    where `xp` is `input` after the `K − 1` positions that precede it: the
    last `K − 1` columns of `state` `[B, D, S]` (`S ≥ K − 1`: the raw
    inputs of the previous call, oldest first), or zeros without one (a
    prefill from scratch: `Conv1d(padding = K − 1)` cut to `L`). `act` is
    the identity or SiLU (`activation = "silu"`, applied after the bias).
    Cross-correlation, as PyTorch's `Conv1d`.

    Results: `output` `[B, D, L]` and `final_state`: the last `S` raw
    inputs of `state ++ input` (`[B, D, S]`; without `state`, `S = K − 1`
    with zeros in front of short inputs), the state the next call takes:
    a decode step is `L = 1`; transformers' cache layout is `S = K`.
    Computed in f32 (f64 for f64 input), results in the input's type.

    The verifier rejects an input that is not rank 3, a weight that is not
    `[D, K]` with `K ≥ 1`, a bias that is not `[D]`, a state that is not
    `[B, D, S]` with `S ≥ K − 1`, mixed element types and activations
    other than silu.

    Example (a Mamba decode step, transformers' `[B, D, K]` state):
    ```mlir
    %y, %st = rlx_mir.causal_conv1d %x, %w bias(%b : tensor<64xf32>)
        state(%s : tensor<1x64x4xf32>) activation = "silu" : tensor<1x64x1xf32>, tensor<64x4xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   Optional<RLX_FloatTensor>:$bias, Optional<RLX_FloatTensor>:$state,
                   OptionalAttr<StrAttr>:$activation);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$final_state);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`state` `(` $state^ `:` type($state) `)`)? (`activation` `=` $activation^)? attr-dict
    `:` type($input) `,` type($weight)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRSSMOPS_TD
