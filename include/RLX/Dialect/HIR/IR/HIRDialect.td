//===- HIRDialect.td - rlx_hir dialect definition -----------*- tablegen -*-===//
//
// rlx_hir is the block level: the ops a model builder writes (linear, SwiGLU
// FFN, residual RMSNorm, attention, RoPE, embedding, whole decoder layers).
// convert-rlx-hir-to-mir lowers it to rlx_mir.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIRDIALECT_TD
#define RLX_DIALECT_HIR_IR_HIRDIALECT_TD

include "RLX/Dialect/Common/IR/RLXBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def HIR_Dialect : Dialect {
  let name = "rlx_hir";
  let cppNamespace = "::mlir::rlx::hir";
  let summary = "RLX high-level IR: transformer building blocks on tensors.";
  let description = [{
    HIR ops are the blocks a model is written in. Every value is a builtin
    ranked tensor (f32, f16, bf16; integer ids for embeddings); dynamic
    dimensions (`?`) are allowed and are named (`batch`, `seq`, `past_seq`) by
    the `rlx.dim_names` argument attribute so `rlx-mir-specialize` can bind
    them. Ops are pure, verified, and infer their result types from their
    operands. A HIR function may also contain `rlx_mir` ops directly, the
    escape hatch for anything that has no block op.

    Linear weights use the PyTorch/HF layout `[out_features, in_features]`
    (`y = x·Wᵀ`) unless an op's `layout` says `in_out`.
  }];
  let dependentDialects = ["::mlir::rlx::RLXDialect"];
}

class HIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<HIR_Dialect, mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;
// Every check of a HIR op (shapes, dtypes and attributes) lives in its
// inferReturnTypes, which the parser, the builders and the verifier all run.

#endif // RLX_DIALECT_HIR_IR_HIRDIALECT_TD
