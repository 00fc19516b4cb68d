//===- TensorParallel.cpp - rlx-mir-shard: Megatron-style annotations -----===//
//
// Annotates a model's functions for tensor parallelism over a 1-D
// `shard.grid`: every parameter and KV cache argument gets the split that
// tensorParallelSplit gives its name (column-parallel q/k/v and gate/up,
// row-parallel o_proj/down_proj, vocab-parallel embedding and LM head, KV
// caches by KV head, the rest replicated), every other input is replicated, and every
// output is annotated for its consumer (replicated, or by KV head for the
// present K/V caches). Upstream's `sharding-propagation` then gives every
// op its split through the rlx_mir ShardingInterface models, and
// `shard-partition` writes the per-rank program with `shard.all_reduce`
// after each row-parallel matmul.
//
// Requests the model cannot honour are located errors here, before any
// rewriting: tp < 1, tp not dividing a split dim (intermediate size,
// vocabulary, hidden size), tp not dividing num_heads or num_kv_heads (from
// the head_dim of the function's rope/attention ops), packed projections
// (c_attn, qkv_proj, gate_up_proj) whose output is not sliced into equal
// parts, and packed layouts RLX does not split (query_key_value, W_pack).
// Packed projections are split part by part: see planPacked / rewritePacked.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"
#include "RLX/Dialect/MIR/Transforms/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRSHARD
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

//===----------------------------------------------------------------------===//
// The weight split: a pure function of (name, rank, tp)
//===----------------------------------------------------------------------===//

/// Parameters that no split handles yet, and whose they are (empty: none
/// of them): gpt-oss's expert biases and attention sinks, DeepSeek-V3's
/// latent-attention projections (its latent KV cache is not per head).
static StringRef notSplitYet(StringRef name) {
  if (name.ends_with(".experts.gate_up_proj_bias") ||
      name.ends_with(".experts.down_proj_bias") || name.ends_with(".self_attn.sinks"))
    return "gpt-oss's expert biases and attention sinks";
  for (StringRef mla : {".self_attn.kv_a_proj_with_mqa.", ".self_attn.kv_b_proj.",
                        ".self_attn.q_a_proj.", ".self_attn.q_b_proj."})
    if (name.contains(mla))
      return "DeepSeek-V3's multi-head latent attention";
  return "";
}

TensorParallelSplit mlir::rlx::mir::tensorParallelSplit(StringRef name, int64_t rank) {
  using K = TensorParallelKind;
  auto split = [&](K kind, int64_t dim) {
    return TensorParallelSplit{kind, dim >= 0 && dim < rank ? dim : -1};
  };
  // KV caches: [B, S, kv_heads·head_dim] (bsd) or [B, kv_heads, S, head_dim].
  if ((name.starts_with("past_key_values.") || name.starts_with("present.")) &&
      (name.ends_with(".key") || name.ends_with(".value")))
    return split(K::KVHeads, rank == 4 ? 1 : rank - 1);
  StringRef leaf = name.rsplit('.').second.empty() ? name : name.rsplit('.').second;
  StringRef rest = name.rsplit('.').first;
  StringRef module = rest.contains('.') ? rest.rsplit('.').second : rest;
  // MoE experts: transformers 5's stacked `experts.gate_up_proj` [E, 2I, H]
  // and `experts.down_proj` [E, H, I] are split by expert (expert
  // parallelism: rank r holds experts [r·E/tp, (r+1)·E/tp)); per-expert
  // tensors (`experts.<e>.gate_proj.weight`, Mixtral's `w1`) are whole on
  // every rank, not split as the dense MLP's projections.
  if (module == "experts" && (leaf == "gate_up_proj" || leaf == "down_proj")) {
    TensorParallelSplit experts = split(K::Experts, 0);
    experts.innerParts = leaf == "gate_up_proj" ? 2 : 1;
    return experts;
  }
  // gpt-oss's expert biases and attention sinks, DeepSeek-V3's MLA: not
  // split yet, refused (a replicated bias would be summed once per rank by
  // the all-reduce).
  if (!notSplitYet(name).empty())
    return split(K::Unsupported, -1);
  if (StringRef parent = rest.rsplit('.').first;
      parent.contains('.') && llvm::all_of(parent.rsplit('.').second, llvm::isDigit) &&
      parent.rsplit('.').first.ends_with("experts"))
    return split(K::Replicated, -1);
  bool weight = leaf == "weight", bias = leaf == "bias";
  if (!weight && !bias)
    return split(K::Replicated, -1);
  // Hugging Face nn.Linear weights are [out, in]; GPT-2's Conv1D are [in, out].
  bool conv1d = module == "c_fc" || module == "c_proj" || module == "c_attn";
  K kind = llvm::StringSwitch<K>(module)
               .Cases("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "c_fc", K::Column)
               .Cases("o_proj", "down_proj", "c_proj", K::Row)
               .Cases("embed_tokens", "wte", "lm_head", K::Vocab)
               .Cases("qkv_proj", "gate_up_proj", "c_attn", K::Packed)
               .Cases("query_key_value", "W_pack", K::Unsupported)
               .Default(K::Replicated);
  switch (kind) {
  case K::Column:
    return split(K::Column, bias ? 0 : (conv1d ? 1 : 0));
  case K::Row:
    // The bias of a row-parallel layer is added once, after the all-reduce.
    return bias ? split(K::Replicated, -1) : split(K::Row, conv1d ? 0 : 1);
  case K::Vocab:
    return bias ? split(K::Replicated, -1) : split(K::Vocab, 0);
  case K::Packed: {
    TensorParallelSplit packed = split(K::Packed, bias ? 0 : (conv1d ? 1 : 0));
    packed.parts = module == "gate_up_proj" ? 2 : 3;
    return packed;
  }
  case K::Unsupported:
    return split(K::Unsupported, -1);
  default:
    return split(K::Replicated, -1);
  }
}

std::optional<std::pair<int64_t, int64_t>> mlir::rlx::mir::shardBlock(int64_t size, int64_t rank,
                                                                       int64_t tp) {
  if (tp < 1 || rank < 0 || rank >= tp || size < 0 || size % tp)
    return std::nullopt;
  int64_t block = size / tp;
  return std::make_pair(rank * block, (rank + 1) * block);
}

std::vector<std::pair<int64_t, int64_t>>
mlir::rlx::mir::rankRuns(const TensorParallelSplit &split, int64_t size, int64_t rank, int64_t tp) {
  int64_t parts = std::max<int64_t>(split.parts, 1);
  if (size < 0 || size % parts)
    return {};
  int64_t part = size / parts;
  auto block = shardBlock(part, rank, tp);
  if (!block)
    return {};
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t p = 0; p < parts; ++p)
    runs.emplace_back(p * part + block->first, p * part + block->second);
  return runs;
}

