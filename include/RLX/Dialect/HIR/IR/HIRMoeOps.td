//===- HIRMoeOps.td - rlx_hir mixture-of-experts blocks ------*- tablegen -*-===//
//
// A sparse MoE block as transformers writes it: a router (moe_router) that
// picks k experts per token with their weights, and the experts
// (moe_experts) that run each token through its k SwiGLU experts and sum the
// weighted outputs. Both lower to rlx_mir primitives (linear, softmax or
// sigmoid, topk, grouped_matmul, reductions).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIRMOEOPS_TD
#define RLX_DIALECT_HIR_IR_HIRMOEOPS_TD

def HIR_MoeRouterOp : HIR_Op<"moe_router", [AttrSizedOperandSegments]> {
  let summary = "mixture-of-experts router: top-k experts and their weights per token";
  let description = [{
    For each token `x` (a row of `input` `[..., H]`) with router `weight`
    `[E, H]` (HF's `mlp.gate.weight`, an `nn.Linear` without bias unless
    `bias` `[E]` is given):

    ```
    logits = x·weightᵀ (+ bias)                       (f32)
    softmax:      s = softmax(logits); ids = topk(s + c, k); w = s[ids]
    topk_softmax: ids = topk(logits, k); w = softmax(logits[ids])
    sigmoid:      s = sigmoid(logits); ids = topk(s + c, k); w = s[ids]
    w = w / sum(w)            (norm_topk_prob)
    w = w · routed_scaling_factor                     (when given)
    ```

    `c` is the optional `correction_bias` `[E]` (DeepSeek-V3's
    `e_score_correction_bias`): it changes which experts are chosen, not
    their weights. With `n_group` and `topk_group` (DeepSeek-V3's
    group-limited routing) the experts are split into `n_group` groups of
    consecutive ids, each group scored by the sum of its two largest
    `s + c`, and the top k is taken among the experts of the `topk_group`
    best groups only. Sources: transformers' `MixtralTopKRouter` (softmax,
    normalized), `Qwen2MoeTopKRouter`/`Qwen3MoeTopKRouter`/`OlmoeTopKRouter`
    (softmax, `norm_topk_prob`), `GptOssTopKRouter` (topk_softmax, with a
    bias), `DeepseekV3TopkRouter` + `route_tokens_to_experts` (sigmoid,
    correction bias, groups, normalized, scaled). transformers runs
    DeepSeek-V3's router in f32 whatever the model's type (and adds 1e-20
    to the normalizing sum): this op computes the logits in the input's
    type, so a bf16 model routes as transformers does only when the router
    is given f32 input and weights.

    Ties between experts go to the lower expert id (`rlx_mir.topk`'s rule;
    `torch.topk` does not promise an order for ties).

    Results: `weights` `[..., k]` f32 (HF keeps them in f32 for Mixtral and
    casts to the model's type for Qwen/OLMoE before scaling the expert
    outputs; with an f32 model the two agree), `ids` `[..., k]` i64, in
    descending order of the selection score.

    The verifier rejects a dynamic E, a weight that is not `[E, H]` for the
    input's H,
    biases that are not `[E]`, `top_k` < 1 or > E, a
    `routed_scaling_factor` that is not positive and finite, one of
    `n_group`/`topk_group` without the other, groups that do not split E
    into groups of at least two, `topk_group` outside [1, n_group], fewer
    experts in the chosen groups than `top_k`, groups with a scoring other
    than sigmoid or softmax, and mixed element types.

    Example:
    ```mlir
    %w, %ids = rlx_hir.moe_router %x, %gate top_k = 2 norm_topk_prob
        : tensor<1x?x4096xf32>, tensor<8x4096xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   Optional<RLX_FloatTensor>:$bias,
                   Optional<RLX_FloatTensor>:$correction_bias,
                   RLX_I64Attr:$top_k,
                   DefaultValuedAttr<RLX_MoeScoringAttr, "::mlir::rlx::MoeScoring::Softmax">:$scoring,
                   UnitAttr:$norm_topk_prob,
                   OptionalAttr<F64Attr>:$routed_scaling_factor,
                   OptionalAttr<RLX_I64Attr>:$n_group, OptionalAttr<RLX_I64Attr>:$topk_group);
  let results = (outs RankedTensorOf<[F32]>:$weights, RankedTensorOf<[I64]>:$ids);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`correction_bias` `(` $correction_bias^ `:` type($correction_bias) `)`)?
    `top_k` `=` $top_k (`scoring` `` $scoring^)? (`norm_topk_prob` $norm_topk_prob^)?
    (`routed_scaling_factor` `=` $routed_scaling_factor^)?
    (`n_group` `=` $n_group^ `topk_group` `=` $topk_group)? attr-dict `:`
    type($input) `,` type($weight)
  }];
}

def HIR_MoeExpertsOp : HIR_Op<"moe_experts", [AttrSizedOperandSegments]> {
  let summary = "each token through its k gated experts, weighted and summed";
  let description = [{
    For each token `x` (a row of `input` `[..., H]`) with its expert `ids`
    `[..., k]` and routing `weights` `[..., k]` (from `moe_router`):

    ```
    y = Σ_j weights[j] · down[e]·(act(gate[e]·x) ⊙ up[e]·x),   e = ids[j]
    ```

    as transformers' `MixtralExperts` / `Qwen2MoeExperts` /
    `Qwen3MoeExperts` / `OlmoeExperts` (v5) compute it. Weights stacked
    over the `E` experts: `gate_up` `[E, 2·I, H]` (gate rows first, then up:
    v5's `experts.gate_up_proj`, or the per-expert `gate_proj` and `up_proj`
    of a checkpoint stacked), `down` `[E, H, I]` (`experts.down_proj`).
    `activation`: silu (default), gelu, gelu_tanh or relu (the config's
    `hidden_act`). An id outside [0, E) is clamped (as `grouped_matmul`).
    Result `[..., H]` of the input's type; the routing weights are
    converted to it before scaling the expert outputs.

    gpt-oss (`GptOssExperts`): optional biases `gate_up_bias` `[E, 2I]` and
    `down_bias` `[E, H]` (added to each row's expert's projections), and
    with `swiglu_alpha` the clamped SwiGLU
    `(clamp(up, −limit, limit) + 1) · g · sigmoid(alpha · g)`,
    `g = min(gate, limit)`, where `swiglu_limit` is the limit (no clamp
    without it). gpt-oss's checkpoint stores gate_up as `[E, H, 2I]` with
    gate and up interleaved: the model generator turns it into this op's
    layout from parameters only.

    Llama-4 (`Llama4TextMoe`): with `weights_on_input` the routing weight
    scales the expert's input instead of its output,
    `y = Σ_j down[e]·(act(gate[e]·(w_j x)) ⊙ up[e]·(w_j x))` (biases, if
    any, added unscaled); the weight is converted to the input's type
    first, as transformers multiplies the hidden states by the scores in
    the model's dtype. An unrouted expert (a zero input) adds nothing, so
    the sparse sum equals `Llama4TextExperts`' dense one. Its checkpoint
    stores `gate_up_proj` as `[E, H, 2I]` (gate columns, then up) and
    `down_proj` as `[E, I, H]`; the model generator transposes them from
    parameters only.

    The verifier rejects a `gate_up` whose middle dim is odd, a `down` that
    is not `[E, H, I]` for the same E, H and I, `weights`/`ids` whose shape
    is not the input's leading dims plus `k`, a dynamic k or one outside
    [1, E], expert weights with a dynamic dim, an input H that is not the
    experts', non-integer ids, activations other than the four above,
    mixed element types of input and expert weights; biases that are not
    `[E, 2I]` / `[E, H]` of the weights' type; `swiglu_limit` without
    `swiglu_alpha`, a non-positive limit, and `swiglu_alpha` with an
    activation other than silu.

    Example:
    ```mlir
    %y = rlx_hir.moe_experts %x, %w, %ids, gate_up %gu, down %d
        : tensor<1x?x4096xf32>, tensor<1x?x2xf32>, tensor<1x?x2xi64>,
          tensor<8x28672x4096xf32>, tensor<8x4096x14336xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weights,
                   RLX_IndexTensor:$ids, RLX_FloatTensor:$gate_up, RLX_FloatTensor:$down,
                   Optional<RLX_FloatTensor>:$gate_up_bias, Optional<RLX_FloatTensor>:$down_bias,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::Silu">:$activation,
                   OptionalAttr<F64Attr>:$swiglu_alpha, OptionalAttr<F64Attr>:$swiglu_limit,
                   UnitAttr:$weights_on_input);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weights `,` $ids `,` `gate_up` $gate_up `,` `down` $down
    (`gate_up_bias` `(` $gate_up_bias^ `:` type($gate_up_bias) `)`)?
    (`down_bias` `(` $down_bias^ `:` type($down_bias) `)`)?
    (`activation` `` $activation^)? (`swiglu_alpha` `=` $swiglu_alpha^)?
    (`swiglu_limit` `=` $swiglu_limit^)? (`weights_on_input` $weights_on_input^)?
    attr-dict `:` type($input) `,` type($weights) `,`
    type($ids) `,` type($gate_up) `,` type($down)
  }];
}

#endif // RLX_DIALECT_HIR_IR_HIRMOEOPS_TD
