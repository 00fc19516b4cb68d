//===- Nvfp4Kernels.cpp - NVFP4 kernels and the matmul's NVFP4 weights ---===//
//
// NVFP4 (DESIGN §3: E2M1 codes two per byte, the lower K index in the low
// nibble; E4M3 scales per 16 elements along K, NaN decoding to 0; an f32
// global scale) on the GPU, with the scalar arithmetic of
// include/RLX/Dialect/MIR/IR/Nvfp4Math.h, shared with the CPU path:
//
//  - nvfp4_dequantize: one thread per output element.
//  - nvfp4_quantize: one block of 1024 threads (weight-packing time, not a
//    hot path): the global amax as a block reduction, then 16-element blocks
//    per thread: the E4M3 scale, then the packed codes. The bytes equal the
//    CPU path's (the same f32 operations in the same order).
//  - the matmul kernels' NVFP4 weight (nvfp4_matmul, fused_matmul with
//    nvfp4(...)): element (k, n) for the SIMT and scalar GEMV paths, and the
//    GEMV's vector path for decode where the mma.sync GEMV
//    (Nvfp4GemvKernel.cpp) does not apply (M <= 16, NVIDIA's [N, K/2]
//    layout, K a multiple of 32; an f32 lhs): each lane reads 16 bytes (32 codes; 8 bytes when more
//    than 8 rows share them, for registers) and their scale bytes, decodes pairs of codes with the bit trick of ../shared/GPU.md
//    (h = (q & 0x80008000) | ((q & 0x70007000) >> 3) read as two f16 is
//    e2m1 · 2^-14, exact for all 16 codes) once, then for each row sums
//    a · e2m1 per 16-element block (A in 8-element pieces) and scales each
//    block sum once by its E4M3 scale · 2^14; the global scale multiplies
//    the lane's sums at the end.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MatmulKernels.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

SmallVector<Value> gpu_kernels::nvfp4ScalePosition(KernelBuilder &kb, Value scales, bool outIn,
                                                  Value n, Value block) {
  if (shapeOf(scales).size() == 4) // blocked (nvfp4_block_scales), NVIDIA's layout
    return nvfp4::applyNonNegative(kb.b, kb.loc, nvfp4::blockedScaleMap(kb.b.getContext()),
                                   {n, block});
  return outIn ? SmallVector<Value>{n, block} : SmallVector<Value>{block, n};
}

namespace {

Value byteCode(KernelBuilder &kb, Value byte, Value k) {
  Type i32 = kb.b.getI32Type();
  Value b32 = arith::ExtUIOp::create(kb.b, kb.loc, i32, byte);
  Value shift = arith::IndexCastOp::create(kb.b, kb.loc, i32, kb.mul(kb.remui(k, kb.idx(2)),
                                                                      kb.idx(4)));
  return arith::AndIOp::create(kb.b, kb.loc, arith::ShRUIOp::create(kb.b, kb.loc, b32, shift),
                               kb.i32(15));
}

} // namespace

/// Element (k, n) of an NVFP4 weight: e2m1 · (scale · global), f32, as the
/// CPU path's nvfp4_dequantize computes it.
static Value nvfp4Element(KernelBuilder &kb, Value weight, Value scales, Value global, bool outIn,
                          Value k, Value n) {
  auto at = [&](Value kk) { return outIn ? SmallVector<Value>{n, kk} : SmallVector<Value>{kk, n}; };
  Value code = byteCode(kb, kb.load(weight, at(kb.divui(k, kb.idx(2)))), k);
  Value s = nvfp4::decodeScale(
      kb.b, kb.loc, kb.load(scales, nvfp4ScalePosition(kb, scales, outIn, n, kb.divui(k, kb.idx(16)))));
  return kb.mul(nvfp4::decodeE2M1(kb.b, kb.loc, code), kb.mul(s, kb.load(global, {})));
}

