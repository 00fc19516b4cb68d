//===- HIROps.td - rlx_hir block ops ------------------------*- tablegen -*-===//
//
// The block ops of rlx_hir. Shape rules live in RLX/Dialect/Common/IR/ShapeRules.h,
// shared with rlx_mir: the verifier and the result-type inference call the same
// function, so a diagnostic from the parser, the verifier or a builder reads the
// same.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIROPS_TD
#define RLX_DIALECT_HIR_IR_HIROPS_TD

include "RLX/Dialect/HIR/IR/HIRDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

def HIR_LinearOp : HIR_Op<"linear"> {
  let summary = "fully connected layer: y = act(x·Wᵀ + b)";
  let description = [{
    Applies a linear layer to the last axis of `input`, then an optional bias
    and activation. Matches PyTorch `nn.Linear` followed by the activation.

    Operands:
    - `input`: `[..., in_features]`, f32/f16/bf16/f64, rank ≥ 1.
    - `weight`: `[out_features, in_features]` with `layout out_in` (default,
      PyTorch/HF) or `[in_features, out_features]` with `layout in_out`
      (original RLX, GPT-2 `Conv1D`). Same element type as `input`.
    - `bias` (optional): `[out_features]`, same element type.

    Result: `[..., out_features]`, the element type of `input`.

    Attributes: `activation` (default `none`; `gelu` is exact erf-GELU,
    `gelu_tanh` the tanh approximation, `silu` = x·sigmoid(x)); `layout`.

    The verifier rejects: rank-0 input, a weight that is not rank 2,
    mismatched `in_features`, a bias that is not `[out_features]`, and mixed
    element types.

    Example:
    ```mlir
    %y = rlx_hir.linear %x, %w bias %b activation gelu
        : tensor<1x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   Optional<RLX_FloatTensor>:$bias,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::None">:$activation,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`activation` `` $activation^)? (`layout` `` $layout^)?
    attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def HIR_RmsNormOp : HIR_Op<"rms_norm"> {
  let summary = "RMSNorm over the last axis";
  let description = [{
    `y = x · rsqrt(mean(x², last axis) + eps) · weight`. Matches HF
    `LlamaRMSNorm`: eps inside the square root, statistics in f32 even for
    bf16/f16 inputs, one rounding to the input type at the end.

    Operands: `input` `[..., H]` (f32/f16/bf16/f64, rank ≥ 1), `weight` `[H]`
    (same element type). Result: the type of `input`.
    Attribute: `eps` (dimensionless, must be > 0; HF `rms_norm_eps`).

    The verifier rejects eps ≤ 0 (or NaN), a weight that is not `[H]`, and
    mixed element types.

    Example:
    ```mlir
    %y = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `eps` `=` $eps attr-dict `:` type($input) `,` type($weight)
  }];
}

