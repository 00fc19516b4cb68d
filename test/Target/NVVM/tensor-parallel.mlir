// The GPU path of a tensor-parallel model: `rlx-lower-to-nvvm{tp=N}` shards
// the MIR (rlx-mir-shard, upstream sharding-propagation and shard-partition)
// and compiles the per-rank program; its all-reduces stay in the launch plan
// as `rlx_lir.kernel "all_reduce"` steps on planned buffers (the artifact's
// collective steps, which the runtime runs with NCCL, or MPI on the
// emulator); an all-gather gathers contiguous blocks along a new leading
// axis and a transpose kernel puts them in place (rlx-mir-gpu-collectives);
// a vocab-parallel lookup is compiled for one rank (rank=R), and without a
// rank it is a located error.
// RUN: rlx-opt %s --split-input-file --rlx-lower-to-nvvm="tp=2 assemble=0" --verify-diagnostics | FileCheck %s
// RUN: rlx-opt %s --split-input-file --rlx-lower-to-nvvm="tp=2 rank=1 assemble=0" | FileCheck %s --check-prefix=RANK

// A column-parallel up projection and a row-parallel down projection: each
// rank multiplies by its [16, 16] blocks, then one all-reduce.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: memref<16x16xf32> {rlx.param = "model.layers.0.mlp.up_proj.weight"}
// CHECK-SAME: memref<16x16xf32> {rlx.param = "model.layers.0.mlp.down_proj.weight"}
// CHECK: gpu.launch_func @mlp_kernels::
// CHECK: gpu.launch_func @mlp_kernels::
// CHECK: rlx_lir.kernel "all_reduce" ins(%{{.*}} : memref<4x16xf32{{.*}}>) outs(%{{.*}} : memref<4x16xf32{{.*}}>)
// CHECK: shard.all_reduce %{{.*}} on @tp grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @mlp(%x: tensor<4x16xf32> {rlx.input = "hidden_states"},
               %up: tensor<32x16xf32> {rlx.param = "model.layers.0.mlp.up_proj.weight"},
               %down: tensor<16x32xf32> {rlx.param = "model.layers.0.mlp.down_proj.weight"})
    -> (tensor<4x16xf32> {rlx.output = "hidden_states"}) {
  %h = rlx_mir.matmul %x, %up transpose_b : tensor<4x16xf32>, tensor<32x16xf32>
  %a = rlx_mir.silu %h : tensor<4x32xf32>
  %o = rlx_mir.matmul %a, %down transpose_b : tensor<4x32xf32>, tensor<16x32xf32>
  return %o : tensor<4x16xf32>
}

// -----

// A vocab-parallel LM head gathers its logits ([4, 32] per rank).
// CHECK-LABEL: func.func @lm_head(
// CHECK: gpu.launch_func @lm_head_kernels::@lm_head_0_matmul
// CHECK: rlx_lir.kernel "all_gather" ins(%{{.*}} : memref<1x4x32xf32>) outs(%{{.*}} : memref<2x4x32xf32>)
// CHECK: shard.all_gather %{{.*}} on @tp grid_axes = [0] gather_axis = 0 : tensor<1x4x32xf32> -> tensor<2x4x32xf32>
// CHECK: gpu.launch_func @lm_head_kernels::@lm_head_1_transpose {{.*}} args(%{{.*}} : memref<2x4x32xf32>, %{{.*}} : memref<4x2x32xf32>)
func.func @lm_head(%x: tensor<4x16xf32> {rlx.input = "hidden_states"},
                   %w: tensor<64x16xf32> {rlx.param = "lm_head.weight"})
    -> (tensor<4x64xf32> {rlx.output = "logits"}) {
  %l = rlx_mir.matmul %x, %w transpose_b : tensor<4x16xf32>, tensor<64x16xf32>
  return %l : tensor<4x64xf32>
}

// -----

// A vocab-parallel embedding looks its ids up in the rank's rows: rank 1
// holds rows [32, 64).
// RANK-LABEL: func.func @embed(
// RANK: gpu.launch_func @embed_kernels::@embed_0_elementwise
// RANK: gpu.launch_func @embed_kernels::@embed_1_gather
// RANK: rlx_lir.kernel "all_reduce"
func.func @embed(%ids: tensor<1x3xi64> {rlx.input = "input_ids"},
                 %w: tensor<64x16xf32> {rlx.param = "model.embed_tokens.weight"})
    -> (tensor<1x3x16xf32> {rlx.output = "hidden_states"}) {
  // expected-error @+1 {{rlx-mir-bind-rank: this per-rank program uses its rank (a vocab-parallel lookup); compile it for one rank (rank=R, `rlx-compile --tp N --rank R`)}}
  %e = rlx_mir.gather %w[%ids] : tensor<64x16xf32>, tensor<1x3xi64>
  return %e : tensor<1x3x16xf32>
}
