//===- WgmmaKernel.cpp - The sm_90a fused_matmul main loop ------------------===//
//
// TMA loads, an mbarrier pipeline and warpgroup MMA (wgmma) from shared
// memory, warp-specialized:
//  - warpgroup 0 is the producer: one thread waits for a free stage
//    (empty[s]), announces its bytes (arrive.expect_tx on full[s]) and
//    issues the TMA loads of the stage's A [tm × 64] and B [tn × 64] boxes
//    (and the GLU up half), 128-byte swizzled, rows past the tensor
//    zero-filled by the TMA unit;
//  - warpgroups 1.. are consumers, 64 rows each: wait for full[s], issue
//    4 wgmma m64nTNk16 per 64-deep stage (f32 accumulators in registers),
//    commit, wait until at most one group is in flight and release the
//    previous stage (every consumer thread arrives on empty[s']);
//  - a norm prologue: the A box lands on raw[s] instead; the 128 producer
//    threads normalize it in place (row statistics computed before, in
//    f32), round it to the input type, fence it for the async proxy and
//    arrive on full[s] (which counts them, the issuing arrival and B's
//    bytes);
//  - with two consumers the producer gives registers up (setmaxnreg 40, 96
//    when it normalizes) and the consumers take them (232, 200); both
//    return to 168 for the epilogue, which every thread runs.
// The accumulators then go through bias, activation or GLU into the shared
// f32 tile Cs, and the epilogue of MatmulKernels.cpp (head norm, RoPE,
// residual, one rounding) writes the output. Stage s of the ring's k-tile g
// is g % stages, in mbarrier phase (g / stages) % 2; a fresh mbarrier
// reports its phase "-1" (parity 1) complete, so the producer's first
// waits pass.
//
// Without a producer transform the grid is persistent: min(tiles, SMs)
// blocks, block b taking tiles b, b + grid, ... (along N first). The ring
// runs on across a block's tiles (its i-th tile's k-tiles are g = i·kTiles
// ..), the consumers release the last stage of each tile too, and the
// producer thread issues the next tile's first min(stages, kTiles) k-tiles
// as soon as their stages are free, so they land while every thread runs
// this tile's epilogue.
//
// Everything lives in dynamic shared memory, its base aligned at run time
// to 1024 bytes (the 128-byte swizzle repeats every 8 rows of 128 bytes):
//   [ring: stages × (A | B | B_up)] [Cs] [head statistics] [full | empty]
// Matrix descriptors (PTX ISA, "Matrix Descriptor Format"): start address
// >> 4, leading byte offset 16 (unused with swizzling), stride byte offset
// 1024 (between 8-row core-matrix groups), swizzle mode 1 (128B); the k-th
// 16-element slice of a stage starts 32·k bytes further, inside the
// swizzle row, as the hardware's address swizzle expects.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using namespace mlir::rlx::gpu_kernels::matmul;

namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kBk = 64;             // K elements per stage (128 bytes of 16-bit values)
constexpr int64_t kRowBytes = kBk * 2;  // one swizzled row
constexpr int64_t kAlign = 1024;        // the 128-byte swizzle's period
// Cs rows are padded by 8 floats: a warp's 64-bit accumulator stores cover
// 8 rows × 32 bytes, which a 512-byte row stride puts on the same 8 banks
// (8-way conflicts); 32 bytes more per row spread them over all 32 banks
// (2 wavefronts for 256 bytes, the minimum).
constexpr int64_t kCsPad = 8;
constexpr int64_t kProducerRegs = 40, kConsumerRegs = 232, kUniformRegs = 168;
// With a norm prologue the producer warpgroup normalizes A tiles too.
constexpr int64_t kNormProducerRegs = 96, kNormConsumerRegs = 200;

/// Whether `v` is a parameter of the kernel with the identity layout (a TMA
/// tensor map describes a whole, dense buffer).
bool denseParameter(Value v, gpu::GPUFuncOp fn) {
  auto a = dyn_cast<BlockArgument>(v);
  auto t = dyn_cast<MemRefType>(v.getType());
  return a && a.getOwner() == &fn.getBody().front() && a.getArgNumber() < fn.getNumArguments() &&
         t && t.getLayout().isIdentity() && t.hasStaticShape();
}

} // namespace