namespace {

struct Nvfp4DequantizeTemplate : KernelTemplate {
  StringRef name() const override { return "nvfp4_dequantize"; }
  bool matches(Operation *root) const override { return isa<mir::Nvfp4DequantizeOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::Nvfp4DequantizeOp>(ctx.root);
    Value w = ctx.operand(op.getWeight()), s = ctx.operand(op.getScales()),
          g = ctx.operand(op.getGlobalScale()), out = ctx.outputs[0];
    if (!w || !s || !g)
      return unsupported(ctx, "nvfp4_dequantize operands that are not kernel inputs");
    bool outIn = op.getLayout() == WeightLayout::OutIn;
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    return forEachElementGroup(kb, shapeOf(out), 1, [&](ArrayRef<Value> pos) {
      Value k = outIn ? pos[1] : pos[0], n = outIn ? pos[0] : pos[1];
      kb.store(nvfp4Element(kb, w, s, g, outIn, k, n), out, pos);
    });
  }
};

struct Nvfp4QuantizeTemplate : KernelTemplate {
  static constexpr int64_t kThreads = 1024;
  StringRef name() const override { return "nvfp4_quantize"; }
  bool matches(Operation *root) const override { return isa<mir::Nvfp4QuantizeOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::Nvfp4QuantizeOp>(ctx.root);
    Value x = ctx.operand(op.getInput());
    if (!x)
      return unsupported(ctx, "nvfp4_quantize operands that are not kernel inputs");
    Value w = ctx.outputs[0], s = ctx.outputs[1], g = ctx.outputs[2];
    bool outIn = op.getLayout() == WeightLayout::OutIn;
    ArrayRef<int64_t> xs = shapeOf(x);
    const int64_t n = outIn ? xs[0] : xs[1], k = outIn ? xs[1] : xs[0];
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    LaunchConfig launch;
    launch.block = {kThreads, 1, 1};
    Type f32 = kb.b.getF32Type();
    auto xAt = [&](Value nn, Value kk) {
      return kb.convert(kb.load(x, outIn ? SmallVector<Value>{nn, kk} : SmallVector<Value>{kk, nn}),
                        f32);
    };
    auto absF = [&](Value v) { return math::AbsFOp::create(kb.b, kb.loc, v).getResult(); };
    Value tid = kb.threadId();
    // The global amax: a strided pass, then the block's reduction.
    Value scratch = kb.workgroupBuffer(ctx.fn, {kThreads / 32}, f32);
    Value part = kb.forLoop(tid, kb.idx(n * k), kb.idx(kThreads), {kb.f32(0.0)},
                            [&](Value e, ValueRange c) -> SmallVector<Value> {
                              Value v = xAt(kb.divui(e, kb.idx(k)), kb.remui(e, kb.idx(k)));
                              return {kb.combine(Combine::Max, c[0], absF(v))};
                            })[0];
    Value global =
        nvfp4::globalScale(kb.b, kb.loc, kb.blockReduce(Combine::Max, part, scratch, kThreads));
    kb.ifThen(kb.eq(tid, kb.idx(0)), [&] { kb.store(global, g, {}); });
    // One 16-element block per thread and step: its scale, then 8 bytes.
    const int64_t blocks = k / 16;
    kb.forLoop(tid, kb.idx(n * blocks), kb.idx(kThreads), [&](Value e) {
      Value nn = kb.divui(e, kb.idx(blocks)), kb16 = kb.remui(e, kb.idx(blocks));
      Value k0 = kb.mul(kb16, kb.idx(16));
      SmallVector<Value> v;
      Value amax = kb.f32(0.0);
      for (int64_t i = 0; i < 16; ++i) {
        v.push_back(xAt(nn, kb.add(k0, kb.idx(i))));
        amax = arith::MaximumFOp::create(kb.b, kb.loc, amax, absF(v.back()));
      }
      Value s8 = nvfp4::blockScale(kb.b, kb.loc, amax, global);
      kb.store(s8, s, outIn ? SmallVector<Value>{nn, kb16} : SmallVector<Value>{kb16, nn});
      Value inv = nvfp4::inverseScale(kb.b, kb.loc, s8, global);
      for (int64_t j = 0; j < 8; ++j) {
        Value lo = nvfp4::encodeE2M1(kb.b, kb.loc, kb.mul(v[2 * j], inv));
        Value hi = nvfp4::encodeE2M1(kb.b, kb.loc, kb.mul(v[2 * j + 1], inv));
        Value byte = arith::OrIOp::create(
            kb.b, kb.loc, lo, arith::ShLIOp::create(kb.b, kb.loc, hi, kb.i32(4)));
        Value kk = kb.add(kb.mul(kb16, kb.idx(8)), kb.idx(j));
        kb.store(arith::TruncIOp::create(kb.b, kb.loc, kb.b.getI8Type(), byte), w,
                 outIn ? SmallVector<Value>{nn, kk} : SmallVector<Value>{kk, nn});
      }
    });
    return launch;
  }
};

/// nvfp4_block_scales: one thread per output byte (the layout of
/// Nvfp4BlockScalesOp; padding 0).
struct Nvfp4BlockScalesTemplate : KernelTemplate {
  StringRef name() const override { return "nvfp4_block_scales"; }
  bool matches(Operation *root) const override { return isa<mir::Nvfp4BlockScalesOp>(root); }

