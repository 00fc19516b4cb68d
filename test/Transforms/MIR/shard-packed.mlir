// Packed projections under rlx-mir-shard: a rank holds block r of every part
// (q|k|v of GPT-2's c_attn and Phi-3's qkv_proj, gate|up of gate_up_proj), so
// the slices of the packed output are rewritten to read the rank-local layout
// and shard-partition keeps them local. Slices that are not one part, and
// packed columns that reach other ops, are located errors.
// RUN: rlx-opt %s --pass-pipeline="builtin.module(rlx-mir-shard{tp=2},func.func(sharding-propagation,shard-partition))" -split-input-file -verify-diagnostics | FileCheck %s

// GPT-2's c_attn ([in, out], with a bias): each rank computes its 2 heads of
// q, k and v from a [32, 48] block, slices them at 0, 16 and 32, and its
// part of the row-parallel c_proj is all-reduced.
// CHECK-LABEL: func.func @c_attn(
// CHECK-SAME: %arg1: tensor<32x48xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"}
// CHECK-SAME: %arg2: tensor<48xf32> {rlx.param = "transformer.h.0.attn.c_attn.bias"}
// CHECK: %[[MM:.*]] = rlx_mir.matmul %arg0, %arg1 : tensor<1x3x32xf32>, tensor<32x48xf32>
// CHECK: %[[B:.*]] = rlx_mir.add %[[MM]], %arg2 : tensor<1x3x48xf32>, tensor<48xf32>
// CHECK: %[[R:.*]] = rlx_mir.reshape %[[B]] [1, 3, 1, 48]
// CHECK: rlx_mir.slice %[[R]] offsets [0, 0, 0, 0] sizes [-1, -1, -1, 16]
// CHECK: rlx_mir.slice %{{.*}} offsets [0, 0, 0, 16] sizes [-1, -1, -1, 16]
// CHECK: rlx_mir.slice %{{.*}} offsets [0, 0, 0, 32] sizes [-1, -1, -1, 16]
// CHECK: %[[A:.*]] = rlx_mir.attention %{{.*}}, %{{.*}}, %{{.*}} heads = 2, kv_heads = 2, head_dim = 8 causal : tensor<1x3x16xf32>
// CHECK: %[[O:.*]] = rlx_mir.matmul %[[A]], %arg3 : tensor<1x3x16xf32>, tensor<16x32xf32>
// CHECK: shard.all_reduce %[[O]]
// CHECK-NOT: shard.all_gather
func.func @c_attn(%x: tensor<1x3x32xf32> {rlx.input = "hidden_states"},
                  %w: tensor<32x96xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"},
                  %b: tensor<96xf32> {rlx.param = "transformer.h.0.attn.c_attn.bias"},
                  %p: tensor<32x32xf32> {rlx.param = "transformer.h.0.attn.c_proj.weight"}) -> tensor<1x3x32xf32> {
  %mm = rlx_mir.matmul %x, %w : tensor<1x3x32xf32>, tensor<32x96xf32>
  %y = rlx_mir.add %mm, %b : tensor<1x3x96xf32>, tensor<96xf32>
  %q = rlx_mir.slice %y offsets [0, 0, 0] sizes [-1, -1, 32] strides [1, 1, 1] : tensor<1x3x96xf32>
  %k = rlx_mir.slice %y offsets [0, 0, 32] sizes [-1, -1, 32] strides [1, 1, 1] : tensor<1x3x96xf32>
  %v = rlx_mir.slice %y offsets [0, 0, 64] sizes [-1, -1, -1] strides [1, 1, 1] : tensor<1x3x96xf32>
  %a = rlx_mir.attention %q, %k, %v heads = 4, kv_heads = 4, head_dim = 8 causal : tensor<1x3x32xf32>, tensor<1x3x32xf32>, tensor<1x3x32xf32>
  %o = rlx_mir.matmul %a, %p : tensor<1x3x32xf32>, tensor<32x32xf32>
  return %o : tensor<1x3x32xf32>
}

// -----

// Phi-3's gate_up_proj ([out, in], read transposed) with a dynamic sequence:
// SwiGLU on the rank's halves, then the row-parallel down projection and its
// all-reduce.
// CHECK-LABEL: func.func @gate_up(
// CHECK-SAME: %arg1: tensor<64x16xf32> {rlx.param = "model.layers.0.mlp.gate_up_proj.weight"}
// CHECK: %[[MM:.*]] = rlx_mir.matmul %arg0, %arg1 transpose_b : tensor<1x?x16xf32>, tensor<64x16xf32>
// CHECK: %[[R:.*]] = rlx_mir.reshape %[[MM]] [1, -1, 1, 64]
// CHECK: rlx_mir.slice %[[R]] offsets [0, 0, 0, 0] sizes [-1, -1, -1, 32]
// CHECK: rlx_mir.slice %{{.*}} offsets [0, 0, 0, 32] sizes [-1, -1, -1, 32]
// CHECK: rlx_mir.matmul %{{.*}}, %arg2 transpose_b : tensor<1x?x32xf32>, tensor<16x32xf32>
// CHECK: shard.all_reduce
func.func @gate_up(%x: tensor<1x?x16xf32> {rlx.input = "hidden_states"},
                   %w: tensor<128x16xf32> {rlx.param = "model.layers.0.mlp.gate_up_proj.weight"},
                   %d: tensor<16x64xf32> {rlx.param = "model.layers.0.mlp.down_proj.weight"}) -> tensor<1x?x16xf32> {
  %mm = rlx_mir.matmul %x, %w transpose_b : tensor<1x?x16xf32>, tensor<128x16xf32>
  %g = rlx_mir.slice %mm offsets [0, 0, 0] sizes [-1, -1, 64] strides [1, 1, 1] : tensor<1x?x128xf32>
  %u = rlx_mir.slice %mm offsets [0, 0, 64] sizes [-1, -1, 64] strides [1, 1, 1] : tensor<1x?x128xf32>
  %s = rlx_mir.silu %g : tensor<1x?x64xf32>
  %h = rlx_mir.mul %s, %u : tensor<1x?x64xf32>, tensor<1x?x64xf32>
  %o = rlx_mir.matmul %h, %d transpose_b : tensor<1x?x64xf32>, tensor<16x64xf32>
  return %o : tensor<1x?x16xf32>
}

