//===- MatmulKernels.cpp - SIMT matmul and fused_matmul --------------------===//
//
// The plain SIMT fallback for rlx_mir.matmul and every stage of
// rlx_mir.fused_matmul (norm prologue, bias, activation or GLU, per-head
// RMSNorm, RoPE, residual), f32 accumulation (f64 for f64), one rounding at
// the end: the CPU path's numerics (MatmulLowering.cpp). The tensor-core
// kernels replace it on their fast paths.
//
// A block computes a TM × TN tile of one batch's output into a shared f32
// tile `Cs` (after bias and activation/GLU), then the epilogue reads `Cs`:
// head stages need a whole head per block (TN = head_dim, tiles aligned to
// heads), RoPE reads each element's pair partner. Two ways to fill `Cs`:
//  - tiled: TK-deep slices of A and B staged through shared memory, each
//    thread a 4 × (TN/tnThreads) register tile (rows M > 8);
//  - GEMV (decode, M ≤ 16): warps own output columns, lanes stride over K
//    with 16-byte vector loads of the [N, K] weight rows and a warp
//    reduction per row; split-K inside the block (S warps per column on
//    disjoint K ranges, partial sums combined in split order, then the
//    epilogue once). The heuristic: chooseKernel, chooseGemvConfig and
//    docs/gpu.md "Matmul kernels".
//  - tensor cores (bf16/f16 operands, sm_80+): 64 × TN tiles, eight warps
//    as 2 × 4, each warp (32 × TN/4) a grid of mma.sync m16n8k16 tiles fed
//    by ldmatrix from shared A[m][k] / B[n][k] slices 32 deep (rows padded
//    to 40 elements, so ldmatrix's eight 16-byte rows hit distinct banks);
//    f32 accumulators, then the same Cs and epilogue;
//  - wgmma (sm_90a): TMA + mbarrier pipeline + warpgroup MMA, warp-
//    specialized (WgmmaKernel.cpp), then the same Cs and epilogue.
// The norm prologue first computes the tile rows' statistics (a warp per
// row) into shared memory, then normalizes A as it is read (for tensor
// cores, rounded to the input type as HF's norm output is).
//
//===----------------------------------------------------------------------===//

#include "MatmulKernels.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using namespace mlir::rlx::gpu_kernels::matmul;

namespace mlir::rlx::gpu_kernels::matmul {

/// Row `row` of the tile space (m0 + local; local < tm) as a row of the
/// lhs and the output: itself, or in a grouped matmul the local-th row of
/// the block's expert.
static Value groupedRow(KernelBuilder &kb, Value groupRows, Value row, Value m0) {
  Value r = kb.load(groupRows, {kb.sub(row, m0)});
  return arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getIndexType(), r);
}


/// The grid's row tiles of a grouped matmul: every expert's rows in 64-row
/// tiles, expert after expert, at most ceil(T/tm) + experts - 1 of them.
static int64_t groupedRowTiles(const GemmProblem &p, int64_t tm) {
  return ceilDiv(p.rows, tm) + p.groupedExperts() - 1;
}

Value GemmBuilder::rowInRange(Value row) {
  return kb.ult(row, p.grouped() && !groupedGemv ? groupCount : kb.idx(p.rows));
}

SmallVector<Value> GemmBuilder::lhsPos(Value row, Value kIdx) {
  ArrayRef<int64_t> shape = shapeOf(p.lhs);
  size_t rank = shape.size();
  if (p.grouped() && !groupedGemv)
    return {groupedRow(kb, groupRows, row, m0), kIdx};
  if (p.grouped())
    return {row, kIdx};
  if (p.fused) {
    // lhs [..., K]: row over the leading dims.
    SmallVector<Value> pos =
        rank > 1 ? kb.delinearize(row, shape.drop_back()) : SmallVector<Value>{};
    pos.push_back(kIdx);
    return pos;
  }
  // [..., M, K] (or [..., K, M]) with batch dims broadcast from the output's.
  SmallVector<int64_t> outBatch(shapeOf(p.out).drop_back(2));
  SmallVector<Value> b = outBatch.empty() ? SmallVector<Value>{} : kb.delinearize(bt, outBatch);
  SmallVector<Value> pos;
  size_t lead = outBatch.size() - (rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d)
    pos.push_back(shape[d] == 1 ? kb.idx(0) : b[lead + d]);
  if (p.transA)
    pos.append({kIdx, row});
  else
    pos.append({row, kIdx});
  return pos;
}

SmallVector<Value> GemmBuilder::rhsPos(Value kIdx, Value col, Value expert) {
  ArrayRef<int64_t> shape = shapeOf(p.rhs);
  size_t rank = shape.size();
  SmallVector<Value> pos;
  if (p.grouped()) {
    pos.push_back(expert ? expert : bt); // [E, N, K]
  } else if (rank > 2) {
    SmallVector<int64_t> outBatch(shapeOf(p.out).drop_back(2));
    SmallVector<Value> b = kb.delinearize(bt, outBatch);
    size_t lead = outBatch.size() - (rank - 2);
    for (size_t d = 0; d + 2 < rank; ++d)
      pos.push_back(shape[d] == 1 ? kb.idx(0) : b[lead + d]);
  }
  if (p.transB)
    pos.append({col, kIdx});
  else
    pos.append({kIdx, col});
  return pos;
}

SmallVector<Value> GemmBuilder::outPos(Value row, Value col, Value out) {
  ArrayRef<int64_t> shape = shapeOf(out);
  if (p.grouped() && !groupedGemv)
    return {groupedRow(kb, groupRows, row, m0), col};
  if (p.grouped())
    return {row, col};
  if (p.fused) {
    SmallVector<Value> pos =
        shape.size() > 1 ? kb.delinearize(row, shape.drop_back()) : SmallVector<Value>{};
    pos.push_back(col);
    return pos;
  }
  SmallVector<int64_t> batch(shape.drop_back(2));
  SmallVector<Value> pos = batch.empty() ? SmallVector<Value>{} : kb.delinearize(bt, batch);
  pos.append({row, col});
  return pos;
}

/// A[row, k] in the accumulation type, normalized by the prologue.
Value GemmBuilder::loadA(Value row, Value kIdx) {
  Value a = kb.convert(kb.load(p.lhs, lhsPos(row, kIdx)), acc);
  return p.norm ? normalizeA(a, kb.sub(row, m0), kIdx) : a;
}

