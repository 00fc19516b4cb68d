//===- MIRIndexOps.td - rlx_mir scans, selection and scatter ---*- tablegen -*-===//
//
// cumsum, topk and scatter_add: what mixture-of-experts routing and sampled
// generation are built from. Each is defined here, its shape rule and
// derivative/vmap rules in lib/Dialect/MIR/IR/IndexOps.cpp and its linalg
// lowering (which the GPU generic path runs too) in
// lib/Conversion/MIRToLinalg/IndexLowering.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRINDEXOPS_TD
#define RLX_DIALECT_MIR_IR_MIRINDEXOPS_TD

def MIR_ScatterAddOp : MIR_InferOp<"scatter_add", MIR_Transformable> {
  let summary = "rows added into a tensor at indices (the transpose of gather)";
  let description = [{
    `out = dest`, then `out[indices[i...], j...] += updates[i..., j...]` for
    every index position `i...` (`torch.Tensor.index_add_(0, ·, ·)` over
    flattened indices; repeated indices accumulate). It is the transpose of
    `rlx_mir.gather` (its reverse-mode rule) and the combine step of a
    mixture of experts. Indices are clamped into `[0, N)`, as `gather`
    clamps them, so that the two stay each other's transpose.

    Operands: `dest` `[N, D...]`, `indices` of any shape (i32/i64),
    `updates` `indices.shape + [D...]` of dest's element type. Result: dest's
    type. Float sums are in the element type, in index order on the CPU path.

    The verifier rejects a rank-0 dest, updates whose shape is not
    `indices.shape + dest.shape[1:]` and mixed element types.

    Example:
    ```mlir
    %y = rlx_mir.scatter_add %acc[%token_ids], %rows
        : tensor<16x64xf32>, tensor<32xi64>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$dest, RLX_IndexTensor:$indices, RLX_Tensor:$updates);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $dest `[` $indices `]` `,` $updates attr-dict `:` type($dest) `,` type($indices) `,`
    type($updates)
  }];
}

def MIR_CumsumOp : MIR_InferOp<"cumsum", MIR_Transformable> {
  let summary = "cumulative sum along an axis (inclusive or exclusive, forward or reverse)";
  let description = [{
    `out[..., i, ...] = Σ x[..., j, ...]` over `j ≤ i` (`torch.cumsum`);
    `exclusive` sums `j < i` (the first entry is 0), `reverse` sums from the
    end (`j ≥ i`, or `j > i` with both), as `tf.math.cumsum` defines them.
    f16/bf16 accumulate in f32 and round each output once; integers in their
    own type. Result: the input's type.

    The verifier rejects an axis outside `[-rank, rank)`.

    Example:
    ```mlir
    %c = rlx_mir.cumsum %p axis = -1 exclusive : tensor<4x32000xf32>
    ```
  }];
  let arguments = (ins RLX_Tensor:$input, RLX_I64Attr:$axis, UnitAttr:$exclusive,
                   UnitAttr:$reverse);
  let results = (outs RLX_Tensor:$output);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)? attr-dict `:`
    type($input)
  }];
  let extraClassDeclaration = [{
    /// `axis` counted from 0.
    int64_t getNormalizedAxis();
  }];
}

def MIR_TopKOp : MIR_InferOp<"topk", MIR_Transformable> {
  let summary = "the k largest entries of the last axis and their indices";
  let description = [{
    For each row of the last axis: the `k` largest values in descending
    order and their positions (`torch.topk(x, k, dim=-1, largest=True,
    sorted=True)`). Ties go to the lower index; NaN counts as larger than
    every number (torch's order), NaNs among themselves by index.

    Operand: `input` `[..., N]` (float). Results: `values` `[..., k]` of the
    input's type and `indices` `[..., k]` i64.

    The verifier rejects k < 1, k > N (static) and a rank-0 input.

    Example:
    ```mlir
    %v, %i = rlx_mir.topk %logits k = 50 : tensor<1x32000xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_I64Attr:$k);
  let results = (outs RLX_FloatTensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input `k` `=` $k attr-dict `:` type($input)";
}

#endif // RLX_DIALECT_MIR_IR_MIRINDEXOPS_TD
