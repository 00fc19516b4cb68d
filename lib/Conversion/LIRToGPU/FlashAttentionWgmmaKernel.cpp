//===- FlashAttentionWgmmaKernel.cpp - attention on sm_90a (wgmma, TMA) ---===//
//
// The forward kernel of FlashAttention-3 for bf16/f16 rlx_mir.attention and
// attention_partial on sm_90a (DESIGN §3 semantics, those of the mma.sync
// and SIMT kernels):
//
//  - One block per (tile of M = 64·C query rows, kv head, batch · kv split)
//    with C = 1 or 2 consumer warpgroups and one producer warpgroup. Tile
//    rows are (query, query head of the kv head's group) pairs: the TMA box
//    of Q spans the group's heads and M / group queries, query-major for
//    BSD/BSHD (row r: query r / group, head r % group) and head-major for
//    BHSD (row r: head r / (M / group), query r % (M / group)), so the
//    group's heads share every K/V tile (no K/V copies) and a decode step's
//    heads fill rows.
//  - The producer's elected thread loads Q once and streams K and V tiles of
//    N keys (128, or 64 for head dims above 128) through a ring of stages
//    with TMA (128-byte swizzle, 64-element column chunks, zero fill past
//    the tensor: keys past Sk are never read); full/empty mbarriers per
//    stage and operand.
//  - Consumer c owns rows 64c .. 64c + 63. S = Q·K(t)ᵀ is wgmma from shared
//    memory (K-major Q and K); P = softmax(S) stays in registers and
//    O += P·V(t) is the register-A wgmma with V MN-major in shared memory
//    (WgmmaRegisterA.h). Intra-warpgroup overlap as in FlashAttention-3:
//    S(t) and P(t-1)·V(t-1) are issued together, the softmax of S(t) runs
//    while the P·V product is in flight, then O is rescaled.
//  - Inter-warpgroup ping-pong with two consumers: named barriers 1 and 2
//    (256 threads) hand the issue of the GEMMs from one consumer to the
//    other, so one's softmax overlaps the other's tensor-core work.
//  - Online softmax in f32 in the exp2 domain (FlashLogits); tiles that
//    every row sees whole skip the per-element masks (wholeKeyTile), tiles
//    no row sees are never visited (visibleKeyTiles). A row that sees no
//    key writes 0; a split's LSE is -inf then.
//  - Registers: .maxnreg 168 for the 384 threads of two consumers, the
//    producer gives up to 24 (setmaxnreg) and the consumers take 240.
//
// Shared memory (dynamic, its base aligned to 1024 bytes at run time):
//   [Q: dChunks × M rows × 128 B] [stage s: K dChunks × N × 128 B,
//   V dvChunks × N × 128 B]... [mbarriers: Q, fullK, emptyK, fullV, emptyV]
// Matrix descriptors (PTX ISA): K-major Q and K, 128B swizzle, SBO 1024 (8
// rows), the k-th 16-column slice 32·k bytes into its 128-byte row; V is
// MN-major: a 16-key slice starts 16 rows further, LBO = N·128 bytes (the
// next 64 value columns), SBO 1024 (the next 8 keys).
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "RLX/Dialect/Common/IR/FlashTiles.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"
#include "RLX/Target/NVVM/WgmmaRegisterA.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using namespace mlir::rlx::gpu_kernels::attention;

namespace {

constexpr int64_t kWarpgroup = 128, kChunk = 64, kRowBytes = 128, kAlign = 1024;
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kProducerRegs = 24, kConsumerRegs = 240, kUniformRegs = 168;
constexpr unsigned kTurnBarrier = 1; // named barriers 1, 2: the consumers' turns

/// The kernel's geometry for one attention.
struct Plan {
  int64_t consumers = 1, rows = 64, keys = 128, queries = 64, stages = 2;
  int64_t dChunks = 1, dvChunks = 1;
  bool headMajor = false;
  int64_t qBytes = 0, kBytes = 0, vBytes = 0, stageBytes = 0, barOffset = 0, sharedBytes = 0;
};

/// Whether `v` is a kernel parameter of static shape whose layout TMA can
/// describe (2-byte elements): unit inner stride, every other stride and the
/// offset multiples of 8 elements (16 bytes).
bool tmaParameter(Value v, gpu::GPUFuncOp fn) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!arg || arg.getOwner() != &fn.getBody().front() || arg.getArgNumber() >= fn.getNumArguments() ||
      !t || !t.hasStaticShape() || t.getNumElements() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || strides.empty() || strides.back() != 1 ||
      ShapedType::isDynamic(offset) || offset % 8)
    return false;
  return llvm::all_of(ArrayRef<int64_t>(strides).drop_back(),
                      [](int64_t s) { return !ShapedType::isDynamic(s) && s % 8 == 0; });
}

