//===- RLXBase.td - Attributes shared by rlx_hir, rlx_mir, rlx_lir -*- tablegen -*-===//
//
// The `rlx` dialect holds nothing but the attributes every RLX level shares:
// the activation kind, the attention mask kind and layout, the weight layout,
// the quantization scheme, the RoPE style and frequency scaling, and the
// reduction kind. Ops of all three levels use them, so a fused MIR op and the
// HIR block it came from spell `silu` or `causal` the same way.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_RLXBASE_TD
#define RLX_DIALECT_COMMON_IR_RLXBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def RLX_Dialect : Dialect {
  let name = "rlx";
  let cppNamespace = "::mlir::rlx";
  let summary = "Attributes shared by the RLX dialects (HIR, MIR, LIR).";
  let description = [{
    The `rlx` dialect defines no operations. It owns the enum and struct
    attributes that the three RLX levels have in common, so that every level
    prints and parses them the same way. Inside an op's custom assembly the
    enums print as bare keywords (`silu`, `causal`); in generic form they print
    as `#rlx<activation silu>`.

    It also owns, and verifies, the discardable `rlx.*` attributes:
    - on function arguments: `rlx.dim_names` (one string per dim of a tensor
      argument, non-empty exactly on the dynamic dims it names: `batch`,
      `seq`, `past_seq`, ...; `rlx-mir-specialize` binds them), `rlx.input` /
      `rlx.param` (the argument's name as an input or a weight: a non-empty
      string; at most one of the two), `rlx.output` (an out-parameter's
      name, after bufferization), `rlx.packed_by = {fn = @pack, result = i}`
      (a packed weight: result `i` of the packing function `@pack`, which
      must exist and have that result) and `rlx.packed_from` (the names of
      the parameters it was packed from: strings);
    - on function results: `rlx.output` (a non-empty string);
    - on the module: `rlx.fusion_policy` (`"direct"` or `"fusable"`).
    Any other `rlx.*` name is rejected, so a misspelled attribute is an error,
    not silently ignored.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// `rlx.dim_names` on a function argument names its dynamic dims
    /// (e.g. ["", "seq", ""]) so rlx-mir-specialize can bind them.
    static constexpr ::llvm::StringLiteral kDimNamesAttr = "rlx.dim_names";
  }];
}

// A signless i64 attribute whose getter returns int64_t (upstream I64Attr's
// returns uint64_t, which makes `attr < 0` checks silently false).
def RLX_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                              "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

class RLX_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::rlx";
  let genSpecializedAttr = 0;
}

class RLX_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<RLX_Dialect, info, mnemonic>;

//===----------------------------------------------------------------------===//
// Activation kind
//===----------------------------------------------------------------------===//

def RLX_ActivationKind : RLX_I32Enum<"ActivationKind", "activation function", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Relu", 1, "relu">,
  I32EnumAttrCase<"Gelu", 2, "gelu">,
  I32EnumAttrCase<"GeluTanh", 3, "gelu_tanh">,
  I32EnumAttrCase<"Silu", 4, "silu">,
  I32EnumAttrCase<"Sigmoid", 5, "sigmoid">,
  I32EnumAttrCase<"Tanh", 6, "tanh">
]> {
  let description = [{
    `gelu` is the exact form `0.5·x·(1 + erf(x/√2))` (PyTorch
    `gelu(approximate='none')`); `gelu_tanh` is
    `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))` (PyTorch
    `gelu(approximate='tanh')`, HF `gelu_new`); `silu(x) = x·sigmoid(x)`.
  }];
}
def RLX_ActivationAttr : RLX_EnumAttr<RLX_ActivationKind, "activation">;

//===----------------------------------------------------------------------===//
// Mixture-of-experts router scoring
//===----------------------------------------------------------------------===//

def RLX_MoeScoring : RLX_I32Enum<"MoeScoring", "how a MoE router turns logits into weights", [
  I32EnumAttrCase<"Softmax", 0, "softmax">,
  I32EnumAttrCase<"TopkSoftmax", 1, "topk_softmax">,
  I32EnumAttrCase<"Sigmoid", 2, "sigmoid">
]> {
  let description = [{
    `softmax`: softmax over all experts in f32, then the top k of those
    probabilities (Mixtral, Qwen2/3-MoE, OLMoE). `topk_softmax`: the top k of
    the logits, then softmax over those k (gpt-oss). `sigmoid`: sigmoid of
    each logit in f32, then the top k (DeepSeek-V3, with a selection-only
    correction bias).
  }];
}
def RLX_MoeScoringAttr : RLX_EnumAttr<RLX_MoeScoring, "moe_scoring">;

//===----------------------------------------------------------------------===//
// Attention mask kind and tensor layout
//===----------------------------------------------------------------------===//