/// `count` A values of `row` (tile row `local`) from k0 on, normalized:
/// 16-byte vector loads where the rows allow them.
SmallVector<Value> GemmBuilder::loadARow(Value row, Value local, Value k0, int64_t count) {
  int64_t chunk = 16 / std::max<int64_t>(1, elementTypeOf(p.lhs).getIntOrFloatBitWidth() / 8);
  bool vec = (p.fused || !p.transA) && count % chunk == 0 &&
             vectorizable(p.lhs, shapeOf(p.lhs), chunk);
  SmallVector<Value> out;
  for (int64_t c = 0; c < count; c += vec ? chunk : 1) {
    Value kk = c ? kb.add(k0, kb.idx(c)) : k0;
    if (!vec) {
      out.push_back(loadA(row, kk));
      continue;
    }
    SmallVector<Value> v = kb.loadRow(p.lhs, lhsPos(row, kk), chunk, true);
    for (int64_t l = 0; l < chunk; ++l)
      out.push_back(normalizeA(kb.convert(v[l], acc), local, l ? kb.add(kk, kb.idx(l)) : kk));
  }
  return out;
}

/// The norm prologue on a of tile row `local` at k.
Value GemmBuilder::normalizeA(Value a, Value local, Value kIdx) {
  if (!p.norm)
    return a;
  if (p.normKind == NormKind::LayerNorm)
    a = kb.sub(a, kb.load(rowMean, {local}));
  a = kb.mul(a, kb.load(rowRstd, {local}));
  if (p.normWeight)
    a = kb.mul(a, kb.convert(kb.load(p.normWeight, {kIdx}), acc));
  if (p.normBias)
    a = kb.add(a, kb.convert(kb.load(p.normBias, {kIdx}), acc));
  // Rounded once to the lhs type, as the unfused norm's output (and the
  // tensor-core operand) is.
  Type in = elementTypeOf(p.lhs);
  return in == acc ? a : kb.convert(kb.convert(a, in), acc);
}

Value GemmBuilder::loadB(Value kIdx, Value col) {
  if (p.nvfp4())
    return nvfp4B(kIdx, col);
  return kb.convert(kb.load(p.rhs, rhsPos(kIdx, col)), acc);
}

/// Mean and rsqrt(var + eps) (LayerNorm) or rsqrt(mean(x²) + eps) of the
/// tile's rows: one warp per row, lanes over K, f32.
void GemmBuilder::rowStatistics() {
  int64_t warps = threads / 32;
  Value lane = kb.laneId(), warp = kb.warpId();
  Value zero = kb.f(acc, 0.0), kf = kb.f(acc, static_cast<double>(p.k));
  kb.forLoop(warp, kb.idx(tm), kb.idx(warps), [&](Value local) {
    Value row = kb.add(m0, local);
    // Rows past the end read row 0 (their statistics are never used).
    Value safeRow = kb.select(kb.ult(row, kb.idx(p.rows)), row, kb.idx(0));
    auto sumOver = [&](function_ref<Value(Value)> term) {
      Value part = kb.forLoop(lane, kb.idx(p.k), kb.idx(32), {zero},
                              [&](Value kIdx, ValueRange c) -> SmallVector<Value> {
                                return {kb.add(c[0], term(kIdx))};
                              })[0];
      return kb.warpReduce(Combine::Sum, part);
    };
    auto x = [&](Value kIdx) { return kb.convert(kb.load(p.lhs, lhsPos(safeRow, kIdx)), acc); };
    Value mean;
    if (p.normKind == NormKind::LayerNorm)
      mean = kb.fdiv(sumOver(x), kf);
    Value ss = sumOver([&](Value kIdx) {
      Value v = x(kIdx);
      if (mean)
        v = kb.sub(v, mean);
      return kb.mul(v, v);
    });
    Value rstd =
        math::RsqrtOp::create(kb.b, kb.loc, kb.add(kb.fdiv(ss, kf), kb.f(acc, p.normEps)));
    kb.ifThen(kb.eq(lane, kb.idx(0)), [&] {
      if (mean)
        kb.store(mean, rowMean, {local});
      kb.store(rstd, rowRstd, {local});
    });
  });
  kb.barrier();
}

/// act(gate [+ bias]) [· (up [+ bias])], in the accumulation type.
Value GemmBuilder::activate(Value gate, Value up, Value col) {
  if (p.bias) {
    gate = kb.add(gate, kb.convert(kb.load(p.bias, {col}), acc));
    if (up)
      up = kb.add(up, kb.convert(kb.load(p.bias, {kb.add(col, kb.idx(p.cols))}), acc));
  }
  Value z = mir::buildActivationScalar(kb.b, kb.loc, p.act, gate);
  return up ? kb.mul(z, up) : z;
}

