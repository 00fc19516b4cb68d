//===- GemvKernel.cpp - the matmul kernel's GEMV (at most 16 rows) --------===//
//
// Decode-shaped matmuls (docs/gpu.md, "Matmul kernels"): bound by reading
// the weights once. Warps own output columns, lanes stride K with 16-byte
// vectors, split-K partial sums meet in shared memory; a grouped matmul's
// rows each stream their own expert's weights. The NVFP4 mma.sync GEMV's
// main loop is Nvfp4GemvKernel.cpp; the epilogue is GemmBuilder's
// (MatmulKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MatmulKernels.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace mlir::rlx::gpu_kernels::matmul {

/// The GEMV configuration (rows ≤ 16, weight-bandwidth bound): a block of
/// `threads` has warps/splitK column groups; each group owns output columns
/// and its splitK warps sum disjoint K ranges of them, lanes striding with
/// 16-byte vectors. Without head stages a block is 8 warps and one column
/// per group (TN = 8 / splitK); with them TN = head_dim and 16 warps. The
/// split count is the smallest power of two (≤ 8) that gives 16 warps of
/// work per SM (N · splitK ≥ 16 · SMs) while every lane still reads at
/// least four vectors per split, within 40 KiB of partial sums; split-k
/// forces it.
/// Whether the GEMV tile (Cs: rows × TN f32) fits the partial-sum budget.
bool GemmBuilder::gemvTileFits() const {
  int64_t cols = p.headStages() ? p.headDim : 8;
  return std::max<int64_t>(p.rows, 1) * cols * 4 <= kGemvSharedBytes;
}

