//===- MIRQuantOps.td - rlx_mir integer quantization ops ------*- tablegen -*-===//
//
// Affine integer quantization as ONNX's QuantizeLinear/DequantizeLinear and
// PyTorch's quantized_decomposed ops define it: shape and attribute rules in
// lib/Dialect/MIR/IR/QuantOps.cpp, the linalg lowering (CPU, and the GPU's
// generic path) in lib/Conversion/MIRToLinalg/QuantLowering.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRQUANTOPS_TD
#define RLX_DIALECT_MIR_IR_MIRQUANTOPS_TD

// Operands and attributes both ops share: the scale (and zero point) of each
// element follow from `axis` and `group_size`.
defvar MIR_QuantParams = (ins RLX_FloatTensor:$scale, Optional<RankedTensorOf<[I8]>>:$zero_point,
                          OptionalAttr<RLX_I64Attr>:$axis, OptionalAttr<RLX_I64Attr>:$group_size,
                          OptionalAttr<RLX_I64Attr>:$quant_min,
                          OptionalAttr<RLX_I64Attr>:$quant_max, UnitAttr:$is_unsigned);

defvar MIR_QuantRange = [{
    /// [quant_min, quant_max], the byte's whole range where not given.
    std::pair<int64_t, int64_t> getRange();
  }];

defvar MIR_QuantGranularity = [{
    Granularity, from the attributes (`scale` and `zero_point` have the same
    shape):
    - per tensor: no `axis`; `scale` is rank 0.
    - per axis: `axis` = a; `scale` is `[dim(a)]` (PyTorch's per-channel).
    - per group: `axis` = a and `group_size` = g; `scale` has the input's
      rank and shape except `ceil(dim(a) / g)` at a, element i along a
      using scale i / g (ONNX's blocked quantization; int4 weights per
      group of K).

    Storage is one signless `i8` per value. The integer range is
    [`quant_min`, `quant_max`], by default [-128, 127], or [0, 255] with
    `is_unsigned` (then the bytes, zero points included, are read as
    unsigned). Narrower ranges are how PyTorch expresses int4 (-8, 7), uint4
    (0, 15) or symmetric int8 (-127, 127), one value per byte.
}];

defvar MIR_QuantVerifier = [{
    The verifier rejects an `axis` outside [-rank, rank) (negative counts from the end), `group_size`
    without `axis` or under 1, a `scale` (or `zero_point`) shape other than
    the granularity's, a `zero_point` shape unlike `scale`'s, and a range
    with `quant_min` > `quant_max` or outside what the byte holds.
}];

def MIR_QuantizeOp : MIR_InferOp<"quantize", MIR_Transformable> {
  let summary = "float to integer: round half to even, add the zero point, saturate";
  let description = !strconcat([{
    `q = clamp(round_half_even(x / scale) + zero_point, quant_min, quant_max)`,
    ONNX QuantizeLinear's order: round first, then the zero point, then
    saturation (PyTorch's `quantized_decomposed.quantize_per_tensor` is the
    same but multiplies by `1 / scale`, which can differ in the last bit of
    the quotient and so at exact ties). The quotient is computed in f32
    whatever the input's float type (an f16 input's x / s is not rounded to
    f16 first). NaN quantizes to the zero point; ±inf saturates. Upstream
    `--lower-quant-ops` truncates (`arith.fptosi`) and leaves out-of-range
    values poison: this op does neither.

    `input` is f32, f16, bf16 or f64; `scale` a float tensor; the optional
    `zero_point` i8 (0 when absent). Result: i8 of the input's shape.

    Rules: no derivative: the result is an integer, where autodiff's
    activity analysis stops (as for every integer-valued op, JAX's rule), so
    gradients through a quantize/dequantize pair are zero. vmap: a batched
    input with shared scales, or per-tensor scales batched with it (they
    become per axis 0).
  }], MIR_QuantGranularity, MIR_QuantVerifier, [{

    Example (per output channel of a [N, K] weight, symmetric int8):
    ```mlir
    %q = rlx_mir.quantize %w, %s axis = 0 quant_min = -127
        : tensor<64x128xf32>, tensor<64xf32>
    ```
  }]);
  let arguments = !con((ins RLX_FloatTensor:$input), MIR_QuantParams);
  let results = (outs RankedTensorOf<[I8]>:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $zero_point^)? (`axis` `=` $axis^)? (`group_size` `=` $group_size^)?
    (`quant_min` `=` $quant_min^)? (`quant_max` `=` $quant_max^)? (`unsigned` $is_unsigned^)?
    attr-dict `:` type($input) `,` type($scale) (`,` type($zero_point)^)?
  }];
  let extraClassDeclaration = MIR_QuantRange;
}

