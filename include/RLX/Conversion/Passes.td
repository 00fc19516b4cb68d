//===- Passes.td - RLX conversion passes --------------------*- tablegen -*-===//
//
// Passes that move IR between RLX levels (and to and from upstream dialects).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_PASSES_TD
#define RLX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRLXHIRToMIR : Pass<"convert-rlx-hir-to-mir"> {
  let summary = "Lower rlx_hir blocks to the rlx_mir tensor graph";
  let description = [{
    Rewrites every rlx_hir op into rlx_mir ops (HIR functions may already
    contain MIR ops; they are left as they are, except `rlx_mir.lora_matmul`,
    which becomes its chain so that its base matmul takes part in weight
    packing and matmul merging like any linear layer). `decoder_layer` is first
    expanded into HIR blocks, which then lower like any other.

    `fusion-policy=direct` (default) emits the fused MIR op where one exists
    for the block: `linear` with a bias or activation becomes
    `fused_matmul`, `swiglu` a `fused_matmul` with `glu` on the packed
    gate|up weights, `attention` one `rlx_mir.attention`,
    `residual_rms_norm` one `rlx_mir.residual_rms_norm`.

    `fusion-policy=fusable` emits primitive chains instead (matmul, add,
    activation ops; attention as reshape/transpose/matmul/scale/mask/softmax/
    matmul with GQA as a broadcast of K/V heads). This is what autodiff
    differentiates and what the fusion patterns (`rlx-mir-fuse`) find; after
    fusion both policies give the same MIR.

    RoPE angles are computed from positions with MIR primitives (f32), using
    the op's theta and llama3/linear frequency scaling folded into a constant
    table of inverse frequencies.

    Example: `rlx-opt --convert-rlx-hir-to-mir=fusion-policy=fusable`.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect"];
  let options = [
    Option<"fusionPolicy", "fusion-policy", "::mlir::rlx::FusionPolicy",
           "::mlir::rlx::FusionPolicy::Direct",
           "direct: emit fused MIR ops; fusable: emit primitive chains",
           [{::llvm::cl::values(
             clEnumValN(::mlir::rlx::FusionPolicy::Direct, "direct",
                        "emit fused MIR ops where a block has one"),
             clEnumValN(::mlir::rlx::FusionPolicy::Fusable, "fusable",
                        "emit primitive chains (for autodiff and fusion)"))}]>
  ];
}

def ConvertRLXMIRToLinalg : Pass<"convert-rlx-mir-to-linalg"> {
  let summary = "Lower rlx_mir to linalg, tensor, arith, math and scf on tensors";
  let description = [{
    Every rlx_mir op becomes upstream ops on tensors, ready for One-Shot
    Bufferize and any linalg pipeline. Elementwise ops and regions become one
    linalg.generic each (their scalar bodies come from
    ElementwiseOpInterface); fused ops stay one loop nest: `fused_matmul` is
    an scf.forall over (batch, row tile) computing the norm prologue, the
    matmul and every epilogue stage per tile, and `attention` an scf.forall
    over (batch, head) with f32 softmax statistics. Shapes must be static
    (run `rlx-mir-specialize` first); a dynamic one is a diagnostic naming
    the value.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"rowTile", "row-tile", "int64_t", "512",
           "rows of the lhs per fused_matmul tile">
  ];
}

def ConvertRLXMIRToLIR : Pass<"convert-rlx-mir-to-lir", "::mlir::ModuleOp"> {
  let summary = "Wrap every MIR compute op in a destination-style rlx_lir.kernel (on tensors)";
  let description = [{
    The first half of MIR → LIR (the second is `rlx-lir-bufferize`). Every
    rlx_mir op that computes (including fused ops and elementwise regions)
    becomes one `rlx_lir.kernel` on tensors whose body is that op and whose
    `outs` are `tensor.empty`: destination style, so One-Shot Bufferize
    decides where each result lives (and, with empty-tensor elimination,
    writes a result straight into the slice of the buffer that consumes it,
    e.g. the present-KV output of a cache update). Data movement becomes
    upstream tensor ops with their own bufferization: `reshape` →
    `tensor.expand_shape`/`collapse_shape` and `slice` → `tensor.extract_slice`
    (views: no copy), `concat` → `tensor.insert_slice` into `tensor.empty`.
    Constants with at most `inline-constant-limit` elements are cloned into
    the kernels that read them; larger ones become `arith.constant` (a global
    after bufferization).

    Shapes must be static: a dynamic dim is a diagnostic naming the
    function's symbolic dims to bind with `rlx-mir-specialize`.
  }];
  let dependentDialects = ["::mlir::rlx::lir::LIRDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"inlineConstantLimit", "inline-constant-limit", "int64_t", "64",
           "constants up to this many elements (and splats) are cloned into kernels">
  ];
}

def RLXImportToMIR : Pass<"rlx-import-to-mir"> {
  let summary = "Raise TOSA and linalg-on-tensors (as PyTorch exporters write them) to rlx_mir blocks";
  let description = [{
    Raises, one op at a time, what torch-mlir/TOSA and linalg exporters
    produce into rlx_mir (`populateTosaToRLXMIRPatterns`,
    `populateLinalgToRLXMIRPatterns`): TOSA elementwise ops, reductions,
    reshapes, transposes, slices, concats, tiles of size-1 dims, matmuls and
    gathers; linalg matmul/batch_matmul (transposed maps included), generic
    elementwise bodies (their `arith`/`math` ops become MIR ops), sum/max
    reductions, transposes and embedding lookups; tensor reshapes, slices
    and concats. Then recognizes blocks in the raised graph
    (`rlx-mir-recognize-blocks`): rms_norm (also as pow/mean/rsqrt), softmax,
    silu, RoPE (rotate_half form), causal masks given as constants, and the
    matmul forms that attention recognition, SwiGLU and QKV merging expect,
    so `rlx-mir-fuse` then finds attention (GQA repeats included), SwiGLU and
    embedding gathers as in RLX's own HIR.

    Forms other exporters write are raised too: a matmul whose init is a
    splat constant (`arith.constant dense<0.0>`), a transpose whose
    permutation is on the output's map, ReLU as `arith.cmpf ugt` +
    `arith.select` (and max(x, 0) as relu); `tosa.cast` from i1 becomes a
    select of 1 and 0 first (upstream's folder turns a constant true into
    -1.0). The frontends run `tosa-infer-shapes` and
    `convert-elementwise-to-linalg` before this pass (`addImportPasses`).

    Ops it does not know stay as they are, between raised ones; the CPU
    pipeline lowers leftover TOSA with upstream's TOSA-to-linalg passes.

    Arguments marked neither `rlx.input` nor `rlx.param` (or named only
    `rlx.input = "argN"`, the default name the runners give; exported kernels
    that take their weights as plain arguments) are sorted by `weights`. The
    heuristic: a static float argument read only as the right operand of a
    2-D matmul (directly or through transposes and reshapes), or a 1-D one
    only added to matmul results (a bias), is a weight. By default a remark
    names such arguments and nothing changes: what is computed from them
    alone (the q|k|v and gate|up concatenations fusion builds, transposes)
    runs on every call. `weights=auto` marks them `rlx.param = "argN"`, with
    a remark, so `rlx-mir-pack-weights` computes that once, from the values
    the first run is given (a caller that passes new values on every run
    must not use it); `weights=none` is silent; a list of argument positions
    and glob patterns over argument names (`weights=1,3,4`, `weights=w_*`)
    names them. Functions that other functions call keep their arguments as
    they are (the caller passes them). `rlx-run` passes `auto` for a single
    run (`--weight-args`).

    An `scf.while` on tensors whose condition forwards its own block
    arguments (`torch.while_loop` as torch-mlir's linalg output writes it)
    becomes an `rlx_mir.while`: scalars carried as 0-d tensors, constants
    rebuilt in its regions, other values from outside carried unchanged.

    With `report`, a remark names every op that stayed outside rlx_mir (it
    runs as its own kernel) and every primitive that is usually part of a
    block (exp, rsqrt, reductions, tanh, erf, sigmoid, pow, reciprocal) but
    was not recognized into one, with the blocks it could have belonged to.
  }];
  let options = [
    Option<"report", "report", "bool", "false",
           "emit a remark for each op left outside rlx_mir or outside a recognized block">,
    ListOption<"weights", "weights", "std::string",
           "which unmarked arguments are weights (rlx.param): auto, none, or argument "
           "positions and name patterns (1,3,w_*); default: a remark names the candidates">
  ];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect", "::mlir::tensor::TensorDialect"];
}

def GpuGenericKernels : Pass<"rlx-gpu-generic-kernels", "::mlir::ModuleOp"> {
  let summary = "MIR ops without a GPU kernel template lowered through their linalg body";
  let description = [{
    The GPU path's generic route: every MIR op that becomes a kernel
    (`mir::isKernelOp`) and that no kernel template of
    `convert-rlx-lir-to-gpu` takes is lowered here, before
    `convert-rlx-mir-to-lir`, by the patterns of `convert-rlx-mir-to-linalg`
    (the op's CPU lowering, its one definition). Bufferized and planned like
    any linalg an import leaves, each resulting linalg op becomes a GPU
    kernel of its own (one thread per point of its parallel loops, reduced
    loops in order in that thread). So every MIR op that runs on the CPU also
    runs under the emulator and compiles for sm_80/sm_90a; hand-written
    templates stay the fast path where they exist.

    `report` emits a remark naming each op that takes the generic route;
    `force` (op names) sends ops that have a template the generic way too
    (tests compare both). Errors: an op with neither a template nor a linalg
    lowering.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "a remark at each op lowered the generic way">,
    ListOption<"force", "force", "std::string",
               "op names (rlx_mir.softmax, ...) to lower the generic way even with a template">
  ];
}

def ConvertRLXLIRToGPU : Pass<"convert-rlx-lir-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Planned LIR kernels to gpu.func kernels and a launch plan";
  let description = [{
    For every planned function (`rlx_lir.plan`), creates `gpu.module
    @<fn>_kernels` with one `gpu.func` per `rlx_lir.kernel` (and per
    host-side `memref.copy`), built by the kernel template registered for
    the kernel's root op (lib/Conversion/LIRToGPU, one op family per file):
    elementwise regions, casts, selects, broadcasts and causal masks;
    rms_norm, residual_rms_norm, layer_norm; softmax; reduce; transpose,
    gather, RoPE and copies (IO, KV cache); matmul and fused_matmul with all
    prologue/epilogue stages (SIMT); attention (every mask, GQA, softcap,
    layout). Each kernel op is replaced by a `gpu.launch_func` on the same
    buffers, so the host function keeps only arena and IO views and launches
    in schedule order: the launch plan the artifact writer and the runtimes
    read (it is not lowered with gpu-to-llvm).

    Kernels take their buffers as statically shaped memrefs (bare pointers
    at run time; static strided layouts are applied in the kernel), record
    their block size as `known_block_size`, and keep shared memory as
    workgroup attributions. Templates choose tile sizes from the shapes and
    query the target (`chip`, `features`) for what it supports.

    Diagnostics: unplanned or tensor-form LIR, a kernel whose root op has no
    template, a case a template does not handle, shared memory beyond the
    chip's limit, an unknown chip or PTX ISA (see rlx-lower-to-nvvm).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect", "::mlir::math::MathDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "NVIDIA chip: sm_80, sm_89, sm_90, sm_90a, sm_100a, ...">,
    Option<"features", "features", "std::string", "\"\"",
           "PTX ISA as +ptxNN (default: the chip's)">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "tensor-core kernels where they apply (bf16/f16 fused_matmul with more than 16 "
           "rows: wgmma on sm_90a, mma.sync on sm_80+); false leaves them out of "
           "matmul-kernel=auto">,
    Option<"matmulKernel", "matmul-kernel", "std::string", /*default=*/"\"auto\"",
           "matmul / fused_matmul kernel: auto (the tile heuristic of docs/gpu.md), gemv "
           "(at most 16 rows), simt (tiled SIMT), tensor-cores (mma.sync), wgmma (sm_90a: "
           "TMA + mbarrier pipeline + warpgroup MMA) or tcgen05 (sm_100a with +ptx88: "
           "block-scaled FP4 MMA for NVFP4 weights, activations quantized to NVFP4): a "
           "preference, used where the kernel can compute a matmul; elsewhere the "
           "heuristic's kernel, with a remark naming the op and why (an error with "
           "strict-kernels)">,
    Option<"splitK", "split-k", "int64_t", /*default=*/"0",
           "K splits of the gemv kernel (warps of a block summing disjoint K ranges, "
           "combined in a fixed order before the epilogue runs once); 0: the heuristic">,
    Option<"attentionKernel", "attention-kernel", "std::string", /*default=*/"\"auto\"",
           "attention kernel: auto (on sm_90a the wgmma kernel where it applies: bf16/f16, "
           "head dims multiples of 16 from 64 to 256; else flash attention on mma.sync where "
           "it applies: bf16/f16, head dims multiples of 16 up to 128, sm_80+; else SIMT), "
           "simt, flash or wgmma: a preference, as matmul-kernel's">,
    Option<"strictKernels", "strict-kernels", "bool", /*default=*/"false",
           "a matmul-kernel or attention-kernel that cannot take an op is an error naming "
           "the op and why (default: the heuristic's kernel there, with a remark)">
  ];
}

#endif // RLX_CONVERSION_PASSES_TD