std::string GemmBuilder::whyNoWgmma() {
  if (std::string why = whyNoTensorCoreOperands(ctx.target.hasWgmma(),
                                                ctx.target.chip + " has no wgmma (sm_90a only)",
                                                /*nvfp4Weights=*/true);
      !why.empty())
    return why;
  if (!p.transB || shapeOf(p.rhs).size() != 2)
    return p.nvfp4() ? "its NVFP4 weight is not in NVIDIA's [N, K/2] layout"
                     : "its weight is not a K-major [N, K] matrix";
  if (p.nvfp4() && p.k % 32 != 0)
    return "an NVFP4 weight with K = " + std::to_string(p.k) +
           " (TMA rows of packed codes must be a multiple of 16 bytes)";
  if (p.transA || p.batches != 1 || (!p.fused && shapeOf(p.lhs).size() != 2))
    return "a batched or transposed-A matmul";
  if (shapeOf(p.lhs).size() < 2)
    return "a single-row lhs";
  if (p.k == 0 || p.k % 8 != 0)
    return "K = " + std::to_string(p.k) + " (TMA rows must be a positive multiple of 16 bytes)";
  if (!denseParameter(p.lhs, ctx.fn) || !denseParameter(p.rhs, ctx.fn))
    return "operands that are not dense kernel parameters";
  int64_t n = p.headStages() ? tn : 128, sets = p.glu ? 2 : 1;
  if (n % 8 != 0 || n * sets > 256)
    return "a tile width of " + std::to_string(n) + (p.glu ? " with GLU" : "") +
           " (wgmma tiles: multiples of 8, at most 256 accumulator columns)";
  int64_t limit = ctx.target.maxSharedMemoryPerBlock();
  for (int64_t consumers : {2, 1}) {
    if (consumers == 2 && p.rows <= 64)
      continue;
    int64_t m = 64 * consumers;
    // An NVFP4 weight also stages its packed codes (32 bytes per row).
    int64_t stage = (m + sets * n) * kRowBytes + (p.nvfp4() ? sets * n * kBk / 2 : 0);
    for (int64_t stages : {4, 3}) {
      int64_t cs = stages * stage, head = cs + m * (n + kCsPad) * 4, bars = head + m * 4;
      bars = (bars + 7) / 8 * 8;
      // full, empty (and raw: A or packed B landed, not yet transformed)
      // per stage.
      int64_t total = bars + (producerTransforms() ? 3 : 2) * stages * 8 + kAlign;
      // The row statistics are static workgroup buffers.
      int64_t statistics = p.norm ? (p.normKind == NormKind::LayerNorm ? 2 : 1) * m * 4 : 0;
      if (total + statistics > limit)
        continue;
      tn = n;
      tm = m;
      wgConsumers = consumers;
      wgStages = stages;
      wgStageBytes = stage;
      wgCsOffset = cs;
      wgHeadOffset = head;
      wgBarOffset = bars;
      wgSharedBytes = total;
      threads = kWarpgroup * (consumers + 1);
      return "";
    }
  }
  return "its tiles exceed the " + std::to_string(limit) + " bytes of shared memory";
}

