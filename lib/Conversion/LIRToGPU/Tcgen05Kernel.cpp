//===- Tcgen05Kernel.cpp - NVFP4 matmuls on sm_100a (block-scaled FP4 MMA) -===//
//
// `nvfp4_matmul` / `fused_matmul ... nvfp4(...)` on Blackwell's block-scaled
// FP4 tensor cores: `tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.
// block16`, E2M1 × E2M1 with UE4M3 scales per 16 elements along K, f32
// accumulation in tensor memory (PTX ISA 8.8, sm_100a). This is W4A4: the
// instruction takes FP4 activations, so the kernel quantizes each 64-deep
// slice of the activation rows to NVFP4 on the fly, with the recipe the
// weights use (Nvfp4Math.h) and one f32 global scale per row
// (amax_row / (448 · 6)), which, with the weight's global scale, multiplies
// the accumulators. The result therefore carries the activations'
// quantization error too (NRMSE about 0.1 of each operand), unlike the
// W4A16 kernels of sm_90a and the CPU path. No GPU here runs sm_100a and
// the emulator does not run tcgen05: ptxas checks these kernels in CI.
//
// One block of 128 threads (4 warps) per 128 × 128 output tile; per 64-deep
// K slice, each thread owns one row of A (it quantizes its 64 values: 32
// bytes of codes, 4 scales) and one weight row (32 bytes of codes, 4
// scales, read as they are in NVIDIA's [N, K/2] / [N, K/16] layouts). Both
// land in shared memory as K-major rows of 32 bytes under the 32-byte
// swizzle (16-byte chunk c of row r at c ^ ((r >> 2) & 1), 8-row atoms of
// 256 bytes), the scales as 128 × 4 tiles in the block-scaled layout (case
// G7b: byte (m % 32)·16 + (m / 32)·4 + kb). One thread then copies the two
// scale tiles into tensor memory (tcgen05.cp 32x128b, broadcast to the four
// lane quarters), issues the MMA (the gate and up halves with GLU) and
// commits to an mbarrier that every thread waits on before the next slice.
// Tensor memory (256 columns, 512 with GLU): the accumulators from column
// 0, then the scales. At the end each thread loads its row (tcgen05.ld
// 32x32b, 32 columns at a time), scales it and writes the shared f32 tile
// Cs, and the epilogue of MatmulKernels.cpp (bias, activation or GLU,
// residual, one rounding) runs as for every matmul kernel.
//
// Descriptors (PTX ISA "Shared memory descriptor", "Instruction descriptor"
// for .kind::mxf4nvf4): smem K-major with the 32-byte swizzle: start >> 4,
// LBO 1 (unused), SBO 256 >> 4, bit 46 set, swizzle code 6 in bits 61-63;
// the scale tiles: no swizzle, SBO 128 >> 4; instruction descriptor for
// M = 128, N = 128, E2M1 × E2M1, UE4M3 scales: 0x08200480.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernels.h"

#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;
using namespace mlir::rlx::gpu_kernels::matmul;

namespace {
constexpr int64_t kTile = 128, kSlice = 64, kRowBytes = kSlice / 2, kAlign = 1024;
constexpr int64_t kInstrDesc = 0x08200480; // M 128, N 128, E2M1 x E2M1, UE4M3
} // namespace

std::string GemmBuilder::whyNoTcgen05() {
  if (!ctx.tensorCores)
    return "tensor-cores=false";
  if (!ctx.target.hasBlockScaledFP4Mma())
    return ctx.target.chip + " with PTX ISA " + ctx.target.ptxString() +
           " has no block-scaled FP4 MMA (sm_100a and PTX ISA 8.8: +ptx88)";
  if (!p.nvfp4())
    return "its weight is not NVFP4";
  if (!p.transB)
    return "its NVFP4 weight is not in NVIDIA's [N, K/2] layout";
  if (p.k % kSlice != 0)
    return "K = " + std::to_string(p.k) + " is not a multiple of 64 (one MMA's K)";
  if (p.headStages() || p.batches != 1)
    return "head-norm or RoPE stages, or a batched matmul";
  Type a = elementTypeOf(p.lhs);
  if (!(a.isBF16() || a.isF16() || a.isF32()))
    return "its activations are not bf16, f16 or f32";
  return "";
}