std::vector<std::vector<std::pair<int64_t, int64_t>>>
mlir::rlx::mir::rankRegion(StringRef name, const std::vector<int64_t> &whole,
                           const std::vector<int64_t> &local, int64_t rank, int64_t tp) {
  using Runs = std::vector<std::pair<int64_t, int64_t>>;
  std::vector<Runs> region;
  if (whole.size() != local.size() || tp < 1 || rank < 0 || rank >= tp)
    return {};
  TensorParallelSplit split = tensorParallelSplit(name, whole.size());
  SmallVector<int64_t> shrunk;
  for (size_t d = 0; d < whole.size(); ++d) {
    if (local[d] <= 0 || whole[d] % local[d])
      return {};
    if (local[d] != whole[d])
      shrunk.push_back(d);
    region.push_back(Runs{{0, whole[d]}});
  }
  if (shrunk.empty())
    return region;
  bool experts = split.kind == TensorParallelKind::Experts;
  if (shrunk.size() > (experts ? 2u : 1u) || (!experts && shrunk[0] != split.dim))
    return {};
  // Every rank holds one block: the dims' ways make tp.
  int64_t total = 1;
  for (int64_t d : shrunk)
    total *= whole[d] / local[d];
  if (total != tp)
    return {};
  for (int64_t d : shrunk) {
    int64_t ways = whole[d] / local[d];
    if (tp % ways)
      return {};
    TensorParallelSplit along = split;
    int64_t index = rank;
    if (experts && d == 0) {
      along.parts = 1;
      index = rank / (tp / ways); // grid axis 0: the expert group
    } else if (experts) {
      along.parts = split.innerParts;
      index = rank % ways; // grid axis 1: the expert's intermediate block
    } else if (ways != tp) {
      return {};
    }
    region[d] = rankRuns(along, whole[d], index, ways);
    if (region[d].empty())
      return {};
  }
  return region;
}