void GemmBuilder::tiledMainLoop() {
  Value tid = kb.threadId();
  Value as = kb.workgroupBuffer(ctx.fn, {tk, tm}, acc);
  Value bs = kb.workgroupBuffer(ctx.fn, {tk, tn}, acc);
  Value bs2 = p.glu ? kb.workgroupBuffer(ctx.fn, {tk, tn}, acc) : Value();
  Value ty = kb.divui(tid, kb.idx(tnThreads)), tx = kb.remui(tid, kb.idx(tnThreads));
  int64_t nAcc = kRowsPerThread * colsPerThread * (p.glu ? 2 : 1);
  SmallVector<Value> inits(nAcc, kb.f(acc, 0.0));
  Value zero = kb.f(acc, 0.0);
  SmallVector<Value> accs = kb.forLoop(
      kb.idx(0), kb.idx(p.k), kb.idx(tk), inits,
      [&](Value k0, ValueRange carried) -> SmallVector<Value> {
        // Stage A[m0 : m0+tm, k0 : k0+tk] as As[kk][mm] (consecutive threads
        // read consecutive k, or consecutive m when A is transposed).
        kb.forLoop(tid, kb.idx(tm * tk), kb.idx(kThreads), [&](Value e) {
          Value mm = p.transA ? kb.remui(e, kb.idx(tm)) : kb.divui(e, kb.idx(tk));
          Value kk = p.transA ? kb.divui(e, kb.idx(tm)) : kb.remui(e, kb.idx(tk));
          Value row = kb.add(m0, mm), kIdx = kb.add(k0, kk);
          Value valid = arith::AndIOp::create(kb.b, kb.loc, rowInRange(row),
                                              kb.ult(kIdx, kb.idx(p.k)));
          kb.store(kb.ifElse(valid, [&] { return loadA(row, kIdx); }, zero), as, {kk, mm});
        });
        // Stage B[k0 : k0+tk, n0 : n0+tn] (and the up half) as Bs[kk][nn].
        auto stageB = [&](Value buffer, int64_t colOffset) {
          kb.forLoop(tid, kb.idx(tn * tk), kb.idx(kThreads), [&](Value e) {
            Value nn = p.transB ? kb.divui(e, kb.idx(tk)) : kb.remui(e, kb.idx(tn));
            Value kk = p.transB ? kb.remui(e, kb.idx(tk)) : kb.divui(e, kb.idx(tn));
            Value col = kb.add(n0, nn), kIdx = kb.add(k0, kk);
            Value valid = arith::AndIOp::create(kb.b, kb.loc, kb.ult(col, kb.idx(p.cols)),
                                                kb.ult(kIdx, kb.idx(p.k)));
            Value v = kb.ifElse(
                valid, [&] { return loadB(kIdx, kb.add(col, kb.idx(colOffset))); }, zero);
            kb.store(v, buffer, {kk, nn});
          });
        };
        stageB(bs, 0);
        if (bs2)
          stageB(bs2, p.cols);
        kb.barrier();
        // Register tile: rows ty·4 + i, columns tx + j·tnThreads.
        SmallVector<Value> next = kb.forLoop(
            kb.idx(0), kb.idx(tk), kb.idx(1), carried,
            [&](Value kk, ValueRange c) -> SmallVector<Value> {
              SmallVector<Value> a, bv, bu;
              for (int64_t i = 0; i < kRowsPerThread; ++i) {
                Value mm = kb.add(kb.mul(ty, kb.idx(kRowsPerThread)), kb.idx(i));
                a.push_back(kb.load(as, {kk, kb.minui(mm, kb.idx(tm - 1))}));
              }
              for (int64_t j = 0; j < colsPerThread; ++j) {
                Value nn = kb.add(tx, kb.idx(j * tnThreads));
                bv.push_back(kb.load(bs, {kk, nn}));
                if (bs2)
                  bu.push_back(kb.load(bs2, {kk, nn}));
              }
              SmallVector<Value> r(c);
              for (int64_t i = 0; i < kRowsPerThread; ++i)
                for (int64_t j = 0; j < colsPerThread; ++j) {
                  int64_t at = i * colsPerThread + j;
                  r[at] = math::FmaOp::create(kb.b, kb.loc, a[i], bv[j], r[at]);
                  if (bs2) {
                    int64_t up = kRowsPerThread * colsPerThread + at;
                    r[up] = math::FmaOp::create(kb.b, kb.loc, a[i], bu[j], r[up]);
                  }
                }
              return r;
            });
        kb.barrier();
        return next;
      });
  // Bias, activation or GLU into Cs.
  kb.ifThen(kb.ult(ty, kb.idx(tmThreads)), [&] {
    for (int64_t i = 0; i < kRowsPerThread; ++i)
      for (int64_t j = 0; j < colsPerThread; ++j) {
        Value mm = kb.add(kb.mul(ty, kb.idx(kRowsPerThread)), kb.idx(i));
        Value nn = kb.add(tx, kb.idx(j * tnThreads));
        int64_t at = i * colsPerThread + j;
        Value up = p.glu ? accs[kRowsPerThread * colsPerThread + at] : Value();
        Value col = kb.minui(kb.add(n0, nn), kb.idx(p.cols - 1));
        kb.store(activate(accs[at], up, col), cs, {mm, nn});
      }
  });
  kb.barrier();
}

/// Why the tensor-core kernel cannot compute this matmul ("" when it can):
/// bf16/f16 operands of one type with f32 accumulation on sm_80+, TN a
/// multiple of 32 up to 128, and 64 × TN tiles within the 48 KiB of static
/// shared memory (two pipeline stages if they fit, else one).
std::string GemmBuilder::whyNoTensorCoreOperands(bool chipHas, const std::string &chipWhy,
                                                 bool nvfp4Weights) {
  Type a = elementTypeOf(p.lhs), b = elementTypeOf(p.rhs);
  if (!ctx.tensorCores)
    return "tensor-cores=false";
  if (p.nvfp4() && !nvfp4Weights)
    return "its weight is NVFP4 (dequantized by the wgmma, GEMV and SIMT kernels)";
  if (!chipHas)
    return chipWhy;
  if (p.nvfp4())
    b = a; // dequantized to the lhs type in the kernel
  if (!(a == b && (a.isBF16() || a.isF16()) && acc.isF32()))
    return "its operands are not both bf16 or both f16";
  return "";
}

std::string GemmBuilder::whyNoTensorCores() {
  if (std::string why = whyNoTensorCoreOperands(
          ctx.target.hasMmaSyncBF16(), ctx.target.chip + " has no bf16/f16 mma.sync (sm_80+)");
      !why.empty())
    return why;
  if (!(tn % 32 == 0 && tn <= 128))
    return "a head_dim of " + std::to_string(tn) + " (tensor-core tiles: 32, 64, 96 or 128)";
  const int64_t rows = 64, stride = 40;
  auto bytes = [&](int64_t stages) {
    int64_t tiles = stages * (rows + tn * (p.glu ? 2 : 1)) * stride * 2;
    // Rows, the scan, the histogram and the block's tile.
    int64_t grouped = p.grouped() ? rows * 4 + kThreads * 4 + p.groupedExperts() * 4 + 8 : 0;
    return tiles + rows * tn * 4 /*Cs*/ + 3 * rows * 4 /*row and head statistics*/ + grouped;
  };
  for (int64_t stages : {2, 1})
    if (bytes(stages) <= nvvm::NVVMTarget::kDefaultSharedMemoryLimit) {
      tcStages = stages;
      return "";
    }
  return "its tiles exceed 48 KiB of shared memory";
}