LogicalResult GemmBuilder::tcgen05Setup(LaunchConfig &launch) {
  MLIRContext *mctx = kb.b.getContext();
  const int64_t sets = p.glu ? 2 : 1;
  // [A codes 4 KiB][B codes 4 KiB per set][A scales 512][B scales 512 per
  // set][Cs f32][mbarrier 8][tensor-memory slot 4]
  tcA = 0;
  tcB = tcA + kTile * kRowBytes;
  tcScaleA = tcB + sets * kTile * kRowBytes;
  tcScaleB = tcScaleA + 512;
  int64_t csOffset = tcScaleB + sets * 512;
  tcBar = csOffset + tm * tn * 4;
  tcSlot = tcBar + 8;
  launch.dynamicSharedBytes = tcSlot + 8 + kAlign;
  auto smem = gpu::AddressSpaceAttr::get(mctx, gpu::AddressSpace::Workgroup);
  KernelBuilder::AlignedShared shared = kb.alignedDynamicShared(kAlign);
  tcBase = shared.base;
  cs = memref::ViewOp::create(kb.b, kb.loc,
                              MemRefType::get({tm, tn}, acc, MemRefLayoutAttrInterface(), smem),
                              shared.memory, kb.add(shared.pad, kb.idx(csOffset)), ValueRange{});
  // The block runs outside the emulator: say so in the artifact.
  ctx.fn->setAttr("rlx.emulator_unavailable",
                  kb.b.getStringAttr("tcgen05 block-scaled FP4 MMA (sm_100a) is not emulated"));
  return success();
}