  FailureOr<LaunchConfig> build(KernelContext &ctx) const override {
    auto op = cast<mir::Nvfp4BlockScalesOp>(ctx.root);
    Value s = ctx.operand(op.getScales()), out = ctx.outputs[0];
    if (!s)
      return unsupported(ctx, "nvfp4_block_scales operands that are not kernel inputs");
    const int64_t n = shapeOf(s)[0], blocks = shapeOf(s)[1];
    KernelBuilder kb(ctx.b, ctx.kernel.getLoc());
    Type i8 = kb.b.getI8Type(), f8 = elementTypeOf(s);
    return forEachElementGroup(kb, shapeOf(out), 1, [&](ArrayRef<Value> pos) {
      SmallVector<Value> mk = nvfp4::applyNonNegative(
          kb.b, kb.loc, nvfp4::blockedScaleInverseMap(kb.b.getContext()), pos);
      Value m = mk[0], blk = mk[1];
      Value valid =
          arith::AndIOp::create(kb.b, kb.loc, kb.ult(m, kb.idx(n)), kb.ult(blk, kb.idx(blocks)));
      // The scale's storage byte (f8 arithmetic has no NVVM lowering).
      Value v = arith::BitcastOp::create(
          kb.b, kb.loc, i8,
          kb.load(s, {kb.minui(m, kb.idx(n - 1)), kb.minui(blk, kb.idx(blocks - 1))}));
      Value byte = kb.select(valid, v, arith::ConstantIntOp::create(kb.b, kb.loc, 0, 8));
      kb.store(arith::BitcastOp::create(kb.b, kb.loc, f8, byte), out, pos);
    });
  }
};

} // namespace

