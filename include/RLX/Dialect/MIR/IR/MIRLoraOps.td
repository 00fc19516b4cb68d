//===- MIRLoraOps.td - rlx_mir LoRA adapters ------------------*- tablegen -*-===//
//
// Low-rank adapters on a linear layer, defined by their chain of MIR ops
// (DecomposableOpInterface, lib/Dialect/MIR/IR/LoraOps.cpp): the linalg
// lowering (CPU and GPU generic path), autodiff, vmap, and the HIR → MIR
// lowering of models (which decomposes it so that the base matmul joins weight
// packing and matmul merging) all use it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRLORAOPS_TD
#define RLX_DIALECT_MIR_IR_MIRLORAOPS_TD

def MIR_LoraMatmulOp : MIR_InferOp<"lora_matmul", [
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "a linear layer with low-rank adapters: x·Wᵀ + s·(x·Aᵀ)·Bᵀ";
  let description = [{
    PEFT's `LoraLayer` forward without dropout (`peft.tuners.lora.Linear`):
    `y = x·Wᵀ + s·(x·Aᵀ)·Bᵀ` with `input` `[..., in]`, `weight` `[out, in]`
    (`nn.Linear` layout), `lora_a` `[r, in]` and `lora_b` `[out, r]` as
    PEFT stores them (`lora_A.weight`, `lora_B.weight`), and the scale
    `s` = `lora_alpha / r` (or `lora_alpha / √r` with rsLoRA), computed by
    whoever builds the op and given in `scales`. Result: `[..., out]` in the
    input's element type. The base layer's bias is not part of the op (add
    it after, as PEFT's base layer does before adding the delta).

    **Several adapters in one batch** (PEFT's mixed-batch inference, Punica's
    SGMV): with `adapter_ids`, `lora_a` is `[n, r, in]` and `lora_b`
    `[n, out, r]` (n adapters of one rank; pad a smaller rank with zero
    rows/columns, which changes nothing), `scales` holds n values, and
    `adapter_ids` (i32/i64, the input's shape without its last axis: one id
    per row) picks each row's adapter; an id outside `[0, n)` (e.g. −1)
    gives the base layer alone for that row (PEFT's `"__base__"`).

    Defined by its decomposition: `B·s` (a product of parameters, which
    weight packing computes once at load), then the base matmul plus
    `(x·Aᵀ)·(s·B)ᵀ`; with `adapter_ids`, the rows flattened to `[T, in]`
    and the two products as `rlx_mir.grouped_matmul` with
    `zero_out_of_range` (each row through its adapter). Merging an adapter
    into the weight (`W + s·B·A`, PEFT's `merge_and_unload`) is the model
    generator's option (`rlx-gen --lora-merge`), not this op's.

    The verifier rejects: a float input of rank < 2; a weight that is not
    `[out, in]`; `lora_a`/`lora_b` that are not `[r, in]`/`[out, r]`
    (`[n, r, in]`/`[n, out, r]` with ids) with matching `r`, `in`, `out`
    and `n`; element types that differ; `scales` that are not one value
    (n values with ids) or are not finite; ids whose shape is not the
    input's leading axes, or whose leading axes have more than one dynamic
    dim.

    Example:
    ```mlir
    %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0]
        : tensor<1x?x64xf32>, tensor<128x64xf32>, tensor<8x64xf32>, tensor<128x8xf32>
    %z = rlx_mir.lora_matmul %x, %w, %as, %bs adapters(%ids : tensor<2x7xi64>)
        scales = [2.0, 0.5]
        : tensor<2x7x64xf32>, tensor<128x64xf32>, tensor<2x8x64xf32>, tensor<2x128x8xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$weight,
                   RLX_FloatTensor:$lora_a, RLX_FloatTensor:$lora_b,
                   Optional<RLX_IndexTensor>:$adapter_ids, DenseF64ArrayAttr:$scales);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $lora_a `,` $lora_b
    (`adapters` `(` $adapter_ids^ `:` type($adapter_ids) `)`)? `scales` `=` $scales attr-dict
    `:` type($input) `,` type($weight) `,` type($lora_a) `,` type($lora_b)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRLORAOPS_TD
