//===- MIROps.td - rlx_mir ops ------------------------------*- tablegen -*-===//
//
// The primitive op set of rlx_mir: elementwise families, matmul, reductions,
// normalization, attention and data movement. Shape rules live in
// RLX/Dialect/Common/IR/ShapeRules.h (shared with rlx_hir).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIROPS_TD
#define RLX_DIALECT_MIR_IR_MIROPS_TD

include "RLX/Dialect/MIR/IR/MIRDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// The derivative and vmap rules of a non-elementwise op, written next to its
// other C++ (elementwise ops get the scalar-body rules by default).
defvar MIR_Transformable = [
  DeclareOpInterfaceMethods<MIR_DifferentiableOpInterface, ["vjp", "jvp"]>,
  DeclareOpInterfaceMethods<MIR_BatchableOpInterface, ["batch"]>];

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

def MIR_ConstantOp : MIR_InferOp<"constant", !listconcat([ConstantLike], MIR_Transformable)> {
  let summary = "a constant tensor";
  let description = [{
    Materializes `value` (a dense or dense-resource elements attribute). The
    result type is the attribute's type.

    Example:
    ```mlir
    %c = rlx_mir.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise families
//===----------------------------------------------------------------------===//

class MIR_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : MIR_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<MIR_ElementwiseOpInterface>,
        MIR_DifferentiableOpInterface, MIR_BatchableOpInterface,
        RLX_ElementLocalOpInterface])>;

class MIR_BinaryOp<string mnemonic, string formula, string source,
                   list<Trait> traits = []>
    : MIR_ElementwiseOp<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = [{
    `out = }] # formula # [{` elementwise, after numpy broadcasting of the two
    operands (dims are aligned from the right; a dim of 1 stretches).
    Operands and result share one element type. Semantics: }] # source # [{.

    The verifier rejects operands whose shapes do not broadcast and mixed
    element types.

    Example:
    ```mlir
    %y = rlx_mir.}] # mnemonic # [{ %a, %b : tensor<2x?x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$lhs, RLX_Tensor:$rhs);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        ::std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::rlx::mir::detail::inferBinaryType(loc, adaptor.getLhs(),
                                                       adaptor.getRhs(), types);
    }
  }];
}

def MIR_AddOp : MIR_BinaryOp<"add", "lhs + rhs", "`torch.add`", [Commutative]> {
  let hasFolder = 1;
}
def MIR_SubOp : MIR_BinaryOp<"sub", "lhs - rhs", "`torch.sub`">;
def MIR_MulOp : MIR_BinaryOp<"mul", "lhs · rhs", "`torch.mul`", [Commutative]> {
  let hasFolder = 1;
}
def MIR_DivOp : MIR_BinaryOp<"div", "lhs / rhs", "`torch.div` (true division; integer division truncates)">;
def MIR_MaxOp : MIR_BinaryOp<"max", "max(lhs, rhs)", "`torch.maximum` (NaN propagates)", [Commutative]>;
def MIR_MinOp : MIR_BinaryOp<"min", "min(lhs, rhs)", "`torch.minimum` (NaN propagates)", [Commutative]>;
def MIR_PowOp : MIR_BinaryOp<"pow", "lhs ^ rhs", "`torch.pow` on floats">;

class MIR_UnaryOp<string mnemonic, string formula, string source,
                  list<Trait> traits = []>
    : MIR_ElementwiseOp<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])> {
  let summary = "elementwise " # formula;
  let description = [{
    `out = }] # formula # [{` elementwise; the result has the operand's type.
    Float element types only. Semantics: }] # source # [{.

    Example:
    ```mlir
    %y = rlx_mir.}] # mnemonic # [{ %x : tensor<4x?xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        ::std::optional<::mlir::Location> loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::rlx::mir::detail::inferUnaryType(loc, adaptor.getInput(), types);
    }
    ::mlir::Value $cppClass::buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                                         ::mlir::ValueRange args) {
      return buildScalarFor(b, loc, args[0]);
    }
  }];
  let extraClassDeclaration = [{
    /// The scalar body on one value (what buildScalar emits).
    static ::mlir::Value buildScalarFor(::mlir::OpBuilder &b, ::mlir::Location loc,
                                        ::mlir::Value x);
  }];
}

def MIR_NegOp : MIR_UnaryOp<"neg", "-x", "`torch.neg`">;
def MIR_ExpOp : MIR_UnaryOp<"exp", "exp(x)", "`torch.exp`">;
def MIR_LogOp : MIR_UnaryOp<"log", "log(x)", "`torch.log` (natural log)">;
def MIR_SqrtOp : MIR_UnaryOp<"sqrt", "sqrt(x)", "`torch.sqrt`">;
def MIR_RsqrtOp : MIR_UnaryOp<"rsqrt", "1/sqrt(x)", "`torch.rsqrt`">;
def MIR_ReciprocalOp : MIR_UnaryOp<"reciprocal", "1/x", "`torch.reciprocal`">;
def MIR_AbsOp : MIR_UnaryOp<"abs", "|x|", "`torch.abs`">;
def MIR_TanhOp : MIR_UnaryOp<"tanh", "tanh(x)", "`torch.tanh`">;
def MIR_SigmoidOp : MIR_UnaryOp<"sigmoid", "1/(1 + exp(-x))", "`torch.sigmoid`">;
def MIR_SiluOp : MIR_UnaryOp<"silu", "x·sigmoid(x)", "`torch.nn.functional.silu`">;
def MIR_GeluOp : MIR_UnaryOp<"gelu", "0.5·x·(1 + erf(x/√2))", "`torch.nn.functional.gelu(approximate='none')`">;
def MIR_GeluTanhOp : MIR_UnaryOp<"gelu_tanh", "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
    "`torch.nn.functional.gelu(approximate='tanh')`, HF `gelu_new`">;
def MIR_ReluOp : MIR_UnaryOp<"relu", "max(x, 0)", "`torch.relu`">;
def MIR_ErfOp : MIR_UnaryOp<"erf", "erf(x)", "`torch.erf`">;
def MIR_SinOp : MIR_UnaryOp<"sin", "sin(x)", "`torch.sin` (radians)">;
def MIR_CosOp : MIR_UnaryOp<"cos", "cos(x)", "`torch.cos` (radians)">;

def MIR_CastOp : MIR_ElementwiseOp<"cast"> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to the element type of the result (same shape).
    Float→float rounds to nearest even; conversions to f8E4M3FN and f4E2M1FN
    saturate to the largest finite value (448, 6) like NVIDIA's
    `cvt.rn.satfinite`; float→int truncates toward zero; int→float rounds to
    nearest; i1→float gives 0/1. Otherwise matches `torch.Tensor.to`.

    The verifier rejects a shape change.

    Example:
    ```mlir
    %y = rlx_mir.cast %x : tensor<4x?xbf16> to tensor<4x?xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Type":$elementType)>
  ];
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