LogicalResult GemmBuilder::wgmmaSetup(LaunchConfig &launch) {
  MLIRContext *mctx = kb.b.getContext();
  launch.dynamicSharedBytes = wgSharedBytes;
  // Persistent where the producer only issues TMA loads: one block per SM
  // at most (the ring and Cs take most of its shared memory), each looping
  // over tiles with the next tile's first stages in flight during the
  // epilogue.
  wgPersistent = !producerTransforms();
  if (wgPersistent) {
    wgTilesN = ceilDiv(p.cols, tn);
    wgTilesM = ceilDiv(p.rows, tm);
    wgGrid = std::min<int64_t>(wgTilesN * wgTilesM, ctx.target.smCount());
    launch.grid = {wgGrid, 1, 1};
  }
  auto arg = [](Value v) { return cast<BlockArgument>(v).getArgNumber(); };
  // A as [rows, K] (leading dimensions collapsed), B as [N (· 2 for GLU), K].
  wgMapA = ctx.addTensorMapParam(launch, {arg(p.lhs), {p.rows, p.k}, {tm, kBk}, 3});
  // An NVFP4 weight: its packed codes [N, K/2] as 32-byte boxes, unswizzled
  // (the producer reads them, dequantizes and writes the swizzled B tile).
  wgMapB = p.nvfp4() ? ctx.addTensorMapParam(
                           launch, {arg(p.rhs), SmallVector<int64_t>(shapeOf(p.rhs)), {tn, kBk / 2}, 0})
                     : ctx.addTensorMapParam(
                           launch, {arg(p.rhs), SmallVector<int64_t>(shapeOf(p.rhs)), {tn, kBk}, 3});
  if (!wgMapA || !wgMapB)
    return unsupported(ctx, "a kernel whose tensor-map parameters cannot be added");
  auto smem = gpu::AddressSpaceAttr::get(mctx, gpu::AddressSpace::Workgroup);
  KernelBuilder::AlignedShared shared = kb.alignedDynamicShared(kAlign);
  Value dyn = shared.memory, pad = shared.pad;
  wgBase = shared.base;
  auto view = [&](int64_t offset, ArrayRef<int64_t> shape) -> Value {
    return memref::ViewOp::create(kb.b, kb.loc,
                                  MemRefType::get(shape, acc, MemRefLayoutAttrInterface(), smem),
                                  dyn, kb.add(pad, kb.idx(offset)), ValueRange{});
  };
  // Cs: [tm, tn] of a [tm, tn + kCsPad] buffer.
  cs = memref::SubViewOp::create(kb.b, kb.loc, view(wgCsOffset, {tm, tn + kCsPad}),
                                 ArrayRef<OpFoldResult>{kb.b.getIndexAttr(0), kb.b.getIndexAttr(0)},
                                 ArrayRef<OpFoldResult>{kb.b.getIndexAttr(tm), kb.b.getIndexAttr(tn)},
                                 ArrayRef<OpFoldResult>{kb.b.getIndexAttr(1), kb.b.getIndexAttr(1)});
  if (p.headNormWeight)
    headRstd = view(wgHeadOffset, {tm});
  return success();
}

