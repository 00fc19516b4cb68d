//===- SplitKV.cpp - rlx-mir-split-kv: Flash-Decoding's key splits -------===//
//
// rlx_mir.attention → rlx_mir.attention_partial (kv_splits) +
// rlx_mir.attention_combine where the attention's own grid would leave the
// GPU idle (few query rows, many keys: a decode step). An attention_partial
// of one split feeding a combine (attention with sinks) is split in place. The split count is
// the heuristic documented in Passes.td and docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/FlashTiles.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRSPLITKV
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

// The fewest keys worth a split and the most splits.
constexpr int64_t kMinKeysPerSplit = 256, kMaxSplits = 128;

/// The heuristic's split count for attention over Sq queries of `group`
/// query heads per kv head, `kvHeads` kv heads, `batch` batches and `keys`
/// keys, on a kernel of `tiles`.
int64_t chooseSplits(int64_t sq, int64_t group, int64_t kvHeads, int64_t batch, int64_t keys,
                     int64_t sms, const FlashTiles &tiles) {
  int64_t blocks = rowTiles(tiles, sq, group) * kvHeads * batch;
  int64_t slots = tiles.blocksPerSM * sms;
  if (blocks <= 0 || sms <= 0 || 10 * blocks >= 8 * slots)
    return 1;
  int64_t most = std::min<int64_t>(kMaxSplits, keys / kMinKeysPerSplit);
  auto efficiency = [&](int64_t n) {
    double waves = static_cast<double>(blocks * n) / slots;
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (int64_t n = 1; n <= most; ++n)
    best = std::max(best, efficiency(n));
  for (int64_t n = 1; n <= most; ++n)
    if (efficiency(n) >= 0.85 * best)
      return n;
  return 1;
}

struct MIRSplitKVPass : mir::impl::MIRSplitKVBase<MIRSplitKVPass> {
  using MIRSplitKVBase::MIRSplitKVBase;

  void runOnOperation() override {
    if (kvSplits < 0 || kvSplits > 65535) {
      emitError(getOperation().getLoc())
          << "rlx-mir-split-kv: kv-splits must be 0 (the heuristic) or 1..65535, got "
          << static_cast<int64_t>(kvSplits);
      return signalPassFailure();
    }
    IRRewriter rw(&getContext());
    // The split count and chunk for attention-like `op`, or nothing.
    auto choose = [&](auto op) -> std::optional<std::pair<int64_t, int64_t>> {
      auto q = cast<RankedTensorType>(op.getQuery().getType());
      auto k = cast<RankedTensorType>(op.getKey().getType());
      // f64 keeps its f64 statistics (attention_partial's results are f32).
      if (!q.hasStaticShape() || !k.hasStaticShape() || q.getElementType().isF64())
        return std::nullopt;
      AttentionConfig cfg = getAttentionConfig(op);
      bool bhsd = cfg.layout == AttnLayout::BHSD;
      int64_t sq = q.getShape()[bhsd ? 2 : 1], sk = k.getShape()[bhsd ? 2 : 1];
      int64_t group = cfg.numHeads / cfg.numKvHeads;
      auto v = cast<RankedTensorType>(op.getValue().getType());
      int64_t dv = cfg.layout == AttnLayout::BSD ? v.getShape()[2] / cfg.numKvHeads
                                                 : v.getShape()[3];
      FlashTiles tiles = wgmma && wgmmaFlashShapes(q.getElementType(), cfg.headDim, dv, group)
                             ? wgmmaFlashTiles(sq * group, group, cfg.headDim, dv)
                             : mmaSyncFlashTiles();
      // The keys any query row sees: a sliding window of w sees the last
      // w + Sq − 1 of them, a chunked mask of c at most c + Sq − 1 (the
      // rows' chunks); the others cost a split that finds no key tile.
      int64_t visible = sk;
      if (cfg.window && *cfg.window > 0 &&
          (cfg.maskKind == MaskKind::SlidingWindow || cfg.maskKind == MaskKind::Chunked))
        visible = std::min<int64_t>(sk, *cfg.window + sq - 1);
      int64_t n = kvSplits > 0 ? kvSplits
                               : chooseSplits(sq, group, cfg.numKvHeads, q.getShape()[0],
                                              visible, smCount, tiles);
      // Splits of whole key tiles (the last one shorter), as many as the
      // grid's z dimension takes; the heuristic's chunk spreads the visible
      // keys over n splits (the splits still cover every key).
      int64_t batch = q.getShape()[0], most = 65535 / std::max<int64_t>(batch, 1);
      n = std::min<int64_t>(n, most);
      if (n <= 1 || sk == 0)
        return std::nullopt;
      int64_t chunk = ((kvSplits > 0 ? sk : visible) + n - 1) / n;
      if (kvSplits == 0)
        chunk = (chunk + tiles.keys - 1) / tiles.keys * tiles.keys;
      chunk = std::max<int64_t>(chunk, (sk + most - 1) / most);
      n = (sk + chunk - 1) / chunk;
      if (n <= 1)
        return std::nullopt;
      return std::make_pair(n, chunk);
    };
    SmallVector<AttentionOp> ops;
    SmallVector<AttentionPartialOp> unsplit;
    getOperation().walk([&](Operation *op) {
      if (auto a = dyn_cast<AttentionOp>(op))
        ops.push_back(a);
      // One split into a combine (attention with sinks): split it in place.
      if (auto p = dyn_cast<AttentionPartialOp>(op);
          p && p.getKvSplits() == 1 && !p.getKvChunk() &&
          llvm::all_of(p->getUsers(), [](Operation *u) { return isa<AttentionCombineOp>(u); }))
        unsplit.push_back(p);
    });
    for (AttentionOp op : ops) {
      std::optional<std::pair<int64_t, int64_t>> split = choose(op);
      if (!split)
        continue;
      auto [n, chunk] = *split;
      rw.setInsertionPoint(op);
      auto partial = AttentionPartialOp::create(
          rw, op.getLoc(), op.getQuery(), op.getKey(), op.getValue(), op.getMask(),
          op.getNumHeadsAttr(), op.getNumKvHeadsAttr(), op.getHeadDimAttr(), op.getMaskKindAttr(),
          op.getWindowAttr(), op.getScaleAttr(), op.getSoftcapAttr(), op.getLayoutAttr(),
          rw.getI64IntegerAttr(n), rw.getI64IntegerAttr(chunk));
      auto combine =
          AttentionCombineOp::create(rw, op.getLoc(), op.getType(), partial.getPartialOutput(),
                                     partial.getLse(), Value(), op.getLayoutAttr());
      rw.replaceOp(op, combine.getResult());
    }
    for (AttentionPartialOp op : unsplit) {
      std::optional<std::pair<int64_t, int64_t>> split = choose(op);
      if (!split)
        continue;
      op.setKvSplitsAttr(rw.getI64IntegerAttr(split->first));
      op.setKvChunkAttr(rw.getI64IntegerAttr(split->second));
      // The results' leading dim is the split count.
      for (Value r : op->getResults()) {
        auto t = cast<RankedTensorType>(r.getType());
        SmallVector<int64_t> shape(t.getShape());
        shape[0] = split->first;
        r.setType(RankedTensorType::get(shape, t.getElementType()));
      }
    }
  }
};

} // namespace