/// The shared-memory address of buffer[row][col] (16-bit elements, rows of
/// `rowElems`) as an !llvm.ptr<3>, for ldmatrix.
Value GemmBuilder::sharedAddress(Value buffer, Value row, Value col, int64_t rowElems) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc, buffer);
  Value elems = kb.add(kb.mul(row, kb.idx(rowElems)), col);
  Value addr = kb.add(base, kb.mul(elems, kb.idx(2)));
  Value i64 = arith::IndexCastOp::create(kb.b, kb.loc, kb.b.getI64Type(), addr);
  return LLVM::IntToPtrOp::create(kb.b, kb.loc, LLVM::LLVMPointerType::get(kb.b.getContext(), 3),
                                  i64);
}

/// Whether `m` (identity layout, K innermost, K a multiple of 8 elements of
/// 16 bits) can be staged with 16-byte cp.async copies.
static bool asyncCopyable(Value m, bool kInnermost, int64_t k) {
  auto t = dyn_cast<MemRefType>(m.getType());
  return t && kInnermost && t.getLayout().isIdentity() && k % 8 == 0 &&
         t.getElementTypeBitWidth() == 16;
}

void GemmBuilder::tensorCoreMainLoop() {
  constexpr int64_t bk = 32, stride = bk + 8, warpsM = 2, warpsN = 4;
  const int64_t stages = tcStages;
  const int64_t wm = tm / warpsM, wn = tn / warpsN, mTiles = wm / 16, nTiles = wn / 8;
  const int64_t kTiles = ceilDiv(p.k, bk);
  MLIRContext *mctx = kb.b.getContext();
  Type in = elementTypeOf(p.lhs), i32 = kb.b.getI32Type(), f32 = kb.b.getF32Type();
  bool bf16 = in.isBF16();
  Type operand = bf16 ? i32 : Type(VectorType::get({2}, in));
  Value tid = kb.threadId();
  // Two stages of A[m][k] and B[n][k] (and the GLU up half) in shared memory.
  Value as = kb.workgroupBuffer(ctx.fn, {stages, tm, stride}, in);
  Value bs = kb.workgroupBuffer(ctx.fn, {stages, tn, stride}, in);
  Value bs2 = p.glu ? kb.workgroupBuffer(ctx.fn, {stages, tn, stride}, in) : Value();
  // Plain copies go through cp.async (16 bytes, zero-filled past the edges);
  // A under a norm prologue is computed, so it is stored by the threads.
  bool asyncA = !p.norm && asyncCopyable(p.lhs, !p.transA, p.k) &&
                (p.fused || shapeOf(p.lhs).size() == 2);
  bool asyncB = asyncCopyable(p.rhs, p.transB, p.k) &&
                (shapeOf(p.rhs).size() == 2 || p.grouped());
  Value lane = kb.remui(tid, kb.idx(32)), warp = kb.divui(tid, kb.idx(32));
  Value wm0 = kb.mul(kb.divui(warp, kb.idx(warpsN)), kb.idx(wm));
  Value wn0 = kb.mul(kb.remui(warp, kb.idx(warpsN)), kb.idx(wn));
  const int64_t perSet = mTiles * nTiles * 4;
  SmallVector<Value> inits(perSet * (p.glu ? 2 : 1), kb.f(f32, 0.0));
  Value zero = kb.f(in, 0.0);
  auto i4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, i32));
  auto i2 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(2, i32));
  auto f4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, f32));
  auto shape8x8 = NVVM::LdStMatrixShapeAttr::get(mctx, 8, 8);
  auto ldmatrix = [&](Type res, Value ptr, uint32_t num) {
    return NVVM::LdMatrixOp::create(kb.b, kb.loc, res, ptr, num, NVVM::MMALayout::row, shape8x8,
                                    NVVM::LdStMatrixEltType::B16)
        .getResult();
  };
  auto field = [&](Value st, int64_t i) -> Value {
    Value v = LLVM::ExtractValueOp::create(kb.b, kb.loc, st, ArrayRef<int64_t>{i});
    return operand == i32 ? v : LLVM::BitcastOp::create(kb.b, kb.loc, operand, v).getResult();
  };
  // Row `row` of a stage of a [stages][rows][stride] buffer as a 2-D row index.
  auto stageRow = [&](Value stage, int64_t rows, Value row) {
    return kb.add(kb.mul(stage, kb.idx(rows)), row);
  };
  // One 16-byte cp.async of src[row][k .. k+8] into dst[stage][r][kk .. kk+8].
  auto copy16 = [&](Value dst, Value stage, int64_t rows, Value r, Value kk, Value src,
                    ArrayRef<Value> srcPos, Value valid) {
    kb.copyAsync16(sharedAddress(dst, stageRow(stage, rows, r), kk, stride), src, srcPos, valid);
  };
  // Stage k-tile `kt` into stage `stage`: cp.async where it applies, else
  // loads rounded once to the input type (the prologue's normalized A).
  // A grouped matmul's rows come from the block's row list: with one A
  // copy per thread each thread reads the same row every k-tile, so it
  // looks the row up once, before the loop.
  bool hoistA = asyncA && p.grouped() && tm * bk / 8 == kThreads;
  Value aLocal, aRow, aValid;
  if (hoistA) {
    aLocal = kb.divui(tid, kb.idx(bk / 8));
    aRow = lhsPos(kb.add(m0, aLocal), kb.idx(0))[0];
    aValid = rowInRange(kb.add(m0, aLocal));
  }
  auto stageTile = [&](Value kt, Value stage) {
    Value k0 = kb.mul(kt, kb.idx(bk));
    if (hoistA) {
      Value kk = kb.mul(kb.remui(tid, kb.idx(bk / 8)), kb.idx(8)), kIdx = kb.add(k0, kk);
      Value valid = arith::AndIOp::create(kb.b, kb.loc, aValid, kb.ult(kIdx, kb.idx(p.k)));
      copy16(as, stage, tm, aLocal, kk, p.lhs, {aRow, kIdx}, valid);
    } else if (asyncA) {
      kb.forLoop(tid, kb.idx(tm * bk / 8), kb.idx(kThreads), [&](Value e) {
        Value mm = kb.divui(e, kb.idx(bk / 8)), kk = kb.mul(kb.remui(e, kb.idx(bk / 8)), kb.idx(8));
        Value row = kb.add(m0, mm), kIdx = kb.add(k0, kk);
        Value valid = arith::AndIOp::create(kb.b, kb.loc, rowInRange(row),
                                            kb.ult(kIdx, kb.idx(p.k)));
        copy16(as, stage, tm, mm, kk, p.lhs, lhsPos(kb.minui(row, kb.idx(p.rows - 1)), kIdx),
               valid);
      });
    } else {
      kb.forLoop(tid, kb.idx(tm * bk), kb.idx(kThreads), [&](Value e) {
        Value mm = kb.divui(e, kb.idx(bk)), kk = kb.remui(e, kb.idx(bk));
        Value row = kb.add(m0, mm), kIdx = kb.add(k0, kk);
        Value valid = arith::AndIOp::create(kb.b, kb.loc, rowInRange(row),
                                            kb.ult(kIdx, kb.idx(p.k)));
        Value v = kb.ifElse(valid, [&] { return kb.convert(loadA(row, kIdx), in); }, zero);
        kb.store(v, as, {stage, mm, kk});
      });
    }
    auto stageB = [&](Value buffer, int64_t colOffset) {
      if (asyncB) {
        kb.forLoop(tid, kb.idx(tn * bk / 8), kb.idx(kThreads), [&](Value e) {
          Value nn = kb.divui(e, kb.idx(bk / 8)),
                kk = kb.mul(kb.remui(e, kb.idx(bk / 8)), kb.idx(8));
          Value col = kb.add(n0, nn), kIdx = kb.add(k0, kk);
          Value valid = arith::AndIOp::create(kb.b, kb.loc, kb.ult(col, kb.idx(p.cols)),
                                              kb.ult(kIdx, kb.idx(p.k)));
          Value c = kb.add(kb.minui(col, kb.idx(p.cols - 1)), kb.idx(colOffset));
          copy16(buffer, stage, tn, nn, kk, p.rhs, rhsPos(kIdx, c), valid);
        });
        return;
      }
      kb.forLoop(tid, kb.idx(tn * bk), kb.idx(kThreads), [&](Value e) {
        Value nn = kb.divui(e, kb.idx(bk)), kk = kb.remui(e, kb.idx(bk));
        Value col = kb.add(n0, nn), kIdx = kb.add(k0, kk);
        Value valid = arith::AndIOp::create(kb.b, kb.loc, kb.ult(col, kb.idx(p.cols)),
                                            kb.ult(kIdx, kb.idx(p.k)));
        Value v = kb.ifElse(
            valid, [&] { return kb.convert(loadB(kIdx, kb.add(col, kb.idx(colOffset))), in); },
            zero);
        kb.store(v, buffer, {stage, nn, kk});
      });
    };
    stageB(bs, 0);
    if (bs2)
      stageB(bs2, p.cols);
    NVVM::CpAsyncCommitGroupOp::create(kb.b, kb.loc);
  };
  // The pipeline (two stages): tile 0 is in flight before the loop;
  // iteration kt starts tile kt + 1 into the other stage, waits for tile kt
  // and computes on it. One stage: stage, wait, compute.
  if (stages == 2)
    stageTile(kb.idx(0), kb.idx(0));
  SmallVector<Value> accs = kb.forLoop(
      kb.idx(0), kb.idx(kTiles), kb.idx(1), inits,
      [&](Value kt, ValueRange carried) -> SmallVector<Value> {
        Value stage = kb.remui(kt, kb.idx(stages));
        if (stages == 1) {
          stageTile(kt, stage);
          NVVM::CpAsyncWaitGroupOp::create(kb.b, kb.loc, 0);
        } else {
          Value next = kb.add(kt, kb.idx(1));
          Value more = kb.ult(next, kb.idx(kTiles));
          kb.ifThen(more, [&] { stageTile(next, kb.remui(next, kb.idx(stages))); });
          // Tile kt's group is complete when at most the newer one is pending.
          auto ifOp = scf::IfOp::create(kb.b, kb.loc, more, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard g(kb.b);
          kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          NVVM::CpAsyncWaitGroupOp::create(kb.b, kb.loc, 1);
          kb.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
          NVVM::CpAsyncWaitGroupOp::create(kb.b, kb.loc, 0);
        }
        kb.barrier();
        SmallVector<Value> r(carried);
        // ldmatrix addressing: lane l gives row l % 8 (+ 8 for matrices 1, 3)
        // and column 8 for matrices 2, 3 (A, .x4); for B (.x2) rows l % 8
        // of the n-tile, column 8 for lanes 8..15.
        Value m = kb.divui(lane, kb.idx(8)), r8 = kb.remui(lane, kb.idx(8));
        Value aRow = kb.add(r8, kb.mul(kb.remui(m, kb.idx(2)), kb.idx(8)));
        Value aCol = kb.mul(kb.divui(m, kb.idx(2)), kb.idx(8));
        Value bCol = kb.mul(kb.remui(m, kb.idx(2)), kb.idx(8));
        for (int64_t ks = 0; ks < bk; ks += 16) {
          SmallVector<SmallVector<Value>> a(mTiles);
          for (int64_t i = 0; i < mTiles; ++i) {
            Value row = stageRow(stage, tm, kb.add(wm0, kb.add(kb.idx(i * 16), aRow)));
            Value st = ldmatrix(i4, sharedAddress(as, row, kb.add(aCol, kb.idx(ks)), stride), 4);
            for (int64_t f = 0; f < 4; ++f)
              a[i].push_back(field(st, f));
          }
          for (auto [set, buffer] : llvm::enumerate(SmallVector<Value>{bs, bs2})) {
            if (!buffer)
              continue;
            for (int64_t j = 0; j < nTiles; ++j) {
              Value row = stageRow(stage, tn, kb.add(wn0, kb.add(kb.idx(j * 8), r8)));
              Value st =
                  ldmatrix(i2, sharedAddress(buffer, row, kb.add(bCol, kb.idx(ks)), stride), 2);
              SmallVector<Value> b{field(st, 0), field(st, 1)};
              for (int64_t i = 0; i < mTiles; ++i) {
                int64_t at = set * perSet + (i * nTiles + j) * 4;
                SmallVector<Value> c(r.begin() + at, r.begin() + at + 4);
                NVVM::MMATypes t = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
                auto mma = NVVM::MmaOp::create(
                    kb.b, kb.loc, f4, a[i], b, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
                    std::nullopt, std::array<NVVM::MMATypes, 2>{t, t},
                    std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
                for (int64_t f = 0; f < 4; ++f)
                  r[at + f] = LLVM::ExtractValueOp::create(kb.b, kb.loc, mma.getRes(),
                                                           ArrayRef<int64_t>{f});
              }
            }
          }
        }
        // The next iteration overwrites the other stage, which every warp
        // has finished reading only after this barrier.
        kb.barrier();
        return r;
      });
  // Bias, activation or GLU into Cs, from the mma accumulator layout:
  // element f of tile (i, j) is row g + 8·(f / 2), column 2·t + f % 2.
  Value g = kb.divui(lane, kb.idx(4)), t = kb.remui(lane, kb.idx(4));
  for (int64_t i = 0; i < mTiles; ++i)
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t f = 0; f < 4; ++f) {
        Value mm = kb.add(wm0, kb.add(g, kb.idx(i * 16 + 8 * (f / 2))));
        Value nn = kb.add(wn0, kb.add(kb.mul(t, kb.idx(2)), kb.idx(j * 8 + f % 2)));
        int64_t at = (i * nTiles + j) * 4 + f;
        Value up = p.glu ? accs[perSet + at] : Value();
        Value col = kb.minui(kb.add(n0, nn), kb.idx(p.cols - 1));
        kb.store(activate(accs[at], up, col), cs, {mm, nn});
      }
  kb.barrier();
}