namespace mlir::rlx::gpu_kernels::matmul {

Value GemmBuilder::nvfp4B(Value kIdx, Value col) {
  return kb.convert(nvfp4Element(kb, p.rhs, p.rhsScales, p.rhsGlobal, p.transB, kIdx, col), acc);
}

GemmBuilder::Nvfp4Codes GemmBuilder::nvfp4GemvCodes(Value k0, Value col) {
  Location loc = kb.loc;
  Type i32 = kb.b.getI32Type();
  Nvfp4Codes c;
  // width / 2 bytes: `width` codes from k0 (word w holds k0 + 8w .. k0 + 8w + 7).
  const int64_t words = width / 8;
  auto bytes = vector::LoadOp::create(kb.b, loc, VectorType::get({width / 2}, kb.b.getI8Type()),
                                      p.rhs, ValueRange{col, kb.divui(k0, kb.idx(2))}, false,
                                      llvm::MaybeAlign(width / 2));
  Value wordVec = vector::BitCastOp::create(kb.b, loc, VectorType::get({words}, i32), bytes);
  auto half2 = VectorType::get({2}, kb.b.getF16Type()), float2 = VectorType::get({2}, acc);
  c.values.assign(width, Value());
  for (int64_t w = 0; w < words; ++w) {
    Value word = vector::ExtractOp::create(kb.b, loc, wordVec, ArrayRef<int64_t>{w});
    for (int64_t sh = 0; sh < 4; ++sh) {
      // Codes k = 8w + sh (bits 12-15) and 8w + sh + 4 (bits 28-31).
      Value q = sh == 3 ? word
                        : arith::ShLIOp::create(kb.b, loc, word, kb.i32(12 - 4 * sh)).getResult();
      Value signs = arith::AndIOp::create(kb.b, loc, q, kb.i32(int32_t(0x80008000u)));
      Value mags = arith::ShRUIOp::create(
          kb.b, loc, arith::AndIOp::create(kb.b, loc, q, kb.i32(0x70007000)), kb.i32(3));
      Value h = arith::OrIOp::create(kb.b, loc, signs, mags);
      Value pair = LLVM::BitcastOp::create(kb.b, loc, half2, h);
      Value f = arith::ExtFOp::create(kb.b, loc, float2, pair);
      for (int64_t part = 0; part < 2; ++part)
        c.values[8 * w + sh + 4 * part] =
            vector::ExtractOp::create(kb.b, loc, f, ArrayRef<int64_t>{part});
    }
  }
  Value two14 = kb.f(acc, 16384.0);
  for (int64_t blk = 0; blk < width / 16; ++blk) {
    Value s = nvfp4::decodeScale(
        kb.b, loc,
        kb.load(p.rhsScales, nvfp4ScalePosition(kb, p.rhsScales, true, col,
                                                kb.add(kb.divui(k0, kb.idx(16)), kb.idx(blk)))));
    c.scales[blk] = kb.mul(kb.convert(s, acc), two14);
  }
  return c;
}

SmallVector<Value> GemmBuilder::nvfp4GemvRow(Value row, Value local, Value k0,
                                             ArrayRef<Nvfp4Codes> codes) {
  SmallVector<Value> sums(2 * codes.size(), kb.f(acc, 0.0));
  // A in 8-element pieces (few registers live per row).
  for (int64_t piece = 0; piece < width / 8; ++piece) {
    SmallVector<Value> a = loadARow(row, local, kb.add(k0, kb.idx(8 * piece)), 8);
    for (int64_t l = 0; l < 8; ++l) {
      int64_t k = 8 * piece + l;
      for (size_t h = 0; h < codes.size(); ++h) {
        Value &s = sums[2 * h + k / 16];
        s = math::FmaOp::create(kb.b, kb.loc, a[l], codes[h].values[k], s);
      }
    }
  }
  SmallVector<Value> out;
  for (size_t h = 0; h < codes.size(); ++h) {
    Value v = kb.mul(sums[2 * h], codes[h].scales[0]);
    if (width > 16)
      v = math::FmaOp::create(kb.b, kb.loc, sums[2 * h + 1], codes[h].scales[1], v);
    out.push_back(v);
  }
  return out;
}

Value GemmBuilder::nvfp4Global() { return kb.convert(kb.load(p.rhsGlobal, {}), acc); }

void GemmBuilder::wgmmaDequantizeB(Value stage, Value kt, Value packed, Value tile) {
  (void)stage;
  Location loc = kb.loc;
  MLIRContext *mctx = kb.b.getContext();
  Type i32 = kb.b.getI32Type(), et = elementTypeOf(p.lhs);
  const int64_t sets = p.glu ? 2 : 1, kBk = 64, n = shapeOf(p.rhs)[0], blocks = p.k / 16;
  auto ptr3 = [&](Value address) {
    Value a = arith::IndexCastOp::create(kb.b, loc, kb.b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(kb.b, loc, LLVM::LLVMPointerType::get(mctx, 3), a)
        .getResult();
  };
  // Row `row` of the tile (a weight row of the stage; with GLU, rows tn ..
  // 2tn - 1 are the up half): one producer thread each.
  kb.forLoop(kb.remui(kb.threadId(), kb.idx(128)), kb.idx(sets * tn), kb.idx(128), [&](Value row) {
    Value half = kb.divui(row, kb.idx(tn)), r = kb.remui(row, kb.idx(tn));
    Value wRow = kb.add(kb.add(n0, r), kb.mul(half, kb.idx(p.cols)));
    Value rowValid = kb.ult(wRow, kb.idx(n));
    Value safeRow = kb.minui(wRow, kb.idx(n - 1));
    // 32 bytes of codes (TMA zero-filled past the tensor) as 8 words.
    Value words = LLVM::LoadOp::create(kb.b, loc, VectorType::get({8}, i32),
                                       ptr3(kb.add(packed, kb.mul(row, kb.idx(kBk / 2)))), 16);
    // The stage's four E4M3 scales (0 past the tensor).
    SmallVector<Value> scales;
    for (int64_t j = 0; j < 4; ++j) {
      Value blk = kb.add(kb.mul(kt, kb.idx(4)), kb.idx(j));
      Value valid = arith::AndIOp::create(kb.b, loc, rowValid, kb.ult(blk, kb.idx(blocks)));
      Value s = nvfp4::decodeScale(
          kb.b, loc,
          kb.load(p.rhsScales, nvfp4ScalePosition(kb, p.rhsScales, true, safeRow,
                                                  kb.minui(blk, kb.idx(blocks - 1)))));
      scales.push_back(kb.select(valid, s, kb.f32(0.0)));
    }
    Value rowOffset = kb.mul(row, kb.idx(128));
    for (int64_t w = 0; w < 8; ++w) {
      Value word = vector::ExtractOp::create(kb.b, loc, words, ArrayRef<int64_t>{w});
      SmallVector<Value> vals;
      for (int64_t c = 0; c < 8; ++c) {
        Value code = arith::AndIOp::create(
            kb.b, loc, arith::ShRUIOp::create(kb.b, loc, word, kb.i32(4 * c)), kb.i32(15));
        vals.push_back(kb.convert(kb.mul(nvfp4::decodeE2M1(kb.b, loc, code), scales[w / 2]), et));
      }
      // 16-byte chunk w of the row under the 128B swizzle (the tile is
      // 1024-byte aligned).
      Value at = kb.swizzle(kb.add(rowOffset, kb.idx(16 * w)), 3);
      Value v = vector::FromElementsOp::create(kb.b, loc, VectorType::get({8}, et), vals);
      LLVM::StoreOp::create(kb.b, loc, v, ptr3(kb.add(tile, at)), 16);
    }
  });
}

} // namespace mlir::rlx::gpu_kernels::matmul

void mlir::rlx::gpu_kernels::addNvfp4Templates(std::vector<std::unique_ptr<KernelTemplate>> &out) {
  out.push_back(std::make_unique<Nvfp4DequantizeTemplate>());
  out.push_back(std::make_unique<Nvfp4QuantizeTemplate>());
  out.push_back(std::make_unique<Nvfp4BlockScalesTemplate>());
}
