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

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

def MIR_ConstantOp : MIR_InferOp<"constant", [ConstantLike]> {
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
        DeclareOpInterfaceMethods<MIR_ElementwiseOpInterface>])>;

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

def MIR_MatmulOp : MIR_InferOp<"matmul"> {
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

def MIR_ReduceOp : MIR_InferOp<"reduce"> {
  let summary = "reduction over axes";
  let description = [{
    Reduces `input` over `axes` with `kind` (`sum`, `mean`, `max`, `min`,
    `prod`); `keep_dims` keeps the reduced axes with size 1
    (`torch.sum(dim, keepdim)`, `torch.amax`, ...). Float inputs accumulate in
    f32; the result has the input's element type. Axes may be negative
    (counted from the end) and must be distinct.

    The verifier rejects out-of-range or repeated axes.

    Example:
    ```mlir
    %s = rlx_mir.reduce mean %x axes = [-1] keep_dims : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, RLX_ReduceKindAttr:$kind,
                   DenseI64ArrayAttr:$axes, UnitAttr:$keep_dims);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $kind $input `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict `:`
    type($input)
  }];
}

def MIR_SoftmaxOp : MIR_InferOp<"softmax"> {
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
  let arguments = (ins RLX_FloatTensor:$input, I64Attr:$axis);
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

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def MIR_ReshapeOp : MIR_InferOp<"reshape"> {
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

def MIR_TransposeOp : MIR_InferOp<"transpose"> {
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

def MIR_SliceOp : MIR_InferOp<"slice"> {
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

def MIR_ConcatOp : MIR_InferOp<"concat"> {
  let summary = "concatenate along an axis";
  let description = [{
    Joins `inputs` along `axis` (`torch.cat`). All inputs share rank, element
    type and every other dim. At least one input.

    Example:
    ```mlir
    %k = rlx_mir.concat %past, %new axis = 1
        : tensor<1x16x512xf32>, tensor<1x1x512xf32>
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = "$inputs `axis` `=` $axis attr-dict `:` type($inputs)";
  let hasFolder = 1;
}

def MIR_BroadcastOp : MIR_InferOp<"broadcast"> {
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

#endif // RLX_DIALECT_MIR_IR_MIROPS_TD
