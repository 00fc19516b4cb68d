//===- Passes.td - rlx_lir passes ---------------------------*- tablegen -*-===//
//
// Bufferization of the kernel form, the arena buffer planner and its
// independent checker.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_TRANSFORMS_PASSES_TD
#define RLX_DIALECT_LIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LIRBufferize : Pass<"rlx-lir-bufferize", "::mlir::ModuleOp"> {
  let summary = "One-Shot Bufferize tensor kernels into the LIR buffer form";
  let description = [{
    The second half of MIR → LIR (after `convert-rlx-mir-to-lir`):
    empty-tensor elimination (a kernel whose result is inserted into a larger
    buffer, e.g. the new K/V rows of a cache update, writes straight into
    that buffer's slice), then One-Shot Bufferize of the whole module with
    function boundaries and identity-layout function types, using the
    `rlx_lir.kernel` BufferizableOpInterface model (kernel bodies stay on
    tensors), then results become out-parameters (`rlx.output` names them)
    so the caller owns every output. Each function gets an IO manifest,
    `rlx_lir.io = {inputs, params, outputs}`, the names of its arguments by
    role. Transient buffers are `memref.alloc`s afterwards, ready for
    `rlx-lir-plan-buffers`.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::rlx::lir::LIRDialect"];
}

def LIRPlanBuffers : Pass<"rlx-lir-plan-buffers", "::mlir::ModuleOp"> {
  let summary = "Place every transient buffer at an offset of one arena";
  let description = [{
    For each function in buffer form: every static `memref.alloc` is a
    buffer whose lifetime runs from the first to the last op (in schedule
    order, i.e. the function body's order) that touches it or a view of it
    (subview, expand/collapse_shape, cast). Views are not buffers: they stay
    views of their buffer's bytes. Function arguments (inputs, parameters,
    outputs) are not in the arena.

    An elementwise kernel may write its output over an input that dies at
    that kernel (same shape and element size, no broadcast:
    `rlx_lir.kernel::isElementwiseInPlaceSafe`), and a fused_matmul over
    its residual (read only at the element it writes, case G5b); the two
    become one buffer
    and the kernel records it in `in_place`. Inputs that are read later,
    constants (globals) and arguments are never overwritten.

    Placement: sizes rounded up to `alignment`; buffers placed one at a
    time, each at the best-fitting gap (smallest hole, then lowest offset)
    among the buffers whose lifetimes overlap it, in five orders (decreasing
    size with ties by start, start time, lifetime length, size × lifetime,
    decreasing size with ties in program order), then the same orders with
    first fit; the smallest arena is kept (stopping early at the lower
    bound), so the plan is never larger than the original RLX planner's
    (decreasing size, first fit). The lower bound is the largest sum of live
    bytes at any op.

    The result: a new first argument `memref<Nxi8> {rlx_lir.arena}`, each
    alloc replaced by an `rlx_lir.view` of it, deallocs removed, and
    `rlx_lir.plan = {arena_bytes, lower_bound_bytes, sum_bytes, alignment}`
    on the function. `report` emits a remark with the summary;
    `report-dir` writes `<function>.plan.json` (arena, lower bound, every
    buffer's offset, size and lifetime, the schedule, view aliases, the IO
    manifest) and `<function>.plan.svg` (offset × time) there.

    A dynamic-size buffer (dims not specialized) is a diagnostic that names
    the function's symbolic dims to bind.
  }];
  let dependentDialects = ["::mlir::rlx::lir::LIRDialect", "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64", "byte alignment of every buffer">,
    Option<"inPlace", "in-place", "bool", "true",
           "let elementwise kernels write over an input that dies there">,
    Option<"report", "report", "bool", "false", "emit a remark with the plan summary">,
    Option<"reportDir", "report-dir", "std::string", "",
           "write <function>.plan.json and <function>.plan.svg into this directory">
  ];
}

def LIRVerifyPlan : Pass<"rlx-lir-verify-plan", "::mlir::ModuleOp"> {
  let summary = "Check an arena plan independently of the planner";
  let description = [{
    Recomputes, from the IR alone, the byte range of every `rlx_lir.view`
    of a function's arena and the ops during which it (or any view of it) is
    live, and reports as errors: two views whose byte ranges overlap while
    both are live (except an output written over a dying input of an
    elementwise kernel that records it in `in_place`), a view that is not
    aligned to the plan's alignment, a view or a subview of one that reaches
    past its buffer or the arena, any other use of the arena, and a
    `rlx_lir.plan` whose sizes disagree with the IR. Functions without an
    arena argument are skipped.
  }];
}

#endif // RLX_DIALECT_LIR_TRANSFORMS_PASSES_TD
