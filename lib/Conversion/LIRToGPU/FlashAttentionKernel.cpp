//===- FlashAttentionKernel.cpp - attention on tensor cores (mma.sync) ----===//
//
// The forward kernel of FlashAttention-2, for bf16/f16 rlx_mir.attention on
// sm_80+ (DESIGN §3 semantics, the same as the SIMT kernel's):
//
//  - One block of 4 warps per (64-row tile, kv head, batch). Tile rows are
//    (query row, query head of the kv head's group) pairs, query-row major:
//    row r is query r / group of head kv·group + r % group. The query heads
//    of one kv head share every K/V tile it loads (GQA packing: no K/V
//    copies, and a decode step's group heads fill the tile's rows).
//  - Q (64 × D), one K tile and one V tile (64 keys each) in dynamic shared
//    memory, rows padded by 8 elements so that ldmatrix's eight 16-byte rows
//    hit distinct banks; all three arrive by 16-byte cp.async, zero-filled
//    past the sequence ends (keys past Sk are never read).
//  - FA2's schedule: V(t) streams in while S = Q·K(t)ᵀ and the softmax run,
//    K(t+1) while O += P·V(t). Each warp owns 16 rows: Q's fragments stay in
//    registers, S and O are mma.sync m16n8k16 accumulators (f32), P goes
//    from S's accumulator layout straight into A fragments (rounded once to
//    the input type), V's B fragments come from ldmatrix.trans.
//  - Online softmax in f32 in the exp2 domain (log2 e folded into the
//    scale, the additive mask and the softcap's output), running max per row
//    (quad shuffles), the per-thread row sums reduced once at the end. A row
//    that sees no key writes 0.
//  - Causal and sliding-window masks bound the key tiles a tile visits
//    (tiles wholly masked for every row of the tile are skipped); the visited
//    tiles are masked per element, as are keys past Sk and the mask operand.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/AttentionLogits.h"

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
using namespace mlir::rlx::attention_logits;

namespace {
constexpr int64_t kRows = 64, kKeys = 64, kWarps = 4, kThreads = 32 * kWarps, kPad = 8;
constexpr int64_t kMaxHeadDim = 128, kAlign = 128;
constexpr double kLog2e = 1.4426950408889634;
} // namespace

std::string attention::whyNoTensorCoreAttention(KernelContext &ctx, const AttentionOperands &a,
                                                bool chipHas, const std::string &chipWhy) {
  if (!ctx.tensorCores)
    return "tensor cores are off (tensor-cores=false)";
  if (!chipHas)
    return chipWhy;
  Type et = elementTypeOf(a.q);
  if (!(et.isBF16() || et.isF16()) || elementTypeOf(a.k) != et || elementTypeOf(a.v) != et ||
      (a.out && elementTypeOf(a.out) != et))
    return "its query, key, value and output are not all bf16 or all f16";
  return "";
}

std::string attention::whyNoFlashAttention(KernelContext &ctx, const AttentionOperands &a) {
  if (std::string why = whyNoTensorCoreAttention(ctx, a, ctx.target.hasMmaSyncBF16(),
                                                 ctx.target.chip +
                                                     " has no bf16/f16 mma.sync (sm_80+)");
      !why.empty())
    return why;
  const AttentionConfig &cfg = a.cfg;
  Value q = a.q, k = a.k, v = a.v;
  const AttentionShape &s = a.shape;
  if (s.headDim % 16 != 0 || s.headDim > kMaxHeadDim)
    return "head_dim " + std::to_string(s.headDim) + " is not a multiple of 16 up to " +
           std::to_string(kMaxHeadDim);
  if (s.valueDim % 16 != 0 || s.valueDim > kMaxHeadDim)
    return "the value head size " + std::to_string(s.valueDim) + " is not a multiple of 16 up to " +
           std::to_string(kMaxHeadDim);
  for (Value m : {q, k, v})
    if (!vectorizable(m, shapeOf(m), 8))
      return "its query, key or value rows are not contiguous and 16-byte "
             "aligned";
  if (s.batch * std::max<int64_t>(a.splits, 1) > 65535 || cfg.numKvHeads > 65535)
    return "more than 65535 batches · kv splits or kv heads";
  return "";
}