def MIR_MatmulOp : MIR_InferOp<"matmul", MIR_Transformable> {
  let summary = "batched matrix multiplication";
  let description = [{
    `out[..., m, n] = Σ_k lhs[..., m, k] · rhs[..., k, n]` (`torch.matmul` on
    rank ≥ 2 operands) with optional transposes of the last two axes:
    `transpose_a` reads lhs as `[..., k, m]`, `transpose_b` reads rhs as
    `[..., n, k]` (the `nn.Linear` weight layout). Leading batch axes
    broadcast numpy-style; a rank-2 rhs is shared by every batch. Accumulates
    in f32 for f16/bf16 inputs.

    Operands: rank ≥ 2, the same float element type. Result:
    `broadcast(batch) + [M, N]`.

    The verifier rejects rank < 2, mismatched K, batch axes that do not
    broadcast and mixed element types.

    Example:
    ```mlir
    %y = rlx_mir.matmul %x, %w transpose_b
        : tensor<1x?x2048xf32>, tensor<512x2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$lhs, RLX_FloatTensor:$rhs,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

def MIR_ReduceOp : MIR_InferOp<"reduce", MIR_Transformable> {
  let summary = "reduction over axes";
  let description = [{
    Reduces `input` over `axes` with `kind` (`sum`, `mean`, `max`, `min`,
    `prod`); `keep_dims` keeps the reduced axes with size 1
    (`torch.sum(dim, keepdim)`, `torch.amax`, ...). Float inputs accumulate in
    f32; the result has the input's element type. Axes may be negative
    (counted from the end) and must be distinct. Over an empty axis (size 0)
    `sum` gives 0, `prod` 1 and `mean` NaN, as in torch.

    The verifier rejects out-of-range or repeated axes, and `max`/`min` over
    an axis of static size 0 (no value; torch.amax raises).

    Example:
    ```mlir
    %s = rlx_mir.reduce mean %x axes = [-1] keep_dims : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, RLX_ReduceKindAttr:$kind,
                   DenseI64ArrayAttr:$axes, UnitAttr:$keep_dims);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    `` $kind $input `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict `:`
    type($input)
  }];
}

def MIR_SoftmaxOp : MIR_InferOp<"softmax", MIR_Transformable> {
  let summary = "softmax along one axis (safe for fully masked rows)";
  let description = [{
    `out = exp(x - max(x)) / Σ exp(x - max(x))` along `axis`, computed in f32
    with the running-max trick (`torch.softmax`). A row whose entries are all
    -inf yields 0, not NaN (PyTorch's `_safe_softmax`, what attention needs
    for rows with no visible key). The result has the input's type.

    The verifier rejects an axis outside `[-rank, rank)`.

    Example:
    ```mlir
    %p = rlx_mir.softmax %s axis = -1 : tensor<1x32x?x?xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_I64Attr:$axis);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
}