std::string choosePlan(KernelContext &ctx, const AttentionOperands &a, Plan &p) {
  const AttentionShape &s = a.shape;
  p.headMajor = a.cfg.layout == AttnLayout::BHSD;
  FlashTiles tiles = wgmmaFlashTiles(s.sq * s.group, s.group, s.headDim, s.valueDim);
  p.rows = tiles.rows;
  p.consumers = p.rows / 64;
  p.queries = p.rows / s.group;
  p.keys = tiles.keys;
  p.dChunks = ceilDiv(s.headDim, kChunk);
  p.dvChunks = ceilDiv(s.valueDim, kChunk);
  p.qBytes = p.dChunks * p.rows * kRowBytes;
  p.kBytes = p.dChunks * p.keys * kRowBytes;
  p.vBytes = p.dvChunks * p.keys * kRowBytes;
  p.stageBytes = p.kBytes + p.vBytes;
  const int64_t limit = ctx.target.maxSharedMemoryPerBlock();
  for (int64_t stages : {4, 3, 2}) {
    int64_t bars = p.qBytes + stages * p.stageBytes;
    int64_t total = bars + 8 * (1 + 4 * stages) + kAlign;
    if (total > limit)
      continue;
    p.stages = stages;
    p.barOffset = bars;
    p.sharedBytes = total;
    return "";
  }
  return "its Q tile and two K/V stages exceed the " + std::to_string(limit) +
         " bytes of shared memory";
}

} // namespace

std::string attention::whyNoWgmmaAttention(KernelContext &ctx, const AttentionOperands &a) {
  if (std::string why = whyNoTensorCoreAttention(ctx, a, ctx.target.hasWgmma(),
                                                 ctx.target.chip + " has no wgmma (sm_90a only)");
      !why.empty())
    return why;
  const AttentionShape &s = a.shape;
  for (auto [name, size] : {std::pair<const char *, int64_t>{"head_dim", s.headDim},
                            {"the value head size", s.valueDim}})
    if (size % 16 != 0 || size < 64 || size > kMaxHeadDim)
      return std::string(name) + " " + std::to_string(size) +
             " is not a multiple of 16 from 64 to " + std::to_string(kMaxHeadDim);
  if (s.sq == 0 || s.sk == 0 || s.batch == 0)
    return "an empty query, key or batch";
  if (s.group > 128)
    return "a GQA group of " + std::to_string(s.group) + " query heads (at most 128: one tile)";
  assert(wgmmaFlashShapes(elementTypeOf(a.q), s.headDim, s.valueDim, s.group) &&
         "FlashTiles.h disagrees");
  for (Value m : {a.q, a.k, a.v})
    if (!tmaParameter(m, ctx.fn))
      return "its query, key or value is not a kernel parameter with 16-byte aligned rows "
             "(TMA)";
  if (s.batch * std::max<int64_t>(a.splits, 1) > 65535 || a.cfg.numKvHeads > 65535)
    return "more than 65535 batches · kv splits or kv heads";
  if (s.sq > (int64_t(1) << 31) || s.sk > (int64_t(1) << 31))
    return "sequences beyond 2^31 (TMA coordinates)";
  Plan p;
  return choosePlan(ctx, a, p);
}

