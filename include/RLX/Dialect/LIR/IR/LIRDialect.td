//===- LIRDialect.td - rlx_lir dialect definition -----------*- tablegen -*-===//
//
// rlx_lir is the buffer level: after One-Shot Bufferize every MIR compute op is
// an `rlx_lir.kernel` in destination style on memrefs, and after
// rlx-lir-plan-buffers every transient buffer is an `rlx_lir.view` into one
// arena. Backends (CPU, NVVM) consume this level.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_IR_LIRDIALECT_TD
#define RLX_DIALECT_LIR_IR_LIRDIALECT_TD

include "RLX/Dialect/Common/IR/RLXBase.td"

def LIR_Dialect : Dialect {
  let name = "rlx_lir";
  let cppNamespace = "::mlir::rlx::lir";
  let summary = "RLX low-level IR: kernels on buffers and the arena plan.";
  let description = [{
    LIR is static-shaped. A LIR function receives the arena (one
    `memref<Nxi8>` argument marked `rlx_lir.arena`) and its IO buffers as
    arguments; its `rlx.io` attribute is the IO manifest (names of inputs,
    params and outputs). Kernels take their outputs as operands (destination
    style). What a kernel computes is the rlx_mir op in its body, on tensor
    views of its buffers, so every MIR op is a LIR kernel without a second
    definition of its semantics.

    The dialect verifies its discardable attributes: `rlx_lir.arena` (a unit
    attribute on a static 1-D `memref<Nxi8>` argument, or on the op that
    allocates the arena), `rlx_lir.io` on a function (`{inputs = [...],
    params = [...], outputs = [...]}`, arrays of names) and `rlx_lir.plan` on
    a function (`arena_bytes`, `alignment` > 0 and optional
    `lower_bound_bytes`, `sum_bytes` and `scratch_bytes` (the kernels'
    temporaries past the plan: rlx-cpu-kernel-scratch) as non-negative i64,
    optional `imported` string). Any other `rlx_lir.*` name is rejected.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = ["::mlir::rlx::RLXDialect", "::mlir::memref::MemRefDialect"];
}

class LIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<LIR_Dialect, mnemonic, traits>;

#endif // RLX_DIALECT_LIR_IR_LIRDIALECT_TD