def MIR_RmsNormOp : MIR_InferOp<"rms_norm"> {
  let summary = "RMSNorm over the last axis";
  let description = [{
    `y = x · rsqrt(mean(x², last axis) + eps) [· weight]`, statistics in f32,
    one rounding at the end (HF `LlamaRMSNorm`). Operands: `input`
    `[..., H]`, optional `weight` `[H]` of the same element type. Result:
    the type of `input`. `eps` > 0.

    The verifier rejects eps ≤ 0, a weight that is not `[H]` and mixed
    element types.

    Example:
    ```mlir
    %y = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, Optional<RLX_FloatTensor>:$weight,
                   F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`,` $weight^)? `eps` `=` $eps attr-dict `:` type($input) (`,` type($weight)^)?
  }];
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

def MIR_AttentionOp : MIR_InferOp<"attention"> {
  let summary = "fused scaled dot-product attention";
  let description = [{
    The same contract as `rlx_hir.attention` (GQA via `num_kv_heads`,
    bottom-right causal, sliding window, boolean/additive mask operand,
    softcap, custom scale, rows with no visible key give 0, f32 softmax
    statistics). At MIR it is the op attention recognition produces from a
    `matmul → scale → mask → softmax → matmul` chain, and one kernel at LIR.

    Example:
    ```mlir
    %o = rlx_mir.attention %q, %k, %v heads = 14, kv_heads = 2, head_dim = 64 causal
        : tensor<1x37x896xf32>, tensor<1x37x128xf32>, tensor<1x37x128xf32>
    ```
  }];
  let arguments = !con((ins RLX_FloatTensor:$query, RLX_FloatTensor:$key,
                        RLX_FloatTensor:$value, Optional<RLX_MaskTensor>:$mask),
                       RLX_AttentionAttrs);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = RLX_AttentionFormat;
}

def MIR_AttentionPartialOp : MIR_InferOp<"attention_partial"> {
  let summary = "attention over splits of the keys: per-split outputs and log-sum-exps";
  let description = [{
    Split-KV attention (Flash-Decoding): `rlx_mir.attention` over `kv_splits`
    ranges of the keys, each normalized on its own. Split s covers keys
    [s·c, min(Sk, (s + 1)·c)) with c = `kv_chunk` when given (rlx-mir-split-kv
    gives a multiple of the GPU kernels' 64-key tiles), else
    ceil(Sk / kv_splits); the masks and every attribute mean what they mean
    for `rlx_mir.attention` (DESIGN §3).

    Results, in f32 whatever the input type:
    - `partial_output` [kv_splits, B, num_heads, Sq, Dv]: split s's softmax-
      weighted values of query row i of head h (0 where the split has no
      visible key);
    - `lse` [kv_splits, B, num_heads, Sq]: the natural-log log-sum-exp of
      that row's visible, scaled (and soft-capped, masked) logits in the
      split; −inf for an empty split (never +inf or NaN).

    `rlx_mir.attention_combine` merges them into `rlx_mir.attention`'s
    result; `rlx-mir-split-kv` writes the pair for decode-shaped attention on
    the GPU path. Shapes, dtypes and the verifier's checks are those of
    `rlx_mir.attention`; it also rejects kv_splits < 1, kv_chunk < 1 and
    splits that do not cover the keys (kv_splits · kv_chunk < Sk).

    Example:
    ```mlir
    %o, %lse = rlx_mir.attention_partial %q, %k, %v heads = 32, kv_heads = 8, head_dim = 128
        causal kv_splits = 4
        : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
    ```
  }];
  let arguments = !con((ins RLX_FloatTensor:$query, RLX_FloatTensor:$key,
                        RLX_FloatTensor:$value, Optional<RLX_MaskTensor>:$mask),
                       RLX_AttentionAttrs,
                       (ins RLX_I64Attr:$kv_splits, OptionalAttr<RLX_I64Attr>:$kv_chunk));
  let results = (outs RLX_FloatTensor:$partial_output, RLX_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    `heads` `=` $num_heads `,` `kv_heads` `=` $num_kv_heads `,` `head_dim` `=` $head_dim
    custom<OptionalMaskKind>($mask_kind) (`window` `=` $window^)? (`scale` `=` $scale^)?
    (`softcap` `=` $softcap^)? (`layout` $layout^)? `kv_splits` `=` $kv_splits
    (`kv_chunk` `=` $kv_chunk^)? attr-dict `:` type($query) `,` type($key) `,` type($value)
  }];
  let extraClassDeclaration = [{
    /// Keys per split for `keys` keys: kv_chunk, else ceil(keys / kv_splits).
    int64_t getChunk(int64_t keys) {
      if (auto c = getKvChunk())
        return *c;
      return (keys + getKvSplits() - 1) / getKvSplits();
    }
  }];
}

def MIR_AttentionCombineOp : MIR_Op<"attention_combine"> {
  let summary = "merges split-KV partial attention outputs by their log-sum-exps";
  let description = [{
    The second half of split-KV attention: with M = max_s lse[s] and
    w_s = exp(lse[s] − M),
    `output = Σ_s w_s · partial_output[s] / Σ_s w_s`, per (batch, head,
    query row), in f32, rounded once to the result's element type and laid
    out as `layout` says (BSD [B, Sq, H·Dv], BSHD [B, Sq, H, Dv], BHSD
    [B, H, Sq, Dv]). A row whose splits all have lse = −inf is 0 (DESIGN §3;
    case G1 of ../shared/cases). The log-sum-exps are natural logs, the
    base `rlx_mir.attention_partial` writes.

    `sinks` (optional, f32 `[H]`): each head's sink logit joins the
    denominator as a split that attends to nothing (gpt-oss's attention
    sinks, transformers' `GptOssAttention`): M = max(max_s lse[s], sink[h]),
    `output = Σ_s w_s · partial_output[s] / (Σ_s w_s + exp(sink[h] − M))`.

    The verifier rejects operands that are not f32, a `lse` whose shape is
    not `partial_output`'s without its last dim, a result whose shape is
    not `partial_output`'s in `layout`, and sinks that are not f32 `[H]`.

    Example:
    ```mlir
    %y = rlx_mir.attention_combine %o, %lse
        : tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32> -> tensor<1x1x4096xbf16>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$partial_output, RLX_FloatTensor:$lse,
                       Optional<RLX_FloatTensor>:$sinks,
                       DefaultValuedAttr<RLX_AttnLayoutAttr,
                                         "::mlir::rlx::AttnLayout::BSD">:$layout);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $partial_output `,` $lse (`sinks` `(` $sinks^ `:` type($sinks) `)`)? (`layout` $layout^)?
    attr-dict `:` type($partial_output) `,` type($lse) `->` type($output)
  }];
  let extraClassDeclaration = [{
    /// The result's shape for partial_output's [N, B, H, Sq, Dv] in `layout`.
    static ::llvm::SmallVector<int64_t> resultShape(::llvm::ArrayRef<int64_t> partial,
                                                    ::mlir::rlx::AttnLayout layout);
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def MIR_ReshapeOp : MIR_InferOp<"reshape", MIR_Transformable> {
  let summary = "reshape (row-major, no data movement)";
  let description = [{
    Reinterprets `input` with the row-major shape `shape`
    (`torch.reshape`). `-1` marks a dynamic output dim. Dims are matched in
    contiguous groups between input and output (as `tensor.expand_shape` /
    `collapse_shape` do); within a group the product of static sizes must agree,
    and a group may hold at most one dynamic output dim, whose size follows from
    the group's input sizes. When the input is static every output dim is
    static, so `rlx-mir-specialize` re-infers reshapes exactly.

    The verifier rejects a static element-count mismatch, dims < -1 or 0, and
    groups whose dynamic size would be ambiguous.

    Example:
    ```mlir
    %y = rlx_mir.reshape %x [1, -1, 32, 64] : tensor<1x?x2048xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$input $shape attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MIR_TransposeOp : MIR_InferOp<"transpose", MIR_Transformable> {
  let summary = "permute axes";
  let description = [{
    Result dim `d` is input dim `permutation[d]` (`torch.permute`), moving the
    data accordingly.

    The verifier rejects a permutation that is not one of `0..rank-1`.

    Example:
    ```mlir
    %y = rlx_mir.transpose %x [0, 2, 1, 3] : tensor<1x?x32x64xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MIR_SliceOp : MIR_InferOp<"slice", MIR_Transformable> {
  let summary = "strided slice";
  let description = [{
    `out[i] = input[offsets + i · strides]` per axis with `sizes` elements
    (`x[o:o+s*st:st]` in numpy). A size of `-1` takes every remaining element
    of that axis (`(dim - offset) / stride` rounded up), so a slice can keep a
    dynamic axis whole. Offsets ≥ 0, strides ≥ 1.

    The verifier rejects wrong attribute lengths, negative offsets,
    non-positive strides and slices past the end of a static axis.

    Example:
    ```mlir
    %q = rlx_mir.slice %qkv offsets [0, 0, 0] sizes [-1, -1, 2048] strides [1, 1, 1]
        : tensor<1x?x3072xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $input `offsets` $offsets `sizes` $sizes `strides` $strides attr-dict `:`
    type($input)
  }];
  let hasFolder = 1;
}

def MIR_ConcatOp : MIR_InferOp<"concat", MIR_Transformable> {
  let summary = "concatenate along an axis";
  let description = [{
    Joins `inputs` along `axis` (`torch.cat`). All inputs share rank, element
    type and every other dim. At least one input.

    Folds: one input of the result's type; unit-stride slices of one tensor
    that tile it along `axis` in order (whole along the other dims) to that
    tensor (Phi-3's packed `qkv_proj`, split into q, k and v and merged
    again by QKV merging); constants into one constant.

    Example:
    ```mlir
    %k = rlx_mir.concat %past, %new axis = 1
        : tensor<1x16x512xf32>, tensor<1x1x512xf32>
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$inputs, RLX_I64Attr:$axis);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$inputs `axis` `=` $axis attr-dict `:` type($inputs)";
  let hasFolder = 1;
}

def MIR_BroadcastOp : MIR_InferOp<"broadcast", MIR_Transformable> {
  let summary = "broadcast to a shape (numpy broadcast_to)";
  let description = [{
    Broadcasts `input` to `shape` with numpy rules (`torch.broadcast_to`):
    dims are aligned from the right and a size-1 input dim stretches. A `-1`
    in `shape` keeps the aligned input dim (which may be dynamic).

    The verifier rejects shapes of lower rank and incompatible dims.

    Example:
    ```mlir
    %y = rlx_mir.broadcast %x [2, -1, 8] : tensor<1x?x8xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$input $shape attr-dict `:` type($input)";
  let hasFolder = 1;
}


//===----------------------------------------------------------------------===//
// More primitives: select, layer_norm, gather, rope, causal_mask
//===----------------------------------------------------------------------===//

def MIR_SelectOp : MIR_ElementwiseOp<"select", [InferTypeOpAdaptor]> {
  let summary = "elementwise choice with broadcasting";
  let description = [{
    `out = cond ? on_true : on_false` elementwise after numpy broadcasting of
    the three operands (`torch.where`). `cond` is i1; the values share one
    element type, which is the result's.

    The verifier rejects a non-i1 condition, shapes that do not broadcast,
    and mixed value types.

    Example:
    ```mlir
    %y = rlx_mir.select %m, %s, %neg_inf : tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$condition, RLX_Tensor:$on_true,
                   RLX_Tensor:$on_false);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false)
  }];
}

def MIR_LayerNormOp : MIR_InferOp<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "LayerNorm over the last axis";
  let description = [{
    `y = (x - mean) · rsqrt(var + eps) [· weight] [+ bias]` over the last
    axis, mean and biased variance in f32 (PyTorch `nn.LayerNorm`).
    Operands: `input` `[..., H]`, optional `weight`/`bias` `[H]` of the same
    element type. Result: the input's type. `eps` > 0.

    Example:
    ```mlir
    %y = rlx_mir.layer_norm %x weight(%g : tensor<768xf32>) bias(%b : tensor<768xf32>)
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

def MIR_ResidualRmsNormOp : MIR_InferOp<"residual_rms_norm"> {
  let summary = "fused residual add + RMSNorm (two results)";
  let description = [{
    `sum = input + residual; output = rms_norm(sum) [· weight]` in one pass,
    statistics in f32 (HF `LlamaRMSNorm` after the residual add). Operands
    `input`, `residual` of identical type `[..., H]`, optional `weight`
    `[H]`. Results `output`, `sum` with the input's type. What
    `rlx-mir-fuse-residual-norm` makes of `add` + `rms_norm`.

    Example:
    ```mlir
    %n, %s = rlx_mir.residual_rms_norm %x, %r, %g eps = 1.0e-05
        : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$residual,
                   Optional<RLX_FloatTensor>:$weight, F64Attr:$eps);
  let results = (outs RLX_FloatTensor:$output, RLX_FloatTensor:$sum);
  let assemblyFormat = [{
    $input `,` $residual (`,` $weight^)? `eps` `=` $eps attr-dict `:`
    type($input) `,` type($residual) (`,` type($weight)^)?
  }];
}

def MIR_GatherOp : MIR_InferOp<"gather", MIR_Transformable> {
  let summary = "rows of a table by index (embedding lookup)";
  let description = [{
    `out[i..., :] = table[indices[i...], :]` (`torch.nn.functional.embedding`,
    `torch.index_select(table, 0, ·)` generalized to any index rank). Used for
    token embeddings and GPT-2's learned positions. Indices are i32/i64;
    out-of-range indices are clamped on the CPU path.

    Result: `indices.shape + table.shape[1:]`, the table's element type.

    Example:
    ```mlir
    %h = rlx_mir.gather %table[%ids] : tensor<50257x768xf32>, tensor<1x?xi64>
    ```
  }];
  let arguments = (ins RLX_Tensor:$table, RLX_IndexTensor:$indices);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $table `[` $indices `]` attr-dict `:` type($table) `,` type($indices)
  }];
}

def MIR_RopeOp : MIR_InferOp<"rope", MIR_Transformable> {
  let summary = "rotary position embedding from cos/sin tables";
  let description = [{
    Rotates pairs of the first `rotary_dim` dims of each head of
    `input` `[B, S, H·head_dim]`: for pair `(a, b)` at table index `i`,
    `a' = a·cos[s, i] − b·sin[s, i]`, `b' = b·cos[s, i] + a·sin[s, i]`.
    `neox` pairs dim `i` with `i + rotary_dim/2` (HF `rotate_half`), `gptj`
    pairs `2i` with `2i+1`. Dims past `rotary_dim` pass through. Computed in
    f32; the result has the input's type.

    `cos`, `sin`: `[S, rotary_dim/2]` or `[B, S, rotary_dim/2]`, any float
    type (usually f32, computed from positions by `convert-rlx-hir-to-mir`).

    Example:
    ```mlir
    %y = rlx_mir.rope %q, %cos, %sin head_dim = 64 : tensor<1x?x2048xf32>, tensor<?x32xf32>, tensor<?x32xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$cos, RLX_FloatTensor:$sin,
                   RLX_I64Attr:$head_dim, OptionalAttr<RLX_I64Attr>:$rotary_dim,
                   DefaultValuedAttr<RLX_RopeStyleAttr, "::mlir::rlx::RopeStyle::NeoX">:$style);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin `head_dim` `=` $head_dim (`rotary_dim` `=` $rotary_dim^)?
    (`style` `` $style^)? attr-dict `:` type($input) `,` type($cos) `,` type($sin)
  }];
  let extraClassDeclaration = [{
    int64_t getRotaryDimOrDefault() { return getRotaryDim().value_or(getHeadDim()); }
  }];
}

def MIR_CausalMaskOp : MIR_InferOp<"causal_mask", MIR_Transformable> {
  let summary = "hide future (and, with a window, old) keys in attention scores";
  let description = [{
    On scores `[..., Sq, Sk]`, sets entry `(i, j)` to -inf unless key `j` is
    visible to query `i`: bottom-right aligned causal, `j ≤ i'` with
    `i' = i + Sk − Sq`; with `window = w` also `j > i' − w` (the `w` most
    recent keys, the query's own included; HF convention); with `window = c
    chunked` instead `⌊i'/c⌋·c ≤ j` (the query's own chunk of c positions,
    Llama-4). The primitive form of attention's
    `causal`/`sliding_window`/`chunked` masks, which attention recognition
    folds back into `rlx_mir.attention`. The verifier rejects a window ≤ 0
    and `chunked` without a window.

    Example:
    ```mlir
    %m = rlx_mir.causal_mask %s window = 4096 : tensor<1x32x?x?xf32>
    %c = rlx_mir.causal_mask %s window = 8192 chunked : tensor<1x32x?x?xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, OptionalAttr<RLX_I64Attr>:$window,
                   UnitAttr:$chunked);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat =
      "$input (`window` `=` $window^)? (`chunked` $chunked^)? attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Fused ops
//===----------------------------------------------------------------------===//

def MIR_FusedMatmulOp : MIR_InferOp<"fused_matmul", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<RLX_ElementLocalOpInterface, ["readsOnlyWrittenElement"]>]> {
  let summary = "matmul with a normalization prologue and a fused epilogue";
  let description = [{
    `out = epilogue(prologue(lhs) · rhs)` where `rhs` is `[K, N]`, or `[N, K]`
    with `transpose_b` (the `nn.Linear` layout), shared by all batch rows of
    `lhs` `[..., K]`. With `nvfp4(scales, global_scale)` the weight is NVFP4
    as `nvfp4_matmul` reads it: `rhs` the packed E2M1 codes (i8, `[N, K/2]`
    with `transpose_b`, NVIDIA's layout, else `[K/2, N]`), `scales` the E4M3
    block scales (`[N, K/16]`, or `[K/16, N]`) and a `tensor<f32>` global
    scale; the product is `lhs · dequant(W)` with f32 accumulation (what
    fusion makes of `nvfp4_matmul` and its epilogues). Stages, each
    optional, in this order:

    1. `norm`: `rms_norm` or `layer_norm` of each lhs row (eps `norm_eps`,
       optional `norm_weight`/`norm_bias` `[K]`), statistics in f32, the
       normalized row rounded once to the lhs element type (exactly what the
       unfused norm op hands the matmul).
    2. matmul with f32 accumulation.
    3. `bias` `[N]` added.
    4. `activation` on every column, or with `glu` a gated unit on column
       halves: `act(y[..., :N/2]) · y[..., N/2:]` (SwiGLU with packed
       gate|up weights; output `[..., N/2]`).
    5. `head_norm`: per-head RMSNorm of the first `Hn` heads of size
       `head_dim`, head `h` scaled by row `h` of `head_norm_weight`
       `[Hn, head_dim]` (Qwen3's q/k norms on a packed QKV output;
       eps `head_norm_eps`).
    6. `rope` from tables `rope_cos`/`rope_sin` (`[S, r/2]` or `[B, S, r/2]`)
       on the first `rope_heads` heads of size `head_dim`, `rotary_dim` `r`
       (default head_dim), `rope_style` (packed QKV: q and k heads first).
    7. `residual` (the output's shape) added.

    These are the epilogues fusion patterns produce; each backend implements
    all of them inside one kernel. Result: `[..., N]` (`[..., N/2]` with
    `glu`), lhs element type.

    The verifier rejects stage operands of the wrong shape, glu with odd N,
    glu together with an activation outside silu/gelu/gelu_tanh/relu/sigmoid
    (sigmoid: the original GLU), head
    stages without `head_dim`, heads that do not fit in N, mixed
    element types (the NVFP4 weight aside), an i8 rhs without NVFP4 scales
    and the shape errors of `nvfp4_matmul`.

    Example (a Llama QKV projection with the input norm and RoPE fused):
    ```mlir
    %qkv = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05
        norm_weight(%g : tensor<2048xf32>)
        rope(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) rope_heads = 40 head_dim = 64
        : tensor<1x?x2048xf32>, tensor<3072x2048xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$lhs, AnyTypeOf<[RLX_FloatTensor, RankedTensorOf<[I8]>]>:$rhs,
                   Optional<RLX_FloatTensor>:$norm_weight, Optional<RLX_FloatTensor>:$norm_bias,
                   Optional<RLX_FloatTensor>:$bias,
                   Optional<RLX_FloatTensor>:$head_norm_weight,
                   Optional<RLX_FloatTensor>:$rope_cos, Optional<RLX_FloatTensor>:$rope_sin,
                   Optional<RLX_FloatTensor>:$residual,
                   Optional<RankedTensorOf<[F8E4M3FN]>>:$rhs_scales,
                   Optional<0DTensorOf<[F32]>>:$rhs_global_scale,
                   UnitAttr:$transpose_b,
                   OptionalAttr<RLX_NormKindAttr>:$norm, OptionalAttr<F64Attr>:$norm_eps,
                   DefaultValuedAttr<RLX_ActivationAttr, "::mlir::rlx::ActivationKind::None">:$activation,
                   UnitAttr:$glu,
                   OptionalAttr<RLX_I64Attr>:$head_dim, OptionalAttr<F64Attr>:$head_norm_eps,
                   OptionalAttr<RLX_I64Attr>:$rope_heads, OptionalAttr<RLX_I64Attr>:$rotary_dim,
                   DefaultValuedAttr<RLX_RopeStyleAttr, "::mlir::rlx::RopeStyle::NeoX">:$rope_style);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_b` $transpose_b^)?
    (`nvfp4` `(` $rhs_scales^ `,` $rhs_global_scale `:` type($rhs_scales) `,`
      type($rhs_global_scale) `)`)?
    (`norm` `` $norm^)? (`eps` `=` $norm_eps^)?
    (`norm_weight` `(` $norm_weight^ `:` type($norm_weight) `)`)?
    (`norm_bias` `(` $norm_bias^ `:` type($norm_bias) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`activation` `` $activation^)? (`glu` $glu^)?
    (`head_norm` `(` $head_norm_weight^ `:` type($head_norm_weight) `)`)?
    (`head_norm_eps` `=` $head_norm_eps^)?
    (`rope` `(` $rope_cos^ `,` $rope_sin `:` type($rope_cos) `,` type($rope_sin) `)`)?
    (`rope_heads` `=` $rope_heads^)? (`rotary_dim` `=` $rotary_dim^)?
    (`rope_style` `` $rope_style^)? (`head_dim` `=` $head_dim^)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    attr-dict `:` type($lhs) `,` type($rhs)
  }];
  let extraClassDeclaration = [{
    /// True when the weight is NVFP4 (rhs_scales and rhs_global_scale).
    bool isNvfp4() { return static_cast<bool>(getRhsScales()); }
    /// True when any stage besides the plain matmul is present.
    bool hasEpilogue() {
      return getBias() || getActivation() != ::mlir::rlx::ActivationKind::None ||
             getGlu() || getHeadNormWeight() || getRopeCos() || getResidual();
    }
  }];
}

def MIR_FusedElementwiseOp : MIR_Op<"elementwise", [SingleBlock, IsolatedFromAbove,
    MIR_DifferentiableOpInterface, MIR_BatchableOpInterface, RLX_ElementLocalOpInterface]> {
  let summary = "a fused chain of elementwise ops with a scalar body";
  let description = [{
    Applies its body to every element of the (numpy-broadcast) inputs. The
    body takes one scalar per input (its element type) and yields one scalar
    per result (the result's element type), using `arith` and `math` ops.
    All results have the broadcast shape of the inputs. This is what
    `rlx-mir-fuse-elementwise` makes of a chain of elementwise ops, and one
    loop nest or kernel at every lower level.

    The verifier rejects block arguments or yields whose types do not match
    the element types, results whose shape is not the broadcast input shape,
    and a body without inputs.

    Example (RoPE tables from positions: one op, two results):
    ```mlir
    %cos, %sin = rlx_mir.elementwise ins(%pos, %inv_freq : tensor<?x1xf32>, tensor<32xf32>)
        -> tensor<?x32xf32>, tensor<?x32xf32> {
    ^bb0(%p: f32, %f: f32):
      %a = arith.mulf %p, %f : f32
      %c = math.cos %a : f32
      %s = math.sin %a : f32
      rlx_mir.yield %c, %s : f32, f32
    }
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$inputs);
  let results = (outs Variadic<RLX_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `->` type($outputs) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def MIR_YieldOp : MIR_Op<"yield", [Terminator, ReturnLike,
    ParentOneOf<["FusedElementwiseOp", "CustomFnOp", "IfOp", "WhileOp", "ScanOp"]>]> {
  let summary = "yields the scalars of an elementwise body, or a custom_fn or control-flow region's tensors";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// NVFP4
//===----------------------------------------------------------------------===//

def MIR_Nvfp4DequantizeOp : MIR_InferOp<"nvfp4_dequantize"> {
  let summary = "NVFP4 weight (E2M1 codes, E4M3 block scales, f32 global scale) to f32";
  let description = [{
    `out = e2m1(code) · e4m3(scale of its 16-element block along K) ·
    global_scale` (DESIGN §3, NVIDIA's NVFP4). E2M1 magnitudes are 0, 0.5, 1,
    1.5, 2, 3, 4, 6 with bit 3 the sign; a NaN block scale (E4M3 bytes 0x7F,
    0xFF) decodes to 0. Two codes per byte, the lower K index in the low
    nibble.

    With `layout out_in` (NVIDIA checkpoints, the default) `weight` is
    `[N, K/2]` i8 and `scales` `[N, K/16]` f8E4M3FN, and the result is
    `[N, K]` f32; with `layout in_out` (the original RLX) they are
    `[K/2, N]` and `[K/16, N]` and the result is `[K, N]`. `global_scale`
    is `tensor<f32>`.

    The verifier rejects weight/scales shapes that disagree on N or K and a
    K that is not a multiple of 16.

    Example:
    ```mlir
    %w = rlx_mir.nvfp4_dequantize %q, %s, %g : tensor<64x32xi8>, tensor<64x4xf8E4M3FN>, tensor<f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$weight, RankedTensorOf<[F8E4M3FN]>:$scales,
                   0DTensorOf<[F32]>:$global_scale,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RankedTensorOf<[F32]>:$output);
  let assemblyFormat = [{
    $weight `,` $scales `,` $global_scale (`layout` `` $layout^)? attr-dict `:`
    type($weight) `,` type($scales) `,` type($global_scale)
  }];
}

def MIR_Nvfp4QuantizeOp : MIR_InferOp<"nvfp4_quantize"> {
  let summary = "f32 weight to NVFP4 with the standard two-level recipe";
  let description = [{
    `global_scale = amax(|x|) / (448 · 6)` (1 for an all-zero input); per
    16-element block along K, `scale = block_amax / 6 / global_scale`
    rounded to E4M3 (nearest even); each element `x / (scale · global)`
    rounded to the nearest E2M1 value (ties to the even code, saturating at
    ±6), packed two per byte (lower K index in the low nibble). This is
    NVIDIA's recipe (DESIGN §3); dequantizing gives an NRMSE of about 0.095 on
    N(0, 1) data.

    `input` is `[N, K]` (`layout out_in`, the default) or `[K, N]`
    (`layout in_out`), K a multiple of 16; results are the weight, scales
    and global scale in the layout `nvfp4_dequantize` reads.

    Example:
    ```mlir
    %q, %s, %g = rlx_mir.nvfp4_quantize %w : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RankedTensorOf<[I8]>:$weight, RankedTensorOf<[F8E4M3FN]>:$scales,
                      0DTensorOf<[F32]>:$global_scale);
  let assemblyFormat = "$input (`layout` `` $layout^)? attr-dict `:` type($input)";
}

def MIR_Nvfp4BlockScalesOp : MIR_InferOp<"nvfp4_block_scales"> {
  let summary = "E4M3 block scales in the 128×4 tile layout of block-scaled MMA";
  let description = [{
    NVIDIA's `[N, K/16]` block scales (rows are weight rows, or activation
    rows) rearranged into the layout block-scaled tensor-core MMA reads them
    in (`tcgen05.mma ... kind::mxf4nvf4 block16` on sm_100a; CUTLASS's sm100
    scale-factor layout, torchao's `to_blocked`; case G7(b)): 128 × 4 tiles
    of 512 bytes, scale (m, kb) at byte
    `((m / 128) · ceil(KB / 4) + kb / 4) · 512 + (m % 32) · 16 +
    ((m % 128) / 32) · 4 + kb % 4`,
    i.e. element `[m / 128, kb / 4, m % 32, ((m % 128) / 32) · 4 + kb % 4]`
    of the result `[ceil(N / 128), ceil(KB / 4), 32, 16]`. Padding (rows
    past N, blocks past KB) is 0, never a NaN scale.

    The rank-4 result type is what block-scaled kernels take: linear and
    blocked scales cannot be confused, and blocked scales cannot be blocked
    again (the verifier takes rank-2 input only). An op on parameters, so
    rlx-mir-pack-weights computes it once, at weight-packing time.

    Example (M = 130, K = 80: 2048 bytes, 1398 of them padding):
    ```mlir
    %b = rlx_mir.nvfp4_block_scales %s : tensor<130x5xf8E4M3FN>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F8E4M3FN]>:$scales);
  let results = (outs RankedTensorOf<[F8E4M3FN]>:$blocked);
  let assemblyFormat = "$scales attr-dict `:` type($scales)";
}

def MIR_Nvfp4MatmulOp : MIR_InferOp<"nvfp4_matmul"> {
  let summary = "matmul with an NVFP4 weight, f32 accumulation";
  let description = [{
    `out = input · dequant(W)ᵀ` (`layout out_in`) or `input · dequant(W)`
    (`layout in_out`), with `dequant` as `nvfp4_dequantize`. `input` is
    `[..., K]` f32/f16/bf16; the result `[..., N]` has its element type and
    is accumulated in f32. What `rlx_hir.dequant_linear` lowers to (bias
    and activation follow as separate ops).

    The verifier rejects an input whose K does not match the weight, and the
    shape errors of `nvfp4_dequantize`.

    Example:
    ```mlir
    %y = rlx_mir.nvfp4_matmul %x, %q, %s, %g
        : tensor<1x?x4096xbf16>, tensor<14336x2048xi8>, tensor<14336x256xf8E4M3FN>, tensor<f32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RankedTensorOf<[I8]>:$weight,
                   RankedTensorOf<[F8E4M3FN]>:$scales, 0DTensorOf<[F32]>:$global_scale,
                   DefaultValuedAttr<RLX_WeightLayoutAttr, "::mlir::rlx::WeightLayout::OutIn">:$layout);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $scales `,` $global_scale (`layout` `` $layout^)? attr-dict `:`
    type($input) `,` type($weight) `,` type($scales) `,` type($global_scale)
  }];
}

include "RLX/Dialect/MIR/IR/MIRIndexOps.td"
include "RLX/Dialect/MIR/IR/MIRNormOps.td"
include "RLX/Dialect/MIR/IR/MIRSamplingOps.td"
include "RLX/Dialect/MIR/IR/MIRMoeOps.td"
include "RLX/Dialect/MIR/IR/MIRMxfp4Ops.td"
include "RLX/Dialect/MIR/IR/MIRQuantOps.td"
include "RLX/Dialect/MIR/IR/MIRLoraOps.td"
include "RLX/Dialect/MIR/IR/MIRSsmOps.td"
include "RLX/Dialect/MIR/IR/MIRConvOps.td"
include "RLX/Dialect/MIR/IR/MIRFftOps.td"
include "RLX/Dialect/MIR/IR/MIRCustomOps.td"
include "RLX/Dialect/MIR/IR/MIRControlFlowOps.td"

#endif // RLX_DIALECT_MIR_IR_MIROPS_TD
