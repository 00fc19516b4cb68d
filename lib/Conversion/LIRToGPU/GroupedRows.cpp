//===- GroupedRows.cpp - the grouped matmul's rows per block ----------------===//
//
// A grouped matmul's blocks find their expert's rows themselves
// (docs/gpu.md): the expert of a row, and the histogram, tile walk and
// block scan that give each block its tile's token rows.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MatmulKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace mlir::rlx::gpu_kernels::matmul {

Value GemmBuilder::expertOf(Value t) {
  Value raw = arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getIndexType(), kb.load(p.ids, {t}));
  Value id = arith::MaxSIOp::create(kb.b, kb.loc, raw, kb.idx(0));
  id = arith::MinSIOp::create(kb.b, kb.loc, id, kb.idx(p.batches - 1));
  if (p.zeroOutOfRange)
    id = kb.select(kb.eq(id, raw), id, kb.idx(p.batches));
  return id;
}

/// Block y of a grouped matmul: which expert (bt) and which of its row
/// tiles (m0), and the token rows of that tile. Each block counts the rows
/// of every expert (a histogram of the ids in shared memory), walks the
/// experts' tiles to its own (blocks past the last tile get no rows), then
/// finds its tile's rows: each thread counts the expert's rows in its
/// contiguous slice of the ids, a Hillis-Steele scan over the block gives
/// each slice's first rank, and the second pass writes the token row of
/// every rank in [m0, m0 + tm). Ranks are in row order, so every block of
/// the expert agrees on them. Ids outside [0, E) are clamped, as the op
/// defines, or with zero_out_of_range are the rows of pseudo-expert E.
void GemmBuilder::groupedRows() {
  int64_t rows = p.rows, chunk = ceilDiv(rows, threads), experts = p.groupedExperts();
  Value tid = kb.threadId();
  Type i32 = kb.b.getI32Type();
  groupRows = kb.workgroupBuffer(ctx.fn, {tm}, i32);
  Value scan = kb.workgroupBuffer(ctx.fn, {threads}, i32);
  Value hist = kb.workgroupBuffer(ctx.fn, {experts}, i32);
  Value picked = kb.workgroupBuffer(ctx.fn, {2}, i32);
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getIndexType(), v).getResult();
  };
  auto toI32 = [&](Value v) { return arith::IndexCastOp::create(kb.b, kb.loc, i32, v).getResult(); };
  kb.forLoop(tid, kb.idx(tm), kb.idx(threads),
             [&](Value i) { kb.store(kb.i32(0), groupRows, {i}); });
  kb.forLoop(tid, kb.idx(experts), kb.idx(threads),
             [&](Value i) { kb.store(kb.i32(0), hist, {i}); });
  Value lo = kb.minui(kb.mul(tid, kb.idx(chunk)), kb.idx(rows));
  Value hi = kb.minui(kb.add(lo, kb.idx(chunk)), kb.idx(rows));
  kb.barrier();
  // The histogram (shared-memory atomics: counts, whatever their order).
  kb.forLoop(lo, hi, kb.idx(1), [&](Value t) {
    memref::AtomicRMWOp::create(kb.b, kb.loc, arith::AtomicRMWKind::addi, kb.i32(1), hist,
                                ValueRange{expertOf(t)});
  });
  kb.barrier();
  // Thread 0 walks the experts' tiles to block y's: (expert, tile), or
  // (experts, 0) past the last tile.
  kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
    Value y = kb.blockId(gpu::Dimension::y);
    SmallVector<Value> found = kb.forLoop(
        kb.idx(0), kb.idx(experts), kb.idx(1), {kb.idx(0), kb.idx(experts), kb.idx(0)},
        [&](Value e, ValueRange c) -> SmallVector<Value> {
          Value tiles = kb.divui(kb.add(toIndex(kb.load(hist, {e})), kb.idx(tm - 1)), kb.idx(tm));
          Value end = kb.add(c[0], tiles);
          Value here = arith::AndIOp::create(kb.b, kb.loc, kb.ult(y, end),
                                             kb.eq(c[1], kb.idx(experts)));
          return {end, kb.select(here, e, c[1]), kb.select(here, kb.sub(y, c[0]), c[2])};
        });
    kb.store(toI32(found[1]), picked, {kb.idx(0)});
    kb.store(toI32(found[2]), picked, {kb.idx(1)});
  });
  kb.barrier();
  bt = toIndex(kb.load(picked, {kb.idx(0)}));
  m0 = kb.mul(toIndex(kb.load(picked, {kb.idx(1)})), kb.idx(tm));
  auto plusIf = [&](Value n, Value c) { return kb.add(n, kb.select(c, kb.idx(1), kb.idx(0))); };
  Value mine = kb.forLoop(lo, hi, kb.idx(1), {kb.idx(0)},
                          [&](Value t, ValueRange n) -> SmallVector<Value> {
                            return {plusIf(n[0], kb.eq(expertOf(t), bt))};
                          })[0];
  kb.store(toI32(mine), scan, {tid});
  kb.barrier();
  for (int64_t off = 1; off < threads; off *= 2) {
    Value has = kb.ult(kb.idx(off - 1), tid); // tid >= off
    Value from = kb.select(has, kb.sub(tid, kb.idx(off)), kb.idx(0));
    Value add = kb.select(has, kb.load(scan, {from}), kb.i32(0));
    kb.barrier();
    kb.store(kb.add(kb.load(scan, {tid}), add), scan, {tid});
    kb.barrier();
  }
  groupCount = toIndex(kb.load(scan, {kb.idx(threads - 1)}));
  Value first = kb.sub(toIndex(kb.load(scan, {tid})), mine);
  kb.forLoop(lo, hi, kb.idx(1), {first}, [&](Value t, ValueRange rank) -> SmallVector<Value> {
    Value hit = kb.eq(expertOf(t), bt);
    // rank in [m0, m0 + tm): rank - m0 < tm unsigned.
    Value keep = arith::AndIOp::create(kb.b, kb.loc, hit,
                                       kb.ult(kb.sub(rank[0], m0), kb.idx(tm)));
    kb.ifThen(keep, [&] {
      kb.store(toI32(t), groupRows, {kb.sub(rank[0], m0)});
    });
    return {plusIf(rank[0], hit)};
  });
  kb.barrier();
}

} // namespace mlir::rlx::gpu_kernels::matmul