StringRef mlir::rlx::mir::stringifyTensorParallelKind(TensorParallelKind kind) {
  switch (kind) {
  case TensorParallelKind::Replicated: return "replicated";
  case TensorParallelKind::Column: return "column";
  case TensorParallelKind::Row: return "row";
  case TensorParallelKind::Vocab: return "vocab";
  case TensorParallelKind::KVHeads: return "kv_heads";
  case TensorParallelKind::Packed: return "packed column";
  case TensorParallelKind::Experts: return "expert";
  case TensorParallelKind::Unsupported: return "packed";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// rlx-mir-shard
//===----------------------------------------------------------------------===//

namespace {

StringRef nameOf(DictionaryAttr attrs) {
  if (!attrs)
    return "";
  for (StringRef key : {"rlx.param", "rlx.input", "rlx.output"})
    if (auto s = attrs.getAs<StringAttr>(key))
      return s.getValue();
  return "";
}

struct MIRShardPass : public mir::impl::MIRShardBase<MIRShardPass> {
  /// The grid is [ep, tp/ep] (experts split over both of its axes).
  bool twoAxes = false;

  using MIRShardBase::MIRShardBase;

  /// head_dim of the function's attention / rope ops (0: none found).
  static int64_t headDimOf(func::FuncOp func) {
    int64_t headDim = 0;
    func.walk([&](Operation *op) {
      if (auto a = dyn_cast<AttentionOp>(op))
        headDim = a.getHeadDim();
      else if (auto r = dyn_cast<RopeOp>(op); r && !headDim)
        headDim = r.getHeadDim();
    });
    return headDim;
  }

  /// num_kv_heads of the function (from k_proj's rows and head_dim; 0 when
  /// unknown).
  static int64_t kvHeadsOf(func::FuncOp func, int64_t headDim) {
    if (headDim <= 0)
      return 0;
    for (BlockArgument arg : func.getArguments()) {
      StringRef name = nameOf(func.getArgAttrDict(arg.getArgNumber()));
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.getRank() == 2 && name.ends_with("k_proj.weight") &&
          !ShapedType::isDynamic(type.getDimSize(0)) && type.getDimSize(0) % headDim == 0)
        return type.getDimSize(0) / headDim;
    }
    return 0;
  }

  /// A tensor holding KV heads: the k/v projections and the KV caches.
  static bool holdsKvHeads(StringRef name) {
    return name.contains("k_proj.") || name.contains("v_proj.") ||
           tensorParallelSplit(name, 3).kind == TensorParallelKind::KVHeads;
  }

  /// GQA's repeat of each KV head for its query heads, reshape →
  /// broadcast → reshape ([B, kv, 1, S, D] → [B, kv, G, S, D] →
  /// [B, kv·G, S, D]), whose result takes the heads' split.
  static SmallVector<ReshapeOp> kvRepeats(func::FuncOp func, int64_t kv) {
    SmallVector<ReshapeOp> repeats;
    func.walk([&](ReshapeOp r) {
      auto bc = r.getInput().getDefiningOp<BroadcastOp>();
      auto in = bc ? dyn_cast<RankedTensorType>(bc.getInput().getType()) : nullptr;
      auto out = cast<RankedTensorType>(r.getType());
      if (in && in.getRank() == 5 && out.getRank() == 4 && in.getDimSize(1) == kv &&
          in.getDimSize(2) == 1 && out.getDimSize(1) % kv == 0 && out.getDimSize(1) > kv)
        repeats.push_back(r);
    });
    return repeats;
  }

  /// Located errors for a split the model cannot take (see the file comment).
  LogicalResult check(func::FuncOp func, Location loc, StringRef name, RankedTensorType type,
                      const TensorParallelSplit &split, int64_t headDim,
                      bool replicateKv = false) {
    if (replicateKv && holdsKvHeads(name))
      return success();
    if (StringRef whose = notSplitYet(name);
        split.kind == TensorParallelKind::Unsupported && !whose.empty()) {
      if (tp == 1)
        return success();
      return emitError(loc) << "rlx-mir-shard: '" << name << "' (" << whose
                            << ") is not split by tensor or expert parallelism yet";
    }
    if (split.kind == TensorParallelKind::Unsupported)
      return emitError(loc) << "rlx-mir-shard: '" << name
                            << "' is a packed projection whose layout RLX does not split "
                               "(GPT-NeoX's query_key_value interleaves heads); tensor "
                               "parallelism needs its parts as separate parameters";
    if (split.dim < 0 || tp == 1)
      return success();
    int64_t size = type.getDimSize(split.dim);
    if (ShapedType::isDynamic(size))
      return emitError(loc) << "rlx-mir-shard: dim " << split.dim << " of '" << name
                            << "' is dynamic; a " << stringifyTensorParallelKind(split.kind)
                            << "-parallel split needs its size";
    if (split.kind == TensorParallelKind::Packed) {
      int64_t part = size / split.parts;
      if (size % split.parts)
        return emitError(loc) << "rlx-mir-shard: dim " << split.dim << " (size " << size
                              << ") of the packed projection '" << name << "' is not "
                              << split.parts << " equal parts";
      bool qkv = split.parts == 3;
      if (qkv && headDim > 0 && part % headDim == 0 && (part / headDim) % tp)
        return emitError(loc) << "rlx-mir-shard: tp = " << int64_t(tp)
                              << " does not divide the " << part / headDim << " heads of '"
                              << name << "' (num_heads = " << part / headDim
                              << ", head_dim = " << headDim << ")";
      if (part % tp)
        return emitError(loc) << "rlx-mir-shard: tp = " << int64_t(tp)
                              << " does not divide the parts (size " << part
                              << ") of the packed projection '" << name << "'";
      return success();
    }
    bool heads = split.kind == TensorParallelKind::KVHeads ||
                 (split.kind == TensorParallelKind::Column &&
                  (name.contains("q_proj") || name.contains("k_proj") ||
                   name.contains("v_proj")));
    if (heads && headDim > 0 && type.getRank() != 4) {
      int64_t count = size / headDim;
      bool kv = !name.contains("q_proj");
      if (size % headDim == 0 && count % tp)
        return emitError(loc) << "rlx-mir-shard: tp = " << int64_t(tp) << " does not divide the "
                              << count << (kv ? " KV heads" : " heads") << " of '" << name
                              << "' (" << (kv ? "num_kv_heads" : "num_heads") << " = "
                              << count << ", head_dim = " << headDim << ")"
                              << (kv && tp > count
                                      ? "; KV heads are replicated when tp > num_kv_heads "
                                        "only if num_kv_heads divides tp"
                                      : "");
    }
    bool experts = split.kind == TensorParallelKind::Experts;
    int64_t ways = experts ? groups() : int64_t(tp);
    if (size % ways)
      return emitError(loc) << "rlx-mir-shard: " << (experts && ways != tp ? "ep = " : "tp = ")
                            << ways << " does not divide dim " << split.dim << " (size " << size << ") of '" << name << "' ("
                            << stringifyTensorParallelKind(split.kind) << "-parallel"
                            << (split.kind == TensorParallelKind::Experts ? ", num_experts"
                                : name.contains("mlp.")                    ? ", intermediate_size"
                                                                           : "")
                            << ")";
    return success();
  }

  /// `v` through transposes that keep dim 0 (Llama-4's [E, H, 2I] experts)
  /// and this pass's own annotations of the arguments.
  static Value expertSource(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (auto t = dyn_cast<TransposeOp>(def)) {
        if (t.getPermutation().empty() || t.getPermutation()[0] != 0)
          return v;
        v = t.getInput();
      } else if (auto a = dyn_cast<shard::ShardOp>(def)) {
        v = a.getSrc();
      } else {
        return v;
      }
    }
    return v;
  }

  /// Whether `v` is a parameter split by expert.
  static bool expertSplit(Value v) {
    // Through transposes that keep the experts in dim 0 (Llama-4's [E, H, 2I]).
    v = expertSource(v);
    auto arg = dyn_cast<BlockArgument>(v);
    auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : func::FuncOp();
    if (!func || !arg.getOwner()->isEntryBlock())
      return false;
    return tensorParallelSplit(nameOf(func.getArgAttrDict(arg.getArgNumber())),
                               cast<RankedTensorType>(arg.getType()).getRank())
               .kind == TensorParallelKind::Experts;
  }

  /// Whether the rows of expert-split grouped_matmul `gm` only reach another
  /// expert-split grouped_matmul with the same ids, through row-local ops
  /// (elementwise ops, slices that keep every row): its rows that a rank
  /// does not compute (zeros) are dropped there, so they need no
  /// all-reduce (the MoE experts' gate|up, activation and down).
  static bool rowsStayWithTheirExpert(GroupedMatmulOp gm) {
    int64_t rows = gm.getType().getDimSize(0);
    SmallVector<Value> work{gm.getResult()};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto next = dyn_cast<GroupedMatmulOp>(user)) {
          // The same experts (E) split the same way, so a row's expert is
          // on the same rank in both.
          if (use.getOperandNumber() != 0 || next.getIds() != gm.getIds() ||
              !expertSplit(next.getWeight()) ||
              next.getWeight().getType().getDimSize(0) != gm.getWeight().getType().getDimSize(0) ||
              next.getZeroOutOfRange() != gm.getZeroOutOfRange())
            return false;
          continue;
        }
        auto out = user->getNumResults() == 1
                       ? dyn_cast<RankedTensorType>(user->getResult(0).getType())
                       : RankedTensorType();
        bool keepsRows = out && out.getRank() == 2 && out.getDimSize(0) == rows;
        if (auto s = dyn_cast<SliceOp>(user))
          keepsRows = keepsRows && s.getOffsets()[0] == 0 && s.getStrides()[0] == 1;
        else
          keepsRows = keepsRows && isa<ElementwiseOpInterface>(user);
        if (!keepsRows)
          return false;
        work.push_back(user->getResult(0));
      }
    }
    return true;
  }

  /// A slice of a packed projection's output that takes one part, the dim
  /// of its input that holds the packed columns, and the ranks the columns
  /// are split over (tp; an expert's gate|up: tp/ep).
  struct PackedSlice {
    SliceOp slice;
    int64_t dim;
    int64_t ways;
  };

  /// Whether `v` holds packed columns of `parts` parts: a packed parameter,
  /// a matmul by one, or an elementwise op of such values.
  static bool packedValue(Value v, int64_t parts, unsigned depth = 0) {
    if (depth > 16)
      return false;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func || !arg.getOwner()->isEntryBlock())
        return false;
      auto type = cast<RankedTensorType>(arg.getType());
      TensorParallelSplit s =
          tensorParallelSplit(nameOf(func.getArgAttrDict(arg.getArgNumber())), type.getRank());
      return s.kind == TensorParallelKind::Packed && s.parts == parts;
    }
    Operation *def = v.getDefiningOp();
    if (auto mm = dyn_cast_or_null<MatmulOp>(def))
      return packedValue(mm.getRhs(), parts, depth + 1);
    if (def && isa<ElementwiseOpInterface>(def))
      return llvm::any_of(def->getOperands(),
                          [&](Value o) { return packedValue(o, parts, depth + 1); });
    return false;
  }

  /// The slices that take the parts of packed parameter `arg` (through the
  /// matmul that reads it as weights and elementwise ops such as the bias
  /// add); an error when its columns reach anything else.
  LogicalResult planPacked(BlockArgument arg, StringRef name, const TensorParallelSplit &split,
                           SmallVectorImpl<PackedSlice> &plan) {
    return planPackedFrom(arg, split.dim, name, split.parts, tp, plan);
  }

  /// planPacked from `start`, whose dim `startDim` holds `parts` packed
  /// parts split over `ways` ranks.
  LogicalResult planPackedFrom(Value start, int64_t startDim, StringRef name, int64_t parts,
                               int64_t ways, SmallVectorImpl<PackedSlice> &plan) {
    TensorParallelSplit split{TensorParallelKind::Packed, startDim, parts};
    int64_t size = cast<RankedTensorType>(start.getType()).getDimSize(split.dim);
    int64_t part = size / split.parts;
    SmallVector<std::pair<Value, int64_t>> work{{start, split.dim}};
    DenseSet<Operation *> seen;
    auto misuse = [&](Operation *user) {
      return user->emitError() << "rlx-mir-shard: the packed projection '" << name
                               << "' reaches '" << user->getName()
                               << "'; tensor parallelism splits a packed projection whose "
                                  "output is sliced into its "
                               << split.parts << " parts (through matmul and elementwise ops)";
    };
    while (!work.empty()) {
      auto [value, dim] = work.pop_back_val();
      int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (auto mm = dyn_cast<MatmulOp>(user)) {
          int64_t wrank = rank, out = cast<RankedTensorType>(mm.getType()).getRank();
          bool columns = use.getOperandNumber() == 1 &&
                         dim == (mm.getTransposeB() ? wrank - 2 : wrank - 1);
          if (!columns)
            return misuse(user);
          if (seen.insert(user).second)
            work.push_back({mm.getOutput(), out - 1});
          continue;
        }
        if (auto slice = dyn_cast<SliceOp>(user)) {
          ArrayRef<int64_t> in = cast<RankedTensorType>(value.getType()).getShape();
          bool onePart = slice.getOffsets()[dim] % part == 0 && slice.getStrides()[dim] == 1 &&
                         slice.getType().getDimSize(dim) == part;
          for (int64_t d = 0; d < rank && onePart; ++d)
            if (d != dim)
              onePart = slice.getOffsets()[d] == 0 && slice.getStrides()[d] == 1 &&
                        (slice.getSizes()[d] == -1 || slice.getSizes()[d] == in[d]);
          if (!onePart)
            return slice.emitError()
                   << "rlx-mir-shard: this slice of the packed projection '" << name
                   << "' does not take one of its " << split.parts << " equal parts (size " << part
                   << " along dim " << dim << ", every other dim whole); packed q|k|v with "
                   << "unequal parts (num_kv_heads < num_heads) is not split";
          if (seen.insert(user).second)
            plan.push_back({slice, dim, ways});
          continue;
        }
        if (isa<ElementwiseOpInterface>(user) && user->getNumResults() == 1) {
          auto out = cast<RankedTensorType>(user->getResult(0).getType());
          int64_t outDim = dim + out.getRank() - rank;
          if (out.getDimSize(outDim) != size)
            return misuse(user);
          // Another operand along the packed columns must be packed the
          // same way (a packed bias) or broadcast along them: a tensor in
          // the original column order would be split into other columns.
          for (Value other : user->getOperands()) {
            if (other == value)
              continue;
            auto t = dyn_cast<RankedTensorType>(other.getType());
            int64_t d = t ? outDim - (out.getRank() - t.getRank()) : -1;
            if (!t || d < 0 || t.getDimSize(d) == 1)
              continue;
            if (!packedValue(other, split.parts))
              return user->emitError()
                     << "rlx-mir-shard: '" << user->getName()
                     << "' combines the packed projection '" << name
                     << "' with a tensor along its columns that is not packed the same way "
                          "(tensor parallelism would split the two differently)";
          }
          if (seen.insert(user).second)
            work.push_back({user->getResult(0), outDim});
          continue;
        }
        return misuse(user);
      }
    }
    return success();
  }

  /// Rewrites a slice of part p of the packed columns (global view) into a
  /// slice of the per-rank layout: with block r of every part side by side
  /// at [r·size/tp, (r+1)·size/tp), part p of the global tensor is
  /// reshape(x, [.., tp, size/tp, ..])[.., :, p·part/tp : (p+1)·part/tp, ..]
  /// reshaped back. The split then sits on the tp dim, which is the lead
  /// dim of its reshape group, so shard-partition keeps it local.
  LogicalResult rewritePacked(const PackedSlice &ps) {
    SliceOp slice = ps.slice;
    OpBuilder b(slice);
    MIRBuilder mb(b, slice.getLoc(), /*diagnose=*/true);
    auto in = cast<RankedTensorType>(slice.getInput().getType());
    int64_t size = in.getDimSize(ps.dim), offset = slice.getOffsets()[ps.dim];
    int64_t part = slice.getType().getDimSize(ps.dim);
    auto pattern = [](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> p;
      for (int64_t d : shape)
        p.push_back(ShapedType::isDynamic(d) ? -1 : d);
      return p;
    };
    SmallVector<int64_t> split = pattern(in.getShape());
    int64_t tp = ps.ways;
    split[ps.dim] = size / tp;
    split.insert(split.begin() + ps.dim, tp);
    SmallVector<int64_t> offsets(slice.getOffsets()), sizes(slice.getSizes()),
        strides(slice.getStrides());
    offsets[ps.dim] = offset / tp;
    sizes[ps.dim] = part / tp;
    offsets.insert(offsets.begin() + ps.dim, 0);
    sizes.insert(sizes.begin() + ps.dim, -1);
    strides.insert(strides.begin() + ps.dim, 1);
    Value local = mb.slice(mb.reshape(slice.getInput(), split), offsets, sizes, strides);
    Value joined = mb.reshape(local, pattern(slice.getType().getShape()));
    if (!joined)
      return failure();
    slice.getOutput().replaceAllUsesWith(joined);
    slice.erase();
    return success();
  }

  /// The number of expert-parallel groups (ep; 0 means tp) and the ranks
  /// of each group that split an expert (tp/ep).
  int64_t groups() const { return ep > 0 ? int64_t(ep) : int64_t(tp); }
  int64_t expertRanks() const { return tp / groups(); }

  /// The grid axes a split tensor's dim is split over: all of them.
  SmallVector<shard::GridAxis> allAxes() const {
    return twoAxes ? SmallVector<shard::GridAxis>{0, 1} : SmallVector<shard::GridAxis>{0};
  }

  /// `sharding` of a tensor of rank `rank`: dim d split over axes[d] (a
  /// missing or empty entry: not split).
  Value shardingFor(OpBuilder &b, Location loc, ArrayRef<SmallVector<shard::GridAxis>> axes,
                    int64_t rank) {
    SmallVector<shard::GridAxesAttr> split;
    int64_t last = -1;
    for (int64_t d = 0; d < (int64_t)axes.size() && d < rank; ++d)
      if (!axes[d].empty())
        last = d;
    for (int64_t d = 0; d <= last; ++d)
      split.push_back(shard::GridAxesAttr::get(b.getContext(), axes[d]));
    if (split.empty())
      split.push_back(shard::GridAxesAttr::get(b.getContext(), ArrayRef<shard::GridAxis>{}));
    return shard::ShardingOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), gridName),
                                     split)
        .getResult();
  }

  /// The sharding of a tensor split as `split` says (its dim over every axis).
  Value shardingFor(OpBuilder &b, Location loc, const TensorParallelSplit &split, int64_t rank) {
    SmallVector<SmallVector<shard::GridAxis>> axes(std::max<int64_t>(rank, 1));
    if (split.dim >= 0 && split.dim < rank)
      axes[split.dim] = allAxes();
    return shardingFor(b, loc, axes, rank);
  }

  /// The dim of stacked expert tensor `arg` that the grouped_matmuls reading
  /// it (directly or through transposes) have as their weight's N (gate|up)
  /// or K (down): the expert's intermediate dim. -1 when a reader is not
  /// such a grouped_matmul, or the readers disagree, or none is found; the
  /// experts must stay dim 0.
  static int64_t expertInnerDim(BlockArgument arg, bool gateUp,
                                SmallVectorImpl<GroupedMatmulOp> &readers) {
    int64_t found = -1;
    SmallVector<std::pair<Value, SmallVector<int64_t>>> work;
    int64_t rank = cast<RankedTensorType>(arg.getType()).getRank();
    SmallVector<int64_t> identity;
    for (int64_t d = 0; d < rank; ++d)
      identity.push_back(d);
    work.push_back({arg, identity});
    while (!work.empty()) {
      auto [value, dims] = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (auto t = dyn_cast<TransposeOp>(user)) {
          // (expertSource / expertSplit follow only these.)
          if (t.getPermutation().empty() || t.getPermutation()[0] != 0)
            return -1;
          SmallVector<int64_t> next;
          for (int64_t p : t.getPermutation())
            next.push_back(dims[p]);
          work.push_back({t.getResult(), next});
          continue;
        }
        auto gm = dyn_cast<GroupedMatmulOp>(user);
        if (!gm || use.getOperandNumber() != 1 || dims.size() != 3 || dims[0] != 0)
          return -1;
        int64_t d = dims[gateUp ? 1 : 2];
        if (found >= 0 && found != d)
          return -1;
        found = d;
        readers.push_back(gm);
      }
    }
    return found;
  }

  /// Expert tensor parallelism (ep < tp): finds the intermediate dim of
  /// stacked expert tensor `arg` from its grouped_matmuls, checks that tp/ep
  /// divides it (each part of a gate|up), and plans the rewrite of the
  /// slices that take gate and up from the gate|up rows.
  LogicalResult planExpertSplit(BlockArgument arg, StringRef name,
                                const TensorParallelSplit &split,
                                DenseMap<Value, int64_t> &expertInner,
                                SmallVectorImpl<PackedSlice> &packed) {
    bool gateUp = split.innerParts == 2;
    if (arg.use_empty())
      return success();
    SmallVector<GroupedMatmulOp> readers;
    int64_t inner = expertInnerDim(arg, gateUp, readers);
    if (inner < 0)
      return emitError(arg.getLoc())
             << "rlx-mir-shard: the stacked experts '" << name
             << "' are not read as grouped_matmul weights (directly or through transposes that "
                "keep the experts in dim 0); ep = "
             << int64_t(ep) << " < tp splits each expert by the intermediate dim found there";
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t size = type.getDimSize(inner), ways = expertRanks();
    if (ShapedType::isDynamic(size) || size % (ways * split.innerParts))
      return emitError(arg.getLoc())
             << "rlx-mir-shard: tp/ep = " << ways << " does not divide the intermediate size ("
             << (ShapedType::isDynamic(size) ? int64_t(-1) : size / split.innerParts) << ") of '"
             << name << "' (dim " << inner << (gateUp ? ", gate|up" : "") << ")";
    expertInner[arg] = inner;
    if (gateUp)
      for (GroupedMatmulOp gm : readers) {
        // Its rows are split by column within the group: they must reach
        // only the down projection, which sums them with the others.
        if (!rowsStayWithTheirExpert(gm))
          return gm.emitError()
                 << "rlx-mir-shard: the gate|up rows of '" << name
                 << "' reach more than the down projection of the same experts (through "
                    "elementwise ops and slices); ep < tp splits them by column, which only "
                    "the MoE experts' pattern sums back";
        if (failed(planPackedFrom(gm.getResult(), 1, name, 2, ways, packed)))
          return failure();
      }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tp < 1) {
      emitError(module.getLoc()) << "rlx-mir-shard: tp must be at least 1, got " << int64_t(tp);
      return signalPassFailure();
    }
    if (ep < 0 || (ep > 0 && tp % ep)) {
      emitError(module.getLoc()) << "rlx-mir-shard: ep = " << int64_t(ep)
                                 << " must divide tp = " << int64_t(tp)
                                 << " (expert-parallel groups of tp/ep ranks; 0: tp)";
      return signalPassFailure();
    }
    if (SymbolTable::lookupSymbolIn(module, gridName)) {
      emitError(module.getLoc()) << "rlx-mir-shard: the module already has a symbol '"
                                 << gridName << "' (the module is sharded already?)";
      return signalPassFailure();
    }
    // Check every function before rewriting any.
    bool ok = true;
    // Functions whose KV heads are replicated (tp > num_kv_heads): every rank
    // computes them all and keeps the ones its query heads read.
    DenseSet<Operation *> replicating;
    SmallVector<PackedSlice> packed;
    // Stacked expert tensors split over the grid's two axes (ep < tp): the
    // dim of each that holds the expert's intermediate size.
    DenseMap<Value, int64_t> expertInner;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      int64_t headDim = headDimOf(func);
      int64_t kv = kvHeadsOf(func, headDim);
      bool replicateKv = tp > 1 && kv > 0 && tp > kv && tp % kv == 0 &&
                         !kvRepeats(func, kv).empty();
      if (replicateKv)
        replicating.insert(func);
      func.walk([&](AttentionOp a) {
        if (tp > 1 && (a.getNumHeads() % tp || a.getNumKvHeads() % tp)) {
          a.emitError() << "rlx-mir-shard: tp = " << int64_t(tp) << " does not divide num_heads = "
                        << a.getNumHeads() << " and num_kv_heads = " << a.getNumKvHeads()
                        << (tp > a.getNumKvHeads()
                                ? "; KV heads are replicated (tp > num_kv_heads) in "
                                  "decomposed attention only (convert-rlx-hir-to-mir "
                                  "fusion-policy=fusable), not in rlx_mir.attention"
                                : "");
          ok = false;
        }
      });
      // The first tensor that cannot be split is the error; the others are
      // counted in a note (one cause, such as tp = 3, fails most of them).
      unsigned more = 0;
      std::optional<Location> first;
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (!type)
          continue;
        StringRef name = nameOf(func.getArgAttrDict(arg.getArgNumber()));
        TensorParallelSplit split = tensorParallelSplit(name, type.getRank());
        if (split.kind == TensorParallelKind::Experts && expertRanks() > 1 && !first) {
          if (failed(planExpertSplit(arg, name, split, expertInner, packed))) {
            ok = false;
            continue;
          }
        }
        if (split.kind == TensorParallelKind::Packed && tp > 1 && !first) {
          if (split.dim < 0) {
            emitError(arg.getLoc()) << "rlx-mir-shard: the packed projection '" << name
                                    << "' has " << type.getRank()
                                    << " dims; its packed dim is not one of them";
            ok = false;
            continue;
          }
          if (failed(check(func, arg.getLoc(), name, type, split, headDim, replicateKv)))
            first = arg.getLoc();
          else if (failed(planPacked(arg, name, split, packed)))
            ok = false;
          continue;
        }
        if (first) {
          ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &) { return success(); });
          more += failed(check(func, arg.getLoc(), name, type, split, headDim, replicateKv));
        } else if (failed(check(func, arg.getLoc(), name, type, split, headDim, replicateKv))) {
          first = arg.getLoc();
        }
      }
      if (first) {
        ok = false;
        if (more)
          emitRemark(*first) << "rlx-mir-shard: " << more << " more tensor"
                             << (more == 1 ? "" : "s") << " of @" << func.getSymName()
                             << " cannot be split by tp = " << int64_t(tp);
      }
    }
    if (!ok)
      return signalPassFailure();
    // Expert parallelism: the gate|up rows stay on their expert's rank
    // (one all-reduce per MoE layer, after the down projection). Before the
    // packed slices are rewritten (the walk follows slices, not reshapes).
    if (tp > 1)
      module.walk([&](GroupedMatmulOp gm) {
        if (expertSplit(gm.getWeight()) && rowsStayWithTheirExpert(gm))
          gm->setAttr(kExpertLocalRowsAttr, UnitAttr::get(&getContext()));
      });
    // A weight and its bias reach the same slices: rewrite each once.
    DenseSet<Operation *> rewritten;
    for (const PackedSlice &ps : packed)
      if (rewritten.insert(ps.slice).second && failed(rewritePacked(ps)))
        return signalPassFailure();


    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    twoAxes = !expertInner.empty();
    if (expertRanks() > 1 && !twoAxes) {
      emitError(module.getLoc())
          << "rlx-mir-shard: ep = " << int64_t(ep) << " < tp = " << int64_t(tp)
          << " splits stacked MoE experts (experts.gate_up_proj / experts.down_proj read by "
             "grouped_matmul), and this module has none (per-expert checkpoint names are "
             "stacked by `rlx-gen --stacked-experts`); leave ep out for a dense model";
      return signalPassFailure();
    }
    if (twoAxes)
      shard::GridOp::create(b, module.getLoc(), gridName,
                            ArrayRef<int64_t>{groups(), expertRanks()});
    else
      shard::GridOp::create(b, module.getLoc(), gridName, ArrayRef<int64_t>{tp});
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.front();
      b.setInsertionPointToStart(&entry);
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (!type || type.getRank() == 0)
          continue;
        StringRef name = nameOf(func.getArgAttrDict(arg.getArgNumber()));
        TensorParallelSplit split = tensorParallelSplit(name, type.getRank());
        if (replicating.contains(func) && holdsKvHeads(name))
          split = TensorParallelSplit{};
        Value sharding;
        if (auto inner = expertInner.find(arg); inner != expertInner.end()) {
          // [ep, tp/ep]: the experts over axis 0, each one's intermediate
          // dim over axis 1.
          SmallVector<SmallVector<shard::GridAxis>> axes(type.getRank());
          if (groups() > 1)
            axes[0] = {0};
          axes[inner->second] = {1};
          sharding = shardingFor(b, arg.getLoc(), axes, type.getRank());
        } else {
          sharding = shardingFor(b, arg.getLoc(), split, type.getRank());
        }
        auto annotated = shard::ShardOp::create(b, arg.getLoc(), arg, sharding, true);
        arg.replaceAllUsesExcept(annotated, annotated);
      }
      // Stacked experts read through transposes (Llama-4's [E, H, 2I]):
      // their grouped_matmuls take the weight split by expert (and by the
      // expert's intermediate dim over axis 1), or sharding-propagation may
      // choose to gather every expert on every rank.
      func.walk([&](GroupedMatmulOp gm) {
        Value w = gm.getWeight();
        if (!w.getDefiningOp<TransposeOp>() || !expertSplit(w))
          return;
        auto arg = cast<BlockArgument>(expertSource(w));
        StringRef name = nameOf(func.getArgAttrDict(arg.getArgNumber()));
        TensorParallelSplit split = tensorParallelSplit(name, 3);
        SmallVector<SmallVector<shard::GridAxis>> axes(3);
        if (twoAxes) {
          if (groups() > 1)
            axes[0] = {0};
          if (expertInner.count(arg))
            axes[split.innerParts == 2 ? 1 : 2] = {1};
        } else {
          axes[0] = allAxes();
        }
        b.setInsertionPoint(gm);
        Value sharding = shardingFor(b, gm.getLoc(), axes, 3);
        gm.getWeightMutable().assign(
            shard::ShardOp::create(b, gm.getLoc(), w, sharding, /*annotate_for_users=*/true));
      });
      // Replicated KV heads: GQA's repeat is computed whole, then each rank
      // keeps its query heads' copies (shard-partition: an all_slice).
      if (replicating.contains(func))
        for (ReshapeOp r : kvRepeats(func, kvHeadsOf(func, headDimOf(func)))) {
          b.setInsertionPointAfter(r);
          TensorParallelSplit heads{TensorParallelKind::Column, 1};
          Value whole = shardingFor(b, r.getLoc(), TensorParallelSplit{}, 4);
          Value split = shardingFor(b, r.getLoc(), heads, 4);
          auto produced = shard::ShardOp::create(b, r.getLoc(), r.getResult(), whole, false);
          auto used = shard::ShardOp::create(b, r.getLoc(), produced, split, true);
          r.getResult().replaceAllUsesExcept(used, produced);
        }
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        for (OpOperand &use : ret->getOpOperands()) {
          auto type = dyn_cast<RankedTensorType>(use.get().getType());
          if (!type || type.getRank() == 0)
            continue;
          StringRef name = nameOf(func.getResultAttrDict(use.getOperandNumber()));
          TensorParallelSplit split = tensorParallelSplit(name, type.getRank());
          if (split.kind != TensorParallelKind::KVHeads || replicating.contains(func))
            split = TensorParallelSplit{};
          Value sharding = shardingFor(b, ret.getLoc(), split, type.getRank());
          use.set(shard::ShardOp::create(b, ret.getLoc(), use.get(), sharding, true));
        }
      });
    }
  }
};

} // namespace