def RLX_MaskKind : RLX_I32Enum<"MaskKind", "attention mask kind", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Causal", 1, "causal">,
  I32EnumAttrCase<"SlidingWindow", 2, "sliding_window">,
  I32EnumAttrCase<"Chunked", 3, "chunked">
]> {
  let description = [{
    `causal` is bottom-right aligned: key `j` is visible to query `i` iff
    `j <= i + Sk - Sq`. `sliding_window` with window `w` additionally hides keys
    older than the `w` most recent ones, the query's own position included:
    `i' - w < j <= i'` (the Hugging Face convention). `chunked` with window
    `c` (the chunk size) keeps only the keys of the query's own chunk of `c`
    positions: `⌊i'/c⌋·c ≤ j ≤ i'` (Llama-4's `chunked_attention` layers,
    transformers' `create_chunked_causal_mask`).
  }];
}
def RLX_MaskKindAttr : RLX_EnumAttr<RLX_MaskKind, "mask">;

def RLX_AttnLayout : RLX_I32Enum<"AttnLayout", "attention operand layout", [
  I32EnumAttrCase<"BSD", 0, "bsd">,
  I32EnumAttrCase<"BSHD", 1, "bshd">,
  I32EnumAttrCase<"BHSD", 2, "bhsd">
]> {
  let description = [{
    `bsd`: rank 3, `[batch, seq, heads·head_dim]` (heads packed in the last
    axis, the layout a linear layer produces). `bshd`: rank 4,
    `[batch, seq, heads, head_dim]`. `bhsd`: rank 4,
    `[batch, heads, seq, head_dim]`. The layout is always stated, never
    guessed from sizes.
  }];
}
def RLX_AttnLayoutAttr : RLX_EnumAttr<RLX_AttnLayout, "attn_layout">;

//===----------------------------------------------------------------------===//
// Weight layout and quantization
//===----------------------------------------------------------------------===//

def RLX_WeightLayout : RLX_I32Enum<"WeightLayout", "linear weight layout", [
  I32EnumAttrCase<"OutIn", 0, "out_in">,
  I32EnumAttrCase<"InOut", 1, "in_out">
]> {
  let description = [{
    `out_in`: `[out_features, in_features]`, `y = x·Wᵀ` (PyTorch/HF
    `nn.Linear`, the default). `in_out`: `[in_features, out_features]`,
    `y = x·W` (the original RLX, and GPT-2's `Conv1D`).
  }];
}
def RLX_WeightLayoutAttr : RLX_EnumAttr<RLX_WeightLayout, "weight_layout">;

def RLX_QuantScheme : RLX_I32Enum<"QuantScheme", "weight quantization scheme", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"NVFP4", 1, "nvfp4">
]> {
  let description = [{
    `nvfp4`: FP4 E2M1 values packed two per byte (lower index in the low
    nibble), one FP8 E4M3 scale per 16 consecutive elements along the
    reduction axis, and one f32 per-tensor scale:
    `w = e2m1 · e4m3_scale · global_scale`; a NaN block scale decodes to 0.
  }];
}
def RLX_QuantSchemeAttr : RLX_EnumAttr<RLX_QuantScheme, "quant">;

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

def RLX_RopeStyle : RLX_I32Enum<"RopeStyle", "rotary embedding pairing", [
  I32EnumAttrCase<"NeoX", 0, "neox">,
  I32EnumAttrCase<"GPTJ", 1, "gptj">
]> {
  let description = [{
    `neox`: dimension `i` is paired with `i + rotary_dim/2` (HF
    `rotate_half`, Llama/Qwen/Mistral). `gptj`: dimension `2i` is paired with
    `2i + 1` (interleaved, GPT-J/GPT-NeoX-interleaved checkpoints).
  }];
}
def RLX_RopeStyleAttr : RLX_EnumAttr<RLX_RopeStyle, "rope_style">;

def RLX_RopeScalingKind : RLX_I32Enum<"RopeScalingKind", "RoPE frequency scaling", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Llama3", 1, "llama3">,
  I32EnumAttrCase<"Linear", 2, "linear">,
  I32EnumAttrCase<"Yarn", 3, "yarn">
]>;
def RLX_RopeScalingKindAttr : RLX_EnumAttr<RLX_RopeScalingKind, "rope_scaling_kind">;

// A double-precision attribute parameter printed as a plain number.
class RLX_F64Param<string desc> : APFloatParameter<desc> {
  let parser = [{ ::mlir::rlx::parseF64Param($_parser) }];
  let printer = [{ $_printer << $_self.convertToDouble() }];
}
class RLX_OptionalF64Param<string desc, string default> : RLX_F64Param<desc> {
  let defaultValue = "::llvm::APFloat(" # default # ")";
}