Value FlashLogits::scaled(Value dot) const {
  // Whole key tiles: no causal bound and no mask operand can hide a key.
  AttentionConfig cfg = a.cfg;
  cfg.maskKind = MaskKind::None;
  ScalarLogit in;
  in.dot = dot;
  in.post = kLog2e;
  return scalarAttentionLogit(kb.b, kb.loc, cfg, logitScale(a.cfg, a.shape.headDim), in);
}

std::optional<double> FlashLogits::linearFactor() const {
  if (a.cfg.softcap)
    return std::nullopt;
  return logitScale(a.cfg, a.shape.headDim) * kLog2e;
}

Value FlashLogits::masked(Value dot, Value i, Value head, Value j) const {
  Location loc = kb.loc;
  ScalarLogit in;
  in.dot = dot;
  in.i = i;
  in.j = j;
  in.diagonal = a.shape.sk - a.shape.sq;
  in.post = kLog2e;
  in.visible = kb.ult(j, kHi);
  if (a.splits > 1)
    in.visible = arith::AndIOp::create(
        kb.b, loc, in.visible, arith::CmpIOp::create(kb.b, loc, arith::CmpIPredicate::uge, j, kLo));
  if (a.mask) {
    Value m = loadMask(kb, a.mask, b, head, i, kb.minui(j, kb.idx(a.shape.sk - 1)));
    in.mask = m.getType().isInteger(1) ? m : kb.convert(m, kb.b.getF32Type());
  }
  return scalarAttentionLogit(kb.b, loc, a.cfg, logitScale(a.cfg, a.shape.headDim), in);
}

FlashBlock attention::flashBlock(KernelBuilder &kb, const AttentionOperands &a) {
  FlashBlock f;
  f.tile = kb.blockId(gpu::Dimension::x);
  f.kvHead = kb.blockId(gpu::Dimension::y);
  Value z = kb.blockId(gpu::Dimension::z);
  const int64_t sk = a.shape.sk;
  f.batch = kb.remui(z, kb.idx(a.shape.batch));
  f.split = kb.divui(z, kb.idx(a.shape.batch));
  f.kLo = kb.idx(0);
  f.kHi = kb.idx(sk);
  if (a.splits) {
    f.kLo = kb.minui(kb.mul(f.split, kb.idx(a.chunk)), kb.idx(sk));
    f.kHi = kb.minui(kb.add(f.kLo, kb.idx(a.chunk)), kb.idx(sk));
  }
  return f;
}

/// The first key of query row i's chunk under a chunked mask,
/// ⌊(i + diagonal)/c⌋·c clamped at 0 (index values).
static Value chunkStart(KernelBuilder &kb, Value i, int64_t diagonal, int64_t chunk) {
  Value last = arith::AddIOp::create(kb.b, kb.loc, i, kb.idx(diagonal));
  Value start = kb.mul(arith::FloorDivSIOp::create(kb.b, kb.loc, last, kb.idx(chunk)),
                       kb.idx(chunk));
  return arith::MaxSIOp::create(kb.b, kb.loc, start, kb.idx(0));
}

std::pair<Value, Value> attention::visibleKeyTiles(KernelBuilder &kb, const AttentionOperands &a,
                                                   Value kLo, Value kHi, Value iMin, Value iMax,
                                                   int64_t tileKeys) {
  const AttentionConfig &cfg = a.cfg;
  const int64_t sq = a.shape.sq, sk = a.shape.sk;
  auto smax = [&](Value x, Value y) {
    return arith::MaxSIOp::create(kb.b, kb.loc, x, y).getResult();
  };
  auto smin = [&](Value x, Value y) {
    return arith::MinSIOp::create(kb.b, kb.loc, x, y).getResult();
  };
  Value kvLo = kLo, kvHi = kHi;
  if (cfg.maskKind != MaskKind::None) {
    kvHi = smax(kb.idx(0), smin(kvHi, kb.add(iMax, kb.idx(sk - sq + 1))));
    if (cfg.maskKind == MaskKind::Chunked)
      kvLo = smax(kvLo, chunkStart(kb, iMin, sk - sq, *cfg.window));
    else if (cfg.window)
      kvLo = smax(kvLo, kb.add(iMin, kb.idx(sk - sq - *cfg.window + 1)));
  }
  return {kb.divui(kvLo, kb.idx(tileKeys)),
          kb.divui(kb.add(kvHi, kb.idx(tileKeys - 1)), kb.idx(tileKeys))};
}

