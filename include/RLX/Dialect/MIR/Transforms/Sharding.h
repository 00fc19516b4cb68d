//===- Sharding.h - rlx_mir over a device grid (upstream shard) -*- C++ -*-===//
//
// Tensor parallelism the MLIR way: rlx_mir ops implement upstream's
// shard::ShardingInterface (registerShardingInterfaceExternalModels), so
// `sharding-propagation` and `shard-partition` turn a function annotated by
// `rlx-mir-shard{tp=N}` into the per-rank SPMD program with `shard`
// collectives.
//
// The weight split is a pure function of (parameter name, rank, tp):
// paramShardDim names the split dim of a Hugging Face parameter name
// (Megatron-LM's column / row / vocab parallel layers), and a rank holds the
// contiguous block [rank·size/tp, (rank+1)·size/tp) of that dim. A packed
// projection (GPT-2's c_attn, Phi-3's qkv_proj and gate_up_proj) holds
// `parts` equal column blocks (q|k|v, gate|up); a rank holds block `rank` of
// each part, side by side (vLLM's QKVParallelLinear / MergedColumnParallel
// layout), which is the contiguous block `rank` of the packed tensor once
// rlx-mir-shard has rewritten the slices of its output (see TensorParallel.cpp).
// The generator, the runners and Python all call this one function.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_TRANSFORMS_SHARDING_H
#define RLX_DIALECT_MIR_TRANSFORMS_SHARDING_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::rlx::mir {

/// On an expert-split grouped_matmul (rlx-mir-shard): its rows reach only
/// another one with the same ids, which drops the rows a rank does not
/// compute, so its partition needs no all-reduce.
inline constexpr llvm::StringLiteral kExpertLocalRowsAttr = "rlx.expert_local_rows";

/// Attaches shard::ShardingInterface to the rlx_mir ops (and loads the
/// shard dialect with rlx_mir).
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

/// How tensor parallelism splits a parameter or KV-cache tensor.
enum class TensorParallelKind {
  Replicated, ///< every rank holds it whole (norms, biases of row layers)
  Column,     ///< output features split (q/k/v, gate/up, their biases)
  Row,        ///< input features split (o_proj, down_proj): all-reduce after
  Vocab,      ///< vocabulary rows split (embed_tokens, lm_head)
  KVHeads,    ///< a KV cache [B, S, kv_heads·head_dim] split by KV head
  Packed,     ///< column-parallel with `parts` equal parts (c_attn, qkv_proj, gate_up_proj)
  Experts,    ///< stacked MoE experts [E, ...] split by expert (expert parallelism)
  Unsupported ///< a packed layout RLX does not split (query_key_value, W_pack)
};

struct TensorParallelSplit {
  TensorParallelKind kind = TensorParallelKind::Replicated;
  /// The split dim of a tensor of rank `rank` (-1: none).
  int64_t dim = -1;
  /// Equal parts along `dim` (Packed: 3 for q|k|v, 2 for gate|up; else 1).
  int64_t parts = 1;
  /// Experts: equal parts of each expert's intermediate dim (a stacked
  /// gate|up: 2; down: 1), split part by part under expert tensor
  /// parallelism (see rankRegion).
  int64_t innerParts = 1;
};

/// The split of tensor `name` (a Hugging Face parameter name, or the
/// `past_key_values.N.key|value` / `present.N.key|value` cache names) of
/// rank `rank`: a pure function of the name and rank (see the file comment).
TensorParallelSplit tensorParallelSplit(llvm::StringRef name, int64_t rank);

/// The [begin, end) block of a dim of `size` that rank `rank` of `tp` holds;
/// nullopt when tp does not divide size.
std::optional<std::pair<int64_t, int64_t>> shardBlock(int64_t size, int64_t rank,
                                                       int64_t tp);

/// The indices along the split dim (of `size`) that rank `rank` of `tp`
/// holds, as [begin, end) runs in order: one run for a plain split, one per
/// part for a packed one. Empty when tp does not divide every part.
std::vector<std::pair<int64_t, int64_t>> rankRuns(const TensorParallelSplit &split, int64_t size,
                                                  int64_t rank, int64_t tp);

/// The [begin, end) runs rank `rank` of `tp` holds along each dim of tensor
/// `name`, whose whole shape is `whole` and whose per-rank shape (the
/// per-rank program's argument) is `local`: the dims whose size shrinks are
/// the split ones. A plain split is rankRuns on its dim. A stacked expert
/// tensor may shrink in two dims (rlx-mir-shard{tp, ep}: expert parallelism
/// over ep groups of tp/ep ranks, the device grid [ep, tp/ep]): rank
/// r = g·(tp/ep) + s holds experts [g·E/ep, (g+1)·E/ep) of dim 0 and block s
/// of tp/ep of every part (innerParts) of the expert's intermediate dim.
/// Empty when `local` is not such a block of `whole`.
std::vector<std::vector<std::pair<int64_t, int64_t>>>
rankRegion(llvm::StringRef name, const std::vector<int64_t> &whole,
           const std::vector<int64_t> &local, int64_t rank, int64_t tp);

/// The spelling of a split kind in diagnostics and docs ("column", ...).
llvm::StringRef stringifyTensorParallelKind(TensorParallelKind kind);

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_TRANSFORMS_SHARDING_H
