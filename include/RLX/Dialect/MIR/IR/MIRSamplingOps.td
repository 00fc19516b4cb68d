//===- MIRSamplingOps.td - rlx_mir random numbers and sampling -*- tablegen -*-===//
//
// Counter-based random numbers and token sampling, each defined by its chain
// of MIR ops (DecomposableOpInterface, lib/Dialect/MIR/IR/SamplingOps.cpp):
// the linalg lowering (CPU and GPU generic path), autodiff and vmap use it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRSAMPLINGOPS_TD
#define RLX_DIALECT_MIR_IR_MIRSAMPLINGOPS_TD

def MIR_RandomUniformOp : MIR_InferOp<"random_uniform", [
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "uniform f32 numbers in [0, 1) from Philox-4x32-10, counter-based";
  let description = [{
    Element `i` (row-major index into `shape`) is the first 32-bit word `w`
    of Philox-4x32-10 (Salmon et al., SC'11; Random123's `philox4x32`, 10
    rounds) with key (the low and high 32-bit words of `seed`'s 64-bit two's
    complement) and counter (the low and high words of `i`, then of
    `offset`), as
    `(w >> 8) · 2^-24`: every value is a multiple of 2^-24 in [0, 1). The
    stream is a pure function of (seed, offset, i), so the same call gives
    the same numbers on every backend and run, and a decode step passes its
    step number as `offset` for fresh numbers.

    `offset` is a 0-d i64 tensor; `shape` is the static result shape.

    The verifier rejects an `offset` that is not `tensor<i64>` and negative
    dims in `shape`.

    Example:
    ```mlir
    %u = rlx_mir.random_uniform %step seed = 42 shape = [4] : tensor<i64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64]>:$offset, RLX_I64Attr:$seed,
                   DenseI64ArrayAttr:$shape);
  let results = (outs RankedTensorOf<[F32]>:$output);
  let assemblyFormat = [{
    $offset `seed` `=` $seed `shape` `=` $shape attr-dict `:` type($offset) `->` type($output)
  }];
}

def MIR_SampleOp : MIR_InferOp<"sample", [
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "a token per row from logits: temperature, top-k, top-p, min-p, inverse CDF";
  let description = [{
    For each row of `logits` `[..., V]`, with its uniform number `u` from
    `uniform` `[...]` (in [0, 1), e.g. from `rlx_mir.random_uniform`):

    1. `x = logits · (1 / temperature)`, the reciprocal in f32
       (transformers' `TemperatureLogitsWarper` divides); temperature 0 is
       greedy: the first largest logit (`argmax`), no division, whatever
       the other attributes (every filter keeps that token);
    2. keeps the tokens at least as large as the `top_k`-th largest
       (`TopKLogitsWarper`; 0: all): every token tied with the k-th stays,
       so more than `top_k` may (with bf16 logits ties at the cut are
       common). The kept tokens are ordered by value, descending, ties to
       the lower token id (`rlx_mir.topk`'s order);
    3. with `top_p` < 1, keeps the tokens whose probability mass ranked above
       them is below `top_p` (`TopPLogitsWarper`: the smallest prefix
       whose mass reaches `top_p`; the first token always stays);
    4. with `min_p` > 0, keeps the tokens whose probability is at least
       `min_p` times the largest (`MinPLogitsWarper`);
    5. returns the token id at which the cumulative probability of the kept
       tokens, in that order, first exceeds `u` times their total (the
       inverse CDF: the token sampled with probability softmax(x) restricted
       to the kept ones, as `torch.multinomial` does with its own numbers).

    Absent attributes take the values that turn their step off: temperature
    1, top_k 0, top_p 1, min_p 0. Arithmetic in f32, the prefix sums of
    steps 3 and 5 in f64 (in f32 a 128k vocabulary's sums drift by about
    the mass of a tail token). NaN or all −∞ logits
    give the first sorted id (`torch.multinomial` raises). Result: `[...]`
    i64 token ids. Needs static shapes (bind the dims first:
    rlx-mir-specialize).

    Cost: its chain sorts the whole row with `topk` and sums with `cumsum`.
    On the CPU path those are the runtime's sort and running sums
    (rlx-cpu-topk-cumsum: O(V log V) per row; `bench/cpu/bench_sampling.py`
    times a 128k vocabulary against transformers' warpers); their linalg
    forms, which the GPU's generic path runs, are quadratic in V (a rank and
    a masked sum per element), which the emulator cannot afford at a real
    vocabulary's size.

    The verifier rejects logits of rank 0 or V = 0, `uniform` whose shape is
    not the logits' without the last dim, temperature < 0, infinite or with
    1/t past f32, `top_k` < 0, `top_p` outside (0, 1] and `min_p` outside [0, 1).

    Example:
    ```mlir
    %ids = rlx_mir.sample %logits, %u temperature = 0.7 top_k = 50 top_p = 0.9
        : tensor<2x32000xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$logits, RankedTensorOf<[F32]>:$uniform,
                   OptionalAttr<F64Attr>:$temperature, OptionalAttr<RLX_I64Attr>:$top_k,
                   OptionalAttr<F64Attr>:$top_p, OptionalAttr<F64Attr>:$min_p);
  let results = (outs RankedTensorOf<[I64]>:$ids);
  let assemblyFormat = [{
    $logits `,` $uniform (`temperature` `=` $temperature^)? (`top_k` `=` $top_k^)?
    (`top_p` `=` $top_p^)? (`min_p` `=` $min_p^)? attr-dict `:` type($logits) `,` type($uniform)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRSAMPLINGOPS_TD
