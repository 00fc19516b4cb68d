//===- MIRMoeOps.td - rlx_mir mixture-of-experts ops ---------*- tablegen -*-===//
//
// Mixture-of-experts building blocks, each defined by its chain of MIR ops
// (DecomposableOpInterface, lib/Dialect/MIR/IR/MoeOps.cpp), which autodiff
// and vmap use; the backends lower grouped_matmul directly
// (lib/Conversion/MIRToLinalg/MoeLowering.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRMOEOPS_TD
#define RLX_DIALECT_MIR_IR_MIRMOEOPS_TD

def MIR_GroupedMatmulOp : MIR_InferOp<"grouped_matmul", [
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "each row times the weight of its expert: out[t] = x[t] · W[ids[t]]ᵀ";
  let description = [{
    `out[t, n] = Σ_k input[t, k] · weight[ids[t], n, k]`: row `t` of `input`
    `[T, K]` through the `nn.Linear`-layout weight `[N, K]` of expert
    `ids[t]`, the experts' weights stacked as `weight` `[E, N, K]`: the
    layout of transformers' `MixtralExperts` / `Qwen3MoeExperts` parameters
    (`gate_up_proj` `[E, 2I, H]`, `down_proj` `[E, H, I]`). A token routed
    to k experts is k rows. Expert ids outside `[0, E)` are clamped, or with
    `zero_out_of_range` give rows of zeros (expert parallelism: a rank
    holding some of the experts skips the rows routed to the others). `ids` is
    an i32 or i64 tensor `[T]`. Result: `[T, N]` in the input's element type
    (f16/bf16 accumulate in f32).

    Its definition (the chain of MIR ops, which autodiff and vmap use):
    every expert's matmul over all rows, `[E, T, N]`, then each row's
    expert selected and summed over `E` (another expert's inf or NaN does
    not reach it). The backends do not run that chain (E times the work):
    the linalg lowering is one `linalg.generic` over `(t, n, k)` reading
    each row's expert weight (the routed `T·N·K` multiply-adds), and on the
    CPU path an f32 one is a call of the runtime's grouped GEMM (each
    expert's rows gathered, one BLAS call per expert, a GEMV for a single
    row). On the GPU it runs on the matmul kernel: one expert per 64-row
    tile, each block finding its expert's rows by a scan of the ids,
    `mma.sync` for bf16/f16 (docs/gpu.md, "Matmul kernels").

    The verifier rejects an input that is not `[T, K]`, a weight that is
    not `[E, N, K]` with E ≥ 1 and the input's K and element type, and ids
    that are not `[T]`.

    Example:
    ```mlir
    %y = rlx_mir.grouped_matmul %x, %w, %ids
        : tensor<6x64xf32>, tensor<8x128x64xf32>, tensor<6xi64>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   RLX_IndexTensor:$ids, UnitAttr:$zero_out_of_range);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $ids (`zero_out_of_range` $zero_out_of_range^)? attr-dict `:`
    type($input) `,` type($weight) `,` type($ids)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRMOEOPS_TD