FailureOr<LaunchConfig> attention::buildWgmmaAttention(KernelContext &ctx,
                                                       const AttentionOperands &a) {
  Plan p;
  if (std::string why = choosePlan(ctx, a, p); !why.empty())
    return unsupported(ctx, why);
  const AttentionConfig &cfg = a.cfg;
  const AttentionShape &shape = a.shape;
  KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
  Location loc = kb.loc;
  MLIRContext *mctx = kb.b.getContext();
  const int64_t splits = std::max<int64_t>(a.splits, 1);
  const int64_t d = shape.headDim, dv = shape.valueDim, sq = shape.sq,
                group = shape.group, n = p.keys, stages = p.stages;
  const int64_t tileRows = p.queries * group; // rows a TMA box fills
  Type et = elementTypeOf(a.q), f32 = kb.b.getF32Type(), i32 = kb.b.getI32Type(),
       i64 = kb.b.getI64Type();
  const bool bf16 = et.isBF16();

  LaunchConfig launch;
  launch.block = {kWarpgroup * (p.consumers + 1), 1, 1};
  launch.grid = {rowTiles(wgmmaFlashTiles(sq * group, group, d, dv), sq, group), cfg.numKvHeads,
                 shape.batch * splits};
  launch.dynamicSharedBytes = p.sharedBytes;

  // Tensor maps: operands as [B, S, H, D] (BSD's last dim split), or
  // [B, H, S, D] for BHSD; boxes of 64 columns.
  auto argOf = [](Value v) { return cast<BlockArgument>(v).getArgNumber(); };
  auto view = [&](Value m, int64_t heads, int64_t size) {
    SmallVector<int64_t> s(shapeOf(m));
    if (cfg.layout == AttnLayout::BSD)
      s = {s[0], s[1], heads, size};
    return s;
  };
  auto box = [&](int64_t seq, int64_t heads) -> SmallVector<int64_t> {
    return p.headMajor ? SmallVector<int64_t>{1, heads, seq, kChunk}
                       : SmallVector<int64_t>{1, seq, heads, kChunk};
  };
  Value qMap = ctx.addTensorMapParam(
      launch, {argOf(a.q), view(a.q, cfg.numHeads, d), box(p.queries, group), 3});
  Value kMap = ctx.addTensorMapParam(
      launch, {argOf(a.k), view(a.k, cfg.numKvHeads, d), box(n, 1), 3});
  Value vMap = ctx.addTensorMapParam(
      launch, {argOf(a.v), view(a.v, cfg.numKvHeads, dv), box(n, 1), 3});
  if (!qMap || !kMap || !vMap)
    return unsupported(ctx, "a kernel whose tensor-map parameters cannot be added");
  const bool reallocate = p.consumers == 2;
  // setmaxnreg needs a fixed per-thread maximum (PTX ISA): 168 × 384 threads
  // is the pool the setmaxnreg counts balance (24 + 2 · 240 = 3 · 168).
  if (reallocate)
    ctx.fn->setAttr("nvvm.maxnreg", kb.b.getI32IntegerAttr(kUniformRegs));

  Value base = kb.alignedDynamicShared(kAlign).base;
  auto qAt = [&](int64_t chunk) { return kb.add(base, kb.idx(chunk * p.rows * kRowBytes)); };
  auto kAt = [&](Value s, int64_t chunk) {
    return kb.add(base, kb.add(kb.idx(p.qBytes + chunk * n * kRowBytes),
                               kb.mul(s, kb.idx(p.stageBytes))));
  };
  auto vAt = [&](Value s, int64_t chunk) {
    return kb.add(kAt(s, 0), kb.idx(p.kBytes + chunk * n * kRowBytes));
  };
  auto bar = [&](Value index) {
    return kb.pointer(kb.add(base, kb.add(kb.idx(p.barOffset), kb.mul(index, kb.idx(8)))), 3);
  };
  Value fullQ = bar(kb.idx(0));
  auto fullK = [&](Value s) { return bar(kb.add(s, kb.idx(1))); };
  auto emptyK = [&](Value s) { return bar(kb.add(s, kb.idx(1 + stages))); };
  auto fullV = [&](Value s) { return bar(kb.add(s, kb.idx(1 + 2 * stages))); };
  auto emptyV = [&](Value s) { return bar(kb.add(s, kb.idx(1 + 3 * stages))); };
  auto toI32 = [&](Value v) { return arith::IndexCastOp::create(kb.b, loc, i32, v).getResult(); };

  FlashBlock blk = flashBlock(kb, a);
  Value tile = blk.tile, g = blk.kvHead, b = blk.batch, split = blk.split, kLo = blk.kLo,
        kHi = blk.kHi;
  Value i0 = kb.mul(tile, kb.idx(p.queries));
  Value iMin = i0, iMax = kb.minui(kb.add(i0, kb.idx(p.queries - 1)), kb.idx(sq - 1));
  Value tLo, tHi;
  std::tie(tLo, tHi) = visibleKeyTiles(kb, a, kLo, kHi, iMin, iMax, n);
  Value any = kb.ult(tLo, tHi);
  // Tile row r (< tileRows): its query and head.
  auto query = [&](Value r) {
    return kb.add(i0, p.headMajor ? kb.remui(r, kb.idx(p.queries)) : kb.divui(r, kb.idx(group)));
  };
  auto head = [&](Value r) {
    return kb.add(kb.mul(g, kb.idx(group)),
                  p.headMajor ? kb.divui(r, kb.idx(p.queries)) : kb.remui(r, kb.idx(group)));
  };
  // Stage and mbarrier phase of the n-th tile of the block.
  auto slot = [&](Value t) { return kb.ringSlot(kb.sub(t, tLo), stages); };
  Value ticks = kb.i32(1000000);
  auto waitParity = [&](Value barrier, Value phase) {
    NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, barrier, phase, ticks);
  };
  auto arrive = [&](Value barrier) {
    NVVM::MBarrierArriveOp::create(kb.b, loc, Type(), barrier, Value());
  };

  Value tid = kb.threadId();
  kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
    NVVM::MBarrierInitOp::create(kb.b, loc, fullQ, kb.i32(1), Value());
    for (int64_t s = 0; s < stages; ++s) {
      Value st = kb.idx(s);
      for (Value full : {fullK(st), fullV(st)})
        NVVM::MBarrierInitOp::create(kb.b, loc, full, kb.i32(1), Value());
      for (Value empty : {emptyK(st), emptyV(st)})
        NVVM::MBarrierInitOp::create(kb.b, loc, empty, kb.i32(kWarpgroup * p.consumers), Value());
    }
    NVVM::FenceMbarrierInitOp::create(kb.b, loc);
    if (ctx.target.ptx >= 83)
      for (Value map : {qMap, kMap, vMap})
        NVVM::FenceProxyAcquireOp::create(kb.b, loc, NVVM::MemScopeKind::SYS, map, kb.i32(128));
  });
  kb.barrier();
  // The warpgroup through shfl.sync.idx: provably uniform for ptxas.
  Value warpgroup = arith::IndexCastOp::create(
      kb.b, loc, kb.b.getIndexType(),
      gpu::ShuffleOp::create(kb.b, loc, toI32(kb.divui(tid, kb.idx(kWarpgroup))), kb.i32(0),
                             kb.i32(32), gpu::ShuffleMode::IDX)
          .getShuffleResult());

  // The producer: thread 0 of warpgroup 0 issues every TMA load.
  kb.ifThen(kb.eq(warpgroup, kb.idx(0)), [&] {
    if (reallocate)
      NVVM::SetMaxRegisterOp::create(kb.b, loc, kProducerRegs,
                                     NVVM::SetMaxRegisterAction::decrease);
    kb.ifThen(arith::AndIOp::create(kb.b, loc, kb.eq(tid, kb.idx(0)), any), [&] {
      auto load = [&](Value map, Value dst, Value col, Value seq, Value hd, Value barrier) {
        // Coordinates innermost first: (column, head, seq, batch), or
        // (column, seq, head, batch) head-major.
        SmallVector<Value> coords{toI32(col), toI32(p.headMajor ? seq : hd),
                                  toI32(p.headMajor ? hd : seq), toI32(b)};
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            kb.b, loc, kb.pointer(dst, 7), map, coords, barrier, ValueRange{}, Value(), Value(),
            NVVM::TMALoadMode::TILE, false, NVVM::CTAGroupKindAttr(), Value());
      };
      auto expect = [&](Value barrier, int64_t bytes) {
        NVVM::MBarrierArriveExpectTxOp::create(kb.b, loc, Type(), barrier, kb.i32(bytes),
                                               NVVM::MemScopeKind::CTA, false, Value());
      };
      expect(fullQ, p.dChunks * tileRows * kRowBytes);
      for (int64_t c = 0; c < p.dChunks; ++c)
        load(qMap, qAt(c), kb.idx(c * kChunk), i0, kb.mul(g, kb.idx(group)), fullQ);
      kb.forLoop(tLo, tHi, kb.idx(1), [&](Value t) {
        auto [s, phase] = slot(t);
        Value free = arith::XOrIOp::create(kb.b, loc, phase, kb.i32(1));
        Value j0 = kb.mul(t, kb.idx(n));
        waitParity(emptyK(s), free);
        expect(fullK(s), p.kBytes);
        for (int64_t c = 0; c < p.dChunks; ++c)
          load(kMap, kAt(s, c), kb.idx(c * kChunk), j0, g, fullK(s));
        waitParity(emptyV(s), free);
        expect(fullV(s), p.vBytes);
        for (int64_t c = 0; c < p.dvChunks; ++c)
          load(vMap, vAt(s, c), kb.idx(c * kChunk), j0, g, fullV(s));
      });
    });
  });

  // The consumers.
  kb.ifThen(kb.ult(kb.idx(0), warpgroup), [&] {
    if (reallocate)
      NVVM::SetMaxRegisterOp::create(kb.b, loc, kConsumerRegs,
                                     NVVM::SetMaxRegisterAction::increase);
    Value c = kb.sub(warpgroup, kb.idx(1));
    Value t128 = kb.remui(tid, kb.idx(kWarpgroup));
    Value lane = kb.remui(t128, kb.idx(32));
    Value gq = kb.divui(lane, kb.idx(4)), tq = kb.remui(lane, kb.idx(4));
    // This thread's rows (accumulator halves h = 0, 1) in the tile.
    Value row0 = kb.add(kb.mul(c, kb.idx(64)),
                        kb.add(kb.mul(kb.divui(t128, kb.idx(32)), kb.idx(16)), gq));
    Value rows[2] = {row0, kb.add(row0, kb.idx(8))};
    auto column = [&](int64_t e) { // accumulator element e's column
      return kb.add(kb.mul(tq, kb.idx(2)), kb.idx(8 * (e / 4) + e % 2));
    };

    // The consumers' turns (ping-pong): wait for this one's, hand it on.
    auto turnId = [&](Value cc) { return toI32(kb.add(cc, kb.idx(kTurnBarrier))); };
    Value other = kb.sub(kb.idx(1), c);
    auto takeTurn = [&] {
      if (reallocate)
        NVVM::BarrierOp::create(kb.b, loc, TypeRange{}, turnId(c), kb.i32(2 * kWarpgroup),
                                NVVM::BarrierReductionAttr(), Value());
    };
    auto passTurn = [&] {
      if (reallocate)
        NVVM::BarrierArriveOp::create(kb.b, loc, turnId(other), kb.i32(2 * kWarpgroup));
    };
    if (reallocate) // consumer 0 goes first
      kb.ifThen(kb.eq(c, kb.idx(1)), [&] {
        NVVM::BarrierArriveOp::create(kb.b, loc, turnId(kb.idx(0)), kb.i32(2 * kWarpgroup));
      });

    // wgmma pieces.
    auto wgType = bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    auto sType = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(n / 2, f32));
    auto oType = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(dv / 2, f32));
    // Descriptors advanced from the one of the shared base by 32-bit adds;
    // with a mask operand (whose loads need the registers: ptxas spilled
    // a head-dim-64 kernel) each built from its address.
    MatrixDescriptors desc(kb, base);
    auto descAt = [&](Value offset, int64_t layout) {
      return a.mask ? MatrixDescriptors::of(kb, kb.add(base, offset), layout)
                    : desc.at(offset, layout);
    };
    auto kOffset = [&](Value s, int64_t chunk) {
      return kb.add(kb.mul(s, kb.idx(p.stageBytes)), kb.idx(p.qBytes + chunk * n * kRowBytes));
    };

    // K-major, 128B swizzle: LBO 16 B (unused), SBO 1024 B. MN-major V:
    // LBO = the next 64 columns' chunk, SBO 1024 B.
    const int64_t kMajor = (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
    const int64_t mnMajor =
        (int64_t((n * kRowBytes) >> 4) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
    auto extract = [&](Value st, int64_t i) {
      return LLVM::ExtractValueOp::create(kb.b, loc, st, ArrayRef<int64_t>{i}).getResult();
    };
    // S = Q·K(t)ᵀ for this consumer's 64 rows, issued (not waited for).
    auto issueQK = [&](Value s) {
      Value acc = LLVM::UndefOp::create(kb.b, loc, sType);
      for (int64_t kk = 0; kk < d / 16; ++kk) {
        Value da = descAt(kb.add(kb.mul(c, kb.idx(64 * kRowBytes)),
                                  kb.idx((kk / 4) * p.rows * kRowBytes + (kk % 4) * 32)),
                           kMajor);
        Value db = descAt(kb.add(kOffset(s, kk / 4), kb.idx((kk % 4) * 32)), kMajor);
        acc = NVVM::WgmmaMmaAsyncOp::create(
            kb.b, loc, sType, acc, da, db, NVVM::MMAShapeAttr::get(mctx, 64, n, 16), wgType,
            wgType, NVVM::WGMMATypes::f32,
            kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
            NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
      }
      return acc;
    };
    // O += P·V(t): P's registers for keys 16ks .. 16ks + 15 are A.
    auto issuePV = [&](Value s, Value o, ArrayRef<Value> pRegs) {
      for (int64_t ks = 0; ks < n / 16; ++ks) {
        Value db = descAt(kb.add(kOffset(s, 0), kb.idx(p.kBytes + ks * 16 * kRowBytes)), mnMajor);
        o = nvvm::createWgmmaRegisterA(kb.b, loc, {dv, bf16, /*transB=*/true, /*scaleD=*/true}, o,
                                       pRegs.slice(ks * 4, 4), db);
      }
      return o;
    };
    auto fence = [&] { NVVM::WgmmaFenceAlignedOp::create(kb.b, loc); };
    auto commit = [&] { NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, loc); };
    auto waitGroups = [&](int64_t pending) {
      NVVM::WgmmaWaitGroupSyncOp::create(kb.b, loc, pending);
    };

    Value zero = kb.f32(0.0), ninf = kb.f32(-std::numeric_limits<double>::infinity());
    FlashLogits logits{kb, a, b, kLo, kHi};
    // Two f32 values rounded to the input type, packed as one b16x2 register.
    auto pack = [&](Value x, Value y) -> Value {
      Value pair = vector::FromElementsOp::create(kb.b, loc, VectorType::get({2}, et),
                                                  ValueRange{kb.convert(x, et), kb.convert(y, et)});
      return LLVM::BitcastOp::create(kb.b, loc, i32, pair);
    };
    // The online softmax of tile t's S (its accumulator elements) against
    // the running maxima m (log2 units) and sums l: new m, l, the rescale
    // factors alpha and P (f32, in S's accumulator layout).
    struct Softmax {
      SmallVector<Value> m, l, alpha, p;
    };
    // A tile every row sees whole yields the raw dots u and the factor
    // k = scale·log2 e (a plain scale: no softcap), else the logits and
    // k = 1: the row max is max(u)·k and P = exp2(u·k − m), one FFMA per
    // element (FlashAttention-3's folding of the scale into the exponent).
    // Only where keys are hidden, never shifted: no softcap (linearFactor)
    // and no additive mask.
    // Column limits are 32-bit: lengths and windows below 2^30. A factor
    // that is not a normal f32 would make max(u)·k a NaN or lose the order.
    const bool boolMask = a.mask && elementTypeOf(a.mask).isInteger(1);
    const int64_t limit = int64_t(1) << 30;
    const bool small = a.shape.sq < limit && a.shape.sk < limit &&
                       (!a.cfg.window || *a.cfg.window < limit);
    std::optional<double> linear =
        (!a.mask || boolMask) && small ? logits.linearFactor() : std::optional<double>();
    if (linear && !std::isnormal(static_cast<float>(*linear)))
      linear.reset();
    auto softmax = [&](ArrayRef<Value> sAcc, Value t, ArrayRef<Value> m, ArrayRef<Value> l) {
      const int64_t count = n / 2;
      SmallVector<Type> types(linear ? count + 1 : count, f32);
      auto ifOp = scf::IfOp::create(kb.b, loc, types,
                                    wholeKeyTile(kb, a, kLo, kHi, iMin, iMax, t, n), true);
      {
        OpBuilder::InsertionGuard guard(kb.b);
        kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        SmallVector<Value> v;
        for (int64_t e = 0; e < count; ++e)
          v.push_back(linear ? sAcc[e] : logits.scaled(sAcc[e]));
        if (linear)
          v.push_back(kb.f32(*linear));
        scf::YieldOp::create(kb.b, loc, v);
        kb.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        v.clear();
        Value j0 = kb.mul(t, kb.idx(n));
        Value rc[2];
        for (int h = 0; h < 2; ++h)
          rc[h] = kb.minui(rows[h], kb.idx(tileRows - 1));
        Value qi[2] = {kb.minui(query(rc[0]), kb.idx(sq - 1)), kb.minui(query(rc[1]), kb.idx(sq - 1))};
        Value hd[2] = {head(rc[0]), head(rc[1])};
        if (linear) {
          // Keys are only hidden (bounds: causal / sliding window,
          // [kLo, kHi); a boolean mask), never shifted: the raw dot or -inf.
          // As FlashAttention-3's column limits, each row's bounds are a
          // range of this thread's column offsets 8(e/4) + e%2 from
          // j0 + 2·tq, so a bound costs one compare with an immediate.
          Value colBase = toI32(kb.add(j0, kb.mul(tq, kb.idx(2))));
          auto rel = [&](Value x) { return arith::SubIOp::create(kb.b, loc, x, colBase).getResult(); };
          auto smin = [&](Value x, Value y) { return arith::MinSIOp::create(kb.b, loc, x, y).getResult(); };
          auto smax = [&](Value x, Value y) { return arith::MaxSIOp::create(kb.b, loc, x, y).getResult(); };
          Value last[2], first[2] = {Value(), Value()};
          for (int h = 0; h < 2; ++h) {
            last[h] = rel(toI32(kb.sub(kHi, kb.idx(1))));
            if (a.splits > 1)
              first[h] = rel(toI32(kLo));
            if (a.cfg.maskKind != MaskKind::None) {
              attention_logits::KeyRange r = attention_logits::causalKeyRange(
                  kb.b, loc, a.cfg.window, toI32(qi[h]), a.shape.sk - a.shape.sq,
                  a.cfg.maskKind == MaskKind::Chunked);
              last[h] = smin(last[h], rel(r.last));
              if (r.first)
                first[h] = first[h] ? smax(first[h], rel(r.first)) : rel(r.first);
            }
          }
          for (int64_t e = 0; e < count; ++e) {
            int64_t h = (e % 4) / 2;
            Value col = kb.i32(8 * (e / 4) + e % 2);
            Value visible = arith::CmpIOp::create(kb.b, loc, arith::CmpIPredicate::sle, col, last[h]);
            if (first[h])
              visible = arith::AndIOp::create(
                  kb.b, loc, visible,
                  arith::CmpIOp::create(kb.b, loc, arith::CmpIPredicate::sge, col, first[h]));
            if (boolMask)
              visible = arith::AndIOp::create(
                  kb.b, loc, visible,
                  loadMask(kb, a.mask, b, hd[h], qi[h],
                           kb.minui(kb.add(j0, column(e)), kb.idx(a.shape.sk - 1))));
            v.push_back(kb.select(visible, sAcc[e], ninf));
          }
          v.push_back(kb.f32(*linear));
        } else {
          for (int64_t e = 0; e < count; ++e) {
            int64_t h = (e % 4) / 2;
            v.push_back(logits.masked(sAcc[e], qi[h], hd[h], kb.add(j0, column(e))));
          }
        }
        scf::YieldOp::create(kb.b, loc, v);
      }
      SmallVector<Value> s(ifOp.getResults().take_front(count));
      Value k = linear ? ifOp.getResults().back() : Value();
      Softmax out;
      SmallVector<Value> mx{ninf, ninf}, safe(2), negSafe(2), sum{zero, zero};
      for (int64_t e = 0; e < count; ++e)
        mx[(e % 4) / 2] = kb.combine(Combine::Max, mx[(e % 4) / 2], s[e]);
      for (int h = 0; h < 2; ++h) {
        for (int64_t off : {1, 2}) // the quad that holds the row
          mx[h] = kb.combine(Combine::Max, mx[h], kb.shuffleXor(mx[h], off));
        // k > 0: max(u)·k is the max of the logits u·k (rounding is monotone).
        Value mNew = kb.combine(Combine::Max, m[h], k ? kb.mul(mx[h], k) : mx[h]);
        // exp2(x - m) with m = 0 while the row has seen no key (all -inf).
        safe[h] = kb.select(kb.eq(mNew, ninf), zero, mNew);
        negSafe[h] = arith::NegFOp::create(kb.b, loc, safe[h]);
        out.alpha.push_back(kb.exp2Approx(kb.sub(m[h], safe[h])));
        out.m.push_back(mNew);
      }
      for (int64_t e = 0; e < count; ++e) {
        int64_t h = (e % 4) / 2;
        s[e] = kb.exp2Approx(k ? kb.fma(s[e], k, negSafe[h]) : kb.sub(s[e], safe[h]));
        sum[h] = kb.add(sum[h], s[e]);
      }
      for (int h = 0; h < 2; ++h)
        out.l.push_back(kb.add(kb.mul(l[h], out.alpha[h]), sum[h]));
      out.p = s;
      return out;
    };
    // P's A registers: keys 16ks .. 16ks + 15 are accumulator elements
    // 8ks .. 8ks + 7, in pairs.
    auto packP = [&](ArrayRef<Value> p) {
      SmallVector<Value> regs;
      for (size_t e = 0; e < p.size(); e += 2)
        regs.push_back(pack(p[e], p[e + 1]));
      return regs;
    };
    // The elements of an accumulator, fenced: read only after the wait
    // that precedes this.
    auto fenced = [&](Value acc, int64_t count) {
      SmallVector<Value> v;
      for (int64_t e = 0; e < count; ++e)
        v.push_back(extract(acc, e));
      return nvvm::fenceWgmmaOperands(kb.b, loc, v);
    };
    auto rescale = [&](ArrayRef<Value> o, ArrayRef<Value> alpha) {
      Value acc = LLVM::UndefOp::create(kb.b, loc, oType);
      for (int64_t e = 0; e < dv / 2; ++e)
        acc = LLVM::InsertValueOp::create(kb.b, loc, acc, kb.mul(o[e], alpha[(e % 4) / 2]),
                                          ArrayRef<int64_t>{e});
      return acc;
    };

    // Carried through the key tiles: m[2], l[2], O, P(t - 1)'s registers.
    SmallVector<Value> result = kb.ifElse(
        any,
        [&]() -> SmallVector<Value> {
          Value oZero = LLVM::UndefOp::create(kb.b, loc, oType);
          for (int64_t e = 0; e < dv / 2; ++e)
            oZero = LLVM::InsertValueOp::create(kb.b, loc, oZero, zero, ArrayRef<int64_t>{e});
          NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, fullQ, kb.i32(0), ticks);
          // The first tile.
          auto [s0, ph0] = slot(tLo);
          // The data first, then the turn (a consumer waiting for TMA does
          // not hold the other back).
          waitParity(fullK(s0), ph0);
          takeTurn();
          fence();
          Value sAcc = issueQK(s0);
          commit();
          passTurn();
          waitGroups(0);
          SmallVector<Value> s0Vals = fenced(sAcc, n / 2);
          arrive(emptyK(s0));
          Softmax first = softmax(s0Vals, tLo, {ninf, ninf}, {zero, zero});
          // O starts at 0, before any wgmma.fence (zeroing it between a
          // fence and the wgmma would make ptxas inject a warpgroup.arrive).
          SmallVector<Value> inits{first.m[0], first.m[1], first.l[0], first.l[1], oZero};
          inits.append(packP(first.p));
          SmallVector<Value> state = kb.forLoop(
              kb.add(tLo, kb.idx(1)), tHi, kb.idx(1), inits,
              [&](Value t, ValueRange carried) -> SmallVector<Value> {
                auto [s, phase] = slot(t);
                Value prev = kb.sub(t, kb.idx(1));
                auto [sPrev, phPrev] = slot(prev);
                waitParity(fullK(s), phase);
                waitParity(fullV(sPrev), phPrev);
                takeTurn();
                fence();
                Value sNew = issueQK(s);
                commit();
                SmallVector<Value> pRegs(carried.begin() + 5, carried.end());
                Value o = issuePV(sPrev, carried[4], pRegs);
                commit();
                passTurn();
                waitGroups(1); // S(t) is done, P(t - 1)·V(t - 1) may not be
                SmallVector<Value> sVals = fenced(sNew, n / 2);
                arrive(emptyK(s));
                Softmax next = softmax(sVals, t, {carried[0], carried[1]}, {carried[2], carried[3]});
                waitGroups(0);
                // P(t) replaces P(t - 1)'s registers and O is rescaled only
                // now that the P·V product is done.
                SmallVector<Value> oVals = fenced(o, dv / 2);
                SmallVector<Value> p = nvvm::fenceWgmmaOperands(kb.b, loc, next.p);
                arrive(emptyV(sPrev));
                SmallVector<Value> out{next.m[0], next.m[1], next.l[0], next.l[1],
                                       rescale(oVals, next.alpha)};
                out.append(packP(p));
                return out;
              });
          // The last tile's P·V.
          Value last = kb.sub(tHi, kb.idx(1));
          auto [sLast, phLast] = slot(last);
          waitParity(fullV(sLast), phLast);
          takeTurn();
          fence();
          SmallVector<Value> pRegs(state.begin() + 5, state.end());
          Value o = issuePV(sLast, state[4], pRegs);
          commit();
          passTurn();
          waitGroups(0);
          // Released although nothing reloads it: every stage's phases
          // stay balanced.
          arrive(emptyV(sLast));
          SmallVector<Value> oVals = fenced(o, dv / 2);
          Value acc = LLVM::UndefOp::create(kb.b, loc, oType);
          for (int64_t e = 0; e < dv / 2; ++e)
            acc = LLVM::InsertValueOp::create(kb.b, loc, acc, oVals[e], ArrayRef<int64_t>{e});
          return {state[0], state[1], state[2], state[3], acc};
        },
        ValueRange{ninf, ninf, zero, zero, LLVM::UndefOp::create(kb.b, loc, oType)});

    // O / l per row (the quad's partial sums), 0 for a row with no visible
    // key; a split's natural-log LSE (m + log2 l)·ln 2.
    for (int h = 0; h < 2; ++h) {
      Value l = result[2 + h];
      for (int64_t off : {1, 2})
        l = kb.add(l, kb.shuffleXor(l, off));
      Value r = rows[h];
      Value rc = kb.minui(r, kb.idx(tileRows - 1));
      Value i = query(rc), hd = head(rc);
      Value valid = arith::AndIOp::create(kb.b, loc, kb.ult(r, kb.idx(tileRows)),
                                          kb.ult(i, kb.idx(sq)));
      kb.ifThen(valid, [&] {
        Value empty = kb.eq(l, zero);
        Value inv = kb.select(empty, zero, kb.fdiv(kb.f32(1.0), l));
        for (int64_t e = 0; e < dv / 2; ++e) {
          if ((e % 4) / 2 != h)
            continue;
          Value o = kb.select(empty, zero, kb.mul(extract(result[4], e), inv));
          if (a.splits)
            kb.store(o, a.partial, {split, b, hd, i, column(e)});
          else
            kb.store(kb.convert(o, et), a.out,
                     position(kb, cfg.layout, b, i, hd, column(e), dv));
        }
        if (a.splits)
          kb.ifThen(kb.eq(tq, kb.idx(0)), [&] {
            Value lse = kb.mul(kb.add(result[h], math::Log2Op::create(kb.b, loc, l)),
                               kb.f32(0.6931471805599453));
            kb.store(kb.select(empty, ninf, lse), a.lse, {split, b, hd, i});
          });
      });
    }
  });
  return launch;
}