def MIR_DequantizeOp : MIR_InferOp<"dequantize", MIR_Transformable> {
  let summary = "integer to f32: (q - zero_point) · scale";
  let description = !strconcat([{
    `x = (q - zero_point) · scale` in f32 (in f64 for an f64 scale, then
    rounded to f32), as ONNX DequantizeLinear and
    PyTorch's `quantized_decomposed.dequantize_per_*` define it. `input` is
    i8 (read as unsigned with `is_unsigned`); `scale` a float tensor; the
    optional `zero_point` i8. `quant_min`/`quant_max` are accepted so a
    quantize/dequantize pair can carry the same attributes; values outside
    them are not clamped (PyTorch's dequantize does not clamp either).
    Result: f32 of the input's shape.

    Rules: the derivative in `scale` (the input is an integer): the tangent
    is `dequantize(q, d_scale, zero_point)`; the cotangent of `scale` is
    the cotangent times `q - zero_point` summed over each scale's elements
    (per group only when the groups divide the axis). vmap as `quantize`.
  }], MIR_QuantGranularity, MIR_QuantVerifier, [{

    Example (an asymmetric uint8 activation, per tensor):
    ```mlir
    %x = rlx_mir.dequantize %q, %s, %zp unsigned
        : tensor<4x128xi8>, tensor<f32>, tensor<i8>
    ```
  }]);
  let arguments = !con((ins RankedTensorOf<[I8]>:$input), MIR_QuantParams);
  let results = (outs RankedTensorOf<[F32]>:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $zero_point^)? (`axis` `=` $axis^)? (`group_size` `=` $group_size^)?
    (`quant_min` `=` $quant_min^)? (`quant_max` `=` $quant_max^)? (`unsigned` $is_unsigned^)?
    attr-dict `:` type($input) `,` type($scale) (`,` type($zero_point)^)?
  }];
  let extraClassDeclaration = MIR_QuantRange;
}

