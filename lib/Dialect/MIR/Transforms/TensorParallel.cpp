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
// the head_dim of the function's rope/attention ops), and packed
// projections (qkv_proj, gate_up_proj, c_attn), whose contiguous blocks are
// not a rank's heads.
//
//===----------------------------------------------------------------------===//

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
  bool weight = leaf == "weight", bias = leaf == "bias";
  if (!weight && !bias)
    return split(K::Replicated, -1);
  // Hugging Face nn.Linear weights are [out, in]; GPT-2's Conv1D are [in, out].
  bool conv1d = module == "c_fc" || module == "c_proj";
  K kind = llvm::StringSwitch<K>(module)
               .Cases("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "c_fc", K::Column)
               .Cases("o_proj", "down_proj", "c_proj", K::Row)
               .Cases("embed_tokens", "wte", "lm_head", K::Vocab)
               .Cases("qkv_proj", "gate_up_proj", "c_attn", "query_key_value", "W_pack",
                      K::Unsupported)
               .Default(K::Replicated);
  switch (kind) {
  case K::Column:
    return split(K::Column, bias ? 0 : (conv1d ? 1 : 0));
  case K::Row:
    // The bias of a row-parallel layer is added once, after the all-reduce.
    return bias ? split(K::Replicated, -1) : split(K::Row, conv1d ? 0 : 1);
  case K::Vocab:
    return bias ? split(K::Replicated, -1) : split(K::Vocab, 0);
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

StringRef mlir::rlx::mir::stringifyTensorParallelKind(TensorParallelKind kind) {
  switch (kind) {
  case TensorParallelKind::Replicated: return "replicated";
  case TensorParallelKind::Column: return "column";
  case TensorParallelKind::Row: return "row";
  case TensorParallelKind::Vocab: return "vocab";
  case TensorParallelKind::KVHeads: return "kv_heads";
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

  /// Located errors for a split the model cannot take (see the file comment).
  LogicalResult check(func::FuncOp func, Location loc, StringRef name, RankedTensorType type,
                      const TensorParallelSplit &split, int64_t headDim) {
    if (split.kind == TensorParallelKind::Unsupported)
      return emitError(loc) << "rlx-mir-shard: '" << name
                            << "' is a packed projection; tensor parallelism needs its parts "
                               "as separate parameters (split it before sharding)";
    if (split.dim < 0 || tp == 1)
      return success();
    int64_t size = type.getDimSize(split.dim);
    if (ShapedType::isDynamic(size))
      return emitError(loc) << "rlx-mir-shard: dim " << split.dim << " of '" << name
                            << "' is dynamic; a " << stringifyTensorParallelKind(split.kind)
                            << "-parallel split needs its size";
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
                                      ? "; replicating KV heads (tp > num_kv_heads) is not "
                                        "supported yet"
                                      : "");
    }
    if (size % tp)
      return emitError(loc) << "rlx-mir-shard: tp = " << int64_t(tp) << " does not divide dim "
                            << split.dim << " (size " << size << ") of '" << name << "' ("
                            << stringifyTensorParallelKind(split.kind) << "-parallel"
                            << (name.contains("mlp.") ? ", intermediate_size" : "") << ")";
    return success();
  }

  Value shardingFor(OpBuilder &b, Location loc, const TensorParallelSplit &split,
                    int64_t rank) {
    SmallVector<shard::GridAxesAttr> axes;
    if (split.dim >= 0)
      for (int64_t d = 0; d <= split.dim; ++d)
        axes.push_back(shard::GridAxesAttr::get(
            b.getContext(), d == split.dim ? ArrayRef<shard::GridAxis>{0}
                                           : ArrayRef<shard::GridAxis>{}));
    else
      axes.push_back(shard::GridAxesAttr::get(b.getContext(), ArrayRef<shard::GridAxis>{}));
    (void)rank;
    return shard::ShardingOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), gridName),
                                     axes)
        .getResult();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tp < 1) {
      emitError(module.getLoc()) << "rlx-mir-shard: tp must be at least 1, got " << int64_t(tp);
      return signalPassFailure();
    }
    if (SymbolTable::lookupSymbolIn(module, gridName)) {
      emitError(module.getLoc()) << "rlx-mir-shard: the module already has a symbol '"
                                 << gridName << "' (the module is sharded already?)";
      return signalPassFailure();
    }
    // Check every function before rewriting any.
    bool ok = true;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      int64_t headDim = headDimOf(func);
      func.walk([&](AttentionOp a) {
        if (tp > 1 && (a.getNumHeads() % tp || a.getNumKvHeads() % tp)) {
          a.emitError() << "rlx-mir-shard: tp = " << int64_t(tp) << " does not divide num_heads = "
                        << a.getNumHeads() << " and num_kv_heads = " << a.getNumKvHeads()
                        << (tp > a.getNumKvHeads() ? "; replicating KV heads (tp > "
                                                     "num_kv_heads) is not supported yet"
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
        if (first) {
          ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &) { return success(); });
          more += failed(check(func, arg.getLoc(), name, type, split, headDim));
        } else if (failed(check(func, arg.getLoc(), name, type, split, headDim))) {
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

    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
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
        Value sharding = shardingFor(b, arg.getLoc(), split, type.getRank());
        auto annotated = shard::ShardOp::create(b, arg.getLoc(), arg, sharding, true);
        arg.replaceAllUsesExcept(annotated, annotated);
      }
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        for (OpOperand &use : ret->getOpOperands()) {
          auto type = dyn_cast<RankedTensorType>(use.get().getType());
          if (!type || type.getRank() == 0)
            continue;
          StringRef name = nameOf(func.getResultAttrDict(use.getOperandNumber()));
          TensorParallelSplit split = tensorParallelSplit(name, type.getRank());
          if (split.kind != TensorParallelKind::KVHeads)
            split = TensorParallelSplit{};
          Value sharding = shardingFor(b, ret.getLoc(), split, type.getRank());
          use.set(shard::ShardOp::create(b, ret.getLoc(), use.get(), sharding, true));
        }
      });
    }
  }
};

} // namespace
