//===- Passes.td - rlx_mir transformation passes ------------*- tablegen -*-===//
//
// Fusion passes (each a thin driver over one populate*Patterns family), the
// all-in-one rlx-mir-fuse, weight packing and shape specialization.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_TRANSFORMS_PASSES_TD
#define RLX_DIALECT_MIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

class MIR_FusionPass<string arg, string summaryText, string descText>
    : Pass<arg, "::mlir::func::FuncOp"> {
  let summary = summaryText;
  let description = descText # [{

    With `report`, each opportunity the patterns saw but could not take is
    emitted as a remark at the op, with the reason (multi-use intermediate,
    graph output, unsupported epilogue, shape mismatch).
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect"];
  let options = [
    Option<"report", "report", "bool", "false",
           "emit a remark for every missed fusion opportunity">
  ];
}

def MIRFuseEpilogue : MIR_FusionPass<"rlx-mir-fuse-epilogue",
    "Fuse bias, activation and residual adds into matmul epilogues", [{
    `add(matmul, b[N])` → `fused_matmul bias`, `act(matmul)` →
    `fused_matmul activation`, `add(matmul, r)` with `r` of the output's
    shape → `fused_matmul residual`. Stages are only added in their order
    (bias, activation, head norm, rope, residual); the matmul result must
    have no other use.
  }]>;

def MIRFuseRope : MIR_FusionPass<"rlx-mir-fuse-rope",
    "Fuse per-head norms and RoPE into the epilogue of the producing matmul", [{
    `rope(matmul(x, W))` → `fused_matmul rope(...)` on all output heads, and
    Qwen3's per-head RMSNorm (`reshape → rms_norm → reshape` of a matmul
    output) → `fused_matmul head_norm(...)`.
  }]>;

def MIRFuseSwiGlu : MIR_FusionPass<"rlx-mir-fuse-swiglu",
    "Merge gate/up matmuls on one input into one matmul with fused gating", [{
    `act(x·Wg) · (x·Wu)` → `fused_matmul(x, concat(Wg, Wu)) glu activation
    act`. The weight concatenation is a parameter transform that
    `rlx-mir-pack-weights` performs once, not per call.
  }]>;

def MIRMergeMatmuls : MIR_FusionPass<"rlx-mir-merge-matmuls",
    "Merge matmuls that share their input (QKV) into one", [{
    Matmuls with the same lhs, prologue and rhs layout become one matmul over
    the concatenated weights, followed by slices (views) of its output. RoPE
    and per-head-norm epilogues merge when their heads form a leading block
    (q, k heads first, then v). Weights are packed by
    `rlx-mir-pack-weights`.
  }]>;

def MIRFuseResidualNorm : MIR_FusionPass<"rlx-mir-fuse-residual-norm",
    "Fuse a residual add and the RMSNorm that reads it", [{
    `rms_norm(add(x, r))` → `residual_rms_norm(x, r)` with two results (the
    norm and the sum; other users of the sum read the second result).
  }]>;

def MIRFuseNormPrologue : MIR_FusionPass<"rlx-mir-fuse-norm-prologue",
    "Fuse RMSNorm/LayerNorm into the prologue of the matmuls that read it", [{
    When every user of an `rms_norm` or `layer_norm` result is a matmul that
    takes it as lhs, the norm moves into those matmuls' prologue and the
    norm op disappears (profitable: no extra pass over the activations, and
    rows are normalized while they are loaded).
  }]>;

