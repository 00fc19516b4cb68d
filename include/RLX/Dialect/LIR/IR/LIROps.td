//===- LIROps.td - rlx_lir ops ------------------------------*- tablegen -*-===//
//
// The arena view and the destination-style kernel op.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_IR_LIROPS_TD
#define RLX_DIALECT_LIR_IR_LIROPS_TD

include "RLX/Dialect/LIR/IR/LIRDialect.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def LIR_ViewOp : LIR_Op<"view", [Pure,
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "a typed buffer at a fixed byte offset of the arena";
  let description = [{
    Views `byte_offset .. byte_offset + size(result)` of the arena as a
    statically shaped, contiguous (identity layout) memref. This is how a
    buffer plan is written down: every transient buffer of a planned function
    is one `rlx_lir.view` of the function's arena argument.

    Operands: `arena`, a static 1-D `memref<Nxi8>` with identity layout.
    Result: a static memref with identity layout. `byte_offset` is in bytes.

    The verifier rejects a dynamic or non-i8 arena, a negative offset, an
    offset that is not a multiple of the element size, a dynamic result, and
    a view that extends past the end of the arena.

    Example:
    ```mlir
    %buf = rlx_lir.view %arena[1024] : memref<4096xi8> to memref<8x16xf32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$arena, RLX_I64Attr:$byte_offset);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = [{
    $arena `[` $byte_offset `]` attr-dict `:` type($arena) `to` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Size of the view in bytes.
    int64_t getByteSize();
  }];
}

def LIR_KernelOp : LIR_Op<"kernel", [
    AttrSizedOperandSegments, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "one kernel in destination style, on tensors or on buffers";
  let description = [{
    Reads `ins`, writes `outs`; what it computes is its body, which receives
    tensor versions of `ins` as block arguments and yields one tensor per
    `outs` operand (same shape and element type). The body is isolated from
    above and holds rlx_mir ops (usually exactly one, possibly fused) plus
    constants. `outs` are only written, never read.

    Like `linalg.generic`, the op has two forms. On tensors (what
    `convert-rlx-mir-to-lir` makes from each MIR compute op) `outs` are
    tensors, usually `tensor.empty`, and the op returns one tensor per
    `outs` operand; One-Shot Bufferize turns it into the buffer form through
    its BufferizableOpInterface model (each result is the buffer of its
    `outs` operand). On buffers (memrefs, no results) it is what the arena
    planner and the backends see: the CPU path inlines the body on tensor
    views of the buffers; the GPU path picks a kernel template by the root
    op.

    Attributes: optional `name` (labels the kernel in reports and generated
    GPU symbols); `in_place`, set by `rlx-lir-plan-buffers`, with one entry
    per output: the index of the input whose bytes that output reuses, or -1.

    The verifier rejects a body whose block arguments do not match `ins`
    (shape and element type), a yield that does not match `outs`, a mix of
    tensor and memref `outs`, results on the buffer form, results that do
    not match the tensor `outs`, and an `in_place` of the wrong length or
    with an out-of-range input index.

    Example:
    ```mlir
    rlx_lir.kernel "mm0" ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>)
                         outs(%y : memref<8x16xf32>) {
    ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>):
      %r = rlx_mir.matmul %a, %b : tensor<8x16xf32>, tensor<16x16xf32>
      rlx_lir.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                   OptionalAttr<StrAttr>:$name, OptionalAttr<DenseI64ArrayAttr>:$in_place);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    ($name^)? (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)` (`->` type($results)^)?
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getOutputsMutable(); }
    /// The yield that ends the body.
    ::mlir::rlx::lir::YieldOp getYield();
    /// The single non-constant op of the body, when there is exactly one.
    ::mlir::Operation *getRootOp();
    /// True when the body reads input `input` only at the element it writes
    /// in output `output`, with the same shape and element size: an
    /// elementwise kernel without broadcasting of that input, or the
    /// residual of a fused_matmul (its last stage). Only then may the output
    /// take over the input's bytes.
    bool isElementwiseInPlaceSafe(unsigned input, unsigned output);
  }];
}

def LIR_YieldOp : LIR_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"KernelOp">]> {
  let summary = "ends a kernel body with the values to store";
  let description = [{
    Yields one tensor per output buffer of the enclosing `rlx_lir.kernel`;
    the kernel stores them into its `outs`.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // RLX_DIALECT_LIR_IR_LIROPS_TD