Value attention::wholeKeyTile(KernelBuilder &kb, const AttentionOperands &a, Value kLo, Value kHi,
                              Value iMin, Value iMax, Value t, int64_t tileKeys) {
  const AttentionConfig &cfg = a.cfg;
  const int64_t sq = a.shape.sq, sk = a.shape.sk;
  if (a.mask)
    return arith::ConstantIntOp::create(kb.b, kb.loc, 0, 1);
  auto andI = [&](Value x, Value y) {
    return arith::AndIOp::create(kb.b, kb.loc, x, y).getResult();
  };
  auto sle = [&](Value x, Value y) {
    return arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::sle, x, y).getResult();
  };
  Value first = kb.mul(t, kb.idx(tileKeys)), last = kb.add(first, kb.idx(tileKeys - 1));
  // Inside the split: kLo <= first, last < kHi.
  Value whole = andI(sle(kLo, first), kb.ult(last, kHi));
  if (cfg.maskKind != MaskKind::None) {
    // Causal: the earliest query's last visible key i' = iMin + Sk - Sq.
    whole = andI(whole, sle(last, kb.add(iMin, kb.idx(sk - sq))));
    // Window: the latest query's first visible key i' - w + 1; chunked:
    // the start of the latest query's chunk.
    if (cfg.maskKind == MaskKind::Chunked)
      whole = andI(whole, sle(chunkStart(kb, iMax, sk - sq, *cfg.window), first));
    else if (cfg.window)
      whole = andI(whole, sle(kb.add(iMax, kb.idx(sk - sq - *cfg.window + 1)), first));
  }
  return whole;
}