// -----

func.func @not_one_part(%x: tensor<1x3x32xf32> {rlx.input = "hidden_states"},
                        %w: tensor<32x96xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"}) -> tensor<1x3x48xf32> {
  %mm = rlx_mir.matmul %x, %w : tensor<1x3x32xf32>, tensor<32x96xf32>
  // expected-error @+1 {{rlx-mir-shard: this slice of the packed projection 'transformer.h.0.attn.c_attn.weight' does not take one of its 3 equal parts (size 32 along dim 2, every other dim whole); packed q|k|v with unequal parts (num_kv_heads < num_heads) is not split}}
  %qk = rlx_mir.slice %mm offsets [0, 0, 0] sizes [-1, -1, 48] strides [1, 1, 1] : tensor<1x3x96xf32>
  return %qk : tensor<1x3x48xf32>
}

// -----

func.func @reduced(%x: tensor<1x3x32xf32> {rlx.input = "hidden_states"},
                   %w: tensor<32x96xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"}) -> tensor<1x3xf32> {
  %mm = rlx_mir.matmul %x, %w : tensor<1x3x32xf32>, tensor<32x96xf32>
  // expected-error @+1 {{rlx-mir-shard: the packed projection 'transformer.h.0.attn.c_attn.weight' reaches 'rlx_mir.reduce'; tensor parallelism splits a packed projection whose output is sliced into its 3 parts (through matmul and elementwise ops)}}
  %s = rlx_mir.reduce sum %mm axes = [2] : tensor<1x3x96xf32>
  return %s : tensor<1x3xf32>
}

// -----

// tp = 2 does not divide the 3 heads of each part.
// expected-error @+2 {{rlx-mir-shard: tp = 2 does not divide the 3 heads of 'model.layers.0.self_attn.qkv_proj.weight' (num_heads = 3, head_dim = 8)}}
func.func @odd_heads(%x: tensor<1x3x24xf32> {rlx.input = "hidden_states"},
                     %w: tensor<72x24xf32> {rlx.param = "model.layers.0.self_attn.qkv_proj.weight"}) -> tensor<1x3x24xf32> {
  %mm = rlx_mir.matmul %x, %w transpose_b : tensor<1x3x24xf32>, tensor<72x24xf32>
  %q = rlx_mir.slice %mm offsets [0, 0, 0] sizes [-1, -1, 24] strides [1, 1, 1] : tensor<1x3x72xf32>
  %k = rlx_mir.slice %mm offsets [0, 0, 24] sizes [-1, -1, 24] strides [1, 1, 1] : tensor<1x3x72xf32>
  %v = rlx_mir.slice %mm offsets [0, 0, 48] sizes [-1, -1, 24] strides [1, 1, 1] : tensor<1x3x72xf32>
  // expected-error @+1 {{rlx-mir-shard: tp = 2 does not divide num_heads = 3 and num_kv_heads = 3}}
  %a = rlx_mir.attention %q, %k, %v heads = 3, kv_heads = 3, head_dim = 8 causal : tensor<1x3x24xf32>, tensor<1x3x24xf32>, tensor<1x3x24xf32>
  return %a : tensor<1x3x24xf32>
}

// -----

// A packed weight without its packed dim.
// expected-error @+1 {{rlx-mir-shard: the packed projection 'transformer.h.0.attn.c_attn.weight' has 1 dims; its packed dim is not one of them}}
func.func @no_packed_dim(%w: tensor<96xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"}) -> tensor<96xf32> {
  return %w : tensor<96xf32>
}

// -----

// A tensor in the original column order added to the packed columns would
// be split into other columns than the packed ones.
func.func @mixed(%x: tensor<1x3x32xf32> {rlx.input = "hidden_states"},
                 %w: tensor<32x96xf32> {rlx.param = "transformer.h.0.attn.c_attn.weight"},
                 %s: tensor<96xf32> {rlx.param = "transformer.h.0.attn.scale"}) -> tensor<1x3x32xf32> {
  %mm = rlx_mir.matmul %x, %w : tensor<1x3x32xf32>, tensor<32x96xf32>
  // expected-error @+1 {{rlx-mir-shard: 'rlx_mir.mul' combines the packed projection 'transformer.h.0.attn.c_attn.weight' with a tensor along its columns that is not packed the same way}}
  %y = rlx_mir.mul %mm, %s : tensor<1x3x96xf32>, tensor<96xf32>
  %q = rlx_mir.slice %y offsets [0, 0, 0] sizes [-1, -1, 32] strides [1, 1, 1] : tensor<1x3x96xf32>
  return %q : tensor<1x3x32xf32>
}
