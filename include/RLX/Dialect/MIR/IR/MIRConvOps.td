//===- MIRConvOps.td - rlx_mir convolutions ------------------*- tablegen -*-===//
//
// N-dimensional convolution (1-D, 2-D, 3-D; channels first) as PyTorch's
// conv1d/2d/3d define it, defined by its chain of MIR ops
// (DecomposableOpInterface, lib/Dialect/MIR/IR/ConvOps.cpp): an im2col
// gather from a constant index table, one grouped matmul, the bias.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRCONVOPS_TD
#define RLX_DIALECT_MIR_IR_MIRCONVOPS_TD

def MIR_ConvOp : MIR_InferOp<"conv", [DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "N-d convolution, channels first (torch.nn.functional.conv1d/2d/3d)";
  let description = [{
    `torch.nn.functional.conv{N}d(input, weight, bias, stride, padding,
    dilation, groups)` for `N` = 1, 2 or 3 spatial dims: `input`
    `[B, C_in, S_1, ..., S_N]`, `weight` `[C_out, C_in / groups, K_1, ...,
    K_N]`, optional `bias` `[C_out]`;

    `out[b, o, p] = bias[o] + Σ_{c, k} weight[o, c, k] ·
    x[b, g·C_in/groups + c, p·stride + k·dilation − pad_lo]`

    over the `C_in / groups` channels of output channel `o`'s group
    `g = o / (C_out / groups)` and the kernel positions `k`, with zeros
    outside the input (cross-correlation, as PyTorch). Depthwise is
    `groups = C_in` with any multiplier `C_out / C_in`.

    Attributes (PyTorch's defaults when absent): `stride` and `dilation`,
    `N` values ≥ 1 (1); `padding`, `N` values (both sides of each dim) or
    `2·N` values `[lo_1, hi_1, ..., lo_N, hi_N]` (asymmetric; PyTorch's
    `padding = "same"` is `lo = d·(K − 1) // 2`, `hi` the rest), each ≥ 0
    (0); `groups` ≥ 1 (1). The result is `[B, C_out, O_1, ..., O_N]` with
    `O_i = (S_i + lo_i + hi_i − dilation_i·(K_i − 1) − 1) // stride_i + 1`.
    Computed in f32 (f64 for f64 input), the result in the input's type.

    Defined by its chain: the input's positions gathered for every output
    position and kernel offset (im2col; the padding is a zero row of the
    gathered table), one batched matmul per group against the weight, the
    bias added. Its derivatives are the chain's (the gather's is a
    scatter-add: the transposed convolution).

    The verifier rejects an input of rank other than 3-5, with dynamic or
    empty spatial dims or a dynamic or zero `C_in` (the batch may be
    dynamic or 0),
    a weight that is not static, of another rank, or whose `C_in / groups`
    or `C_out` does not match, `C_in` or `C_out` not divisible by `groups`,
    a bias that is not `[C_out]`, attribute lists of the wrong length or
    with values out of range, positions, padded positions, kernel taps or a
    dilated kernel of 2^40 or more, no output position and mixed element
    types. The decomposition refuses an index table over 2^26 entries
    (output positions times kernel taps) and matmul rows or depth of 2^40 or
    more.

    Example (a ViT patch embedding, 16×16 patches of a 224×224 image):
    ```mlir
    %p = rlx_mir.conv %img, %w bias(%b : tensor<768xf32>) stride = [16, 16]
        : tensor<1x3x224x224xf32>, tensor<768x3x16x16xf32> -> tensor<1x768x14x14xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   Optional<RLX_FloatTensor>:$bias, OptionalAttr<DenseI64ArrayAttr>:$stride,
                   OptionalAttr<DenseI64ArrayAttr>:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$dilation, OptionalAttr<I64Attr>:$groups);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? (`stride` `=` $stride^)?
    (`padding` `=` $padding^)? (`dilation` `=` $dilation^)? (`groups` `=` $groups^)? attr-dict
    `:` type($input) `,` type($weight) `->` type($output)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRCONVOPS_TD