/// Cs → head norm, RoPE, residual, rounding, the output.
void GemmBuilder::epilogue() {
  Value tid = kb.threadId();
  int64_t d = p.headDim;
  Value head = p.headStages() ? kb.divui(n0, kb.idx(d)) : Value();
  if (p.headNormWeight) {
    // rsqrt(mean over the head of v² + eps) per tile row (the tile is one
    // head wide).
    kb.forLoop(tid, kb.idx(tm), kb.idx(threads), [&](Value mm) {
      Value ss = kb.forLoop(kb.idx(0), kb.idx(tn), kb.idx(1), {kb.f(acc, 0.0)},
                            [&](Value c, ValueRange s) -> SmallVector<Value> {
                              Value v = kb.load(cs, {mm, c});
                              return {kb.add(s[0], kb.mul(v, v))};
                            })[0];
      Value r = math::RsqrtOp::create(
          kb.b, kb.loc,
          kb.add(kb.fdiv(ss, kb.f(acc, static_cast<double>(d))), kb.f(acc, p.headNormEps)));
      kb.store(r, headRstd, {mm});
    });
    kb.barrier();
  }
  // The head-normed value at tile column c of row mm.
  auto headValue = [&](Value mm, Value c) {
    Value v = kb.load(cs, {mm, c});
    if (!p.headNormWeight)
      return v;
    Value inHeads = kb.ult(head, kb.idx(p.headNormHeads));
    Value safeHead = kb.select(inHeads, head, kb.idx(0));
    Value w = kb.convert(kb.load(p.headNormWeight, {safeHead, c}), acc);
    return kb.select(inHeads, kb.mul(kb.mul(v, kb.load(headRstd, {mm})), w), v);
  };
  ArrayRef<int64_t> lhsShape = shapeOf(p.lhs);
  int64_t seq = lhsShape.size() == 3 ? lhsShape[1] : numElements(lhsShape.drop_back());
  Type et = elementTypeOf(p.out);
  kb.forLoop(tid, kb.idx(tm * tn), kb.idx(threads), [&](Value e) {
    Value mm = kb.divui(e, kb.idx(tn)), c = kb.remui(e, kb.idx(tn));
    Value row = kb.add(m0, mm), col = kb.add(n0, c);
    Value valid = arith::AndIOp::create(kb.b, kb.loc, rowInRange(row),
                                        kb.ult(col, kb.idx(p.cols)));
    kb.ifThen(valid, [&] {
      Value v = headValue(mm, c);
      if (p.ropeCos) {
        Value rotates = arith::AndIOp::create(kb.b, kb.loc, kb.ult(head, kb.idx(p.ropeHeads)),
                                              kb.ult(c, kb.idx(p.rotary)));
        auto ifOp = scf::IfOp::create(kb.b, kb.loc, TypeRange{acc}, rotates, true);
        {
          OpBuilder::InsertionGuard g(kb.b);
          kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          RopePair pair = ropePair(kb, c, p.rotary, p.ropeStyle);
          // Table row of this lhs row: [S, r/2] by s, [B, S, r/2] by (b, s).
          SmallVector<Value> tpos;
          if (shapeOf(p.ropeCos).size() == 3)
            tpos.push_back(kb.divui(row, kb.idx(seq)));
          tpos.append({kb.remui(row, kb.idx(seq)), pair.column});
          Value cv = kb.convert(kb.loadBroadcast(p.ropeCos, tpos), acc);
          Value sv = kb.convert(kb.loadBroadcast(p.ropeSin, tpos), acc);
          scf::YieldOp::create(kb.b, kb.loc,
                               rotate(kb, v, headValue(mm, pair.partner), cv, sv, pair.first));
          kb.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
          scf::YieldOp::create(kb.b, kb.loc, v);
        }
        v = ifOp.getResult(0);
      }
      if (p.residual)
        v = kb.add(v, kb.convert(kb.load(p.residual, outPos(row, col, p.residual)), acc));
      kb.store(kb.convert(v, et), p.out, outPos(row, col, p.out));
    });
  });
}

