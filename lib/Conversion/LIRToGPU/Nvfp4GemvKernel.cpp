//===- Nvfp4GemvKernel.cpp - NVFP4 W4A16 GEMV on mma.sync -----------------===//
//
// The decode GEMV (M <= 16 rows) of an NVFP4 weight in NVIDIA's [N, K/2]
// layout (DESIGN §3) with a bf16 or f16 lhs, on mma.sync m16n8k16 (sm_80+):
//
//  - The lhs rows are staged once per block in shared memory, each 8-element
//    group as the pairs (k, k+4), (k+1, k+5), ..., (k+3, k+7): the pairs one
//    32-bit word of codes decodes into (nibbles j and j+4 land in the two
//    halves with one shift). A bf16 lhs is staged times 2^64 (exact) so that
//    its products with the decoded weights (e2m1 · 2^-126) stay normal f32.
//  - A warp owns 16 weight rows (output columns; with GLU 8 gate rows and
//    their 8 up rows), a lane quad (lanes 4g .. 4g + 3) two of them: rows g
//    and g + 8 are the mma's A rows. Lane t of a quad reads 32 codes (16
//    bytes) of each from k0 + 32t, two 16-element blocks, so a step of the
//    quad covers 128 codes.
//  - The block scales stay out of the mma: B's 8 columns are the 8 blocks of
//    the quads' step (column 2t + b is lane t's block b), each column the
//    staged lhs at that block's pairs and 0 elsewhere, so D[row][2t + b] is
//    block b's unscaled sum, which lane t (holding exactly those four D
//    values) scales with its own block scales in f32 after the step's 8
//    mma. A lane supplies B column g only: the lhs where g = 2t + b, else the
//    staged zeros at the end of the row (no selects in the loop).
//  - E2M1 pairs decode with the bit trick of ../shared/GPU.md into bf16
//    (e2m1 · 2^-126) or f16 (e2m1 · 2^-14), exact; E4M3 scales two at a time
//    through cvt.rn.f16x2.e4m3x2 where the chip has it (NaN decodes to 0, as
//    nvfp4::decodeScale defines), else through nvfp4::decodeScale.
//  - Per 16-element block and lane: 4 × 2 pair decodes, 2 mma, 1.5 shared
//    loads, 1 FFMA and the scale: bench/gpu/sass_stats.py counts the SASS.
//
// The quad's partial sums meet through two shuffles; split-K partials and
// the epilogue are GemmBuilder's (MatmulKernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MatmulKernels.h"

#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

namespace mlir::rlx::gpu_kernels::matmul {

namespace {

/// Codes of one weight row a lane quad covers per step (4 lanes × 32).
constexpr int64_t kQuadStep = 128;
/// The staged bf16 lhs is multiplied by 2^kLhsExponent; the decoded bf16
/// weights carry 2^-126: products e2m1 · x · 2^-62 are normal f32 for
/// 2^-63 < |x| and finite for |x| < 2^64.
constexpr int kLhsExponent = 64;

} // namespace

std::string GemmBuilder::whyNoNvfp4MmaGemv() const {
  Type a = elementTypeOf(p.lhs);
  if (!p.nvfp4() || !p.transB)
    return "its weight is not NVFP4 in the [N, K/2] layout";
  if (!ctx.tensorCores)
    return "tensor-cores=false";
  if (!ctx.target.hasMmaSyncBF16())
    return ctx.target.chip + " has no bf16/f16 mma.sync (sm_80+)";
  if (!(a.isBF16() || a.isF16()) || !acc.isF32())
    return "its lhs is not bf16 or f16";
  if (p.batches != 1 || p.k % kQuadStep != 0)
    return "K = " + std::to_string(p.k) + " is not a multiple of " + std::to_string(kQuadStep);
  if (!(p.fused || !p.transA) || !vectorizable(p.lhs, shapeOf(p.lhs), 8))
    return "its lhs rows are not 16-byte vectors";
  auto t = cast<MemRefType>(p.rhs.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || strides.size() != 2 || strides[1] != 1 ||
      ShapedType::isDynamic(offset) || ShapedType::isDynamic(strides[0]) || offset % 16 != 0 ||
      strides[0] % 16 != 0)
    return "its codes are not 16-byte aligned rows";
  // With its Cs (rows × the tile's columns, f32): split-K only adds.
  int64_t cols = p.headStages() ? p.headDim : (kThreads / 32) * (p.glu ? 8 : 16);
  if (nvfp4StageBytes() + std::max<int64_t>(p.rows, 1) * cols * 4 > kGemvSharedBytes)
    return std::to_string(p.rows) + " rows of K = " + std::to_string(p.k) +
           " exceed its shared memory";
  return "";
}

int64_t GemmBuilder::nvfp4StageBytes() const {
  // Each row: K staged elements and 16 zeros.
  return std::max<int64_t>(p.rows, 1) * (p.k + 16) * 2;
}

void GemmBuilder::nvfp4MmaGemvMainLoop() {
  Location loc = kb.loc;
  MLIRContext *mctx = kb.b.getContext();
  Type i32 = kb.b.getI32Type(), f32 = kb.b.getF32Type(), in = elementTypeOf(p.lhs);
  bool bf16 = in.isBF16();
  const int64_t warps = threads / 32, sets = p.glu ? 2 : 1, cw = p.glu ? 8 : 16;
  const int64_t groups = warps / splitK, colGroups = ceilDiv(tn, cw), stride = p.k + 16;
  const int64_t words = p.k / 8;
  Value tid = kb.threadId();

  // The staged lhs.
  Value xs = kb.workgroupBuffer(ctx.fn, {tm, stride}, in);
  double up = bf16 ? std::ldexp(1.0, kLhsExponent) : 1.0;
  kb.forLoop(tid, kb.idx(tm * words), kb.idx(threads), [&](Value e) {
    Value mm = kb.divui(e, kb.idx(words)), k8 = kb.mul(kb.remui(e, kb.idx(words)), kb.idx(8));
    SmallVector<Value> v = loadARow(kb.add(m0, mm), mm, k8, 8);
    SmallVector<Value> staged;
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        Value x = v[j + 4 * h];
        staged.push_back(kb.convert(bf16 ? kb.mul(x, kb.f(acc, up)) : x, in));
      }
    Value vec = vector::FromElementsOp::create(kb.b, loc, VectorType::get({8}, in), staged);
    vector::StoreOp::create(kb.b, loc, vec, xs, ValueRange{mm, k8});
  });
  kb.forLoop(tid, kb.idx(tm * 2), kb.idx(threads), [&](Value e) {
    Value zeros = arith::ConstantOp::create(
        kb.b, loc, DenseElementsAttr::get(VectorType::get({8}, in), kb.b.getZeroAttr(in)));
    vector::StoreOp::create(
        kb.b, loc, zeros, xs,
        ValueRange{kb.divui(e, kb.idx(2)),
                   kb.add(kb.idx(p.k), kb.mul(kb.remui(e, kb.idx(2)), kb.idx(8)))});
  });
  kb.barrier();

