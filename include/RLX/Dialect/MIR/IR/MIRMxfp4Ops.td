//===- MIRMxfp4Ops.td - rlx_mir MXFP4 ops ---------------------*- tablegen -*-===//
//
// The OCP Microscaling MXFP4 format as checkpoints store it (gpt-oss's
// experts): shape rule in lib/Dialect/MIR/IR/Mxfp4Ops.cpp, the linalg
// lowering (CPU, and the GPU's generic path) in
// lib/Conversion/MIRToLinalg/Nvfp4Lowering.cpp with NVFP4's E2M1 decode.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRMXFP4OPS_TD
#define RLX_DIALECT_MIR_IR_MIRMXFP4OPS_TD

def MIR_Mxfp4DequantizeOp : MIR_InferOp<"mxfp4_dequantize"> {
  let summary = "MXFP4 blocks (E2M1 codes, E8M0 scales of 32) to f32";
  let description = [{
    `out[..., 32·g + j] = e2m1(code j of block g) · 2^(scales[..., g] − 127)`:
    the OCP Microscaling (MX) v1.0 MXFP4 format, as transformers'
    `convert_moe_packed_tensors` reads gpt-oss's `*_blocks` / `*_scales`
    checkpoint tensors (except scale 0xFF: NaN for the whole block, as OCP
    defines it, where transformers' `ldexp(x, 128)` gives ±inf, or NaN for
    zero codes). `blocks` `[..., G, 16]` i8 holds 32 E2M1 codes per
    block, two per byte, the even index in the low nibble (magnitudes 0, 0.5,
    1, 1.5, 2, 3, 4, 6, bit 3 the sign: NVFP4's decode); `scales` `[..., G]`
    i8 holds the E8M0 bytes (0x00 is 2^-127, an f32 subnormal; 0xFF NaN). Result: `[..., 32·G]` f32, the
    leading dims of both operands.

    The verifier rejects blocks whose last dim is not 16, scales whose shape
    is not blocks' without that dim, and rank-0 scales.

    Example (gpt-oss-20b's gate_up experts, 32 experts, 2·I = 5760, H = 2880):
    ```mlir
    %w = rlx_mir.mxfp4_dequantize %blocks, %scales
        : tensor<32x5760x90x16xi8>, tensor<32x5760x90xi8>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$blocks, RankedTensorOf<[I8]>:$scales);
  let results = (outs RankedTensorOf<[F32]>:$output);
  let assemblyFormat = [{
    $blocks `,` $scales attr-dict `:` type($blocks) `,` type($scales)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRMXFP4OPS_TD