/// The kernel for this matmul (docs/gpu.md, "Matmul kernels"): GEMV for at
/// most 16 rows (decode: bound by reading the weights once), else tensor
/// cores where they apply, else tiled SIMT. matmul-kernel names a
/// preference: the kernel where it can compute the matmul, else the
/// heuristic's with a remark saying why; with strict-kernels a kernel that
/// cannot is an error.
LogicalResult GemmBuilder::chooseKernel() {
  StringRef forced = ctx.matmulKernel;
  constexpr int64_t kGemvRows = 16;
  std::string why;
  // A grouped matmul runs on the GEMV kernel (decode), the mma.sync
  // kernel, else SIMT.
  bool grouped = p.grouped();
  const std::string groupedWhy = ": a grouped matmul runs on gemv, tensor-cores or simt";
  if (grouped && (forced == "wgmma" || forced == "tcgen05")) {
    why = groupedWhy;
  } else if (forced == "gemv") {
    if (p.rows > kGemvRows)
      why = "on " + std::to_string(p.rows) + " rows (the gemv kernel takes at most " +
            std::to_string(kGemvRows) + ")";
    else if (!gemvTileFits())
      why = ": " + std::to_string(p.rows) + " rows of head_dim " + std::to_string(p.headDim) +
            " exceed its shared memory";
    gemv = why.empty();
  } else if (forced == "wgmma") {
    if (std::string w = whyNoWgmma(); !w.empty())
      why = ": " + w;
    wgmma = why.empty();
  } else if (forced == "tcgen05") {
    if (std::string w = whyNoTcgen05(); !w.empty())
      why = ": " + w;
    tcgen05 = why.empty();
  } else if (forced == "tensor-cores") {
    if (std::string w = whyNoTensorCores(); !w.empty())
      why = ": " + w;
    tensorCores = why.empty();
  } else if (forced == "simt") {
    return success();
  }
  if (!why.empty() && ctx.strictKernels)
    return unsupported(ctx, "matmul-kernel=" + forced + (why[0] == ':' ? "" : " ") + why);
  if (forced == "auto" || !why.empty()) {
    // tcgen05 (W4A4: it quantizes the activations) changes the numbers, so
    // only matmul-kernel=tcgen05 picks it.
    gemv = p.rows <= kGemvRows && gemvTileFits();
    wgmma = !grouped && !gemv && whyNoWgmma().empty();
    tensorCores = !gemv && !wgmma && canUseTensorCores();
  }
  if (!why.empty())
    ctx.root->emitRemark("'")
        << ctx.root->getName() << "': matmul-kernel=" << forced << " does not apply" << (why[0] == ':' ? "" : " ") << why << "; "
        << (gemv ? "gemv" : wgmma ? "wgmma" : tensorCores ? "tensor-cores" : "simt")
        << " instead (strict-kernels makes this an error)";
  return success();
}

