//===- PackedProjections.cpp - epilogues on slices of a packed projection -===//
//
// Models that store packed weights (Phi-3's qkv_proj and gate_up_proj) slice
// one matmul's output and apply RoPE to the q and k slices, or SwiGLU to the
// two halves. These are the same epilogue stages QKV / gate-up merging
// produces for separate weights:
//   rope(y[..., 0:a]), rope(y[..., a:a+b])  → rope stage, rope_heads (a+b)/d
//   act(y[..., 0:F]) · y[..., F:2F]          → glu activation act
// Every slice must read the last axis with unit stride and take every other
// axis whole; the ropes must share their tables, head_dim, rotary_dim and
// style and cover a prefix of the columns; the matmul may have no other use.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// [offset, offset + size) of the last axis when `s` takes whole other axes
/// with unit strides.
std::optional<std::pair<int64_t, int64_t>> columnRange(SliceOp s) {
  auto in = MIRBuilder::typeOf(s.getInput());
  int64_t rank = in.getRank();
  if (!in.hasStaticShape() || !s.getType().hasStaticShape())
    return std::nullopt;
  for (int64_t a = 0; a < rank; ++a) {
    if (s.getStrides()[a] != 1)
      return std::nullopt;
    if (a < rank - 1 && (s.getOffsets()[a] != 0 || s.getType().getDimSize(a) != in.getDimSize(a)))
      return std::nullopt;
  }
  return std::make_pair(s.getOffsets()[rank - 1], s.getType().getDimSize(rank - 1));
}

/// A new slice of `y` over the same columns as `s`.
Value resliced(MIRBuilder &mb, Value y, SliceOp s) {
  return mb.create<SliceOp>(y, s.getOffsetsAttr(), s.getSizesAttr(), s.getStridesAttr());
}

struct RopeOnPackedSlices : FusionPattern<RopeOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(RopeOp first, PatternRewriter &rw) const override {
    auto s0 = first.getInput().getDefiningOp<SliceOp>();
    if (!s0)
      return failure();
    Value mm = s0.getInput();
    auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
    if (failed(spec) || MIRBuilder::typeOf(mm).getRank() != 3)
      return failure();
    int64_t d = first.getHeadDim();
    // Every reader of the packed output is a column slice; the roped ones
    // (one use each, by a rope like `first`) tile a prefix [0, R).
    SmallVector<SliceOp> slices;
    SmallVector<std::pair<SliceOp, RopeOp>> roped;
    for (Operation *user : mm.getUsers()) {
      auto s = dyn_cast<SliceOp>(user);
      if (!s || !columnRange(s))
        return failure();
      slices.push_back(s);
      if (!s->hasOneUse())
        continue;
      auto r = dyn_cast<RopeOp>(*s->user_begin());
      if (r && r.getCos() == first.getCos() && r.getSin() == first.getSin() &&
          r.getHeadDim() == d && r.getRotaryDim() == first.getRotaryDim() &&
          r.getStyle() == first.getStyle())
        roped.push_back({s, r});
    }
    llvm::sort(roped, [](auto &a, auto &b) {
      return columnRange(a.first)->first < columnRange(b.first)->first;
    });
    int64_t covered = 0;
    for (auto &[s, r] : roped) {
      auto [off, size] = *columnRange(s);
      if (off != covered || size % d != 0)
        return failure();
      covered += size;
    }
    if (roped.empty() || covered == 0)
      return failure();
    // Unroped slices must lie past the roped prefix.
    for (SliceOp s : slices)
      if (!llvm::is_contained(llvm::make_first_range(roped), s) && columnRange(s)->first < covered)
        return failure();
    if (spec->ropeCos || spec->residual || (spec->headDim && *spec->headDim != d)) {
      miss(first, "unsupported epilogue: rope on a packed projection after rope or residual "
                  "stages");
      return failure();
    }
    spec->headDim = d;
    spec->ropeCos = first.getCos();
    spec->ropeSin = first.getSin();
    spec->ropeHeads = covered / d;
    spec->rotaryDim = first.getRotaryDim();
    spec->ropeStyle = first.getStyle();
    // The fused projection goes before the first rope (after its tables,
    // which may be computed after the projection); the other slices are
    // taken again there, so their readers must all come later.
    Operation *producer = mm.getDefiningOp();
    Block *block = producer->getBlock();
    Operation *ip = roped.front().second;
    for (auto &[s, r] : roped)
      if (r->getBlock() != block)
        return failure();
      else if (r->isBeforeInBlock(ip))
        ip = r;
    SmallVector<SliceOp> others;
    for (SliceOp s : slices) {
      if (llvm::is_contained(llvm::make_first_range(roped), s))
        continue;
      for (Operation *user : s->getUsers()) {
        Operation *at = ancestorIn(block, user);
        if (!at || !ip->isBeforeInBlock(at)) {
          miss(first, "no insertion point: a slice of the projection is read before the rope");
          return failure();
        }
      }
      others.push_back(s);
    }
    rw.setInsertionPoint(ip);
    MIRBuilder mb(rw, producer->getLoc());
    Value fused = mb.fusedMatmul(*spec);
    if (mb.failed() || !fused || fused.getType() != mm.getType()) {
      mb.discardUnused(&rw);
      return failure();
    }
    for (SliceOp s : others)
      rw.replaceOp(s, resliced(mb, fused, s));
    for (auto &[s, r] : roped) {
      rw.setInsertionPoint(r);
      MIRBuilder at(rw, r.getLoc());
      rw.replaceOp(r, resliced(at, fused, s));
      rw.eraseOp(s);
    }
    rw.eraseOp(producer);
    return success();
  }
};

