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

def MIR_SelectiveScanOp : MIR_InferOp<"selective_scan", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "Mamba-1's selective scan (a diagonal linear recurrence per channel and state)";
  let description = [{
    The selective state-space scan of Mamba (mamba-ssm's `selective_scan_fn`
    and `selective_state_update`; transformers' `MambaMixer.slow_forward`),
    in mamba-ssm's layout: `u` and `delta` `[B, D, L]`, `A` `[D, N]`, `B`
    and `C` `[B, N, L]` (one state projection per token, shared by the
    channels), optional `D` `[D]`, `z` `[B, D, L]`, `delta_bias` `[D]` and
    initial `state` `[B, D, N]`:

    - `dt = delta + delta_bias`, then `softplus(dt)` with `delta_softplus`
      (PyTorch's threshold-20 softplus, computed as
      `max(dt, 0) + log(1 + exp(−|dt|))`);
    - `h[t] = exp(dt[t] · A) ⊙ h[t−1] + dt[t] · u[t] · B[t]` per channel `d`
      and state `n`, from `h[−1] = state` (zeros without one);
    - `y[t] = Σ_n h[t, n] · C[t, n] + D · u[t]`, times `silu(z[t])` with `z`.

    Results: `output` `[B, D, L]` in `u`'s type and `final_state`
    `[B, D, N]` (`h[L−1]`, the next call's `state`; a decode step is
    `L = 1`). Computed in f32 (f64 for f64 inputs).

    The decomposition is chunked: within chunks of `chunk_size` steps
    (default 8) an associative (Hillis–Steele) scan of the pairs
    `(exp(dt · A), dt · u · B)`, whose composition is
    `(a₁, x₁) ∘ (a₂, x₂) = (a₁a₂, a₂x₁ + x₂)`, in log2(chunk_size) doubling
    steps; the chunks' last pairs are scanned the same way one level up
    until at most 8 chunks remain, which the recurrence carries in order.
    `chunk_size = 1` is the step-by-step recurrence of the reference. Every
    chunk size gives the recurrence's result up to rounding.

    The verifier rejects ranks and sizes other than the above (`N` and the
    chunk size static and ≥ 1), mixed element types, and a negative or zero
    `chunk_size`.

    Example (a Mamba decode step with its state):
    ```mlir
    %y, %h = rlx_mir.selective_scan %u, %dt, %A, %B, %C D(%D : tensor<64xf32>)
        z(%z : tensor<1x64x1xf32>) delta_bias(%db : tensor<64xf32>)
        state(%h0 : tensor<1x64x16xf32>) delta_softplus
        : tensor<1x64x1xf32>, tensor<1x64x1xf32>, tensor<64x16xf32>, tensor<1x16x1xf32>,
          tensor<1x16x1xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$u, RLX_FloatTensor:$delta, RLX_FloatTensor:$A,
                   RLX_FloatTensor:$B, RLX_FloatTensor:$C, Optional<RLX_FloatTensor>:$D,
                   Optional<RLX_FloatTensor>:$z, Optional<RLX_FloatTensor>:$delta_bias,
                   Optional<RLX_FloatTensor>:$state, UnitAttr:$delta_softplus,
                   OptionalAttr<I64Attr>:$chunk_size);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$final_state);
  let assemblyFormat = [{
    $u `,` $delta `,` $A `,` $B `,` $C (`D` `(` $D^ `:` type($D) `)`)?
    (`z` `(` $z^ `:` type($z) `)`)? (`delta_bias` `(` $delta_bias^ `:` type($delta_bias) `)`)?
    (`state` `(` $state^ `:` type($state) `)`)? (`delta_softplus` $delta_softplus^)?
    (`chunk_size` `=` $chunk_size^)? attr-dict
    `:` type($u) `,` type($delta) `,` type($A) `,` type($B) `,` type($C)
  }];
}

def MIR_SsdScanOp : MIR_InferOp<"ssd_scan", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "Mamba-2's state-space duality scan (scalar decay per head, grouped B and C)";
  let description = [{
    The scan of Mamba-2 (mamba-ssm's `mamba_chunk_scan_combined`;
    transformers' `mamba2_chunk_scan`, and `mamba2_selective_state_update`
    for a decode step, which does not clamp dt), in their layout: `x` `[B, L, H, P]`
    (`H` heads of `P` channels), `dt` `[B, L, H]`, `A` `[H]` (one scalar per
    head), `B` and `C` `[B, L, G, N]` (`G` groups; head `h` reads group
    `h / (H / G)`), optional `D` `[H]`, `dt_bias` `[H]` and initial `state`
    `[B, H, P, N]`:

    - `dt = dt + dt_bias`, then `softplus(dt)` with `dt_softplus`
      (computed as `max(dt, 0) + log(1 + exp(−|dt|))`), then clamped to
      `[dt_min, dt_max]` where given (transformers' `time_step_limit`);
    - `h[t] = exp(dt[t] · A) · h[t−1] + dt[t] · x[t] ⊗ B[t]` per head (a
      `[P, N]` state), from `h[−1] = state` (zeros without one);
    - `y[t] = h[t] · C[t] + D · x[t]`.

    Results: `output` `[B, L, H, P]` in `x`'s type and `final_state`
    `[B, H, P, N]` (`h[L−1]`, the next call's `state`; a decode step is
    `L = 1`). Computed in f32 (f64 for f64 inputs).

    The decomposition is the chunked SSD form (Dao & Gu, 2024; transformers'
    `mamba2_chunk_scan`): per chunk of `chunk_size` steps (default 64) the
    output within the chunk is a masked matmul `((C·Bᵀ) ⊙ exp(segsum(dt·A)))
    · (dt·x)` with the decay's cumulative sums, each chunk's state is a
    matmul, the states entering the chunks are a linear scan over the chunks
    (selective_scan's chunked doubling scan), and their contribution is
    `C · state · exp(cumsum(dt·A))`. Every chunk size gives the recurrence's
    result up to rounding; a chunk above 256 is built as 256.

    The verifier rejects ranks and sizes other than the above (`P`, `N`,
    `G` static and ≥ 1, `H` a multiple of `G`), mixed element types,
    `chunk_size` < 1, non-finite limits and `dt_min` > `dt_max`.

    Example (a Mamba-2 decode step: 8 heads of 16 in 2 groups, state 32):
    ```mlir
    %y, %h = rlx_mir.ssd_scan %x, %dt, %A, %B, %C D(%D : tensor<8xf32>)
        dt_bias(%db : tensor<8xf32>) state(%h0 : tensor<1x8x16x32xf32>) dt_softplus
        : tensor<1x1x8x16xf32>, tensor<1x1x8xf32>, tensor<8xf32>, tensor<1x1x2x32xf32>,
          tensor<1x1x2x32xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$x, RLX_FloatTensor:$dt, RLX_FloatTensor:$A,
                   RLX_FloatTensor:$B, RLX_FloatTensor:$C, Optional<RLX_FloatTensor>:$D,
                   Optional<RLX_FloatTensor>:$dt_bias, Optional<RLX_FloatTensor>:$state,
                   UnitAttr:$dt_softplus, OptionalAttr<F64Attr>:$dt_min,
                   OptionalAttr<F64Attr>:$dt_max, OptionalAttr<I64Attr>:$chunk_size);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$final_state);
  let assemblyFormat = [{
    $x `,` $dt `,` $A `,` $B `,` $C (`D` `(` $D^ `:` type($D) `)`)?
    (`dt_bias` `(` $dt_bias^ `:` type($dt_bias) `)`)?
    (`state` `(` $state^ `:` type($state) `)`)? (`dt_softplus` $dt_softplus^)?
    (`dt_min` `=` $dt_min^)? (`dt_max` `=` $dt_max^)? (`chunk_size` `=` $chunk_size^)? attr-dict
    `:` type($x) `,` type($dt) `,` type($A) `,` type($B) `,` type($C)
  }];
}