FailureOr<LaunchConfig> GemmBuilder::build() {
  LaunchConfig launch;
  if (p.headStages()) {
    // One head per block.
    tn = p.headDim;
    if (tn <= 0 || tn > 1024)
      return unsupported(ctx, "a head_dim of " + Twine(tn) + " in a matmul epilogue");
  } else {
    tn = 64;
  }
  if (failed(chooseKernel()))
    return failure();
  if (gemv) {
    tm = std::max<int64_t>(p.rows, 1);
    groupedGemv = p.grouped();
    if (failed(chooseGemvConfig()))
      return failure();
  } else if (tensorCores) {
    tm = 64;
  } else if (wgmma) {
    // tm, tn, threads: whyNoWgmma.
  } else if (tcgen05) {
    tm = tn = threads = 128;
  } else {
    colsPerThread = tn % 4 == 0 ? 4 : tn % 2 == 0 ? 2 : 1;
    tnThreads = tn / colsPerThread;
    if (tnThreads > kThreads) {
      colsPerThread = ceilDiv(tn, kThreads);
      if (tn % colsPerThread != 0)
        return unsupported(ctx, "a head_dim of " + Twine(tn) + " in a matmul epilogue");
      tnThreads = tn / colsPerThread;
    }
    tmThreads = kThreads / tnThreads;
    tm = tmThreads * kRowsPerThread;
    if (tn > 128)
      tk = 8;
  }
  launch.block = {threads, 1, 1};
  launch.grid = {ceilDiv(p.cols, tn),
                 p.grouped() && !groupedGemv ? groupedRowTiles(p, tm) : ceilDiv(p.rows, tm),
                 p.grouped() ? 1 : p.batches};
  if (launch.grid[1] > 65535 || launch.grid[2] > 65535)
    return unsupported(ctx, "a matmul with more than 65535 row tiles or batches");
  if (p.cols == 0 || p.rows == 0 || p.batches == 0) {
    launch.grid = {1, 1, 1};
    return launch;
  }
  n0 = kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(tn));
  m0 = kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(tm));
  bt = kb.blockId(gpu::Dimension::z);
  bool grouped = p.grouped() && !groupedGemv;
  if (groupedGemv) {
    // Every row of the product is in this block's tile (m0 = 0).
    for (int64_t mm = 0; mm < tm; ++mm) {
      Value e = expertOf(kb.idx(mm));
      if (p.zeroOutOfRange) {
        rowInExperts.push_back(kb.ult(e, kb.idx(p.batches)));
        e = kb.minui(e, kb.idx(p.batches - 1));
      }
      rowExperts.push_back(e);
    }
  }
  if (wgmma) {
    if (failed(wgmmaSetup(launch)))
      return failure();
  } else if (tcgen05) {
    if (failed(tcgen05Setup(launch)))
      return failure();
  } else {
    cs = kb.workgroupBuffer(ctx.fn, {tm, tn}, acc);
  }
  if (p.norm) {
    rowRstd = kb.workgroupBuffer(ctx.fn, {tm}, acc);
    if (p.normKind == NormKind::LayerNorm)
      rowMean = kb.workgroupBuffer(ctx.fn, {tm}, acc);
    rowStatistics();
  }
  if (p.headNormWeight && !headRstd)
    headRstd = kb.workgroupBuffer(ctx.fn, {tm}, acc);
  // Empty sums: Cs = activate(0).
  auto emptySums = [&] {
    kb.forLoop(kb.threadId(), kb.idx(tm * tn), kb.idx(threads), [&](Value e) {
      Value mm = kb.divui(e, kb.idx(tn)), c = kb.remui(e, kb.idx(tn));
      Value col = kb.minui(kb.add(n0, c), kb.idx(p.cols - 1));
      Value zero = kb.f(acc, 0.0);
      kb.store(activate(zero, p.glu ? zero : Value(), col), cs, {mm, c});
    });
    kb.barrier();
  };
  auto mainLoopAndEpilogue = [&] {
    if (p.k == 0) {
      emptySums();
    } else if (gemv) {
      gemvMainLoop();
    } else if (tensorCores) {
      tensorCoreMainLoop();
    } else if (wgmma) {
      wgmmaMainLoop();
    } else if (tcgen05) {
      tcgen05MainLoop();
    } else {
      tiledMainLoop();
    }
    // A persistent wgmma kernel ran the epilogue per tile.
    if (!(wgmma && wgPersistent))
      epilogue();
  };
  if (grouped) {
    // A grouped matmul's tiles past its expert's rows have nothing to do
    // (the whole block agrees: groupCount is block-uniform).
    groupedRows();
    Value active = kb.ult(m0, groupCount);
    if (!p.zeroOutOfRange) {
      kb.ifThen(active, mainLoopAndEpilogue);
    } else {
      // Pseudo-expert E's rows (ids out of range) are zeros.
      Value zeros = kb.eq(bt, kb.idx(p.batches));
      kb.ifThen(arith::AndIOp::create(kb.b, kb.loc, active, zeros), [&] {
        emptySums();
        epilogue();
      });
      kb.ifThen(arith::AndIOp::create(kb.b, kb.loc, active, kb.ult(bt, kb.idx(p.batches))),
                mainLoopAndEpilogue);
    }
  } else {
    mainLoopAndEpilogue();
  }
  return launch;
}

