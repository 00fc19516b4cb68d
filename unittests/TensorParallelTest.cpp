//===- TensorParallelTest.cpp - The weight split of tensor parallelism ----===//
//
// tensorParallelSplit is the one place that decides which dim of a named
// tensor a rank holds a block of; rlx-mir-shard, the runners and Python all
// rely on it, so its table is pinned here name by name.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/Transforms/Sharding.h"

#include "gtest/gtest.h"

using namespace mlir::rlx::mir;
using K = TensorParallelKind;

namespace {

void expectSplit(const char *name, int64_t rank, K kind, int64_t dim) {
  TensorParallelSplit s = tensorParallelSplit(name, rank);
  EXPECT_EQ(s.kind, kind) << name;
  EXPECT_EQ(s.dim, dim) << name;
}

TEST(TensorParallel, LlamaLinearLayers) {
  // nn.Linear weights are [out, in]: column layers split out, row layers in.
  expectSplit("model.layers.0.self_attn.q_proj.weight", 2, K::Column, 0);
  expectSplit("model.layers.3.self_attn.k_proj.weight", 2, K::Column, 0);
  expectSplit("model.layers.3.self_attn.v_proj.bias", 1, K::Column, 0);
  expectSplit("model.layers.0.mlp.gate_proj.weight", 2, K::Column, 0);
  expectSplit("model.layers.0.mlp.up_proj.weight", 2, K::Column, 0);
  expectSplit("model.layers.0.self_attn.o_proj.weight", 2, K::Row, 1);
  expectSplit("model.layers.0.mlp.down_proj.weight", 2, K::Row, 1);
  // A row layer's bias is added once, after the all-reduce.
  expectSplit("model.layers.0.self_attn.o_proj.bias", 1, K::Replicated, -1);
}

TEST(TensorParallel, ReplicatedAndVocab) {
  expectSplit("model.layers.0.input_layernorm.weight", 1, K::Replicated, -1);
  expectSplit("model.layers.0.self_attn.q_norm.weight", 1, K::Replicated, -1);
  expectSplit("model.norm.weight", 1, K::Replicated, -1);
  expectSplit("lm_head.weight", 2, K::Vocab, 0);
  expectSplit("model.embed_tokens.weight", 2, K::Vocab, 0);
  expectSplit("transformer.wte.weight", 2, K::Vocab, 0);
  expectSplit("transformer.wpe.weight", 2, K::Replicated, -1);
  expectSplit("hidden_states", 3, K::Replicated, -1);
}

TEST(TensorParallel, GPT2Conv1D) {
  // Conv1D weights are [in, out].
  expectSplit("transformer.h.0.mlp.c_fc.weight", 2, K::Column, 1);
  expectSplit("transformer.h.0.mlp.c_fc.bias", 1, K::Column, 0);
  expectSplit("transformer.h.0.mlp.c_proj.weight", 2, K::Row, 0);
  expectSplit("transformer.h.0.attn.c_proj.bias", 1, K::Replicated, -1);
}

TEST(TensorParallel, MixtureOfExperts) {
  // Stacked experts (transformers 5) split by expert: expert parallelism.
  expectSplit("model.layers.0.mlp.experts.gate_up_proj", 3, K::Experts, 0);
  expectSplit("model.layers.3.mlp.experts.down_proj", 3, K::Experts, 0);
  EXPECT_EQ(tensorParallelSplit("model.layers.0.mlp.experts.gate_up_proj", 3).parts, 1);
  // Per-expert tensors are whole, not split as a dense MLP's projections.
  expectSplit("model.layers.0.mlp.experts.3.gate_proj.weight", 2, K::Replicated, -1);
  expectSplit("model.layers.0.mlp.experts.12.down_proj.weight", 2, K::Replicated, -1);
  expectSplit("model.layers.1.block_sparse_moe.experts.0.w1.weight", 2, K::Replicated, -1);
  // The router, and Qwen2-MoE's shared expert as a dense MLP.
  expectSplit("model.layers.0.mlp.gate.weight", 2, K::Replicated, -1);
  expectSplit("model.layers.0.mlp.shared_expert.gate_proj.weight", 2, K::Column, 0);
  expectSplit("model.layers.0.mlp.shared_expert.down_proj.weight", 2, K::Row, 1);
}

TEST(TensorParallel, ExpertRegions) {
  using Runs = std::vector<std::pair<int64_t, int64_t>>;
  using Region = std::vector<Runs>;
  const char *gateUp = "model.layers.0.mlp.experts.gate_up_proj";
  const char *down = "model.layers.0.mlp.experts.down_proj";
  EXPECT_EQ(tensorParallelSplit(gateUp, 3).innerParts, 2);
  EXPECT_EQ(tensorParallelSplit(down, 3).innerParts, 1);
  // ep = tp = 4: whole experts, rank r holds expert r.
  EXPECT_EQ(rankRegion(gateUp, {4, 16, 8}, {1, 16, 8}, 3, 4),
            (Region{{{3, 4}}, {{0, 16}}, {{0, 8}}}));
  // ep 2 x tp 2: rank 3 = group 1, block 1: experts [2, 4), of gate [0, 8)
  // its [4, 8) and of up [8, 16) its [12, 16).
  EXPECT_EQ(rankRegion(gateUp, {4, 16, 8}, {2, 8, 8}, 3, 4),
            (Region{{{2, 4}}, {{4, 8}, {12, 16}}, {{0, 8}}}));
  // Rank 2 = group 1, block 0; down [E, H, I] by its input feature.
  EXPECT_EQ(rankRegion(down, {4, 8, 8}, {2, 8, 4}, 2, 4),
            (Region{{{2, 4}}, {{0, 8}}, {{0, 4}}}));
  // Llama-4's [E, H, 2I]: the intermediate dim is the last one.
  EXPECT_EQ(rankRegion("model.layers.1.feed_forward.experts.gate_up_proj", {4, 8, 16},
                       {2, 8, 8}, 1, 4),
            (Region{{{0, 2}}, {{0, 8}}, {{4, 8}, {12, 16}}}));
  // ep = 1: every rank holds every expert, block r of the intermediate.
  EXPECT_EQ(rankRegion(down, {4, 8, 8}, {4, 8, 2}, 1, 4),
            (Region{{{0, 4}}, {{0, 8}}, {{2, 4}}}));
  // A dense tensor split once; replicated ones whole; no block: empty.
  EXPECT_EQ(rankRegion("model.layers.0.self_attn.o_proj.weight", {8, 8}, {8, 2}, 1, 4),
            (Region{{{0, 8}}, {{2, 4}}}));
  EXPECT_EQ(rankRegion("model.norm.weight", {8}, {8}, 1, 4), (Region{{{0, 8}}}));
  EXPECT_TRUE(rankRegion("model.layers.0.self_attn.o_proj.weight", {8, 8}, {4, 2}, 1, 4).empty());
  EXPECT_TRUE(rankRegion(gateUp, {4, 16, 8}, {2, 8, 8}, 2, 3).empty()); // 2 does not divide 3
  // The ways of the two dims must make tp: 2 x 4 is 8 ranks, not 4.
  EXPECT_TRUE(rankRegion(down, {4, 8, 8}, {2, 8, 2}, 1, 4).empty());
  // A scalar is whole.
  EXPECT_EQ(rankRegion("model.layers.0.mlp.experts.down_proj_scale", {}, {}, 1, 4), Region{});
  EXPECT_TRUE(rankRegion(gateUp, {4, 16, 8}, {2, 16}, 0, 4).empty());
}

TEST(TensorParallel, PackedProjections) {
  // q|k|v and gate|up packed along the output features: a rank holds its
  // block of every part.
  expectSplit("transformer.h.0.attn.c_attn.weight", 2, K::Packed, 1);
  expectSplit("transformer.h.0.attn.c_attn.bias", 1, K::Packed, 0);
  expectSplit("model.layers.0.self_attn.qkv_proj.weight", 2, K::Packed, 0);
  expectSplit("model.layers.0.mlp.gate_up_proj.weight", 2, K::Packed, 0);
  EXPECT_EQ(tensorParallelSplit("transformer.h.0.attn.c_attn.weight", 2).parts, 3);
  EXPECT_EQ(tensorParallelSplit("model.layers.0.self_attn.qkv_proj.weight", 2).parts, 3);
  EXPECT_EQ(tensorParallelSplit("model.layers.0.mlp.gate_up_proj.weight", 2).parts, 2);
  // GPT-NeoX interleaves q, k, v per head: not split.
  expectSplit("gpt_neox.layers.0.attention.query_key_value.weight", 2, K::Unsupported, -1);

  using Runs = std::vector<std::pair<int64_t, int64_t>>;
  TensorParallelSplit qkv = tensorParallelSplit("transformer.h.0.attn.c_attn.weight", 2);
  EXPECT_EQ(rankRuns(qkv, 2304, 1, 2), (Runs{{384, 768}, {1152, 1536}, {1920, 2304}}));
  EXPECT_EQ(rankRuns(qkv, 2304, 0, 4), (Runs{{0, 192}, {768, 960}, {1536, 1728}}));
  // tp must divide each part, not only the whole dim.
  EXPECT_TRUE(rankRuns(qkv, 2304, 0, 9).empty()); // 9 divides 2304, not 768
  EXPECT_TRUE(rankRuns(qkv, 2305, 0, 1).empty());
  TensorParallelSplit plain = tensorParallelSplit("model.layers.0.mlp.up_proj.weight", 2);
  EXPECT_EQ(rankRuns(plain, 8192, 3, 4), (Runs{{6144, 8192}}));
}

TEST(TensorParallel, Caches) {
  // KV caches: [B, S, kv_heads * head_dim] or [B, kv_heads, S, head_dim].
  expectSplit("past_key_values.0.key", 3, K::KVHeads, 2);
  expectSplit("present.1.value", 3, K::KVHeads, 2);
  expectSplit("past_key_values.0.value", 4, K::KVHeads, 1);
  // A split dim past the tensor's rank is no split.
  expectSplit("model.layers.0.self_attn.o_proj.weight", 1, K::Row, -1);
}

TEST(TensorParallel, ShardBlocks) {
  EXPECT_EQ(shardBlock(8192, 0, 4), std::make_pair(int64_t(0), int64_t(2048)));
  EXPECT_EQ(shardBlock(8192, 3, 4), std::make_pair(int64_t(6144), int64_t(8192)));
  EXPECT_EQ(shardBlock(10, 0, 1), std::make_pair(int64_t(0), int64_t(10)));
  EXPECT_FALSE(shardBlock(10, 1, 1).has_value());
  EXPECT_FALSE(shardBlock(10, 0, 3).has_value());
  EXPECT_FALSE(shardBlock(8, 2, 2).has_value());
  EXPECT_FALSE(shardBlock(8, 0, 0).has_value());
  EXPECT_FALSE(shardBlock(8, -1, 2).has_value());
}

} // namespace