def MIR_GatedDeltaRuleOp : MIR_InferOp<"gated_delta_rule", [
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "the gated delta rule (linear attention with a decayed, delta-updated state)";
  let description = [{
    The linear-attention recurrence of Gated DeltaNet (Yang, Kautz &
    Hatamizadeh, 2024; flash-linear-attention's `chunk_gated_delta_rule` and
    `fused_recurrent_gated_delta_rule`; transformers'
    `Qwen3NextGatedDeltaNet`), in their layout: `query` and `key`
    `[B, L, H, Dk]`, `value` `[B, L, H, Dv]`, the log-decay `g` and the
    write strength `beta` `[B, L, H]`, optional initial `state`
    `[B, H, Dk, Dv]`. Query, key and value have the same heads: a model
    with fewer key heads than value heads (Qwen3-Next: 16 and 32) repeats
    each q/k head over its value heads first, as its reference does. Per
    head, with `q` scaled by `scale` (default
    `1/√Dk`) and, with `use_qk_l2norm`, `q` and `k` first divided by
    `√(Σ x² + 1e-6)` over their last axis (FLA's `l2norm`):

    - `S = exp(g[t]) · S[t−1]`;
    - `S[t] = S + k[t] ⊗ (beta[t] · (v[t] − kᵀ[t] · S))`;
    - `o[t] = qᵀ[t] · S[t]`

    from `S[−1] = state` (zeros without one). Results: `output`
    `[B, L, H, Dv]` in the query's type and `final_state` `[B, H, Dk, Dv]`
    (the next call's `state`; a decode step is `L = 1`). Computed in f32
    (f64 for f64 inputs).

    The decomposition is the chunked form of `chunk_gated_delta_rule` (the
    WY representation): per chunk of `chunk_size` steps (default 64) the
    unit lower-triangular `(I + tril(diag(beta)·K·Kᵀ ⊙ decay, −1))⁻¹` by
    forward substitution (one row per step, vectorized over batch, heads
    and chunks), the chunk's corrected values and decayed keys as matmuls,
    then the chunks in order, each a few matmuls against the state. Every
    chunk size gives the recurrence's result up to rounding; a chunk above
    256 is built as 256.

    The verifier rejects ranks and sizes other than the above (`Dk`, `Dv`
    static and ≥ 1), mixed element types, a `scale` that is not positive
    and finite, and `chunk_size` < 1.

    Example (a decode step: 4 heads, keys of 16, values of 32):
    ```mlir
    %o, %s = rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta state(%s0 : tensor<1x4x16x32xf32>)
        use_qk_l2norm : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x32xf32>,
        tensor<1x1x4xf32>, tensor<1x1x4xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$query, RLX_FloatTensor:$key, RLX_FloatTensor:$value,
                   RLX_FloatTensor:$g, RLX_FloatTensor:$beta, Optional<RLX_FloatTensor>:$state,
                   UnitAttr:$use_qk_l2norm, OptionalAttr<F64Attr>:$scale,
                   OptionalAttr<I64Attr>:$chunk_size);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$final_state);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $g `,` $beta (`state` `(` $state^ `:` type($state) `)`)?
    (`use_qk_l2norm` $use_qk_l2norm^)? (`scale` `=` $scale^)? (`chunk_size` `=` $chunk_size^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,` type($g) `,` type($beta)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRSSMOPS_TD