struct GluOnPackedHalves : FusionPattern<MulOp> {
  using FusionPattern::FusionPattern;
  LogicalResult matchAndRewrite(MulOp mul, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Operation *act = mul->getOperand(i).getDefiningOp();
      auto kind = act ? activationOf(act) : std::nullopt;
      auto up = mul->getOperand(1 - i).getDefiningOp<SliceOp>();
      if (!kind || *kind == ActivationKind::Tanh || !up || !act->hasOneUse())
        continue;
      auto gate = act->getOperand(0).getDefiningOp<SliceOp>();
      if (!gate || gate.getInput() != up.getInput() || !gate->hasOneUse() || !up->hasOneUse())
        continue;
      Value mm = gate.getInput();
      auto g = columnRange(gate), u = columnRange(up);
      int64_t n = MIRBuilder::shapeOf(mm).back();
      if (!g || !u || g->first != 0 || u->first != g->second || 2 * g->second != n ||
          u->second != g->second) {
        miss(mul, "shape mismatch: the gate and up slices are not the first and second "
                  "halves of one projection's columns");
        continue;
      }
      auto spec = FusedMatmulSpec::of(mm.getDefiningOp());
      if (failed(spec))
        continue; // Not a matmul: nothing a report could name.
      if (spec->hasEpilogue() || spec->isNvfp4()) {
        miss(mul, "unsupported epilogue: the packed projection already has an epilogue "
                  "or NVFP4 weights");
        continue;
      }
      if (!mm.hasNUses(2)) {
        missMultiUse(mul, mm);
        continue;
      }
      spec->activation = *kind;
      spec->glu = true;
      Operation *producer = mm.getDefiningOp();
      MIRBuilder mb(rw, mul.getLoc());
      Value fused = mb.fusedMatmul(*spec);
      if (mb.failed() || !fused || fused.getType() != mul.getType()) {
        mb.discardUnused(&rw);
        continue;
      }
      rw.replaceOp(mul, fused);
      rw.eraseOp(act);
      rw.eraseOp(gate);
      rw.eraseOp(up);
      rw.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

} // namespace

void mlir::rlx::mir::populatePackedProjectionPatterns(RewritePatternSet &patterns,
                                                      FusionReport *report,
                                                      bool rope) {
  if (rope)
    patterns.add<RopeOnPackedSlices>(patterns.getContext(), report, "rlx-mir-fuse-rope");
  else
    patterns.add<GluOnPackedHalves>(patterns.getContext(), report, "rlx-mir-fuse-swiglu");
}