def MIR_FakeQuantizeOp : MIR_InferOp<"fake_quantize", MIR_Transformable> {
  let summary = "quantize then dequantize, with straight-through gradients (QAT)";
  let description = !strconcat([{
    `y = (clamp(round_half_even(x / scale) + zero_point, quant_min,
    quant_max) − zero_point) · scale`: `quantize` then `dequantize` with
    the same parameters, as PyTorch's `fake_quantize_per_tensor_affine` /
    `_per_channel_affine` compute it (up to their `x · (1 / scale)`), in
    f32 (f64 for f64 inputs), the result in the input's type.

    Its derivatives are those of quantization-aware training, not of the
    step function:
    - in `input`, the straight-through estimator `ste`, with `u = x / s`:
      `"clipped"` (the default, PyTorch's: the cotangent where
      `round(u) + zp` is within [quant_min, quant_max], 0 outside);
      `"identity"` (the cotangent everywhere); `"hard_tanh"` (the
      derivative of hard-tanh clipping applied to the unrounded code: the
      cotangent where `u + zp` is within the range, 0 outside; it differs
      from "clipped" in the half step beyond each end); `"tanh"` (the
      derivative of the smooth clip `c + h·tanh((u + zp − c) / h)`, with
      `c`, `h` the range's center and half width: the cotangent times
      `1 − tanh²((u + zp − c) / h)`; 0 for a one-code range). The last two
      are the soft and hard clipping estimators of the QAT literature
      (BinaryConnect/BNN's hard tanh; the tanh-shaped approximations of
      DSQ), written over the quantization range.
    - in `scale`, LSQ's (Esser et al., 2020; PyTorch's
      `_fake_quantize_learnable_per_*_affine`): per element
      `round(x / s) − x / s` inside the range, `quant_min − zp` below it,
      `quant_max − zp` above, times the cotangent and `scale_grad` (LSQ's
      gradient scale g, e.g. 1/√(N·quant_max); 1 when absent), summed over
      each scale's elements (per group only when the groups divide the
      axis).
    Both are the derivatives of the surrogate in which `round` passes its
    argument's change through unchanged; forward mode gives the same.

    Operands and attributes as `quantize`; the result has the input's
    type.
  }], MIR_QuantGranularity, MIR_QuantVerifier, [{
    It also rejects an `ste` other than "clipped", "identity", "hard_tanh"
    or "tanh".

    Example (LSQ on a weight, per output channel, 4-bit):
    ```mlir
    %wq = rlx_mir.fake_quantize %w, %s axis = 0 quant_min = -8 quant_max = 7
        scale_grad = 0.0189 : tensor<64x128xf32>, tensor<64xf32>
    ```
  }]);
  let arguments = !con((ins RLX_FloatTensor:$input), MIR_QuantParams,
                       (ins OptionalAttr<StrAttr>:$ste, OptionalAttr<F64Attr>:$scale_grad));
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $zero_point^)? (`axis` `=` $axis^)? (`group_size` `=` $group_size^)?
    (`quant_min` `=` $quant_min^)? (`quant_max` `=` $quant_max^)? (`unsigned` $is_unsigned^)?
    (`ste` `=` $ste^)? (`scale_grad` `=` $scale_grad^)?
    attr-dict `:` type($input) `,` type($scale) (`,` type($zero_point)^)?
  }];
  let extraClassDeclaration = MIR_QuantRange;
}