FailureOr<LaunchConfig> attention::buildFlashAttention(KernelContext &ctx,
                                                       const AttentionOperands &a) {
  const AttentionConfig &cfg = a.cfg;
  KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
  Location loc = kb.loc;
  MLIRContext *mctx = kb.b.getContext();
  Value q = a.q, k = a.k, v = a.v, out = a.out;
  const AttentionShape &shape = a.shape;
  const int64_t splits = std::max<int64_t>(a.splits, 1);
  const int64_t d = shape.headDim, dv = shape.valueDim, sq = shape.sq, sk = shape.sk,
                group = shape.group, rows = sq * group;
  const int64_t qStride = d + kPad, vStride = dv + kPad;
  const int64_t qBytes = kRows * qStride * 2, kBytes = kKeys * qStride * 2,
                vBytes = kKeys * vStride * 2;
  LaunchConfig launch;
  launch.block = {kThreads, 1, 1};
  launch.grid = {ceilDiv(rows, kRows), cfg.numKvHeads, shape.batch * splits};
  launch.dynamicSharedBytes = qBytes + kBytes + vBytes + kAlign;
  // Two blocks per SM (.minnctapersm 2: up to 255 registers a thread). With
  // .maxntid alone ptxas aims at a higher occupancy and spills the
  // single-key-tile kernels (Sk <= 64) at 80 registers.
  ctx.fn->setAttr("nvvm.minctasm", kb.b.getI32IntegerAttr(2));

  Type et = elementTypeOf(q), f32 = kb.b.getF32Type(), i32 = kb.b.getI32Type();
  const bool bf16 = et.isBF16();
  Type operand = bf16 ? i32 : Type(VectorType::get({2}, et));
  const double inf = std::numeric_limits<double>::infinity();

  // Dynamic shared memory, its base aligned at run time: Q | K | V.
  Value qS = kb.alignedDynamicShared(kAlign).base;
  Value kS = kb.add(qS, kb.idx(qBytes)), vS = kb.add(kS, kb.idx(kBytes));
  auto at = [&](Value buffer, Value row, Value col, int64_t stride) {
    return kb.pointer(kb.add(buffer, kb.mul(kb.add(kb.mul(row, kb.idx(stride)), col), kb.idx(2))),
                      3);
  };

  FlashBlock blk = flashBlock(kb, a);
  Value tile = blk.tile, g = blk.kvHead, b = blk.batch, split = blk.split, kLo = blk.kLo,
        kHi = blk.kHi;
  Value tid = kb.threadId(), lane = kb.laneId(), warp = kb.warpId();
  Value r0 = kb.mul(tile, kb.idx(kRows));
  // Tile row r: query r / group of head g·group + r % group (r < rows).
  auto query = [&](Value r) { return kb.divui(r, kb.idx(group)); };
  auto head = [&](Value r) { return kb.add(kb.mul(g, kb.idx(group)), kb.remui(r, kb.idx(group))); };
  auto pos = [&](Value m, Value s, Value hd, Value e, int64_t size) {
    return position(kb, cfg.layout, b, s, hd, e, size);
  };

  // The key tiles some row of this tile sees (bottom-right aligned masks).
  Value iMin = query(r0), iMax = query(kb.minui(kb.add(r0, kb.idx(kRows - 1)), kb.idx(rows - 1)));
  Value tLo, tHi;
  std::tie(tLo, tHi) = visibleKeyTiles(kb, a, kLo, kHi, iMin, iMax, kKeys);

  // 16-byte cp.async copies of `count` rows of `width` elements into
  // `buffer`; `source(row)` gives the row's (valid, operand position).
  auto stage =
      [&](Value buffer, int64_t stride, int64_t width, Value m,
          function_ref<std::pair<Value, SmallVector<Value>>(Value row, Value col)> source) {
        int64_t chunks = width / 8;
        kb.forLoop(tid, kb.idx(kRows * chunks), kb.idx(kThreads), [&](Value e) {
          Value row = kb.divui(e, kb.idx(chunks)),
                col = kb.mul(kb.remui(e, kb.idx(chunks)), kb.idx(8));
          auto [valid, p] = source(row, col);
          kb.copyAsync16(at(buffer, row, col, stride), m, p, valid);
        });
      };
  auto stageKeys = [&](Value buffer, int64_t stride, int64_t width, Value m, Value t) {
    stage(buffer, stride, width, m, [&](Value row, Value col) {
      Value j = kb.add(kb.mul(t, kb.idx(kKeys)), row);
      return std::pair{kb.ult(j, kb.idx(sk)), pos(m, kb.minui(j, kb.idx(sk - 1)), g, col, width)};
    });
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(kb.b, loc); };
  auto wait = [&](int32_t n) { NVVM::CpAsyncWaitGroupOp::create(kb.b, loc, n); };

  // ldmatrix (.trans for V) and the mma.sync of the input type.
  auto i4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, i32));
  auto i2 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(2, i32));
  auto f4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, f32));
  auto ldmatrix = [&](Type res, Value ptr, uint32_t num, bool trans) {
    SmallVector<Value> fields;
    Value st = NVVM::LdMatrixOp::create(
        kb.b, loc, res, ptr, num, trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(mctx, 8, 8), NVVM::LdStMatrixEltType::B16);
    for (uint32_t f = 0; f < num; ++f) {
      Value x = LLVM::ExtractValueOp::create(kb.b, loc, st, ArrayRef<int64_t>{f});
      fields.push_back(operand == i32 ? x : LLVM::BitcastOp::create(kb.b, loc, operand, x));
    }
    return fields;
  };
  NVVM::MMATypes mmaType = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto mma = [&](ArrayRef<Value> a, ArrayRef<Value> bf, MutableArrayRef<Value> c) {
    auto r = NVVM::MmaOp::create(
        kb.b, loc, f4, a, bf, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
    for (int64_t f = 0; f < 4; ++f)
      c[f] = LLVM::ExtractValueOp::create(kb.b, loc, r.getRes(), ArrayRef<int64_t>{f});
  };
  // Two f32 values rounded to the input type, packed as one A register.
  auto pack = [&](Value x, Value y) -> Value {
    Value pair = vector::FromElementsOp::create(kb.b, loc, VectorType::get({2}, et),
                                                ValueRange{kb.convert(x, et), kb.convert(y, et)});
    return operand == i32 ? LLVM::BitcastOp::create(kb.b, loc, i32, pair).getResult() : pair;
  };

  // Lane roles: ldmatrix row addresses (matrix m = lane / 8, row lane % 8);
  // accumulator element f of an m16n8 tile is row gq + 8·(f / 2), column
  // 2·tq + f % 2.
  Value mIdx = kb.divui(lane, kb.idx(8)), r8 = kb.remui(lane, kb.idx(8));
  Value half = kb.mul(kb.remui(mIdx, kb.idx(2)), kb.idx(8));
  Value gq = kb.divui(lane, kb.idx(4)), tq = kb.remui(lane, kb.idx(4));
  Value w0 = kb.mul(warp, kb.idx(16));

  // Prologue: Q and the first K tile in flight, Q's fragments to registers.
  stage(qS, qStride, d, q, [&](Value row, Value col) {
    Value r = kb.add(r0, row);
    Value rc = kb.minui(r, kb.idx(rows - 1));
    return std::pair{kb.ult(r, kb.idx(rows)), pos(q, query(rc), head(rc), col, d)};
  });
  commit();
  kb.ifThen(kb.ult(tLo, tHi), [&] { stageKeys(kS, qStride, d, k, tLo); });
  commit();
  wait(1);
  kb.barrier();
  Value aCol = kb.mul(kb.divui(mIdx, kb.idx(2)), kb.idx(8));
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t kk = 0; kk < d / 16; ++kk)
    qFrag.push_back(
        ldmatrix(i4, at(qS, kb.add(w0, kb.add(r8, half)), kb.add(aCol, kb.idx(kk * 16)), qStride),
                 4, false));

  FlashLogits logits{kb, a, b, kLo, kHi};
  auto logit = [&](Value dot, Value r, Value j) {
    Value rc = kb.minui(r, kb.idx(rows - 1));
    return logits.masked(dot, query(rc), head(rc), j);
  };

  const int64_t sTiles = kKeys / 8, oTiles = dv / 8;
  Value zero = kb.f32(0.0), ninf = kb.f32(-inf);
  // Carried: the running max and this thread's row sums of rows gq, gq + 8,
  // then O's accumulators.
  SmallVector<Value> inits{ninf, ninf, zero, zero};
  inits.append(oTiles * 4, zero);
  SmallVector<Value> state =
      kb.forLoop(tLo, tHi, kb.idx(1), inits, [&](Value t, ValueRange c) -> SmallVector<Value> {
        wait(0);
        kb.barrier(); // K(t) landed; every warp is done with V(t - 1)
        stageKeys(vS, vStride, dv, v, t);
        commit();
        // S = Q·K(t)ᵀ: 16 rows × 64 keys per warp.
        SmallVector<Value> s(sTiles * 4, zero);
        for (int64_t kk = 0; kk < d / 16; ++kk)
          for (int64_t jt = 0; jt < sTiles; ++jt) {
            SmallVector<Value> bf = ldmatrix(
                i2, at(kS, kb.add(kb.idx(jt * 8), r8), kb.add(half, kb.idx(kk * 16)), qStride), 2,
                false);
            mma(qFrag[kk], bf, MutableArrayRef<Value>(s).slice(jt * 4, 4));
          }
        Value j0 = kb.mul(t, kb.idx(kKeys));
        SmallVector<Value> mx{ninf, ninf};
        for (int64_t jt = 0; jt < sTiles; ++jt)
          for (int64_t f = 0; f < 4; ++f) {
            Value r = kb.add(r0, kb.add(w0, kb.add(gq, kb.idx(8 * (f / 2)))));
            Value j = kb.add(j0, kb.add(kb.mul(tq, kb.idx(2)), kb.idx(jt * 8 + f % 2)));
            Value &x = s[jt * 4 + f];
            x = logit(x, r, j);
            mx[f / 2] = kb.combine(Combine::Max, mx[f / 2], x);
          }
        SmallVector<Value> next(c);
        SmallVector<Value> alpha(2), safe(2);
        for (int64_t h = 0; h < 2; ++h) {
          // The row's max over the quad that holds it.
          for (int64_t off : {1, 2})
            mx[h] = kb.combine(Combine::Max, mx[h], kb.shuffleXor(mx[h], off));
          Value mNew = kb.combine(Combine::Max, c[h], mx[h]);
          // exp2(x - m) with m = 0 while the row has seen no key (all -inf).
          safe[h] = kb.select(kb.eq(mNew, ninf), zero, mNew);
          alpha[h] = kb.exp2Approx(kb.sub(c[h], safe[h]));
          next[h] = mNew;
        }
        SmallVector<Value> sum{zero, zero};
        for (int64_t e = 0; e < sTiles * 4; ++e) {
          int64_t h = (e % 4) / 2;
          s[e] = kb.exp2Approx(kb.sub(s[e], safe[h]));
          sum[h] = kb.add(sum[h], s[e]);
        }
        for (int64_t h = 0; h < 2; ++h)
          next[2 + h] = kb.add(kb.mul(c[2 + h], alpha[h]), sum[h]);
        for (int64_t e = 0; e < oTiles * 4; ++e)
          next[4 + e] = kb.mul(c[4 + e], alpha[(e % 4) / 2]);
        wait(0);
        kb.barrier(); // V(t) landed; every warp is done with K(t)
        kb.ifThen(kb.ult(kb.add(t, kb.idx(1)), tHi),
                  [&] { stageKeys(kS, qStride, d, k, kb.add(t, kb.idx(1))); });
        commit();
        // O += P·V(t): P's accumulators of key tiles 2ks, 2ks + 1 are the
        // A fragment of keys 16·ks .. 16·ks + 15.
        for (int64_t ks = 0; ks < kKeys / 16; ++ks) {
          const Value *p0 = &s[ks * 8], *p1 = &s[ks * 8 + 4];
          SmallVector<Value> a{pack(p0[0], p0[1]), pack(p0[2], p0[3]), pack(p1[0], p1[1]),
                               pack(p1[2], p1[3])};
          for (int64_t jn = 0; jn < oTiles; ++jn) {
            SmallVector<Value> bf = ldmatrix(
                i2, at(vS, kb.add(kb.idx(ks * 16), kb.add(half, r8)), kb.idx(jn * 8), vStride), 2,
                true);
            mma(a, bf, MutableArrayRef<Value>(next).slice(4 + jn * 4, 4));
          }
        }
        return next;
      });

  wait(0); // the last iteration's (empty) K group, or the prologue's
  // O / l per row (the quad's partial sums), 0 for a row with no visible key.
  SmallVector<Value> l{state[2], state[3]};
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t off : {1, 2})
      l[h] = kb.add(l[h], kb.shuffleXor(l[h], off));
  for (int64_t h = 0; h < 2; ++h) {
    Value r = kb.add(r0, kb.add(w0, kb.add(gq, kb.idx(8 * h))));
    kb.ifThen(kb.ult(r, kb.idx(rows)), [&] {
      Value empty = kb.eq(l[h], zero);
      Value inv = kb.select(empty, zero, kb.fdiv(kb.f32(1.0), l[h]));
      for (int64_t jn = 0; jn < oTiles; ++jn)
        for (int64_t f = 0; f < 2; ++f) {
          Value col = kb.add(kb.mul(tq, kb.idx(2)), kb.idx(jn * 8 + f));
          Value o = kb.mul(state[4 + jn * 4 + 2 * h + f], inv);
          if (a.splits)
            kb.store(o, a.partial, {split, b, head(r), query(r), col});
          else
            kb.store(kb.convert(o, et), out, pos(out, query(r), head(r), col, dv));
        }
      // The split's natural-log LSE: (m + log2 l)·ln 2 (m is in log2 units).
      if (a.splits)
        kb.ifThen(kb.eq(tq, kb.idx(0)), [&] {
          Value lse = kb.mul(kb.add(state[h], math::Log2Op::create(kb.b, loc, l[h])),
                             kb.f32(0.6931471805599453));
          kb.store(kb.select(empty, ninf, lse), a.lse, {split, b, head(r), query(r)});
        });
    });
  }
  return launch;
}