void GemmBuilder::wgmmaMainLoop() {
  MLIRContext *mctx = kb.b.getContext();
  Location loc = kb.loc;
  Type i32 = kb.b.getI32Type(), i64 = kb.b.getI64Type(), f32 = kb.b.getF32Type();
  const int64_t stages = wgStages, sets = p.glu ? 2 : 1, kTiles = ceilDiv(p.k, kBk);
  // setmaxnreg per tile would keep the tile loop's values within the
  // producer's 40 registers: a persistent kernel keeps 168 everywhere.
  const bool reallocate = wgConsumers == 2 && !wgPersistent;
  auto toI32 = [&](Value v) { return arith::IndexCastOp::create(kb.b, loc, i32, v).getResult(); };
  auto pointer = [&](Value address, unsigned space) -> Value {
    Value a = arith::IndexCastOp::create(kb.b, loc, i64, address);
    return LLVM::IntToPtrOp::create(kb.b, loc, LLVM::LLVMPointerType::get(mctx, space), a);
  };
  auto barrierAt = [&](Value index) {
    return pointer(kb.add(wgBase, kb.add(kb.idx(wgBarOffset), kb.mul(index, kb.idx(8)))), 3);
  };
  auto full = [&](Value s) { return barrierAt(s); };
  auto empty = [&](Value s) { return barrierAt(kb.add(s, kb.idx(stages))); };
  auto raw = [&](Value s) { return barrierAt(kb.add(s, kb.idx(2 * stages))); };
  auto stageAddress = [&](Value s, int64_t offset) {
    return kb.add(wgBase, kb.add(kb.mul(s, kb.idx(wgStageBytes)), kb.idx(offset)));
  };
  const bool transform = producerTransforms();
  const int64_t producerRegs = transform ? kNormProducerRegs : kProducerRegs;
  const int64_t consumerRegs = transform ? kNormConsumerRegs : kConsumerRegs;
  auto setMaxRegisters = [&](int64_t regs, NVVM::SetMaxRegisterAction action) {
    if (reallocate)
      NVVM::SetMaxRegisterOp::create(kb.b, loc, regs, action);
  };
  // setmaxnreg needs the kernel compiled for a fixed per-thread maximum
  // (PTX ISA): 168 × 384 threads is the pool the setmaxnreg counts balance.
  if (reallocate)
    ctx.fn->setAttr("nvvm.maxnreg", kb.b.getI32IntegerAttr(kUniformRegs));
  Value tid = kb.threadId();
  // The warpgroup index read from lane 0 (shfl.sync.idx): provably uniform
  // for ptxas, which otherwise treats the role branches as divergent and
  // serializes the wgmmas behind them (C7520).
  Value warpgroup = arith::IndexCastOp::create(
      kb.b, loc, kb.b.getIndexType(),
      gpu::ShuffleOp::create(kb.b, loc, toI32(kb.divui(tid, kb.idx(kWarpgroup))), kb.i32(0),
                             kb.i32(32), gpu::ShuffleMode::IDX)
          .getShuffleResult());
  Value ticks = kb.i32(1000000);
  // `v` read from lane 0 (shfl.sync.idx): provably warp-uniform for ptxas,
  // which then keeps what derives from it in uniform registers.
  auto uniform = [&](Value v) -> Value {
    return arith::IndexCastOp::create(
        kb.b, loc, kb.b.getIndexType(),
        gpu::ShuffleOp::create(kb.b, loc, toI32(v), kb.i32(0), kb.i32(32), gpu::ShuffleMode::IDX)
            .getShuffleResult());
  };
  // Stage and phase of the ring's k-tile g.
  auto slot = [&](Value g) { return kb.ringSlot(g, stages); };
  // The (n0, m0) of tile t of a persistent grid: along N first.
  auto tileOrigin = [&](Value t) -> std::pair<Value, Value> {
    return {kb.mul(kb.remui(t, kb.idx(wgTilesN)), kb.idx(tn)),
            kb.mul(kb.divui(t, kb.idx(wgTilesN)), kb.idx(tm))};
  };

  // One thread initializes the barriers: full[s] completes on the
  // producer's arrival plus the stage's TMA bytes (and, when the producer
  // transforms the stage, every producer thread's arrival once it
  // normalized its part of A or dequantized its rows of B, whose inputs
  // landed on raw[s]), empty[s] on every consumer thread's.
  kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
    for (int64_t s = 0; s < stages; ++s) {
      NVVM::MBarrierInitOp::create(kb.b, loc, full(kb.idx(s)),
                                   kb.i32(transform ? 1 + kWarpgroup : 1), Value());
      NVVM::MBarrierInitOp::create(kb.b, loc, empty(kb.idx(s)), kb.i32(kWarpgroup * wgConsumers),
                                   Value());
      if (transform)
        NVVM::MBarrierInitOp::create(kb.b, loc, raw(kb.idx(s)), kb.i32(1), Value());
    }
    // The initialized barriers visible to the TMA unit's complete_tx, and
    // (PTX 8.3+, which has the fence) the tensor maps the host copied to
    // global memory acquired by the tensormap proxy before their first use.
    NVVM::FenceMbarrierInitOp::create(kb.b, loc);
    if (ctx.target.ptx >= 83)
      for (Value map : {wgMapA, wgMapB})
        NVVM::FenceProxyAcquireOp::create(kb.b, loc, NVVM::MemScopeKind::SYS, map, kb.i32(128));
  });
  kb.barrier();

  // Thread 0 of the producer issues k-tile kt of the tile at (tileN0,
  // tileM0), the ring's k-tile g, once the consumers freed its stage: what
  // the producer transforms lands on raw[s], the rest on full[s].
  const int64_t aBytes = tm * kRowBytes, bBytes = sets * tn * kRowBytes,
                qBytes = p.nvfp4() ? sets * tn * kBk / 2 : 0, bOffset = tm * kRowBytes,
                qOffset = (tm + sets * tn) * kRowBytes;
  auto issue = [&](Value g, Value kt, Value tileN0, Value tileM0) {
    auto [s, phase] = slot(g);
    Value k0 = toI32(kb.mul(kt, kb.idx(kBk)));
    // NVFP4 codes: two per byte along K.
    Value kq = toI32(kb.mul(kt, kb.idx(kBk / 2)));
    auto load = [&](Value map, int64_t offset, Value row, Value bar, Value inner) {
      Value dst = pointer(stageAddress(s, offset), 7);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          kb.b, loc, dst, map, ValueRange{inner, toI32(row)}, bar, ValueRange{}, Value(), Value(),
          NVVM::TMALoadMode::TILE, false, NVVM::CTAGroupKindAttr(), Value());
    };
    auto expect = [&](Value bar, int64_t bytes) {
      NVVM::MBarrierArriveExpectTxOp::create(kb.b, loc, Type(), bar, kb.i32(bytes),
                                             NVVM::MemScopeKind::CTA, false, Value());
    };
    Value other = arith::XOrIOp::create(kb.b, loc, phase, kb.i32(1));
    NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, empty(s), other, ticks);
    if (transform)
      expect(raw(s), (p.norm ? aBytes : 0) + qBytes);
    expect(full(s), (p.norm ? 0 : aBytes) + (p.nvfp4() ? 0 : bBytes));
    load(wgMapA, 0, tileM0, p.norm ? raw(s) : full(s), k0);
    for (int64_t half = 0; half < sets; ++half) {
      Value row = half ? kb.add(tileN0, kb.idx(p.cols)) : tileN0;
      if (p.nvfp4())
        load(wgMapB, qOffset + half * tn * kBk / 2, row, raw(s), kq);
      else
        load(wgMapB, bOffset + half * tn * kRowBytes, row, full(s), k0);
    }
    return s;
  };
  // A persistent block issues the first `prefetch` k-tiles of its next
  // tile right after this one's, so they land while the epilogue runs.
  // (Issuing the first tile's before the tile loop instead of in it made
  // ptxas move the consumers' descriptors out of uniform registers: 42 ->
  // 59 SASS per k-tile.)
  const int64_t prefetch = wgPersistent ? std::min(stages, kTiles) : 0;
  // One tile: the ring's k-tiles base .. base + kTiles - 1; with a next
  // tile (persistent), its first k-tiles at (nextN0, nextM0) after them.
  auto mainLoop = [&](Value base, Value hasNext, Value nextN0, Value nextM0) {
  // The producer warpgroup.
  kb.ifThen(kb.eq(warpgroup, kb.idx(0)), [&] {
    setMaxRegisters(producerRegs, NVVM::SetMaxRegisterAction::decrease);
    // A block's first tile issues all its k-tiles, the later ones those
    // past the prefetched ones.
    Value from = prefetch ? kb.select(kb.eq(base, kb.idx(0)), kb.idx(0), kb.idx(prefetch))
                          : kb.idx(0);
    kb.forLoop(from, kb.idx(kTiles), kb.idx(1), [&](Value kt) {
      Value g = kb.add(base, kt);
      Value s;
      kb.ifThen(kb.eq(tid, kb.idx(0)), [&] { issue(g, kt, n0, m0); });
      if (!transform)
        return;
      Value phase;
      std::tie(s, phase) = slot(g);
      NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, raw(s), phase, ticks);
      if (p.nvfp4())
        wgmmaDequantizeB(s, kt, stageAddress(s, qOffset), stageAddress(s, bOffset));
      if (!p.norm) {
        NVVM::FenceProxyOp::create(
            kb.b, loc, NVVM::ProxyKindAttr::get(mctx, NVVM::ProxyKind::async_shared),
            NVVM::SharedSpaceAttr::get(mctx, NVVM::SharedSpace::shared_cta));
        NVVM::MBarrierArriveOp::create(kb.b, loc, Type(), full(s), Value());
        return;
      }
      // The norm prologue on the A tile in place: element (r, k) of the
      // 128-byte swizzled rows is at swizzle(r·128 + 2k).
      Type in = elementTypeOf(p.lhs);
      kb.forLoop(tid, kb.idx(tm * kBk), kb.idx(kWarpgroup), [&](Value e) {
        Value r = kb.divui(e, kb.idx(kBk)), kk = kb.remui(e, kb.idx(kBk));
        Value o = kb.add(kb.mul(r, kb.idx(kRowBytes)), kb.mul(kk, kb.idx(2)));
        Value at = pointer(kb.add(stageAddress(s, 0), kb.swizzle(o, 3)), 3);
        Value kIdx = kb.add(kb.mul(kt, kb.idx(kBk)), kk);
        Value valid = kb.ult(kIdx, kb.idx(p.k));
        Value x = kb.convert(LLVM::LoadOp::create(kb.b, loc, in, at), acc);
        // K past the tensor stays 0 (TMA zero-filled it).
        Value v = kb.select(valid, normalizeA(x, r, kb.minui(kIdx, kb.idx(p.k - 1))), kb.f(acc, 0.0));
        LLVM::StoreOp::create(kb.b, loc, kb.convert(v, in), at);
      });
      // Generic-proxy writes, read next by wgmma (the async proxy).
      NVVM::FenceProxyOp::create(
          kb.b, loc, NVVM::ProxyKindAttr::get(mctx, NVVM::ProxyKind::async_shared),
          NVVM::SharedSpaceAttr::get(mctx, NVVM::SharedSpace::shared_cta));
      NVVM::MBarrierArriveOp::create(kb.b, loc, Type(), full(s), Value());
    });
    if (wgPersistent)
      kb.ifThen(arith::AndIOp::create(kb.b, loc, hasNext, kb.eq(tid, kb.idx(0))), [&] {
        for (int64_t k = 0; k < prefetch; ++k)
          issue(kb.add(base, kb.idx(kTiles + k)), kb.idx(k), nextN0, nextM0);
      });
  });

  // The consumer warpgroups: rows 64·c .. 64·c + 63 of the tile.
  kb.ifThen(kb.ult(kb.idx(0), warpgroup), [&] {
    setMaxRegisters(consumerRegs, NVVM::SetMaxRegisterAction::increase);
    Value c = kb.sub(warpgroup, kb.idx(1));
    auto accType = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(tn / 2, f32));
    Value undef = LLVM::UndefOp::create(kb.b, loc, accType);
    NVVM::WGMMATypes type =
        elementTypeOf(p.lhs).isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    auto shape = NVVM::MMAShapeAttr::get(mctx, 64, tn, 16);
    // K-major, 128-byte swizzle: LBO 16 B, SBO 1024 B, mode 1.
    const int64_t layout = (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
    // Descriptors advanced from the shared base's by 32-bit adds.
    MatrixDescriptors desc(kb, wgBase);
    auto stageOffset = [&](Value s, int64_t offset) {
      return kb.add(kb.mul(s, kb.idx(wgStageBytes)), kb.idx(offset));
    };
    // One k-tile: wait for its stage, 4 × (one wgmma per accumulator set),
    // commit, wait for the previous tile's group and release its stage.
    // The first tile is peeled: its first products overwrite undefined
    // accumulators (scale-d 0), so no register is zeroed between the fence
    // and the wgmma (ptxas would insert a warpgroup.arrive, C7519).
    auto tile = [&](Value kt, ValueRange carried, bool first) -> SmallVector<Value> {
      auto [s, phase] = slot(wgPersistent ? uniform(kb.add(base, kt)) : kt);
      NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, full(s), phase, ticks);
      NVVM::WgmmaFenceAlignedOp::create(kb.b, loc);
      Value aRows = kb.add(stageOffset(s, 0), kb.mul(c, kb.idx(64 * kRowBytes)));
      SmallVector<Value> next(carried);
      for (int64_t kk = 0; kk < kBk / 16; ++kk) {
        Value da = desc.at(kb.add(aRows, kb.idx(kk * 32)), layout);
        auto scaleD = first && kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one;
        for (int64_t half = 0; half < sets; ++half) {
          Value db = desc.at(stageOffset(s, (tm + half * tn) * kRowBytes + kk * 32), layout);
          next[half] = NVVM::WgmmaMmaAsyncOp::create(
              kb.b, loc, accType, next[half], da, db, shape, type, type, NVVM::WGMMATypes::f32,
              scaleD, NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
              NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
        }
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(kb.b, loc);
      NVVM::WgmmaWaitGroupSyncOp::create(kb.b, loc, 1);
      if (!first) {
        // The previous k-tile's products are done: its stage is free.
        auto [prev, unused] = slot(kb.sub(kb.add(base, kt), kb.idx(1)));
        (void)unused;
        NVVM::MBarrierArriveOp::create(kb.b, loc, Type(), empty(prev), Value());
      }
      return next;
    };
    SmallVector<Value> accs = tile(kb.idx(0), SmallVector<Value>(sets, undef), true);
    accs = kb.forLoop(kb.idx(1), kb.idx(kTiles), kb.idx(1), accs,
                      [&](Value kt, ValueRange carried) { return tile(kt, carried, false); });
    NVVM::WgmmaWaitGroupSyncOp::create(kb.b, loc, 0);
    if (wgPersistent) {
      // The last k-tile's stage is free too: the next tile's loads may
      // fill it.
      auto [last, unused] = slot(kb.add(base, kb.idx(kTiles - 1)));
      (void)unused;
      NVVM::MBarrierArriveOp::create(kb.b, loc, Type(), empty(last), Value());
    }
    // Accumulator register i of thread t (PTX ISA, wgmma D fragment):
    // row 16·(t / 32) + (t % 32) / 4 + 8·((i % 4) / 2), column
    // 8·(i / 4) + 2·(t % 4) + i % 2.
    Value t = kb.remui(tid, kb.idx(kWarpgroup));
    Value lane = kb.remui(t, kb.idx(32));
    Value row0 = kb.add(kb.mul(c, kb.idx(64)),
                        kb.add(kb.mul(kb.divui(t, kb.idx(32)), kb.idx(16)), kb.divui(lane, kb.idx(4))));
    Value col0 = kb.mul(kb.remui(lane, kb.idx(4)), kb.idx(2));
    // An NVFP4 weight's global scale, kept out of the dequantized tiles.
    Value global = p.nvfp4() ? nvfp4Global() : Value();
    for (int64_t i = 0; i < tn / 2; ++i) {
      Value mm = kb.add(row0, kb.idx(8 * ((i % 4) / 2)));
      Value nn = kb.add(col0, kb.idx(8 * (i / 4) + i % 2));
      auto reg = [&](Value st) {
        Value v = LLVM::ExtractValueOp::create(kb.b, loc, st, ArrayRef<int64_t>{i});
        return global ? kb.mul(v, global) : v;
      };
      Value up = p.glu ? reg(accs[1]) : Value();
      Value col = kb.minui(kb.add(n0, nn), kb.idx(p.cols - 1));
      kb.store(activate(reg(accs[0]), up, col), cs, {mm, nn});
    }
  });
  kb.barrier();
  // Back to the uniform count for the epilogue: the consumers give their
  // extra registers back before the producer takes its own back (the pool
  // is exactly balanced), each pair of setmaxnreg of a warpgroup separated
  // by a barrier, as the PTX ISA requires.
  if (reallocate) {
    kb.ifThen(kb.ult(kb.idx(0), warpgroup),
              [&] { setMaxRegisters(kUniformRegs, NVVM::SetMaxRegisterAction::decrease); });
    kb.barrier();
    kb.ifThen(kb.eq(warpgroup, kb.idx(0)),
              [&] { setMaxRegisters(kUniformRegs, NVVM::SetMaxRegisterAction::increase); });
  }
  };
  if (!wgPersistent) {
    mainLoop(kb.idx(0), Value(), Value(), Value());
    return;
  }
  // Persistent: block b takes tiles b, b + grid, ...; each through the
  // main loop, then the shared epilogue, then a barrier (Cs is rewritten
  // by the next tile).
  const int64_t tiles = wgTilesN * wgTilesM;
  Value first = kb.blockId(gpu::Dimension::x);
  kb.forLoop(first, kb.idx(tiles), kb.idx(wgGrid), [&](Value tile) {
    // Read from lane 0, like the warpgroup index: provably uniform for
    // ptxas, whose descriptors and TMA coordinates then stay in uniform
    // registers.
    Value t = arith::IndexCastOp::create(
        kb.b, loc, kb.b.getIndexType(),
        gpu::ShuffleOp::create(kb.b, loc, toI32(tile), kb.i32(0), kb.i32(32),
                               gpu::ShuffleMode::IDX)
            .getShuffleResult());
    Value base = kb.mul(kb.divui(kb.sub(t, first), kb.idx(wgGrid)), kb.idx(kTiles));
    std::tie(n0, m0) = tileOrigin(t);
    Value next = kb.add(t, kb.idx(wgGrid));
    Value hasNext = kb.ult(next, kb.idx(tiles));
    auto [nextN0, nextM0] = tileOrigin(kb.minui(next, kb.idx(tiles - 1)));
    mainLoop(base, hasNext, nextN0, nextM0);
    epilogue();
    kb.barrier();
  });
}