void GemmBuilder::tcgen05MainLoop() {
  MLIRContext *mctx = kb.b.getContext();
  Location loc = kb.loc;
  Type i8 = kb.b.getI8Type(), i32 = kb.b.getI32Type(), i64 = kb.b.getI64Type();
  const int64_t sets = p.glu ? 2 : 1, nCols = sets == 2 ? 512 : 256,
                weightRows = shapeOf(p.rhs)[0], blocks = p.k / 16;
  const bool blockedScales = shapeOf(p.rhsScales).size() == 4;
  auto at = [&](int64_t offset) { return kb.add(tcBase, kb.idx(offset)); };
  auto ptr = [&](Value address, unsigned space) {
    Value a = arith::IndexCastOp::create(kb.b, loc, i64, address);
    return LLVM::IntToPtrOp::create(kb.b, loc, LLVM::LLVMPointerType::get(mctx, space), a)
        .getResult();
  };
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(kb.b, loc, v, 64).getResult(); };
  auto descriptor = [&](Value address, int64_t layout) {
    Value a = arith::AndIOp::create(
        kb.b, loc,
        arith::ShRUIOp::create(kb.b, loc, arith::IndexCastOp::create(kb.b, loc, i64, address),
                               c64(4)),
        c64(0x3FFF));
    return arith::OrIOp::create(kb.b, loc, a, c64(layout)).getResult();
  };
  // K-major, 32-byte swizzle: LBO 1, SBO 256 B, version bit 46, swizzle 6.
  const int64_t operandLayout =
      (int64_t(1) << 16) | (int64_t(256 >> 4) << 32) | (int64_t(1) << 46) | (int64_t(6) << 61);
  // Scale tiles: 32 rows of 16 bytes, no swizzle, SBO 128 B.
  const int64_t scaleLayout = (int64_t(128 >> 4) << 32) | (int64_t(1) << 46);
  Value tid = kb.threadId(), warp = kb.warpId();
  auto fence = [&](NVVM::Tcgen05FenceKind kind) { NVVM::Tcgen05FenceOp::create(kb.b, loc, kind); };

  // Tensor memory: warp 0 allocates and writes the address to the slot.
  kb.ifThen(kb.eq(warp, kb.idx(0)), [&] {
    NVVM::Tcgen05AllocOp::create(kb.b, loc, ptr(at(tcSlot), 3), kb.i32(nCols));
    NVVM::Tcgen05RelinquishAllocPermitOp::create(kb.b, loc);
  });
  kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
    NVVM::MBarrierInitOp::create(kb.b, loc, ptr(at(tcBar), 3), kb.i32(1), Value());
    NVVM::FenceMbarrierInitOp::create(kb.b, loc);
  });
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  kb.barrier();
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  Value tmem = LLVM::LoadOp::create(kb.b, loc, i32, ptr(at(tcSlot), 3));
  auto tmemAt = [&](int64_t column, Value lanes = Value()) {
    Value a = arith::AddIOp::create(kb.b, loc, tmem, kb.i32(column));
    if (lanes)
      a = arith::AddIOp::create(kb.b, loc, a, lanes);
    return LLVM::IntToPtrOp::create(kb.b, loc, LLVM::LLVMPointerType::get(mctx, 6), a).getResult();
  };
  const int64_t sfaColumn = sets * kTile, sfbColumn = sfaColumn + 4;

  // Each thread's row of A: its global scale (amax / (448 · 6)) first, over
  // the whole row (normalized by the prologue, if any).
  Value row = kb.add(m0, tid);
  Value rowValid = kb.ult(row, kb.idx(p.rows));
  Value safeRow = kb.minui(row, kb.idx(p.rows - 1));
  auto aSlice = [&](Value k0) {
    SmallVector<Value> a = loadARow(safeRow, tid, k0, kSlice);
    for (Value &v : a)
      v = kb.select(rowValid, kb.convert(v, kb.b.getF32Type()), kb.f32(0.0));
    return a;
  };
  auto absMax = [&](ArrayRef<Value> v, int64_t from, int64_t count, Value init) {
    for (int64_t i = from; i < from + count; ++i)
      init = arith::MaximumFOp::create(kb.b, loc, init, math::AbsFOp::create(kb.b, loc, v[i]));
    return init;
  };
  Value amax = kb.forLoop(kb.idx(0), kb.idx(p.k), kb.idx(kSlice), {kb.f32(0.0)},
                          [&](Value k0, ValueRange c) -> SmallVector<Value> {
                            return {absMax(aSlice(k0), 0, kSlice, c[0])};
                          })[0];
  Value rowGlobal = nvfp4::globalScale(kb.b, loc, amax);

  // The packed bytes of 64 codes as two 16-byte vectors and a 32-bit word of
  // four scale bytes, stored at row r of a region (32-byte swizzle) and at
  // r's place in a 128 × 4 scale tile.
  auto storeCodes = [&](Value region, Value r, ArrayRef<Value> halves) {
    for (int64_t c = 0; c < 2; ++c) {
      Value offset = kb.add(kb.mul(r, kb.idx(kRowBytes)), kb.idx(16 * c));
      Value addr = kb.add(region, kb.swizzle(offset, 1));
      LLVM::StoreOp::create(kb.b, loc, halves[c], ptr(addr, 3), 16);
    }
  };
  auto storeScales = [&](Value tile, Value r, Value word) {
    // Row r's four scales in the tile: [r % 32, (r / 32)·4 .. + 4) of its
    // [32, 16] bytes.
    SmallVector<Value> pos = nvfp4::applyNonNegative(
        kb.b, loc, nvfp4::blockedScaleMap(kb.b.getContext()), {r, kb.idx(0)});
    Value addr = kb.add(tile, kb.add(kb.mul(pos[2], kb.idx(16)), pos[3]));
    LLVM::StoreOp::create(kb.b, loc, word, ptr(addr, 3), 4);
  };
  auto byteOf = [&](Value f8) {
    return arith::ExtUIOp::create(kb.b, loc, i32, arith::BitcastOp::create(kb.b, loc, i8, f8))
        .getResult();
  };

  const int64_t slices = p.k / kSlice;
  kb.forLoop(kb.idx(0), kb.idx(slices), kb.idx(1), [&](Value kt) {
    Value k0 = kb.mul(kt, kb.idx(kSlice));
    // A: quantize this thread's 64 values (4 blocks of 16).
    SmallVector<Value> a = aSlice(k0);
    SmallVector<Value> codes(kSlice);
    Value scaleWord = kb.i32(0);
    for (int64_t blk = 0; blk < 4; ++blk) {
      Value s8 = nvfp4::blockScale(kb.b, loc, absMax(a, 16 * blk, 16, kb.f32(0.0)), rowGlobal);
      Value inv = nvfp4::inverseScale(kb.b, loc, s8, rowGlobal);
      for (int64_t i = 16 * blk; i < 16 * blk + 16; ++i)
        codes[i] = nvfp4::encodeE2M1(kb.b, loc, kb.mul(a[i], inv));
      scaleWord = arith::OrIOp::create(
          kb.b, loc, scaleWord,
          arith::ShLIOp::create(kb.b, loc, byteOf(s8), kb.i32(8 * blk)));
    }
    SmallVector<Value> halves;
    for (int64_t h = 0; h < 2; ++h) {
      SmallVector<Value> bytes;
      for (int64_t j = 0; j < 16; ++j) {
        Value lo = codes[32 * h + 2 * j], hi = codes[32 * h + 2 * j + 1];
        Value byte = arith::OrIOp::create(kb.b, loc, lo,
                                          arith::ShLIOp::create(kb.b, loc, hi, kb.i32(4)));
        bytes.push_back(arith::TruncIOp::create(kb.b, loc, i8, byte));
      }
      halves.push_back(vector::FromElementsOp::create(kb.b, loc, VectorType::get({16}, i8), bytes));
    }
    storeCodes(at(tcA), tid, halves);
    storeScales(at(tcScaleA), tid, scaleWord);
    // B: this thread's weight row of each set, as stored (0 past N).
    for (int64_t half = 0; half < sets; ++half) {
      Value wRow = kb.add(kb.add(n0, tid), kb.idx(half * p.cols));
      Value valid = kb.ult(wRow, kb.idx(weightRows));
      Value safe = kb.minui(wRow, kb.idx(weightRows - 1));
      SmallVector<Value> w;
      for (int64_t c = 0; c < 2; ++c) {
        Value v = vector::LoadOp::create(
            kb.b, loc, VectorType::get({16}, i8), p.rhs,
            ValueRange{safe, kb.add(kb.mul(kt, kb.idx(kRowBytes)), kb.idx(16 * c))});
        Value zero = arith::ConstantOp::create(
            kb.b, loc, DenseElementsAttr::get(VectorType::get({16}, i8), kb.b.getI8IntegerAttr(0)));
        w.push_back(arith::SelectOp::create(kb.b, loc, valid, v, zero));
      }
      storeCodes(at(tcB + half * kTile * kRowBytes), tid, w);
      if (blockedScales && half == 0 && p.cols % kTile == 0) {
        // Scales blocked at weight-packing time (nvfp4_block_scales): the
        // tile is 512 contiguous bytes in the order the MMA reads; thread t
        // moves bytes 4t .. 4t + 3 (both halves of a GLU: the up rows start
        // a whole tile further).
        for (int64_t h = 0; h < sets; ++h) {
          Value tileRow = kb.divui(kb.add(n0, kb.idx(h * p.cols)), kb.idx(kTile));
          Value r = kb.divui(tid, kb.idx(4)), j0 = kb.mul(kb.remui(tid, kb.idx(4)), kb.idx(4));
          Value word = kb.i32(0);
          for (int64_t j = 0; j < 4; ++j) {
            Value byte = byteOf(kb.load(p.rhsScales, {tileRow, kt, r, kb.add(j0, kb.idx(j))}));
            word = arith::OrIOp::create(kb.b, loc, word,
                                        arith::ShLIOp::create(kb.b, loc, byte, kb.i32(8 * j)));
          }
          LLVM::StoreOp::create(kb.b, loc, word,
                                ptr(kb.add(at(tcScaleB + h * 512), kb.mul(tid, kb.idx(4))), 3), 4);
        }
      } else if (!blockedScales || p.cols % kTile != 0) {
        Value word = kb.i32(0);
        for (int64_t j = 0; j < 4; ++j) {
          Value blk = kb.minui(kb.add(kb.mul(kt, kb.idx(4)), kb.idx(j)), kb.idx(blocks - 1));
          Value byte = byteOf(
              kb.load(p.rhsScales, nvfp4ScalePosition(kb, p.rhsScales, true, safe, blk)));
          word = arith::OrIOp::create(kb.b, loc, word,
                                      arith::ShLIOp::create(kb.b, loc, byte, kb.i32(8 * j)));
        }
        storeScales(at(tcScaleB + half * 512), tid, kb.select(valid, word, kb.i32(0)));
      }
    }
    // The tiles are visible to the tensor cores (async proxy), then one
    // thread copies the scales and issues the MMAs.
    NVVM::FenceProxyOp::create(kb.b, loc,
                               NVVM::ProxyKindAttr::get(mctx, NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(mctx, NVVM::SharedSpace::shared_cta));
    fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    kb.barrier();
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    kb.ifThen(kb.eq(tid, kb.idx(0)), [&] {
      auto copy = [&](int64_t column, int64_t offset) {
        NVVM::Tcgen05CpOp::create(kb.b, loc, NVVM::Tcgen05CpShape::SHAPE_32x128b,
                                  NVVM::CTAGroupKind::CTA_1, NVVM::Tcgen05CpMulticast::WARPX4,
                                  NVVM::Tcgen05CpSrcFormatAttr(), tmemAt(column),
                                  descriptor(at(offset), scaleLayout));
      };
      copy(sfaColumn, tcScaleA);
      for (int64_t half = 0; half < sets; ++half)
        copy(sfbColumn + 4 * half, tcScaleB + half * 512);
      Value accumulate = kb.ult(kb.idx(0), kt);
      for (int64_t half = 0; half < sets; ++half)
        NVVM::Tcgen05MMABlockScaleOp::create(
            kb.b, loc, NVVM::MMABlockScaleKind::MXF4NVF4, NVVM::CTAGroupKind::CTA_1,
            NVVM::Tcgen05MMABlockScale::BLOCK16, NVVM::Tcgen05MMACollectorOp::DISCARD,
            tmemAt(half * kTile), descriptor(at(tcA), operandLayout),
            descriptor(at(tcB + half * kTile * kRowBytes), operandLayout), kb.i32(kInstrDesc),
            accumulate, tmemAt(sfaColumn), tmemAt(sfbColumn + 4 * half));
      NVVM::Tcgen05CommitOp::create(kb.b, loc, ptr(at(tcBar), 3), Value());
    });
    // Every thread waits for the MMAs (the tiles and scale columns are free).
    Value phase = arith::IndexCastOp::create(kb.b, loc, i32, kb.remui(kt, kb.idx(2)));
    NVVM::MBarrierTryWaitParityOp::create(kb.b, loc, ptr(at(tcBar), 3), phase, kb.i32(1000000));
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  });

  // Row tid of each accumulator: warp w reads lanes 32w .. 32w + 31.
  Value global = kb.mul(kb.convert(rowGlobal, acc), nvfp4Global());
  Value lanes = arith::ShLIOp::create(
      kb.b, loc, arith::IndexCastOp::create(kb.b, loc, i32, kb.mul(warp, kb.idx(32))),
      kb.i32(16));
  // 32 columns at a time (registers), gate and up together with GLU.
  constexpr int64_t kChunk = 32;
  for (int64_t c0 = 0; c0 < kTile; c0 += kChunk) {
    SmallVector<Value> vals[2];
    for (int64_t half = 0; half < sets; ++half) {
      Value v = NVVM::Tcgen05LdOp::create(kb.b, loc, VectorType::get({kChunk}, i32), false,
                                          NVVM::Tcgen05LdStShape::SHAPE_32X32B,
                                          tmemAt(half * kTile + c0, lanes), Value());
      for (int64_t j = 0; j < kChunk; ++j)
        vals[half].push_back(vector::ExtractOp::create(kb.b, loc, v, ArrayRef<int64_t>{j}));
    }
    NVVM::Tcgen05WaitOp::create(kb.b, loc, NVVM::Tcgen05WaitKind::LOAD);
    for (int64_t j = 0; j < kChunk; ++j) {
      auto scaled = [&](Value bits) {
        return kb.mul(arith::BitcastOp::create(kb.b, loc, kb.b.getF32Type(), bits), global);
      };
      Value col = kb.minui(kb.add(n0, kb.idx(c0 + j)), kb.idx(p.cols - 1));
      kb.store(activate(scaled(vals[0][j]), p.glu ? scaled(vals[1][j]) : Value(), col), cs,
               {tid, kb.idx(c0 + j)});
    }
  }
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  kb.barrier();
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  kb.ifThen(kb.eq(warp, kb.idx(0)),
            [&] { NVVM::Tcgen05DeallocOp::create(kb.b, loc, tmemAt(0), kb.i32(nCols)); });
}