struct MatmulTemplate : KernelTemplate {
  StringRef name() const override { return "matmul"; }
  bool matches(Operation *root) const override {
    return isa<mir::MatmulOp, mir::FusedMatmulOp, mir::Nvfp4MatmulOp, mir::GroupedMatmulOp>(
        root);
  }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    GemmProblem p;
    p.out = ctx.outputs[0];
    auto opnd = [&](Value v) { return v ? ctx.operand(v) : Value(); };
    if (auto mm = dyn_cast<mir::MatmulOp>(ctx.root)) {
      p.lhs = opnd(mm.getLhs());
      p.rhs = opnd(mm.getRhs());
      p.transA = mm.getTransposeA();
      p.transB = mm.getTransposeB();
      ArrayRef<int64_t> out = shapeOf(p.out);
      p.batches = numElements(out.drop_back(2));
      p.rows = out[out.size() - 2];
      p.cols = out.back();
      ArrayRef<int64_t> ls = shapeOf(p.lhs);
      p.k = p.transA ? ls[ls.size() - 2] : ls.back();
      if (!p.lhs || !p.rhs)
        return unsupported(ctx, "matmul operands that are not kernel inputs");
      return GemmBuilder(ctx, p).build();
    }
    if (auto g = dyn_cast<mir::GroupedMatmulOp>(ctx.root)) {
      // Rows [T, K] through the stacked nn.Linear weights [E, N, K].
      p.lhs = opnd(g.getInput());
      p.rhs = opnd(g.getWeight());
      p.ids = opnd(g.getIds());
      p.zeroOutOfRange = g.getZeroOutOfRange();
      if (!p.lhs || !p.rhs || !p.ids)
        return unsupported(ctx, "grouped_matmul operands that are not kernel inputs");
      p.transB = true;
      ArrayRef<int64_t> ws = shapeOf(p.rhs);
      p.batches = ws[0];
      p.cols = ws[1];
      p.k = ws[2];
      p.rows = shapeOf(p.lhs)[0];
      return GemmBuilder(ctx, p).build();
    }
    if (auto q = dyn_cast<mir::Nvfp4MatmulOp>(ctx.root)) {
      // A fused_matmul without stages: lhs [..., K], the output [..., N].
      p.fused = true;
      p.lhs = opnd(q.getInput());
      p.rhs = opnd(q.getWeight());
      p.rhsScales = opnd(q.getScales());
      p.rhsGlobal = opnd(q.getGlobalScale());
      p.transB = q.getLayout() == WeightLayout::OutIn;
      if (!p.lhs || !p.rhs || !p.rhsScales || !p.rhsGlobal)
        return unsupported(ctx, "nvfp4_matmul operands that are not kernel inputs");
      ArrayRef<int64_t> ls = shapeOf(p.lhs);
      p.k = ls.back();
      p.rows = numElements(ls.drop_back());
      p.cols = shapeOf(p.out).back();
      return GemmBuilder(ctx, p).build();
    }
    auto fm = cast<mir::FusedMatmulOp>(ctx.root);
    p.fused = true;
    p.lhs = opnd(fm.getLhs());
    p.rhs = opnd(fm.getRhs());
    p.transB = fm.getTransposeB();
    p.normWeight = opnd(fm.getNormWeight());
    p.normBias = opnd(fm.getNormBias());
    p.bias = opnd(fm.getBias());
    p.headNormWeight = opnd(fm.getHeadNormWeight());
    p.ropeCos = opnd(fm.getRopeCos());
    p.ropeSin = opnd(fm.getRopeSin());
    p.residual = opnd(fm.getResidual());
    p.rhsScales = opnd(fm.getRhsScales());
    p.rhsGlobal = opnd(fm.getRhsGlobalScale());
    for (Value v : ctx.root->getOperands())
      if (!ctx.operand(v))
        return unsupported(ctx, "fused_matmul operands that are not kernel inputs");
    if (auto norm = fm.getNormAttr()) {
      p.norm = true;
      p.normKind = norm.getValue();
      p.normEps = fm.getNormEps() ? fm.getNormEps()->convertToDouble() : 0.0;
    }
    p.act = fm.getActivation();
    p.glu = fm.getGlu();
    p.headDim = fm.getHeadDim().value_or(0);
    if (p.headNormWeight) {
      p.headNormHeads = shapeOf(p.headNormWeight)[0];
      p.headNormEps = fm.getHeadNormEps() ? fm.getHeadNormEps()->convertToDouble() : 0.0;
    }
    if (p.ropeCos) {
      p.ropeHeads = fm.getRopeHeads().value_or(0);
      p.rotary = fm.getRotaryDim().value_or(p.headDim);
      p.ropeStyle = fm.getRopeStyle();
    }
    ArrayRef<int64_t> ls = shapeOf(p.lhs), ws = shapeOf(p.rhs);
    p.k = ls.back();
    p.rows = numElements(ls.drop_back());
    p.cols = shapeOf(p.out).back();
    int64_t n = p.transB ? ws[0] : ws[1];
    if (p.glu && n != 2 * p.cols)
      return unsupported(ctx, "a GLU whose weight is not twice the output width");
    return GemmBuilder(ctx, p).build();
  }
};

} // namespace mlir::rlx::gpu_kernels::matmul

void mlir::rlx::gpu_kernels::addMatmulTemplates(
    std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<matmul::MatmulTemplate>());
}