def RLX_RopeScalingAttr : AttrDef<RLX_Dialect, "RopeScaling"> {
  let mnemonic = "rope_scaling";
  let summary = "RoPE inverse-frequency scaling (HF `rope_scaling`)";
  let description = [{
    `llama3` follows HF `_compute_llama3_parameters`: with
    `low = original_max_position_embeddings / low_freq_factor` and
    `high = original_max_position_embeddings / high_freq_factor` as
    wavelengths, frequencies with wavelength < high are kept, those with
    wavelength > low are divided by `factor`, and those in between are
    interpolated smoothly. `linear` divides every frequency by `factor`
    (HF `linear` / position interpolation). `yarn` follows HF
    `_compute_yarn_parameters` (YaRN, gpt-oss, DeepSeek-V3): frequency `i`
    mixes `f_i` (extrapolation) and `f_i / factor` (interpolation) with a
    linear ramp between the correction dims of `beta_fast` and `beta_slow`
    rotations over `original_max_position_embeddings` positions (floored
    and ceiled when `truncate`), and the cos/sin tables are multiplied by
    `attention_factor` (0, the default, means HF's `0.1·ln(factor) + 1`, 1
    for factor ≤ 1).

    The verifier rejects factor ≤ 0; for llama3 low/high factors that are
    not 0 < low < high; for llama3 and yarn a non-positive
    original_max_position_embeddings; for yarn non-positive betas and a
    negative attention_factor.

    Example: `#rlx.rope_scaling<rope_type = llama3, factor = 32.0,
    low_freq_factor = 1.0, high_freq_factor = 4.0,
    original_max_position_embeddings = 8192>`
  }];
  let parameters = (ins
    "::mlir::rlx::RopeScalingKind":$rope_type,
    RLX_F64Param<"frequency divisor">:$factor,
    RLX_OptionalF64Param<"llama3 low_freq_factor", "1.0">:$low_freq_factor,
    RLX_OptionalF64Param<"llama3 high_freq_factor", "4.0">:$high_freq_factor,
    DefaultValuedParameter<"int64_t", "8192">:$original_max_position_embeddings,
    RLX_OptionalF64Param<"yarn beta_fast", "32.0">:$beta_fast,
    RLX_OptionalF64Param<"yarn beta_slow", "1.0">:$beta_slow,
    DefaultValuedParameter<"bool", "true">:$truncate,
    RLX_OptionalF64Param<"yarn attention_factor (0: from factor)", "0.0">:$attention_factor
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Normalization kind (matmul prologues)
//===----------------------------------------------------------------------===//

def RLX_NormKind : RLX_I32Enum<"NormKind", "normalization", [
  I32EnumAttrCase<"RmsNorm", 0, "rms_norm">,
  I32EnumAttrCase<"LayerNorm", 1, "layer_norm">
]>;
def RLX_NormKindAttr : RLX_EnumAttr<RLX_NormKind, "norm">;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def RLX_ReduceKind : RLX_I32Enum<"ReduceKind", "reduction", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Mean", 1, "mean">,
  I32EnumAttrCase<"Max", 2, "max">,
  I32EnumAttrCase<"Min", 3, "min">,
  I32EnumAttrCase<"Prod", 4, "prod">
]>;
def RLX_ReduceKindAttr : RLX_EnumAttr<RLX_ReduceKind, "reduce">;

//===----------------------------------------------------------------------===//
// Shared type constraints
//===----------------------------------------------------------------------===//

// Element types the RLX levels compute in.
def RLX_FloatElt : AnyTypeOf<[F32, F16, BF16, F64]>;
def RLX_LowFloatElt : AnyTypeOf<[F8E4M3FN, F4E2M1FN]>;
def RLX_IndexElt : AnyTypeOf<[I32, I64]>;
def RLX_AnyElt : AnyTypeOf<[F32, F16, BF16, F64, F8E4M3FN, F4E2M1FN, I1, I8, I32, I64]>;

def RLX_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def RLX_IndexTensor : RankedTensorOf<[I32, I64]>;
def RLX_Tensor : RankedTensorOf<[F32, F16, BF16, F64, F8E4M3FN, F4E2M1FN, I1, I8, I32, I64]>;





//===----------------------------------------------------------------------===//
// Attention attributes (shared by rlx_hir.attention and rlx_mir.attention)
//===----------------------------------------------------------------------===//

defvar RLX_AttentionAttrs = (ins
  RLX_I64Attr:$num_heads, RLX_I64Attr:$num_kv_heads, RLX_I64Attr:$head_dim,
  DefaultValuedAttr<RLX_MaskKindAttr, "::mlir::rlx::MaskKind::None">:$mask_kind,
  OptionalAttr<RLX_I64Attr>:$window,
  OptionalAttr<F64Attr>:$scale,
  OptionalAttr<F64Attr>:$softcap,
  DefaultValuedAttr<RLX_AttnLayoutAttr, "::mlir::rlx::AttnLayout::BSD">:$layout);

defvar RLX_AttentionOperandsFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
}];
defvar RLX_AttentionAttrsFormat = [{
    `heads` `=` $num_heads `,` `kv_heads` `=` $num_kv_heads `,` `head_dim` `=` $head_dim
    custom<OptionalMaskKind>($mask_kind) (`window` `=` $window^)? (`scale` `=` $scale^)?
    (`softcap` `=` $softcap^)? (`layout` $layout^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
}];
defvar RLX_AttentionFormat = !strconcat(RLX_AttentionOperandsFormat, RLX_AttentionAttrsFormat);

def RLX_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16, F64]>;

#endif // RLX_DIALECT_COMMON_IR_RLXBASE_TD