def MIRFuseAttention : MIR_FusionPass<"rlx-mir-fuse-attention",
    "Recognize matmul → scale → mask → softmax → matmul as one attention", [{
    Finds the chain `convert-rlx-hir-to-mir{fusion-policy=fusable}` emits
    (and HF's eager attention): q/k/v in packed, BSHD or BHSD layout,
    `repeat_kv` broadcasts for GQA, a scale, an optional softcap, causal or
    sliding-window masking, a boolean or additive mask, softmax and the
    value matmul. The whole chain becomes one `rlx_mir.attention`.
  }]>;

def MIRFuseElementwise : MIR_FusionPass<"rlx-mir-fuse-elementwise",
    "Fuse chains of elementwise ops into rlx_mir.elementwise regions", [{
    Connected elementwise ops (and `cast`s) whose results all have one shape
    become one `rlx_mir.elementwise` whose body holds their scalar `arith`/
    `math` ops; values used outside the chain become results, splat
    constants are inlined.
  }]>;

def MIRPackWeights : Pass<"rlx-mir-pack-weights", "::mlir::ModuleOp"> {
  let summary = "Compute parameter transforms once: packed weights become parameters";
  let description = [{
    Computations that depend only on parameters (arguments marked
    `rlx.param`), such as the `concat` of Q/K/V or gate/up weights that
    matmul merging creates, are moved out of the function into
    `@<fn>_pack_params`, which maps the original parameters to the packed
    ones. The function then takes the packed tensors as parameters, each
    marked `rlx.param = "<name>"` and `rlx.packed_by = {fn, result}`, and
    the original parameters it no longer reads are removed. Weight loaders
    run the pack function once; nothing is concatenated per call.


    With `kn-weights`, a `matmul` or `fused_matmul` with `transpose_b` whose
    2-D f32 weight depends only on parameters (the `nn.Linear` layout
    `[N, K]`, merged or not) reads it as `[K, N]` without `transpose_b`: the
    transpose is one more parameter transform, computed once by the pack
    function. GEMM libraries whose row-major `[K, N]` kernels are faster
    (oneDNN's sgemm on AVX-512 CPUs; the CPU runner asks the runtime) get
    that layout; the numbers do not change. NVFP4 weights keep theirs.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"knWeights", "kn-weights", "bool", "false",
           "store the [N, K] weights of transpose_b matmuls as [K, N]">
  ];
}

def MIRBlockNvfp4Scales : Pass<"rlx-mir-block-nvfp4-scales", "::mlir::ModuleOp"> {
  let summary = "NVFP4 weight scales into the 128x4 tile layout of block-scaled MMA";
  let description = [{
    For targets with block-scaled FP4 MMA (sm_100a with PTX ISA 8.8:
    `rlx-lower-to-nvvm` runs it before fusion): the E4M3 scales of every
    `nvfp4_matmul` / `dequant_linear`-made matmul in NVIDIA's layout, and of
    every `fused_matmul ... transpose_b nvfp4(...)`, go through
    `rlx_mir.nvfp4_block_scales`, so the tcgen05 kernel reads each 128 × 4
    scale tile as the 512 contiguous bytes the MMA takes. The scales are
    parameters, so `rlx-mir-pack-weights` (the end of `rlx-mir-fuse`) moves
    the blocking into `@<fn>_pack_params`: it runs once, when weights are
    loaded. Scales already blocked (rank 4) are left alone; the op's type
    keeps them from being blocked twice. Every backend reads blocked scales
    (the CPU path too), so the result is the same.
  }];
}

def MIRFuse : Pass<"rlx-mir-fuse", "::mlir::ModuleOp"> {
  let summary = "All MIR fusion in a working order, then weight packing";
  let description = [{
    Canonicalize and CSE, then attention recognition, SwiGLU, epilogues,
    RoPE/head norms, shared-input merging, residual epilogues, residual
    norms, norm prologues, elementwise chains, and `rlx-mir-pack-weights`.
    With `report`, prints the op counts before and after (all ops and
    compute ops, i.e. not reshape/slice/broadcast/constant) as a remark on
    each function, and one remark per missed opportunity. Compute ops
    include those of other dialects that import left in the function (a
    linalg.generic or TOSA op, one kernel each), named in the remark.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect", "::mlir::func::FuncDialect"];
  let options = [
    Option<"report", "report", "bool", "false",
           "emit op counts and a remark for every missed fusion opportunity">,
    Option<"packWeights", "pack-weights", "bool", "true",
           "run rlx-mir-pack-weights at the end">,
    Option<"knWeights", "kn-weights", "bool", "false",
           "rlx-mir-pack-weights{kn-weights}: store the [N, K] weights of transpose_b "
           "matmuls as [K, N]">
  ];
}

def MIRSpecialize : Pass<"rlx-mir-specialize", "::mlir::ModuleOp"> {
  let summary = "Bind symbolic dims (seq, past_seq, ...) and re-infer every type";
  let description = [{
    `dims` binds dim names (from `rlx.dim_names` argument attributes) to
    sizes, e.g. `rlx-mir-specialize{dims=seq=128,past_seq=16}`. Argument
    types, then every op's result types (by its own type inference), then
    the function's result types are rewritten. A dynamic dim without a
    binding stays dynamic; with `require-static` that is an error naming the
    dims to bind.
  }];
  let options = [
    ListOption<"dims", "dims", "std::string", "name=size bindings">,
    Option<"requireStatic", "require-static", "bool", "false",
           "fail if any dynamic dim remains after binding">
  ];
}

def MIRFillEmptyAxes : Pass<"rlx-mir-fill-empty-axes"> {
  let summary = "Contractions and reductions over an empty axis, as one element of their identity";
  let description = [{
    A `matmul`, `fused_matmul` or `grouped_matmul` whose contraction size K is 0 (static) and
    whose result is not empty computes `epilogue(0)`; a `reduce` `sum`,
    `prod` or `mean` over an axis of size 0 gives 0, 1 or NaN (as torch).
    Kernels that tile K or a reduced axis need at least one element, so the
    empty operands become splat constants of the same shape with each size-0
    dim set to 1: zeros for the matmul operands and `norm_bias`, ones for
    `norm_weight`, and 0, 1 or NaN for the reduction's input; the results are
    unchanged. NVFP4 weights are left alone. Every backend's front end runs it
    after specialization, before kernels are chosen.
  }];
}

def MIRDecompose : Pass<"rlx-mir-decompose"> {
  let summary = "Replace composite ops by their chain of MIR ops ahead of fusion";
  let description = [{
    Replaces each op named in `ops` (default: `rlx_mir.fft`, `rlx_mir.rfft`,
    `rlx_mir.irfft`, `rlx_mir.stft`, `rlx_mir.istft` and `rlx_mir.conv`) whose shapes are static by its
    `DecomposableOpInterface` chain, so that fusion, the matmul kernels (BLAS
    on the CPU, tensor cores on GPUs) and the arena plan see its primitive
    ops instead of one opaque kernel. Ops with dynamic shapes are left to the
    linalg lowering, which decomposes them after specialization. Every
    backend's front end runs it before fusion; the GPU path's with
    `kernel-ffts`.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "op names to decompose (empty: the Fourier transforms and conv)">,
    Option<"kernelFfts", "kernel-ffts", "bool", /*default=*/"false",
           "leave whole the transforms with a row form (mir::fftRows: one axis, "
           "the last, a short length of small prime factors), which the GPU "
           "path's shared-memory FFT kernel runs">
  ];
}

def MIRUnrollControlFlow : Pass<"rlx-mir-unroll-control-flow"> {
  let summary = "rlx_mir.if, while and scan as straight-line MIR (their unrolled form)";
  let description = [{
    Replaces each control-flow op by its `DecomposableOpInterface` form:
    `if` as both regions and a `select`, `while` as `max_iterations`
    predicated trips, `scan` as its steps one after another (at most 4096
    steps or trips; static shapes). The GPU path runs it before kernels are
    chosen, so that every op of a body is a kernel of its own; a `while`
    without `max_iterations` is an error there. Nested ops are unrolled
    first. The CPU path keeps the ops and lowers them to scf.
  }];
}

def MIRIndexBounds : Pass<"rlx-mir-index-bounds", "::mlir::ModuleOp"> {
  let summary = "Record on each integer argument the rows of the tables it indexes";
  let description = [{
    An integer tensor argument whose values reach the indices of an
    `rlx_mir.gather` (token ids into an embedding table, positions into
    GPT-2's learned positions), directly or through `reshape`, `cast`,
    `transpose`, `broadcast`, `slice` and `concat`, gets
    `rlx.index_bound = N : i64`, N the smallest row count of those tables.
    Runners check given values against it (an id outside [0, N) is an error
    naming the argument, the value and N, where the CPU kernels would clamp
    it) and draw seeded ids below it. Runs after the import and HIR
    lowering, before tensor parallelism splits the tables.
  }];
}

def MIRSplitKV : Pass<"rlx-mir-split-kv", "::mlir::ModuleOp"> {
  let summary = "Split-KV (Flash-Decoding): attention over few query rows and many keys "
                "as attention_partial + attention_combine";
  let description = [{
    Rewrites `rlx_mir.attention` (static shapes) into
    `rlx_mir.attention_partial` over `kv_splits` ranges of the keys and
    `rlx_mir.attention_combine`, so that a decode step's few query rows fill
    a GPU: the partial kernel's blocks (R-row tiles of query rows × the
    query heads of a kv head, × kv heads × batch) times the splits.

    The kernel's tiles (include/RLX/Dialect/Common/IR/FlashTiles.h): the
    mma.sync kernel's R = 64 rows, 64-key tiles and two block slots per SM
    (`.minnctapersm 2`); with `wgmma` (sm_90a) and bf16/f16 head dims that
    are multiples of 16 from 64 to 256, the wgmma kernel's R = 64 (128 when
    Sq · group or the group exceed 64), 128-key tiles (64 above head dim
    128) and one slot per SM, each block holding R / group whole queries.
    The heuristic (`kv-splits=0`), after FlashAttention's: with blocks =
    ceil(Sq · group / R) (wgmma: ceil(Sq / floor(R / group))) ·
    num_kv_heads · B, no split when blocks ≥ 0.8 · slots; otherwise, among
    n ≤ min(128, K / 256), the wave efficiency
    e(n) = (blocks·n / slots) / ceil(blocks·n / slots) is computed and the
    smallest n with e(n) ≥ 0.85 · max e wins, K being the keys a query row
    can see: Sk, or min(Sk, w + Sq − 1) under a sliding window or chunked
    mask of w (the other keys' splits find no key tile and exit). The
    splits are then whole key tiles (`kv_chunk` = ceil(K / n) rounded up to
    the tile, the splits covering all Sk keys: ceil(Sk / kv_chunk) of
    them); one split leaves the op alone. `kv-splits=N`
    forces N splits of ceil(Sk / N) keys on every attention (1: never
    split); the count is capped at 65535 / B (the grid). f64 attention is
    never split (the partials are f32). An `attention_partial` of one split
    (no `kv_chunk`) whose users are all `attention_combine`s (attention
    with sinks, which `convert-rlx-hir-to-mir` writes so) is split the same
    way in place: its `kv_splits`/`kv_chunk` and its results' leading dim
    change, the combine stays. `rlx-lower-to-nvvm` runs it with the
    target's SM count and, on sm_90a, `wgmma`.
  }];
  let options = [
    Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
           "streaming multiprocessors of the target GPU">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "the target runs the sm_90a wgmma attention kernel (its tiles)">,
    Option<"kvSplits", "kv-splits", "int64_t", /*default=*/"0",
           "0: the heuristic; N >= 1: N splits for every attention (1: none)">
  ];
}

//===----------------------------------------------------------------------===//
// Tensor parallelism (upstream shard)
//===----------------------------------------------------------------------===//

def MIRShard : Pass<"rlx-mir-shard", "::mlir::ModuleOp"> {
  let summary = "Annotate a model for Megatron-style tensor parallelism over a shard.grid";
  let description = [{
    Adds `shard.grid @<grid>(shape = tp)` and annotates every function's
    tensor arguments and results with `shard.shard ... annotate_for_users`
    by name (`rlx.param`, `rlx.input`, `rlx.output`), after Megatron-LM's
    layers (Shoeybi et al., 2019): column-parallel `q_proj`, `k_proj`,
    `v_proj`, `gate_proj`, `up_proj` (and GPT-2's `c_fc`) weights and
    biases, split by output feature, so a rank holds whole heads and a block
    of the intermediate size; row-parallel `o_proj`, `down_proj` (GPT-2's
    `c_proj`) weights, split by input feature, their bias replicated;
    vocab-parallel `embed_tokens`, `wte` and `lm_head` rows; KV caches
    (`past_key_values.N.key|value`, `present.N.key|value`) by KV head; every
    other tensor (norm weights, hidden states, ids, positions) replicated.
    When tp > num_kv_heads (num_kv_heads dividing tp), the KV heads are
    replicated, as in vLLM: k_proj, v_proj and the KV caches stay whole on
    every rank, GQA's repeat of the KV heads (reshape → broadcast →
    reshape) is computed whole and annotated split by query head for its
    users, so shard-partition cuts each rank's copies with a
    `shard.all_slice` (`rlx-mir-bind-rank` makes it a static slice).
    Packed projections (GPT-2's `c_attn`, Phi-3's `qkv_proj` and
    `gate_up_proj`) are column-parallel by parts: a rank holds block r of
    every part side by side, and the slices that take the parts of their
    output are rewritten to read that layout (`reshape` to `[.., tp,
    size/tp]`, slice, `reshape` back).
    Outputs are annotated replicated (the KV caches by KV head). The split
    of a name is `tensorParallelSplit` (RLX/Dialect/MIR/Transforms/Sharding.h),
    a pure function of the name and rank; rank `r` of `tp` holds the block
    `[r·size/tp, (r+1)·size/tp)` of the split dim.

    Then `func.func(sharding-propagation, shard-partition)` (upstream) gives
    every rlx_mir op its split through their ShardingInterface models and
    writes the per-rank program, with a `shard.all_reduce` after each
    row-parallel matmul; run it on MIR before fusion
    (`convert-rlx-hir-to-mir{fusion-policy=fusable}`), and fuse the per-rank
    program afterwards.

    Errors (located, nothing rewritten): `tp < 1`; tp not dividing a split
    dim (intermediate size, vocabulary) or a dynamic split dim; tp not
    dividing num_heads or num_kv_heads (found from the head_dim of the
    function's rope or attention ops; when tp > num_kv_heads, num_kv_heads
    must divide tp, and the attention must be decomposed); a packed projection whose
    output is not sliced into its equal parts, or whose parts tp does not
    divide; packed layouts RLX does not split (`query_key_value`,
    `W_pack`); a module that already has the grid's symbol.

    Stacked MoE experts (`experts.gate_up_proj`, `experts.down_proj`) are
    split by expert: with `ep` = 0 (or tp) rank r holds experts
    [r·E/tp, (r+1)·E/tp) whole. With `ep` < tp (ep dividing tp and E, the
    intermediate size divided by tp/ep), the grid is `[ep, tp/ep]`: the
    expert's group on axis 0 and, within a group, tensor parallelism of each
    expert on axis 1 (gate|up by output feature, part by part; down by input
    feature), every other split over both axes. Rank r = g·(tp/ep) + s holds
    experts [g·E/ep, (g+1)·E/ep), block s of each one's intermediate size
    (`rankRegion`). The per-rank program's collectives all span the whole
    grid; `rlx-mir-flatten-grid` makes it 1-D for the backends. The expert
    dims are found from the graph (the grouped_matmul that reads the
    tensor, through transposes), so both stacked layouts split right.
    Errors: ep < 0, ep not dividing tp or E, tp/ep not dividing the
    intermediate size, an expert tensor whose grouped_matmul is not found
    (through transposes that keep the experts in dim 0), gate|up rows that
    reach more than the down projection of the same experts, ep < tp on a
    module without stacked experts.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"1", "tensor-parallel ranks (the grid's size)">,
    Option<"ep", "ep", "int64_t", /*default=*/"0",
           "expert-parallel groups among the tp ranks (0: tp, whole experts per rank; "
           "ep < tp: each expert split over tp/ep ranks)">,
    Option<"gridName", "grid", "std::string", /*default=*/"\"tp\"",
           "name of the shard.grid symbol">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MIRStepwiseReshard : Pass<"rlx-mir-stepwise-reshard", "::mlir::func::FuncOp"> {
  let summary = "Spell a reshard that moves several grid axes as one-axis steps";
  let description = [{
    Runs between `sharding-propagation` and `shard-partition`. Upstream's
    partition reshards a tensor dim by one grid axis at a time (split one
    more axis, unsplit the last one, move the last one); a change such as
    `[[], [0, 1]]` → `[[]]` (a vocab-parallel LM head's logits returned
    whole over `rlx-mir-shard{ep}`'s `[ep, tp/ep]` grid) has no partition
    there. This pass puts a chain of `shard.shard` pairs between such a
    producer's and user's annotations: every axis leaves its dim, last
    first, then the target's axes join in order, one per step. The
    resulting collectives (all_gathers over axis 1 then axis 0, all_slices
    over axis 0 then axis 1) are joined back by `rlx-mir-flatten-grid`.
    Annotations over a 1-D grid, and those with halo sizes or sharded dim
    offsets, are left alone.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MIRFlattenGrid : Pass<"rlx-mir-flatten-grid", "::mlir::ModuleOp"> {
  let summary = "A per-rank program over a multi-axis shard.grid as one over its 1-D product";
  let description = [{
    Runs on the per-rank program of `shard-partition`. When every collective
    over a multi-axis grid (`rlx-mir-shard{ep}`'s `[ep, tp/ep]`) spans all of
    its axes in order, the program is the same over a 1-D grid of the axes'
    product (shard's linear index is row-major over the axes, so the ranks
    keep their numbers): the grid becomes `shape = [product]` and each
    collective's `grid_axes` `[0]`. First the one-axis steps of
    `rlx-mir-stepwise-reshard` are joined: an all_gather over later axes
    whose one user gathers the same dim over earlier axes is one all_gather
    over both (likewise an all_slice over earlier then later axes). The backends (`rlx-cpu-prepare-mpi`,
    `rlx-mir-gpu-collectives`, the GPU artifact) run collectives over all
    ranks of a 1-D grid. `shard.process_linear_index` is kept (its value is
    unchanged).

    Errors (located): a collective over some of the grid's axes (a sub-group
    communicator, which the runtimes do not create), `shard.process_multi_index`
    over a multi-axis grid, a dynamic grid.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MIRBindRank : Pass<"rlx-mir-bind-rank", "::mlir::ModuleOp"> {
  let summary = "Bind a per-rank program's rank: process_linear_index and all_slice become static";
  let description = [{
    Runs on the per-rank program of `shard-partition` when the program is
    compiled for one rank (every rank JIT-compiles its own under
    `rlx-run --tp`; the GPU path compiles an artifact per rank). A kernel has
    no rank to ask:
    - `shard.process_linear_index` (the rank a vocab-parallel embedding
      looks its rows up by) becomes the constant `rank`;
    - `shard.all_slice` (a replicated tensor cut to the rank's block: the
      KV heads of a rank when tp > num_kv_heads) becomes an `rlx_mir.slice`
      at `rank · size / tp` along its slice axis.
    The module gets `rlx.tp_rank = rank`, which the GPU artifact records.
    With `rank = -1` (not given) such an op is an error naming it; a rank
    outside the grid, a multi-axis grid and a dynamic sliced dim are errors
    too. Without such ops the pass does nothing.
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"-1",
           "this rank (-1: not given)">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::mlir::arith::ArithDialect"];
}

def MIRGpuCollectives : Pass<"rlx-mir-gpu-collectives", "::mlir::ModuleOp"> {
  let summary = "Prepare a partitioned (per-rank) program's all-gathers for the GPU runtime";
  let description = [{
    Runs on the per-rank program of `shard-partition` before MIR → LIR on
    the GPU path. The GPU runtime's collectives (NCCL, or MPI under the
    emulator) gather contiguous per-rank blocks, so each `shard.all_gather`
    over a 1-D grid whose gather axis has a dim other than 1 before it
    becomes an all-gather along a new leading axis, a `rlx_mir.transpose`
    that moves the ranks' axis to the gather axis, and a `rlx_mir.reshape`
    (the logits of a vocab-parallel LM head: `[B, S, V/tp]` → `[tp, B, S,
    V/tp]` → `[B, S, tp, V/tp]` → `[B, S, V]`). A multi-axis grid and a
    dynamic shape are errors.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

//===----------------------------------------------------------------------===//
// Autodiff
//===----------------------------------------------------------------------===//

def MIRPrepareForAD : Pass<"rlx-mir-prepare-for-ad", "::mlir::ModuleOp"> {
  let summary = "Unfuse fused MIR ops and regions into the primitives rlx-mir-grad has rules for";
  let description = [{
    Rewrites, in every function: `fused_matmul` into its stages (norm
    prologue, matmul, bias add, activation or gated unit, residual add);
    `attention` into the primitive chain (`matmul → scale → [softcap] →
    [causal_mask] → [mask] → softmax → matmul`, GQA by broadcast);
    `residual_rms_norm`, `rms_norm` and `layer_norm` into reductions and
    elementwise ops (statistics in the input type); `elementwise` regions
    back into MIR ops, one per `arith`/`math` op of the body. Ops it cannot
    unfuse (a `fused_matmul` with head-norm or RoPE stages, a body op with
    no MIR counterpart) are errors at the op. A function with `rlx_lir` ops
    or memref arguments is an error: LIR is never differentiated.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect"];
}

def MIRGrad : Pass<"rlx-mir-grad", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode gradient of a MIR function returning a scalar loss";
  let description = [{
    For each public function with one result holding one element (the
    loss), or the one named by `function`, adds `@<name>_grad`, which takes
    the forward arguments plus `d_output` (the loss cotangent, the loss's
    type) and returns the loss followed by the gradients of the arguments
    named in `wrt` (their `rlx.input`/`rlx.param` names, or `argN`); empty
    `wrt` means every floating-point argument. Results are named `loss` and
    `d_<name>`.

    The gradient function recomputes the forward pass and keeps every
    forward value a rule reads (nothing is recomputed in the backward).
    Gradients of a value used several times are summed; operands that were
    broadcast get their gradient summed over the broadcast axes. Rules cover
    the primitive MIR ops (run `rlx-mir-prepare-for-ad` first on fused MIR);
    an op without a rule on the path from a `wrt` argument to the loss is an
    error at that op, and so is HIR (lower with
    `convert-rlx-hir-to-mir{fusion-policy=fusable}`) or LIR input. The
    result is ordinary MIR: it fuses, bufferizes, plans and runs like any
    other function. The rules and what each saves are listed in
    docs/autodiff.md.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect", "::mlir::func::FuncDialect"];
  let options = [
    ListOption<"wrt", "wrt", "std::string",
               "arguments to differentiate by name (rlx.input/rlx.param) or argN; default all float arguments">,
    Option<"function", "function", "std::string", "\"\"",
           "the function to differentiate (default: every public function with a scalar result)">
  ];
}

def MIRJvp : Pass<"rlx-mir-jvp", "::mlir::ModuleOp"> {
  let summary = "Forward-mode derivative (Jacobian-vector product) of a MIR function";
  let description = [{
    For each public function (or the one named by `function`), adds
    `@<name>_jvp`, which takes the arguments plus one tangent per argument
    named in `wrt` (named `t_<name>`, the argument's type; empty `wrt` means
    every floating-point argument) and returns the results followed by one
    tangent per floating-point result (`t_<name>`): the directional
    derivative of each result along the given tangents.

    The rules are the ops' `DifferentiableOpInterface::jvp` (fused ops are
    unfused first, as `rlx-mir-prepare-for-ad` does; elementwise regions are
    differentiated as they are). Applied after `rlx-mir-grad` to the
    gradient function it gives Hessian-vector products: the tangent of
    `d_<w>` along `t_<w>` is H·t (forward over reverse). An op without a
    rule on a path from a tangent is an error at that op.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect", "::mlir::func::FuncDialect"];
  let options = [
    ListOption<"wrt", "wrt", "std::string",
               "arguments with tangents by name (rlx.input/rlx.param) or argN; default all float arguments">,
    Option<"function", "function", "std::string", "\"\"",
           "the function to differentiate (default: every public function)">
  ];
}

def MIRVmap : Pass<"rlx-mir-vmap", "::mlir::ModuleOp"> {
  let summary = "Vectorize a MIR function over a new batch axis (vmap)";
  let description = [{
    For each public function (or the one named by `function`), adds
    `@<name>_vmap`, whose arguments named in `args` (default: every tensor
    argument that is not an `rlx.param`) carry a new axis of size
    `batch-size` at position `axis`, and whose results all carry it there:
    result `[i]` along that axis is the function applied to entry `[i]` of
    the batched arguments, the other arguments shared (`torch.vmap` with
    `in_dims = axis` for the batched arguments and `None` for the rest,
    `out_dims = axis`).

    Each op reading a batched value is rewritten by its
    `BatchableOpInterface` rule (elementwise ops broadcast, matmul batches,
    reductions and softmax shift their axes, rope and gather fold the batch
    into theirs); fused ops are unfused first. Errors: an op without a rule
    (e.g. a gather from a batched table), `batch-size` ≤ 0, an `axis` past
    an argument's or result's rank.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect", "::mlir::func::FuncDialect"];
  let options = [
    Option<"batchSize", "batch-size", "int64_t", "0", "the size of the new batch axis (required)">,
    Option<"axis", "axis", "int64_t", "0",
           "where the batch axis sits in the batched arguments and in the results">,
    ListOption<"args", "args", "std::string",
               "the batched arguments by name; default every tensor argument that is not a parameter">,
    Option<"function", "function", "std::string", "\"\"",
           "the function to batch (default: every public function)">
  ];
}

def MIRRecognizeBlocks : Pass<"rlx-mir-recognize-blocks"> {
  let summary = "Recognize blocks spelled out in primitive MIR (imported graphs)";
  let description = [{
    Applies `populateBlockRecognitionPatterns`: rms_norm from
    `x · rsqrt(mean(x²) + eps) [· w]` (mean as reduce mean, sum · 1/H or
    sum / H; x² as x·x or pow(x, 2)), softmax from `exp(x − max) / Σ`,
    sigmoid from `1 / (1 + exp(−x))` and silu from `x · sigmoid(x)`, RoPE from
    `x·cos(cat(f, f)) + rotate_half(x)·sin(cat(f, f))` on heads split from a
    packed projection, causal (and sliding-window) masks given as additive
    constants, and the matmul forms fusion expects (transposes folded into
    flags, a weight reshaped to `[1, K, N]` read as `[K, N]`, 4-D matmuls
    that were split into 3-D), and PT2E's quantized linear
    (`matmul(dequantize(qx), dequantize(qw))`, per-tensor activations,
    per-tensor or per-output-channel weights, constant zero points) as
    `qmatmul` in i32 times the product of the scales. Part of
    `rlx-import-to-mir`.
  }];
  let dependentDialects = ["::mlir::rlx::mir::MIRDialect"];
}

#endif // RLX_DIALECT_MIR_TRANSFORMS_PASSES_TD