  Value lane = kb.laneId(), warp = kb.warpId();
  Value g = kb.divui(lane, kb.idx(4)), t = kb.remui(lane, kb.idx(4));
  Value split = kb.remui(warp, kb.idx(splitK)), group = kb.divui(warp, kb.idx(splitK));
  int64_t chunk = ceilDiv(ceilDiv(p.k, splitK), kQuadStep) * kQuadStep;
  Value lo = kb.mul(split, kb.idx(chunk));
  Value hi = kb.minui(kb.add(lo, kb.idx(chunk)), kb.idx(p.k));
  Value part = splitK > 1 ? kb.workgroupBuffer(ctx.fn, {splitK, sets * tm, tn}, acc) : Value();
  Value zero = kb.f(f32, 0.0);
  auto f4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, f32));
  Type operand = bf16 ? i32 : Type(VectorType::get({2}, in));
  NVVM::MMATypes mmaType = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  // Pair j of a word (nibbles j and j + 4) as two bf16 / f16 values.
  auto decode = [&](Value word, int64_t j) -> Value {
    Value q = j == 3 ? word : arith::ShLIOp::create(kb.b, loc, word, kb.i32(12 - 4 * j)).getResult();
    Value signs = arith::AndIOp::create(kb.b, loc, q, kb.i32(int32_t(0x80008000u)));
    Value mags = arith::AndIOp::create(
        kb.b, loc, arith::ShRUIOp::create(kb.b, loc, q, kb.i32(bf16 ? 6 : 3)),
        kb.i32(bf16 ? 0x01C001C0 : 0x0E000E00));
    Value h = arith::OrIOp::create(kb.b, loc, signs, mags);
    return bf16 ? h : LLVM::BitcastOp::create(kb.b, loc, operand, h).getResult();
  };
  auto asOperand = [&](Value v) {
    return bf16 ? v : LLVM::BitcastOp::create(kb.b, loc, operand, v).getResult();
  };
  // Blocks b and b + 1 (b even) of weight row `row` are adjacent scale
  // bytes in both layouts: one 2-byte load where the scales allow it.
  bool pairLoads = [&] {
    auto st = cast<MemRefType>(p.rhsScales.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(st.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset) ||
        offset % 2 != 0 || strides.back() != 1 || st.getShape().back() % 2 != 0)
      return false;
    return llvm::all_of(ArrayRef<int64_t>(strides).drop_back(),
                        [](int64_t s) { return !ShapedType::isDynamic(s) && s % 2 == 0; });
  }();
  auto scalePair = [&](Value row, Value blk) -> std::pair<Value, Value> {
    SmallVector<Value> at = nvfp4ScalePosition(kb, p.rhsScales, true, row, blk);
    SmallVector<Value> s(2);
    if (pairLoads) {
      auto v = vector::LoadOp::create(kb.b, loc, VectorType::get({2}, elementTypeOf(p.rhsScales)),
                                      p.rhsScales, at, false, llvm::MaybeAlign(2));
      for (int64_t i = 0; i < 2; ++i)
        s[i] = vector::ExtractOp::create(kb.b, loc, v, ArrayRef<int64_t>{i});
    } else {
      s[0] = kb.load(p.rhsScales, at);
      s[1] = kb.load(p.rhsScales,
                     nvfp4ScalePosition(kb, p.rhsScales, true, row, kb.add(blk, kb.idx(1))));
    }
    if (!ctx.target.hasF8Convert())
      return {nvfp4::decodeScale(kb.b, loc, s[0]), nvfp4::decodeScale(kb.b, loc, s[1])};
    return decodeScalePair(s[0], s[1]);
  };

  Value active = kb.ult(warp, kb.idx(groups * splitK));
  kb.ifThen(active, [&] {
    kb.forLoop(group, kb.idx(colGroups), kb.idx(groups), [&](Value cg) {
      // The quad's two weight rows and their tile columns.
      Value nnA = kb.add(kb.mul(cg, kb.idx(cw)), g);
      Value nnB = p.glu ? nnA : kb.add(nnA, kb.idx(8));
      auto weightRow = [&](Value nn, int64_t half) {
        Value col = kb.add(n0, nn);
        Value safe = kb.select(kb.ult(col, kb.idx(p.cols)), col, kb.idx(0));
        return half ? kb.add(safe, kb.idx(p.cols)) : safe;
      };
      Value rowA = weightRow(nnA, 0), rowB = weightRow(nnB, p.glu ? 1 : 0);
      // B column g: this lane's staged pairs where g = 2t + b, else zeros.
      Value kStart = kb.add(lo, kb.mul(t, kb.idx(32)));
      Value twoT = kb.mul(t, kb.idx(2));
      Value act0 = kb.eq(g, twoT), act1 = kb.eq(g, kb.add(twoT, kb.idx(1)));
      Value pos0 = kb.select(act0, kStart, kb.idx(p.k));
      Value pos1 = kb.select(act1, kb.add(kStart, kb.idx(16)), kb.idx(p.k));
      Value inc0 = kb.select(act0, kb.idx(kQuadStep), kb.idx(0));
      Value inc1 = kb.select(act1, kb.idx(kQuadStep), kb.idx(0));
      SmallVector<Value> inits(2 * tm, zero);
      inits.append({pos0, pos1});
      SmallVector<Value> res = kb.forLoop(
          kStart, hi, kb.idx(kQuadStep), inits, [&](Value k0, ValueRange c) -> SmallVector<Value> {
            auto codes = [&](Value row) {
              auto bytes = vector::LoadOp::create(
                  kb.b, loc, VectorType::get({16}, kb.b.getI8Type()), p.rhs,
                  ValueRange{row, kb.divui(k0, kb.idx(2))}, false, llvm::MaybeAlign(16));
              return vector::BitCastOp::create(kb.b, loc, VectorType::get({4}, i32), bytes)
                  .getResult();
            };
            Value qa = codes(rowA), qb = codes(rowB);
            Value blk = kb.divui(k0, kb.idx(16));
            SmallVector<SmallVector<Value>> d(tm, SmallVector<Value>(4, zero));
            for (int64_t w = 0; w < 4; ++w) {
              Value wa = vector::ExtractOp::create(kb.b, loc, qa, ArrayRef<int64_t>{w});
              Value wb = vector::ExtractOp::create(kb.b, loc, qb, ArrayRef<int64_t>{w});
              Value pos = kb.add(c[2 * tm + w / 2], kb.idx(8 * (w % 2)));
              SmallVector<Value> xw;
              for (int64_t mm = 0; mm < tm; ++mm) {
                auto xv = vector::LoadOp::create(kb.b, loc, VectorType::get({8}, in), xs,
                                                 ValueRange{kb.idx(mm), pos}, false,
                                                 llvm::MaybeAlign(16));
                xw.push_back(vector::BitCastOp::create(kb.b, loc, VectorType::get({4}, i32), xv));
              }
              for (int64_t hh = 0; hh < 2; ++hh) {
                SmallVector<Value> a{decode(wa, 2 * hh), decode(wb, 2 * hh),
                                     decode(wa, 2 * hh + 1), decode(wb, 2 * hh + 1)};
                for (int64_t mm = 0; mm < tm; ++mm) {
                  SmallVector<Value> bv;
                  for (int64_t j = 0; j < 2; ++j)
                    bv.push_back(asOperand(vector::ExtractOp::create(
                        kb.b, loc, xw[mm], ArrayRef<int64_t>{2 * hh + j})));
                  auto mma = NVVM::MmaOp::create(
                      kb.b, loc, f4, a, bv, d[mm], ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
                      std::nullopt, std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
                      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
                  for (int64_t f = 0; f < 4; ++f)
                    d[mm][f] = LLVM::ExtractValueOp::create(kb.b, loc, mma.getRes(),
                                                            ArrayRef<int64_t>{f});
                }
              }
            }
            auto [sa0, sa1] = scalePair(rowA, blk);
            auto [sb0, sb1] = scalePair(rowB, blk);
            SmallVector<Value> r;
            for (int64_t mm = 0; mm < tm; ++mm)
              r.push_back(kb.fma(d[mm][1], sa1, kb.fma(d[mm][0], sa0, c[2 * mm])));
            for (int64_t mm = 0; mm < tm; ++mm)
              r.push_back(kb.fma(d[mm][3], sb1, kb.fma(d[mm][2], sb0, c[2 * mm + 1])));
            // r: [A rows..., B rows...] reordered below.
            SmallVector<Value> out;
            for (int64_t mm = 0; mm < tm; ++mm)
              out.append({r[mm], r[tm + mm]});
            out.push_back(kb.add(c[2 * tm], inc0));
            out.push_back(kb.add(c[2 * tm + 1], inc1));
            return out;
          });
      // The quad's sum, times the global scale and the decode's 2^-126 /
      // 2^-14 undone (2^62 with the 2^64 of the staged bf16 lhs).
      Value factor = kb.mul(nvfp4Global(), kb.f(acc, std::ldexp(1.0, bf16 ? 126 - kLhsExponent : 14)));
      SmallVector<Value> sums;
      for (int64_t i = 0; i < 2 * tm; ++i) {
        Value v = kb.mul(res[i], factor);
        v = kb.add(v, kb.shuffleXor(v, 1));
        sums.push_back(kb.add(v, kb.shuffleXor(v, 2)));
      }
      // Lane t = 0 of each quad writes its two columns (with GLU, one
      // column's gate and up), into the split's partial sums or Cs.
      kb.ifThen(kb.eq(t, kb.idx(0)), [&] {
        for (int64_t mm = 0; mm < tm; ++mm) {
          Value va = sums[2 * mm], vb = sums[2 * mm + 1];
          auto column = [&](Value nn) { return kb.minui(kb.add(n0, nn), kb.idx(p.cols - 1)); };
          if (p.glu) {
            kb.ifThen(kb.ult(nnA, kb.idx(tn)), [&] {
              if (part) {
                kb.store(va, part, {split, kb.idx(mm), nnA});
                kb.store(vb, part, {split, kb.idx(tm + mm), nnA});
              } else {
                kb.store(activate(va, vb, column(nnA)), cs, {kb.idx(mm), nnA});
              }
            });
            continue;
          }
          for (auto [value, column0] : {std::pair{va, nnA}, std::pair{vb, nnB}}) {
            Value v = value, nn = column0;
            kb.ifThen(kb.ult(nn, kb.idx(tn)), [&] {
              if (part)
                kb.store(v, part, {split, kb.idx(mm), nn});
              else
                kb.store(activate(v, Value(), column(nn)), cs, {kb.idx(mm), nn});
            });
          }
        }
      });
    });
  });
  kb.barrier();
  gemvCombineSplits(part);
}

