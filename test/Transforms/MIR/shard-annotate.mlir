// rlx-mir-shard: annotations by parameter name, and the requests it refuses.
// RUN: rlx-opt %s --rlx-mir-shard=tp=2 -split-input-file -verify-diagnostics | FileCheck %s

// Column-parallel q_proj (weight and bias by output feature), row-parallel
// o_proj (weight by input feature, bias replicated), the LM head by
// vocabulary row; norms, inputs and outputs replicated.
// CHECK: shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @names(
// CHECK-DAG: %[[REP:.*]] = shard.sharding @tp split_axes = {{\[\[\]\]}}
// CHECK-DAG: shard.shard %arg0 to %{{.*}} annotate_for_users : tensor<1x3x32xf32>
// CHECK-DAG: %[[COL:.*]] = shard.sharding @tp split_axes = {{\[\[0\]\]}}
// CHECK-DAG: shard.shard %arg1 to %{{.*}} annotate_for_users : tensor<32x32xf32>
// CHECK-DAG: shard.shard %arg2 to %{{.*}} annotate_for_users : tensor<32xf32>
// CHECK-DAG: %[[ROW:.*]] = shard.sharding @tp split_axes = {{\[\[\], \[0\]\]}}
// CHECK-DAG: shard.shard %arg3 to %[[ROW]] annotate_for_users : tensor<32x32xf32>
// CHECK-DAG: shard.shard %arg5 to %{{.*}} annotate_for_users : tensor<64x32xf32>
// CHECK: %[[OUT:.*]] = shard.shard %{{.*}} to %{{.*}} annotate_for_users : tensor<1x3x64xf32>
// CHECK: return %[[OUT]]
func.func @names(%x: tensor<1x3x32xf32> {rlx.input = "hidden_states"},
                 %wq: tensor<32x32xf32> {rlx.param = "model.layers.0.self_attn.q_proj.weight"},
                 %bq: tensor<32xf32> {rlx.param = "model.layers.0.self_attn.q_proj.bias"},
                 %wo: tensor<32x32xf32> {rlx.param = "model.layers.0.self_attn.o_proj.weight"},
                 %bo: tensor<32xf32> {rlx.param = "model.layers.0.self_attn.o_proj.bias"},
                 %lm: tensor<64x32xf32> {rlx.param = "lm_head.weight"}) -> (tensor<1x3x64xf32> {rlx.output = "logits"}) {
  %q = rlx_mir.matmul %x, %wq transpose_b : tensor<1x3x32xf32>, tensor<32x32xf32>
  %qb = rlx_mir.add %q, %bq : tensor<1x3x32xf32>, tensor<32xf32>
  %o = rlx_mir.matmul %qb, %wo transpose_b : tensor<1x3x32xf32>, tensor<32x32xf32>
  %ob = rlx_mir.add %o, %bo : tensor<1x3x32xf32>, tensor<32xf32>
  %l = rlx_mir.matmul %ob, %lm transpose_b : tensor<1x3x32xf32>, tensor<64x32xf32>
  return %l : tensor<1x3x64xf32>
}

// -----

// GPT-NeoX's query_key_value interleaves q, k and v per head: not split.
// expected-error @+1 {{rlx-mir-shard: 'gpt_neox.layers.0.attention.query_key_value.weight' is a packed projection whose layout RLX does not split (GPT-NeoX's query_key_value interleaves heads); tensor parallelism needs its parts as separate parameters}}
func.func @packed(%w: tensor<96x32xf32> {rlx.param = "gpt_neox.layers.0.attention.query_key_value.weight"}) -> tensor<96x32xf32> {
  return %w : tensor<96x32xf32>
}

// -----

// expected-error @+1 {{rlx-mir-shard: the module already has a symbol 'tp'}}
module {
  shard.grid @tp(shape = 2)
}

// -----

func.func @odd_heads(%q: tensor<1x3x48xf32>) -> tensor<1x3x48xf32> {
  // expected-error @+1 {{rlx-mir-shard: tp = 2 does not divide num_heads = 3 and num_kv_heads = 3}}
  %a = rlx_mir.attention %q, %q, %q heads = 3, kv_heads = 3, head_dim = 16 : tensor<1x3x48xf32>, tensor<1x3x48xf32>, tensor<1x3x48xf32>
  return %a : tensor<1x3x48xf32>
}