def MIR_QMatmulOp : MIR_InferOp<"qmatmul"> {
  let summary = "8-bit integer matrix product with 32-bit accumulation";
  let description = [{
    `out[..., m, n] = Σ_k (lhs[..., m, k] − lhs_zero_point) ·
    (rhs[k, n] − rhs_zero_point)` in i32, the product of two quantized
    tensors before requantization (ONNX MatMulInteger; PyTorch's
    `torch._int_mm` with zero points; PT2E's quantized linear before its
    output scale). `lhs` is i8 `[..., M, K]` (read as unsigned with
    `lhs_unsigned`), `rhs` i8 `[K, N]`, or `[N, K]` (the `nn.Linear` layout)
    with `transpose_b` (unsigned with `rhs_unsigned`); the zero points are
    integers in their storage's range (default 0). Result: i32
    `[..., M, N]`. Exact: no term rounds, and |out| ≤ K · 255² fits i32
    for K < 33025 (the verifier rejects larger static K).

    Lowering: one `linalg.generic` over (m, n, k), the lhs's batch dims
    folded into m (the operands widened to i32, the zero points subtracted,
    multiply-add in i32), tagged `rlx.qmatmul`: the CPU path calls its
    runtime's integer GEMM for it (`rlx_cpu_qgemm_s8`), the GPU path runs
    the generic kernel. `rlx-import-to-mir` forms it from PT2E's quantized
    linear. No derivative (integer values); use `dequantize` then `matmul`
    where gradients are wanted.

    The verifier rejects operands that are not i8 of rank ≥ 2 (lhs) and 2
    (rhs), mismatched K, a static K ≥ 33025 and zero points outside
    [−128, 127] (signed) or [0, 255] (unsigned).

    Example:
    ```mlir
    %acc = rlx_mir.qmatmul %x, %w transpose_b lhs_zero_point = 3
        : tensor<4x64xi8>, tensor<32x64xi8>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$lhs, RankedTensorOf<[I8]>:$rhs,
                   UnitAttr:$transpose_b, OptionalAttr<RLX_I64Attr>:$lhs_zero_point,
                   OptionalAttr<RLX_I64Attr>:$rhs_zero_point, UnitAttr:$lhs_unsigned,
                   UnitAttr:$rhs_unsigned);
  let results = (outs RankedTensorOf<[I32]>:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_b` $transpose_b^)? (`lhs_zero_point` `=` $lhs_zero_point^)?
    (`rhs_zero_point` `=` $rhs_zero_point^)? (`lhs_unsigned` $lhs_unsigned^)?
    (`rhs_unsigned` $rhs_unsigned^)? attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

//===----------------------------------------------------------------------===//
// Observers: the statistics QAT derives its scales from
//===----------------------------------------------------------------------===//

defvar MIR_Observer = [DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>,
                       DeclareOpInterfaceMethods<MIR_DifferentiableOpInterface, ["vjp", "jvp"]>];
defvar MIR_ObserverGradient = [{
    No gradient flows through it: PyTorch's observers run under `no_grad`
    and their results are buffers, so a `fake_quantize` whose scale comes
    from here passes the straight-through estimator alone to its input.
    Its vjp and jvp say so (zero); the linalg lowering (CPU path, GPU
    generic path) and vmap use its decomposition.
}];

def MIR_ObserveMinmaxOp : MIR_InferOp<"observe_minmax", !listconcat([AttrSizedOperandSegments],
                                                                   MIR_Observer)> {
  let summary = "min and max of a tensor, per tensor or per channel, running or averaged";
  let description = !strconcat([{
    The range statistics of PyTorch's observers
    (`torch.ao.quantization.observer`): the batch's `min` and `max` over
    every element of `input` (results rank 0), or with `axis` over every
    axis but that one (results `[C]`, `C` the axis's size; negative counts
    from the end), in the input's element type. Then:
    - without `running`: the batch's values (a scale "per batch");
    - with `running(%min, %max : types)` (the results' types): the running
      extremes `min(running_min, batch_min)`, `max(running_max, batch_max)`
      (`MinMaxObserver`, `PerChannelMinMaxObserver`);
    - with `running` and `averaging_constant = c` in (0, 1]: the moving
      average `running + c · (batch − running)`
      (`MovingAverageMinMaxObserver`, `MovingAveragePerChannelMinMaxObserver`),
      except where `running_min` is +inf and `running_max` −inf (the
      observers' initial state: nothing seen), which take the batch's.
    Start the running values at +inf and −inf. An empty input leaves the
    running values as they are (PyTorch's observers return early). The
    statistics stay in the input's element type (PyTorch keeps f32
    buffers: cast f16/bf16 inputs to f32 first for its behavior).
  }], MIR_ObserverGradient, [{
    The verifier rejects an `axis` outside [-rank, rank), running values of
    another type than the results or only one of them, `averaging_constant`
    outside (0, 1] or without `running`, and a rank-0 input with `axis`.

    Example (an EMA of per-tensor activation ranges, as PyTorch's default
    QAT activation observer):
    ```mlir
    %lo, %hi = rlx_mir.observe_minmax %x running(%rmin, %rmax : tensor<f32>, tensor<f32>)
        averaging_constant = 1.000000e-02 : tensor<32x64xf32>
    ```
  }]);
  let arguments = (ins RLX_FloatTensor:$input, Optional<RLX_FloatTensor>:$running_min,
                   Optional<RLX_FloatTensor>:$running_max, OptionalAttr<RLX_I64Attr>:$axis,
                   OptionalAttr<F64Attr>:$averaging_constant);
  let results = (outs RLX_FloatTensor:$min, RLX_FloatTensor:$max);
  let assemblyFormat = [{
    $input (`running` `(` $running_min^ `,` $running_max `:` type($running_min) `,`
    type($running_max) `)`)? (`axis` `=` $axis^)?
    (`averaging_constant` `=` $averaging_constant^)? attr-dict `:` type($input)
  }];
}

def MIR_ChooseQparamsOp : MIR_InferOp<"choose_qparams", !listconcat(
    [AllTypesMatch<["min", "max"]>], MIR_Observer)> {
  let summary = "scale and zero point from a min and max, as PyTorch's observers choose them";
  let description = !strconcat([{
    `torch.ao.quantization.observer`'s `calculate_qparams` (its
    `determine_qparams`) per element of `min` and `max` (rank 0 per
    tensor, `[C]` per channel; f32 or f64), computed in their type, for
    the range [quant_min, quant_max] (default: the byte's; `unsigned` for
    uint8 storage):
    - `lo = min(min, 0)`, `hi = max(max, 0)` (zero stays representable);
    - affine (the default): `scale = max((hi − lo) / (quant_max −
      quant_min), eps)`, `zero_point = clamp(quant_min −
      round_half_even(lo / scale), quant_min, quant_max)`;
    - `symmetric`: `scale = max(max(−lo, hi) / ((quant_max − quant_min) /
      2), eps)`, `zero_point` 0 (signed), or for unsigned storage
      `(quant_min + quant_max) / 2` (floor) when both bounds are given and
      128 otherwise (PyTorch's with and without a customized range);
    - where `min` is +inf and `max` −inf (nothing observed yet), scale 1
      and zero point 0, as PyTorch returns for a per-tensor observer then
      (other inverted pairs, which PyTorch refuses, go through the
      formulas);
    - a NaN zero point (from NaN or infinite statistics) is quant_min.
    `eps` defaults to f32's machine epsilon 2^-23 (`torch.finfo(
    torch.float32).eps`). Results: `scale` of min's type and `zero_point`
    i8 (its bits the unsigned byte with `unsigned`) of min's shape, the
    operands `quantize`, `dequantize` and `fake_quantize` take.
  }], MIR_ObserverGradient, [{
    The verifier rejects `min` and `max` of different types, ranks above 1,
    element types other than f32 and f64, a range that is not increasing
    (quant_min < quant_max), holds no 0 or leaves the byte (PyTorch's
    `validate_qmin_qmax`), and eps ≤ 0 or not a finite nonzero f32 for f32
    statistics.

    Example (per-batch activation scales for a fake-quantized input):
    ```mlir
    %lo, %hi = rlx_mir.observe_minmax %x : tensor<32x64xf32>
    %s, %z = rlx_mir.choose_qparams %lo, %hi : tensor<f32>
    %xq = rlx_mir.fake_quantize %x, %s, %z : tensor<32x64xf32>, tensor<f32>, tensor<i8>
    ```
  }]);
  let arguments = (ins RLX_FloatTensor:$min, RLX_FloatTensor:$max,
                   OptionalAttr<RLX_I64Attr>:$quant_min, OptionalAttr<RLX_I64Attr>:$quant_max,
                   UnitAttr:$is_unsigned, UnitAttr:$symmetric, OptionalAttr<F64Attr>:$eps);
  let results = (outs RLX_FloatTensor:$scale, RankedTensorOf<[I8]>:$zero_point);
  let assemblyFormat = [{
    $min `,` $max (`quant_min` `=` $quant_min^)? (`quant_max` `=` $quant_max^)?
    (`unsigned` $is_unsigned^)? (`symmetric` $symmetric^)? (`eps` `=` $eps^)? attr-dict
    `:` type($min)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRQUANTOPS_TD