std::pair<Value, Value> GemmBuilder::decodeScalePair(Value s0, Value s1) {
  Location loc = kb.loc;
  Type i8 = kb.b.getI8Type(), f32 = kb.b.getF32Type();
  auto byte = [&](Value s) { return arith::BitcastOp::create(kb.b, loc, i8, s).getResult(); };
  Value bytes = vector::FromElementsOp::create(kb.b, loc, VectorType::get({2}, i8),
                                               ValueRange{byte(s0), byte(s1)});
  Value h = NVVM::ConvertF8x2ToF16x2Op::create(kb.b, loc, VectorType::get({2}, kb.b.getF16Type()),
                                               bytes, kb.b.getBoolAttr(false),
                                               TypeAttr::get(s0.getType()));
  auto half = [&](int64_t i) {
    Value s = kb.convert(vector::ExtractOp::create(kb.b, loc, h, ArrayRef<int64_t>{i}), f32);
    // NaN (0x7F, 0xFF) decodes to 0, as nvfp4::decodeScale defines.
    Value nan = arith::CmpFOp::create(kb.b, loc, arith::CmpFPredicate::UNO, s, s);
    return kb.select(nan, kb.f(f32, 0.0), s);
  };
  return {half(0), half(1)};
}

} // namespace mlir::rlx::gpu_kernels::matmul