LogicalResult GemmBuilder::chooseGemvConfig() {
  if (p.nvfp4() && whyNoNvfp4MmaGemv().empty())
    return chooseNvfp4MmaGemvConfig();
  if (p.nvfp4()) {
    // 32 codes (16 bytes) per lane and step from NVIDIA's [N, K/2] layout;
    // 16 codes when more than 8 rows (and their sums) share the registers.
    int64_t codes = tm > 8 ? 16 : 32;
    auto t = cast<MemRefType>(p.rhs.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    bool aligned = p.transB && p.k % codes == 0 &&
                   succeeded(t.getStridesAndOffset(strides, offset)) && strides.size() == 2 &&
                   strides[1] == 1 && !ShapedType::isDynamic(offset) &&
                   !ShapedType::isDynamic(strides[0]) && offset % (codes / 2) == 0 &&
                   strides[0] % (codes / 2) == 0;
    if (aligned)
      width = codes;
  } else if (p.transB && (shapeOf(p.rhs).size() == 2 || p.grouped())) {
    int64_t bytes = (elementTypeOf(p.rhs).getIntOrFloatBitWidth() + 7) / 8;
    int64_t w = bytes < 16 ? 16 / bytes : 1;
    if (vectorizable(p.rhs, shapeOf(p.rhs), w))
      width = w;
  }
  threads = p.headStages() ? 512 : kThreads;
  int64_t warps = threads / 32, sets = p.glu ? 2 : 1;
  auto partBytes = [&](int64_t s, int64_t cols) { return s > 1 ? s * sets * tm * cols * 4 : 0; };
  auto fits = [&](int64_t s) {
    int64_t cols = p.headStages() ? tn : warps / s;
    return partBytes(s, cols) + tm * cols * 4 <= kGemvSharedBytes;
  };
  if (ctx.splitK > 0) {
    splitK = std::min<int64_t>(ctx.splitK, warps);
    if (!fits(splitK))
      return unsupported(ctx, "split-k=" + Twine(ctx.splitK) + " on " + Twine(tm) +
                                  " rows of " + Twine(p.headStages() ? tn : warps / splitK) +
                                  " columns: its partial sums exceed " +
                                  Twine(kGemvSharedBytes) + " bytes of shared memory");
  } else {
    splitK = 1;
    int64_t want = 16 * ctx.target.smCount();
    while (splitK < 8 && p.cols * splitK < want && p.k / (splitK * 2) >= 4 * 32 * width &&
           fits(splitK * 2))
      splitK *= 2;
  }
  if (!p.headStages())
    tn = warps / splitK;
  return success();
}

/// The NVFP4 mma.sync GEMV (Nvfp4GemvKernel.cpp): warps of 16 weight rows
/// (8 output columns with GLU) after the staged lhs; the split count as
/// above, counting such warps and steps of 128 codes.
LogicalResult GemmBuilder::chooseNvfp4MmaGemvConfig() {
  nvfp4Mma = true;
  threads = p.headStages() ? 512 : kThreads;
  const int64_t warps = threads / 32, sets = p.glu ? 2 : 1, cw = p.glu ? 8 : 16;
  auto cols = [&](int64_t s) { return p.headStages() ? tn : (warps / s) * cw; };
  auto fits = [&](int64_t s) {
    int64_t c = cols(s);
    return (s > 1 ? s * sets * tm * c * 4 : 0) + tm * c * 4 + nvfp4StageBytes() <=
           kGemvSharedBytes;
  };
  if (ctx.splitK > 0) {
    splitK = std::min<int64_t>(ctx.splitK, warps);
    if (!fits(splitK))
      return unsupported(ctx, "split-k=" + Twine(ctx.splitK) + " on " + Twine(tm) +
                                  " rows: the staged lhs and partial sums exceed " +
                                  Twine(kGemvSharedBytes) + " bytes of shared memory");
  } else {
    splitK = 1;
    int64_t want = 8 * ctx.target.smCount();
    while (splitK < warps && ceilDiv(p.cols, cw) * splitK < want &&
           p.k / (splitK * 2) >= 4 * 128 && fits(splitK * 2))
      splitK *= 2;
  }
  if (!p.headStages())
    tn = cols(splitK);
  return success();
}

void GemmBuilder::gemvMainLoop() {
  if (nvfp4Mma)
    return nvfp4MmaGemvMainLoop();
  int64_t warps = threads / 32, groups = warps / splitK, sets = p.glu ? 2 : 1;
  Value lane = kb.laneId(), warp = kb.warpId();
  Value split = kb.remui(warp, kb.idx(splitK)), group = kb.divui(warp, kb.idx(splitK));
  // A rows as vectors too when they are contiguous 16-byte groups.
  bool vecA = width > 1 && (p.fused || !p.transA) && vectorizable(p.lhs, shapeOf(p.lhs), width);
  // Split `split` sums k in [lo, hi): chunks of whole lane strides.
  int64_t stride = 32 * width, chunk = ceilDiv(ceilDiv(p.k, splitK), stride) * stride;
  Value lo = kb.mul(split, kb.idx(chunk));
  Value hi = kb.minui(kb.add(lo, kb.idx(chunk)), kb.idx(p.k));
  Value part = splitK > 1 ? kb.workgroupBuffer(ctx.fn, {splitK, sets * tm, tn}, acc) : Value();
  Value zero = kb.f(acc, 0.0);
  // Warps past groups · splitK have no work (splits that do not divide 8).
  Value active = kb.ult(warp, kb.idx(groups * splitK));
  kb.ifThen(active, [&] {
    kb.forLoop(group, kb.idx(tn), kb.idx(groups), [&](Value nn) {
      Value col = kb.add(n0, nn);
      Value inRange = kb.ult(col, kb.idx(p.cols));
      Value safeCol = kb.select(inRange, col, kb.idx(0));
      SmallVector<Value> inits(tm * sets, zero);
      SmallVector<Value> sums = kb.forLoop(
          kb.add(lo, kb.mul(lane, kb.idx(width))), hi, kb.idx(stride), inits,
          [&](Value k0, ValueRange c) -> SmallVector<Value> {
            SmallVector<Value> r(c);
            if (p.nvfp4() && width > 1) {
              SmallVector<Nvfp4Codes> codes;
              for (int64_t half = 0; half < sets; ++half)
                codes.push_back(
                    nvfp4GemvCodes(k0, half ? kb.add(safeCol, kb.idx(p.cols)) : safeCol));
              for (int64_t mm = 0; mm < tm; ++mm) {
                SmallVector<Value> prod = nvfp4GemvRow(kb.add(m0, kb.idx(mm)), kb.idx(mm), k0, codes);
                for (int64_t half = 0; half < sets; ++half)
                  r[half * tm + mm] = kb.add(r[half * tm + mm], prod[half]);
              }
              return r;
            }
            // The weights of column col at k0 (of `expert` in a grouped
            // matmul, whose rows each read their own expert's).
            auto loadWeights = [&](Value expert) {
              SmallVector<SmallVector<Value>> bv(sets);
              for (int64_t half = 0; half < sets; ++half) {
                Value bCol = half ? kb.add(safeCol, kb.idx(p.cols)) : safeCol;
                if (width > 1) {
                  bv[half] = kb.loadRow(p.rhs, rhsPos(k0, bCol, expert), width, true);
                  for (Value &v : bv[half])
                    v = kb.convert(v, acc);
                } else if (expert) {
                  bv[half].push_back(
                      kb.convert(kb.load(p.rhs, rhsPos(k0, bCol, expert)), acc));
                } else {
                  bv[half].push_back(loadB(k0, bCol));
                }
              }
              return bv;
            };
            SmallVector<SmallVector<Value>> shared;
            if (!groupedGemv)
              shared = loadWeights({});
            for (int64_t mm = 0; mm < tm; ++mm) {
              SmallVector<SmallVector<Value>> bv =
                  groupedGemv ? loadWeights(rowExperts[mm]) : shared;
              Value row = kb.add(m0, kb.idx(mm));
              SmallVector<Value> a;
              if (vecA) {
                a = kb.loadRow(p.lhs, lhsPos(row, k0), width, true);
                  for (int64_t l = 0; l < width; ++l)
                  a[l] = normalizeA(kb.convert(a[l], acc), kb.idx(mm),
                                    l ? kb.add(k0, kb.idx(l)) : k0);
              } else {
                for (int64_t l = 0; l < width; ++l)
                  a.push_back(loadA(row, l ? kb.add(k0, kb.idx(l)) : k0));
              }
              for (int64_t half = 0; half < sets; ++half)
                for (int64_t l = 0; l < width; ++l) {
                  int64_t at = half * tm + mm;
                  r[at] = math::FmaOp::create(kb.b, kb.loc, a[l], bv[half][l], r[at]);
                }
            }
            return r;
          });
      if (p.nvfp4() && width > 1) {
        Value global = nvfp4Global();
        for (Value &v : sums)
          v = kb.mul(v, global);
      }
      for (Value &v : sums)
        v = kb.warpReduce(Combine::Sum, v);
      // zero_out_of_range: the rows of ids outside [0, E) sum to 0.
      if (!rowInExperts.empty())
        for (int64_t half = 0; half < sets; ++half)
          for (int64_t mm = 0; mm < tm; ++mm)
            sums[half * tm + mm] =
                kb.select(rowInExperts[mm], sums[half * tm + mm], zero);
      kb.ifThen(kb.eq(lane, kb.idx(0)), [&] {
        for (int64_t mm = 0; mm < tm; ++mm) {
          if (part) {
            for (int64_t half = 0; half < sets; ++half)
              kb.store(sums[half * tm + mm], part, {split, kb.idx(half * tm + mm), nn});
          } else {
            kb.store(activate(sums[mm], p.glu ? sums[tm + mm] : Value(), safeCol), cs,
                     {kb.idx(mm), nn});
          }
        }
      });
    });
  });
  kb.barrier();
  gemvCombineSplits(part);
}

/// The splits' partial sums (part: [splitK][sets · tm][tn], null without
/// split-K) in split order (the same bits on every run), then bias,
/// activation or GLU once, into Cs.
void GemmBuilder::gemvCombineSplits(Value part) {
  if (!part)
    return;
  int64_t sets = p.glu ? 2 : 1;
  Value zero = kb.f(acc, 0.0);
  kb.forLoop(kb.threadId(), kb.idx(tm * tn), kb.idx(threads), [&](Value e) {
    Value mm = kb.divui(e, kb.idx(tn)), nn = kb.remui(e, kb.idx(tn));
    SmallVector<Value> total(sets, zero);
    for (int64_t sp = 0; sp < splitK; ++sp)
      for (int64_t half = 0; half < sets; ++half)
        total[half] = kb.add(
            total[half], kb.load(part, {kb.idx(sp), kb.add(mm, kb.idx(half * tm)), nn}));
    Value col = kb.minui(kb.add(n0, nn), kb.idx(p.cols - 1));
    kb.store(activate(total[0], p.glu ? total[1] : Value(), col), cs, {mm, nn});
  });
  kb.barrier();
}

} // namespace mlir::rlx::gpu_kernels::matmul