def HIR_ResidualRmsNormOp : HIR_Op<"residual_rms_norm"> {
  let summary = "residual add followed by RMSNorm; returns the norm and the sum";
  let description = [{
    `sum = input + residual; output = rms_norm(sum, weight, eps)`. A pre-norm
    decoder layer needs both: `output` feeds the next block and `sum` is the
    next residual. RMSNorm semantics as `rlx_hir.rms_norm` (HF `LlamaRMSNorm`,
    statistics in f32).

    Operands: `input` and `residual` of identical type `[..., H]`, `weight`
    `[H]`, all the same element type. Results: `output`, `sum`, both the type
    of `input`. Attribute: `eps` > 0.

    The verifier rejects eps ≤ 0, `input`/`residual` of different shapes, a
    weight that is not `[H]`, and mixed element types.

    Example:
    ```mlir
    %n, %s = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-05
        : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$residual,
                   RLX_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$sum);
  let assemblyFormat = [{
    $input `,` $residual `,` $weight `eps` `=` $eps attr-dict `:`
    type($input) `,` type($residual) `,` type($weight)
  }];
}

def HIR_LayerNormOp : HIR_Op<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "LayerNorm over the last axis";
  let description = [{
    `y = (x - mean) · rsqrt(var + eps) · weight + bias` over the last axis,
    with mean and biased variance computed in f32 (PyTorch `nn.LayerNorm`,
    GPT-2's `ln_1`/`ln_2`/`ln_f`).

    Operands: `input` `[..., H]`; optional `weight` `[H]` and `bias` `[H]`
    (same element type). Result: the type of `input`. Attribute `eps` > 0.

    The verifier rejects eps ≤ 0, weight/bias that are not `[H]` and mixed
    element types.

    Example:
    ```mlir
    %y = rlx_hir.layer_norm %x weight(%g : tensor<768xf32>) bias(%b : tensor<768xf32>)
        eps = 1.0e-05 : tensor<1x?x768xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, Optional<RLX_FloatTensor>:$weight,
                   Optional<RLX_FloatTensor>:$bias, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `:` type($weight) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)? `eps` `=` $eps attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// swiglu
//===----------------------------------------------------------------------===//

def HIR_SwiGluOp : HIR_Op<"swiglu"> {
  let summary = "gated feed-forward block: down(act(gate(x)) · up(x))";
  let description = [{
    The SwiGLU FFN of Llama/Qwen/Mistral (HF `LlamaMLP`):
    `y = (act(x·Wgateᵀ) ⊙ (x·Wupᵀ))·Wdownᵀ` with `act = silu` by default
    (`gelu_tanh` gives GeGLU). No biases.

    Operands (`layout out_in`, the default): `input` `[..., H]`,
    `gate_weight` `[I, H]`, `up_weight` `[I, H]`, `down_weight` `[H, I]`;
    with `layout in_out` the weights are transposed (`[H, I]`, `[H, I]`,
    `[I, H]`). All the same float element type. Result: `[..., H]`.

    The verifier rejects gate/up weights that differ in shape, a down weight
    that does not map I back to H, a hidden size that does not match the
    input, activations other than silu/gelu/gelu_tanh/relu, and mixed types.

    Example:
    ```mlir
    %y = rlx_hir.swiglu %x, gate %wg, up %wu, down %wd
        : tensor<1x?x2048xf32>, tensor<8192x2048xf32>, tensor<8192x2048xf32>,
          tensor<2048x8192xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$gate_weight,
                   RLX_FloatTensor:$up_weight, RLX_FloatTensor:$down_weight,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::Silu">:$activation,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` `gate` $gate_weight `,` `up` $up_weight `,` `down` $down_weight
    (`activation` `` $activation^)? (`layout` `` $layout^)? attr-dict `:`
    type($input) `,` type($gate_weight) `,` type($up_weight) `,` type($down_weight)
  }];
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

def HIR_AttentionOp : HIR_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention with GQA, causal/sliding/chunked masks";
  let description = [{
    `out = softmax(mask(softcap(scale · q·kᵀ)))·v` per head, computed with the
    running-max trick in f32. Semantics follow PyTorch
    `scaled_dot_product_attention` with HF's GQA and sliding-window
    conventions (DESIGN §3):

    - GQA/MQA natively: `num_heads % num_kv_heads == 0`, query head `h` reads
      kv head `h / (num_heads / num_kv_heads)`; K/V are never copied.
    - `scale` defaults to `1/sqrt(head_dim)`.
    - `softcap` `c` (optional) applies `c·tanh(s/c)` to the scaled logits
      before the mask (Gemma-2).
    - `causal` is bottom-right aligned: key `j` is visible to query `i` iff
      `j ≤ i'` with `i' = i + Sk − Sq` (a decode step sees every key).
      `sliding_window` with `window = w` keeps `i' − w < j ≤ i'`;
      `chunked` with `window = c` (the chunk size) keeps `⌊i'/c⌋·c ≤ j ≤ i'`
      (Llama-4's `chunked_attention` layers).
    - `mask` operand (optional): i1 (true = attend, PyTorch SDPA) or additive
      float, broadcastable to `[B, num_heads, Sq, Sk]` from rank 2
      `[Sq, Sk]`, rank 3 `[B, Sq, Sk]` or rank 4 `[B, 1|num_heads, Sq, Sk]`.
    - A query row with no visible key outputs 0, never NaN.
    - `sinks` operand (optional, `[num_heads]`, q's element type): one
      learned logit per query head that joins every row's softmax
      denominator and attends to nothing (gpt-oss, transformers'
      `GptOssAttention`): with `m = max(max_j s_j, sink)`,
      `p_j = exp(s_j − m) / (Σ_j exp(s_j − m) + exp(sink − m))`. A row with
      no visible key then outputs 0 as well.

    Shapes by `layout`: `bsd` (default) q `[B, Sq, Hq·D]`, k/v `[B, Sk, Hkv·D]`;
    `bshd` q `[B, Sq, Hq, D]`, k/v `[B, Sk, Hkv, D]`; `bhsd` q `[B, Hq, Sq, D]`,
    k/v `[B, Hkv, Sk, D]`. v may have its own head size Dv; the result has q's
    layout with Dv. q, k, v share one float element type.

    The verifier rejects: num_heads not divisible by num_kv_heads,
    non-positive head counts or head_dim, a q/k/v hidden size that is not
    heads × head_dim, ranks that do not match the layout, mismatched batch or
    k/v sequence lengths, a sliding window or chunked mask without a
    positive `window` (or a `window` with another mask kind), non-positive
    scale or softcap, a
    mask of the wrong rank, shape or element type, sinks that are not
    `[num_heads]` of q's element type.

    Example (Llama-3.2-1B, 32 query heads sharing 8 kv heads of 64):
    ```mlir
    %o = rlx_hir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 64 causal
        : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
    ```
  }];
  let arguments = !con((ins RLX_FloatTensor:$query, RLX_FloatTensor:$key,
                        RLX_FloatTensor:$value, Optional<RLX_MaskTensor>:$mask,
                        Optional<RLX_FloatTensor>:$sinks),
                       RLX_AttentionAttrs);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = !strconcat(RLX_AttentionOperandsFormat,
                                  [{ (`sinks` `(` $sinks^ `:` type($sinks) `)`)? }],
                                  RLX_AttentionAttrsFormat);
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

def HIR_RopeOp : HIR_Op<"rope", [AttrSizedOperandSegments]> {
  let summary = "rotary position embedding on packed heads";
  let description = [{
    Rotates the first `rotary_dim` dims of every head of `input` by
    position-dependent angles (RoFormer; HF `apply_rotary_pos_emb`). The
    remaining `head_dim - rotary_dim` dims pass through.

    Two forms:
    - `positions` (i32/i64, `[S]` or `[B, S]`): angles are
      `pos · inv_freq[i]` with `inv_freq[i] = theta^(-2i/rotary_dim)`,
      optionally rescaled by `scaling` (HF `rope_scaling`, e.g. llama3).
    - `cos`, `sin` (float, `[S, rotary_dim/2]` or `[B, S, rotary_dim/2]`):
      precomputed tables, one entry per rotated pair.

    `style neox` (default) pairs dim `i` with `i + rotary_dim/2` (HF
    `rotate_half`); `style gptj` pairs `2i` with `2i+1`.

    `input`: `[B, S, H·head_dim]` (heads packed, as a linear layer produces),
    f32/f16/bf16/f64. Result: the type of `input`. Angles are computed in f32.

    The verifier rejects: neither or both forms, a last axis not divisible by
    head_dim, rotary_dim odd or larger than head_dim, theta ≤ 0, positions
    or tables whose S (or B) does not match the input, tables whose last axis
    is not rotary_dim/2, and `theta`/`scaling` given with tables.

    Example:
    ```mlir
    %qr = rlx_hir.rope %q positions(%pos : tensor<?xi64>) head_dim = 64 theta = 5.0e+05
        : tensor<1x?x2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input,
                   Optional<RLX_IndexTensor>:$positions,
                   Optional<RLX_FloatTensor>:$cos, Optional<RLX_FloatTensor>:$sin,
                   RLX_I64Attr:$head_dim, OptionalAttr<RLX_I64Attr>:$rotary_dim,
                   OptionalAttr<F64Attr>:$theta,
                   DefaultValuedAttr<RLX_RopeStyleAttr, "::mlir::rlx::RopeStyle::NeoX">:$style,
                   OptionalAttr<RLX_RopeScalingAttr>:$scaling);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`tables` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    `head_dim` `=` $head_dim (`rotary_dim` `=` $rotary_dim^)? (`theta` `=` $theta^)?
    (`style` `` $style^)? (`scaling` $scaling^)? attr-dict `:` type($input)
  }];
  let extraClassDeclaration = [{
    /// rotary_dim, defaulting to head_dim.
    int64_t getRotaryDimOrDefault() { return getRotaryDim().value_or(getHeadDim()); }
    /// theta, defaulting to 10000 (the RoFormer/Llama-2 value).
    double getThetaOrDefault() { return getTheta() ? getTheta()->convertToDouble() : 10000.0; }
  }];
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

def HIR_EmbeddingOp : HIR_Op<"embedding"> {
  let summary = "token embedding lookup";
  let description = [{
    `out[..., :] = table[ids[...], :]` (PyTorch `nn.Embedding`). Ids outside
    `[0, V)` are undefined behaviour at run time (the CPU path clamps them).

    Operands: `ids` of any rank, i32/i64; `table` `[V, H]`, float.
    Result: `ids.shape + [H]`, the table's element type.

    The verifier rejects a table that is not rank 2 and non-integer ids.

    Example:
    ```mlir
    %h = rlx_hir.embedding %ids, %table : tensor<1x?xi64>, tensor<128256x2048xf32>
    ```
  }];
  let arguments = (ins RLX_IndexTensor:$ids, RLX_FloatTensor:$table);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = "$ids `,` $table attr-dict `:` type($ids) `,` type($table)";
}

//===----------------------------------------------------------------------===//
// qk_norm
//===----------------------------------------------------------------------===//

def HIR_QkNormOp : HIR_Op<"qk_norm"> {
  let summary = "per-head RMSNorm of packed query or key heads (Qwen3)";
  let description = [{
    Applies RMSNorm over each head of `input` separately:
    `y[..., h, :] = rms_norm(x[..., h, :]) · weight` with `x` viewed as
    `[..., H, head_dim]`. Matches Qwen3's `q_norm`/`k_norm`
    (`Qwen3RMSNorm` on `[B, S, H, D]` before RoPE), statistics in f32.

    Operands: `input` `[..., H·head_dim]`, float; `weight` `[head_dim]`,
    same element type. Result: the type of `input`. Attributes: `head_dim`
    > 0, `eps` > 0.

    The verifier rejects a last dim not divisible by head_dim, a weight that
    is not `[head_dim]`, eps ≤ 0 and mixed element types.

    Example:
    ```mlir
    %qn = rlx_hir.qk_norm %q, %g head_dim = 128 eps = 1.0e-06
        : tensor<1x?x2048xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   RLX_I64Attr:$head_dim, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `head_dim` `=` $head_dim `eps` `=` $eps attr-dict `:`
    type($input) `,` type($weight)
  }];
}

//===----------------------------------------------------------------------===//
// dequant_linear
//===----------------------------------------------------------------------===//

def HIR_DequantLinearOp : HIR_Op<"dequant_linear"> {
  let summary = "linear layer with NVFP4-quantized weights";
  let description = [{
    `y = act(x·dequant(W)ᵀ + b)` where `dequant(W) = e2m1 · e4m3_scale ·
    global_scale` (DESIGN §3, NVIDIA's NVFP4: FP4 E2M1 values, one FP8 E4M3
    scale per 16 consecutive elements along K, one f32 per-tensor scale; a
    NaN block scale decodes to 0). Accumulation is in f32.

    Operands with `layout out_in` (NVIDIA checkpoints, the default):
    `input` `[..., K]` (f32/f16/bf16), `weight` `[N, K/2]` i8 (two E2M1 codes
    per byte, lower K index in the low nibble), `scales` `[N, K/16]`
    f8E4M3FN, `global_scale` `tensor<f32>`, optional `bias` `[N]` (input
    element type). With `layout in_out` (the original RLX) the weight is
    `[K/2, N]` (pairs along K packed per byte) and the scales `[K/16, N]`.
    Result: `[..., N]` in the input's element type.

    The verifier rejects K not a multiple of 16, weight/scales shapes that do
    not match K and N, a non-scalar global scale, a wrong bias, and a scheme
    other than `nvfp4`.

    Example:
    ```mlir
    %y = rlx_hir.dequant_linear %x, %w, %s, %g
        : tensor<1x?x4096xbf16>, tensor<14336x2048xi8>, tensor<14336x256xf8E4M3FN>, tensor<f32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RankedTensorOf<[I8]>:$weight,
                   RankedTensorOf<[F8E4M3FN]>:$scales, 0DTensorOf<[F32]>:$global_scale,
                   Optional<RLX_FloatTensor>:$bias,
                   DefaultValuedAttr<RLX_QuantSchemeAttr, "::mlir::rlx::QuantScheme::NVFP4">:$scheme,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::None">:$activation,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $scales `,` $global_scale (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`scheme` `` $scheme^)? (`activation` `` $activation^)? (`layout` `` $layout^)? attr-dict `:`
    type($input) `,` type($weight) `,` type($scales) `,` type($global_scale)
  }];
}

//===----------------------------------------------------------------------===//
// decoder_layer
//===----------------------------------------------------------------------===//

def HIR_DecoderLayerOp : HIR_Op<"decoder_layer", [AttrSizedOperandSegments]> {
  let summary = "a whole pre-norm Llama/Qwen/Mistral decoder layer";
  let description = [{
    One decoder layer as in HF `LlamaDecoderLayer` (also Qwen2/Qwen3,
    Mistral):
    ```
    h      = rms_norm(x, input_norm)
    q,k,v  = h·q_projᵀ, h·k_projᵀ, h·v_projᵀ
    q,k    = qk_norm(q, q_norm), qk_norm(k, k_norm)     (Qwen3, optional)
    q,k    = rope(q, positions), rope(k, positions)
    k,v    = concat(past_key, k), concat(past_value, v) (KV cache, optional)
    a      = attention(q, k, v)                         (causal or sliding window)
    r      = x + a·o_projᵀ
    output = r + swiglu(rms_norm(r, post_norm), gate_proj, up_proj, down_proj)
    ```
    Results: `output` `[B, S, H]`, and `present_key`/`present_value`
    `[B, P+S, num_kv_heads·head_dim]`, the keys (after RoPE) and values a
    KV cache keeps for the next step (`P` = 0 without a cache).

    Operands: `input` `[B, S, H]`; `positions` `[S]` or `[B, S]` (i32/i64;
    with a cache these are `P..P+S-1`); weights in HF layout `[out, in]`:
    `input_norm` `[H]`, `q_proj` `[Hq·D, H]`, `k_proj`/`v_proj`
    `[Hkv·D, H]`, `o_proj` `[H, Hq·D]`, `post_norm` `[H]`, `gate_proj`/
    `up_proj` `[I, H]`, `down_proj` `[H, I]`; optional `q_norm`/`k_norm`
    `[D]`; optional `past_key`/`past_value` `[B, P, Hkv·D]`. One float
    element type throughout. `head_dim` may differ from H / num_heads
    (Qwen3).

    Attributes: `num_heads`, `num_kv_heads`, `head_dim`, `eps` (both norms,
    and the qk norms), `theta`, optional RoPE `scaling`, `mask` (`causal`
    default, or `sliding_window` with `window`; chunked attention is written
    with `rlx_hir.attention`), `activation` (`silu`).

    The verifier rejects any weight whose shape does not match H, I, Hq·D,
    Hkv·D or D, heads not divisible by kv heads, eps/theta ≤ 0, one of
    q_norm/k_norm or past_key/past_value without the other, a cache whose
    batch or width does not match, and mixed element types.

    Example: see `examples/llama-3.2-1b-layer.mlir` and the model generator.
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_IndexTensor:$positions,
                   RLX_FloatTensor:$input_norm, RLX_FloatTensor:$q_proj,
                   RLX_FloatTensor:$k_proj, RLX_FloatTensor:$v_proj,
                   RLX_FloatTensor:$o_proj, RLX_FloatTensor:$post_norm,
                   RLX_FloatTensor:$gate_proj, RLX_FloatTensor:$up_proj,
                   RLX_FloatTensor:$down_proj,
                   Optional<RLX_FloatTensor>:$q_norm, Optional<RLX_FloatTensor>:$k_norm,
                   Optional<RLX_FloatTensor>:$past_key, Optional<RLX_FloatTensor>:$past_value,
                   RLX_I64Attr:$num_heads, RLX_I64Attr:$num_kv_heads, RLX_I64Attr:$head_dim,
                   F64Attr:$eps, F64Attr:$theta,
                   OptionalAttr<RLX_RopeScalingAttr>:$scaling,
                   DefaultValuedAttr<RLX_MaskKindAttr, "::mlir::rlx::MaskKind::Causal">:$mask,
                   OptionalAttr<RLX_I64Attr>:$window,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::Silu">:$activation);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$present_key,
                 RLX_FloatTensor:$present_value);
  let assemblyFormat = [{
    $input `positions` `(` $positions `:` type($positions) `)`
    `weights` `(` $input_norm `,` $q_proj `,` $k_proj `,` $v_proj `,` $o_proj `,`
        $post_norm `,` $gate_proj `,` $up_proj `,` $down_proj `:`
        type($input_norm) `,` type($q_proj) `,` type($k_proj) `,` type($v_proj) `,`
        type($o_proj) `,` type($post_norm) `,` type($gate_proj) `,` type($up_proj) `,`
        type($down_proj) `)`
    (`qk_norm` `(` $q_norm^ `,` $k_norm `:` type($q_norm) `,` type($k_norm) `)`)?
    (`cache` `(` $past_key^ `,` $past_value `:` type($past_key) `,` type($past_value) `)`)?
    `heads` `=` $num_heads `,` `kv_heads` `=` $num_kv_heads `,` `head_dim` `=` $head_dim
    `eps` `=` $eps `theta` `=` $theta (`scaling` $scaling^)? (`mask` `` $mask^)?
    (`window` `=` $window^)? (`activation` `` $activation^)? attr-dict `:` type($input)
  }];
}

include "RLX/Dialect/HIR/IR/HIRMoeOps.td"
include "RLX/Dialect/HIR/IR/HIRAudioOps.td"

#endif // RLX_DIALECT_HIR_IR_HIROPS_TD
