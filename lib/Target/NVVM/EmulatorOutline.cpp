//===- EmulatorOutline.cpp - rlx-gpu-outline-for-emulator ------------------===//
//
// gpu.func kernels → CPU functions whose GPU operations are calls into the
// emulator runtime (include/RLX/Runtime/Emulator.h). The kernel body is the
// one the NVVM path compiles, cloned op for op: only the GPU-specific ops
// change.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/NVVM/Passes.h"
#include "RLX/Target/NVVM/WgmmaRegisterA.h"

#include "EmulatorInlinePtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace mlir::rlx {
#define GEN_PASS_DEF_GPUOUTLINEFOREMULATOR
#include "RLX/Target/NVVM/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {

/// The emulator's shared window (lib/Runtime/Emulator/Scheduler.cpp).
constexpr int64_t kSharedWindowBytes = int64_t(1) << 18;

/// The kernel's number for a wgmma (its findings name it), set by
/// markAccumulatorReads on the outlined copy.
constexpr StringLiteral kWgmmaIdAttr = "rlx.emu_wgmma_id";
/// The kernel's nvvm.maxnreg on its setmaxnreg ops (the threads' start).
constexpr StringLiteral kMaxnregAttr = "rlx.emu_maxnreg";

bool isWgmma(Operation *op) {
  return isa<NVVM::WgmmaMmaAsyncOp>(op) || nvvm::matchWgmmaRegisterA(op).has_value();
}

/// The type without its memory space (workgroup, private; LLVM address
/// spaces such as shared memory's 3): the CPU has one.
Type stripMemorySpace(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    if (m.getMemorySpace())
      return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
  if (auto p = dyn_cast<LLVM::LLVMPointerType>(t); p && p.getAddressSpace() != 0)
    return LLVM::LLVMPointerType::get(t.getContext());
  return t;
}

struct Hooks {
  func::FuncOp id, barrier, shuffle, mma, ldmatrix, cpAsync, cpCommit, cpWait;
  func::FuncOp mbInit, mbInval, mbArrive, mbTx, mbTestWait, mbWaitParity, tmaLoad, wgmma;
  func::FuncOp wgmmaRs, namedBarrier;
  func::FuncOp wgmmaOp, wgmmaFence, wgmmaCommit, wgmmaWait, wgmmaRead, fenceProxyAsync;
  func::FuncOp setMaxnreg, shflSync, voteSync;
};

func::FuncOp declare(OpBuilder &b, ModuleOp m, StringRef name, FunctionType type) {
  if (auto f = m.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(m.getBody());
  auto f = func::FuncOp::create(b, m.getLoc(), name, type);
  f.setPrivate();
  return f;
}

Value idCall(OpBuilder &b, Location loc, const Hooks &h, unsigned kind, unsigned dim) {
  Value which = arith::ConstantIntOp::create(b, loc, kind * 4 + dim, 32);
  Value id = func::CallOp::create(b, loc, h.id, ValueRange{which}).getResult(0);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), id);
}

unsigned dimOf(gpu::Dimension d) { return static_cast<unsigned>(d); }

/// A stack slot of `n` elements (the emulator reads a lane's fragment there),
/// allocated once at the function's entry: an alloca inside the kernel's
/// loops would grow the fiber's stack with every iteration.
Value slot(OpBuilder &b, Location loc, int64_t n, Type t) {
  OpBuilder::InsertionGuard g(b);
  Operation *fn = b.getInsertionBlock()->getParentOp();
  while (fn && !isa<func::FuncOp>(fn))
    fn = fn->getParentOp();
  if (fn)
    b.setInsertionPointToStart(&cast<func::FuncOp>(fn).getBody().front());
  return memref::AllocaOp::create(b, loc, MemRefType::get({n}, t));
}

/// Replaces `op`'s LLVM struct (or single) result by the values of `from`.
void replaceWithElements(OpBuilder &b, Operation *op, Value from, unsigned n) {
  Location loc = op->getLoc();
  Type resultType = op->getResult(0).getType();
  SmallVector<Value> values;
  for (unsigned i = 0; i < n; ++i)
    values.push_back(memref::LoadOp::create(b, loc, from, ValueRange{
                         arith::ConstantIndexOp::create(b, loc, i)}));
  Value result;
  if (auto st = dyn_cast<LLVM::LLVMStructType>(resultType)) {
    result = LLVM::UndefOp::create(b, loc, st);
    for (unsigned i = 0; i < n; ++i)
      result = LLVM::InsertValueOp::create(b, loc, result, values[i], ArrayRef<int64_t>{i});
  } else {
    result = values[0];
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

/// Stores `v` (a 32-bit value: i32, f32 or vector<2x16-bit>) as an i32 / f32.
void storeBits(OpBuilder &b, Location loc, Value v, Value to, int64_t i, Type as) {
  if (v.getType() != as)
    v = LLVM::BitcastOp::create(b, loc, as, v);
  memref::StoreOp::create(b, loc, v, to, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
}

/// The mbarrier ops (include/RLX/Runtime/Emulator.h, __rlx_emu_mbarrier_*);
/// nullopt for any other op. Predicated forms are errors.
std::optional<LogicalResult> rewriteMBarrierOp(Operation *op, const Hooks &h) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  auto call = [&](func::FuncOp f, ValueRange args) {
    return func::CallOp::create(b, loc, f, args);
  };
  auto predicated = [&](Value p) {
    if (p)
      op->emitError("rlx-gpu-outline-for-emulator: predicated '")
          << op->getName() << "' is not emulated";
    return p != nullptr;
  };
  auto zext64 = [&](Value v) {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  auto replaceResult = [&](Value res, Value with) {
    if (res)
      res.replaceAllUsesWith(with);
  };
  if (auto o = dyn_cast<NVVM::MBarrierInitOp>(op)) {
    if (predicated(o.getPredicate()))
      return LogicalResult(failure());
    call(h.mbInit, {o.getAddr(), o.getCount()});
  } else if (auto o = dyn_cast<NVVM::MBarrierInvalOp>(op)) {
    call(h.mbInval, {o.getAddr()});
  } else if (auto o = dyn_cast<NVVM::MBarrierArriveOp>(op)) {
    Value count = o.getCount() ? o.getCount() : i32(1);
    replaceResult(o.getRes(), call(h.mbArrive, {o.getAddr(), count, i32(0)}).getResult(0));
  } else if (auto o = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
    if (predicated(o.getPredicate()))
      return LogicalResult(failure());
    replaceResult(o.getRes(),
                  call(h.mbArrive, {o.getAddr(), i32(1), o.getTxcount()}).getResult(0));
  } else if (auto o = dyn_cast<NVVM::MBarrierExpectTxOp>(op)) {
    call(h.mbTx, {o.getAddr(), zext64(o.getTxcount())});
  } else if (auto o = dyn_cast<NVVM::MBarrierCompleteTxOp>(op)) {
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    call(h.mbTx, {o.getAddr(), arith::SubIOp::create(b, loc, zero, zext64(o.getTxcount()))});
  } else if (auto o = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
    call(h.mbWaitParity, {o.getAddr(), o.getPhase()});
  } else if (auto o = dyn_cast<NVVM::MBarrierTestWaitOp>(op)) {
    Value v = o.getStateOrPhase();
    bool parity = !v.getType().isInteger(64);
    Value state = parity ? zext64(v) : v;
    Value r = call(h.mbTestWait, {o.getAddr(), state, i32(parity)}).getResult(0);
    Value zero = i32(0);
    o.getRes().replaceAllUsesWith(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero).getResult());
  } else {
    return std::nullopt;
  }
  op->erase();
  return LogicalResult(success());
}

/// cvt.rn.f16x2.e4m3x2 d, a (PTX ISA, cvt): byte i of a (the low byte is
/// element 0) as an E4M3 value s.eeee.mmm, 2^(e-7)·(1 + m/8), e = 0 giving
/// m·2^-9, s.1111.111 NaN; every E4M3 value is exact in f16.
LogicalResult rewriteF8x2ToF16x2(NVVM::ConvertF8x2ToF16x2Op cvt) {
  OpBuilder b(cvt);
  Location loc = cvt.getLoc();
  if (!isa<Float8E4M3FNType>(cvt.getSrcType()) || cvt.getRelu())
    return cvt.emitError("rlx-gpu-outline-for-emulator: only cvt.rn.f16x2.e4m3x2 (no .relu) is "
                         "emulated");
  Type i32 = b.getI32Type(), f32 = b.getF32Type(), f16 = b.getF16Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  auto cf = [&](float v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32), APFloat(v)).getResult();
  };
  SmallVector<Value> halves;
  for (int64_t i = 0; i < 2; ++i) {
    Value byte = vector::ExtractOp::create(b, loc, cvt.getSrc(), ArrayRef<int64_t>{i});
    Value v = arith::ExtUIOp::create(b, loc, i32, byte);
    Value e = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, v, c32(3)), c32(15));
    Value m = arith::AndIOp::create(b, loc, v, c32(7));
    Value normal = arith::BitcastOp::create(
        b, loc, f32,
        arith::OrIOp::create(
            b, loc,
            arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c32(120)), c32(23)),
            arith::ShLIOp::create(b, loc, m, c32(20))));
    Value subnormal =
        arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, m), cf(0x1p-9f));
    Value mag = arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c32(0)), subnormal,
        normal);
    Value isNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        arith::AndIOp::create(b, loc, v, c32(0x7F)), c32(0x7F));
    mag = arith::SelectOp::create(b, loc, isNan, cf(std::numeric_limits<float>::quiet_NaN()), mag);
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, v, c32(0x80));
    Value val = arith::SelectOp::create(b, loc, negative, arith::NegFOp::create(b, loc, mag), mag);
    halves.push_back(arith::TruncFOp::create(b, loc, f16, val));
  }
  cvt.getResult().replaceAllUsesWith(
      vector::FromElementsOp::create(b, loc, cvt.getResult().getType(), halves).getResult());
  cvt->erase();
  return success();
}

LogicalResult rewriteNvvmOp(Operation *op, const Hooks &h) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  if (auto cvt = dyn_cast<NVVM::ConvertF8x2ToF16x2Op>(op))
    return rewriteF8x2ToF16x2(cvt);
  if (auto ld = dyn_cast<NVVM::LdMatrixOp>(op)) {
    if (ld.getEltType() != NVVM::LdStMatrixEltType::B16 || ld.getShape().getM() != 8 ||
        ld.getShape().getN() != 8)
      return op->emitError("rlx-gpu-outline-for-emulator: only ldmatrix m8n8 b16 is emulated");
    Value out = slot(b, loc, 4, i32);
    Value num = arith::ConstantIntOp::create(b, loc, ld.getNum(), 32);
    Value trans = arith::ConstantIntOp::create(
        b, loc, ld.getLayout() == NVVM::MMALayout::col ? 1 : 0, 32);
    func::CallOp::create(b, loc, h.ldmatrix, ValueRange{num, trans, ld.getPtr(), out});
    replaceWithElements(b, op, out, ld.getNum());
    return success();
  }
  if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    NVVM::MMAShapeAttr shape = mma.getShape();
    std::optional<NVVM::MMATypes> type = mma.getMultiplicandAPtxType();
    bool bf16 = type && *type == NVVM::MMATypes::bf16;
    bool f16 = type && *type == NVVM::MMATypes::f16;
    if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 || !(bf16 || f16) ||
        mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2 ||
        mma.getOperandC().size() != 4 || !mma.getOperandC()[0].getType().isF32())
      return op->emitError("rlx-gpu-outline-for-emulator: only mma.sync m16n8k16 with f16 or "
                           "bf16 multiplicands and f32 accumulators is emulated");
    Value a = slot(b, loc, 4, i32), bb = slot(b, loc, 2, i32), c = slot(b, loc, 4, f32),
          d = slot(b, loc, 4, f32);
    for (auto [i, v] : llvm::enumerate(mma.getOperandA()))
      storeBits(b, loc, v, a, i, i32);
    for (auto [i, v] : llvm::enumerate(mma.getOperandB()))
      storeBits(b, loc, v, bb, i, i32);
    for (auto [i, v] : llvm::enumerate(mma.getOperandC()))
      storeBits(b, loc, v, c, i, f32);
    Value kind = arith::ConstantIntOp::create(b, loc, bf16 ? 1 : 0, 32);
    func::CallOp::create(b, loc, h.mma, ValueRange{kind, a, bb, c, d});
    replaceWithElements(b, op, d, 4);
    return success();
  }
  if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
    NVVM::MMAShapeAttr shape = mma.getShape();
    NVVM::WGMMATypes ta = mma.getTypeA();
    bool bf16 = ta == NVVM::WGMMATypes::bf16;
    if (shape.getM() != 64 || shape.getK() != 16 || ta != mma.getTypeB() ||
        !(bf16 || ta == NVVM::WGMMATypes::f16) || mma.getTypeD() != NVVM::WGMMATypes::f32)
      return op->emitError("rlx-gpu-outline-for-emulator: only wgmma.mma_async m64nNk16 with "
                           "f16 or bf16 operands in shared memory and f32 accumulators is "
                           "emulated");
    int64_t regs = shape.getN() / 2;
    Value c = slot(b, loc, 128, f32), d = slot(b, loc, 128, f32);
    for (int64_t i = 0; i < regs; ++i) {
      Value v = LLVM::ExtractValueOp::create(b, loc, mma.getInouts(), ArrayRef<int64_t>{i});
      memref::StoreOp::create(b, loc, v, c, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    }
    // Layouts as PTX's imm-trans-a/b: A row (K-major) and B col (K-major)
    // are not transposed.
    uint32_t flags = (mma.getScaleD() == NVVM::WGMMAScaleOut::one ? 1u : 0u) |
                     (mma.getScaleA() == NVVM::WGMMAScaleIn::neg ? 2u : 0u) |
                     (mma.getScaleB() == NVVM::WGMMAScaleIn::neg ? 4u : 0u) |
                     (mma.getLayoutA() == NVVM::MMALayout::col ? 8u : 0u) |
                     (mma.getLayoutB() == NVVM::MMALayout::row ? 16u : 0u);
    auto cst = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
    if (auto id = op->getAttrOfType<IntegerAttr>(kWgmmaIdAttr))
      func::CallOp::create(b, loc, h.wgmmaOp, ValueRange{cst(id.getInt())});
    func::CallOp::create(b, loc, h.wgmma,
                         ValueRange{cst(bf16 ? 1 : 0), cst(shape.getN()), mma.getDescriptorA(),
                                    mma.getDescriptorB(), c, d, cst(flags)});
    replaceWithElements(b, op, d, static_cast<unsigned>(regs));
    return success();
  }
  if (auto bar = dyn_cast<NVVM::BarrierOp>(op)) {
    if (bar.getReductionOp())
      return op->emitError("rlx-gpu-outline-for-emulator: nvvm.barrier with a reduction is not "
                           "emulated");
    Value id = bar.getBarrierId() ? bar.getBarrierId() : Value(arith::ConstantIntOp::create(b, loc, 0, 32));
    Value count = bar.getNumberOfThreads() ? bar.getNumberOfThreads()
                                           : Value(arith::ConstantIntOp::create(b, loc, 0, 32));
    func::CallOp::create(b, loc, h.namedBarrier,
                         ValueRange{id, count, arith::ConstantIntOp::create(b, loc, 1, 32)});
    op->erase();
    return success();
  }
  if (auto bar = dyn_cast<NVVM::BarrierArriveOp>(op)) {
    Value id = bar.getBarrierId() ? bar.getBarrierId() : Value(arith::ConstantIntOp::create(b, loc, 0, 32));
    func::CallOp::create(b, loc, h.namedBarrier,
                         ValueRange{id, bar.getNumberOfThreads(),
                                    arith::ConstantIntOp::create(b, loc, 0, 32)});
    op->erase();
    return success();
  }
  if (isa<NVVM::Barrier0Op>(op)) {
    func::CallOp::create(b, loc, h.barrier, ValueRange{});
    op->erase();
    return success();
  }
  // wgmma's asynchrony and the async proxy (lib/Runtime/Emulator/Async.cpp).
  auto callAndErase = [&](func::FuncOp f, ValueRange args) {
    func::CallOp::create(b, loc, f, args);
    op->erase();
    return success();
  };
  if (isa<NVVM::WgmmaFenceAlignedOp>(op))
    return callAndErase(h.wgmmaFence, {});
  if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op))
    return callAndErase(h.wgmmaCommit, {});
  if (auto w = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op))
    return callAndErase(h.wgmmaWait,
                        {arith::ConstantIntOp::create(b, loc, w.getGroup(), 32).getResult()});
  if (auto f = dyn_cast<NVVM::FenceProxyOp>(op);
      (f && (f.getKind() == NVVM::ProxyKind::async ||
             f.getKind() == NVVM::ProxyKind::async_shared)) ||
      isa<NVVM::FenceMbarrierInitOp>(op))
    return callAndErase(h.fenceProxyAsync, {});
  if (auto r = dyn_cast<NVVM::SetMaxRegisterOp>(op)) {
    auto maxnreg = op->getAttrOfType<IntegerAttr>(kMaxnregAttr);
    auto cst = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
    return callAndErase(h.setMaxnreg,
                        {cst(r.getRegCount()),
                         cst(r.getAction() == NVVM::SetMaxRegisterAction::increase ? 1 : 0),
                         cst(maxnreg ? maxnreg.getInt() : 0)});
  }
  if (isa<NVVM::FenceProxyOp, NVVM::FenceProxyAcquireOp>(op)) {
    // Global-memory and tensor-map proxies: the emulator's tensor maps are
    // ordinary memory.
    op->erase();
    return success();
  }
  if (auto s = dyn_cast<NVVM::ShflOp>(op)) {
    // shfl.sync.{bfly,up,down,idx}.b32 d[|p], a, b, c, membermask: the
    // emulator's modes are PTX's order (Emulator.h, RLX_EMU_SHFL_*).
    Value v = s.getVal();
    Type t = v.getType();
    if (!t.isInteger(32))
      v = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
    Value mode = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(s.getKind()), 32);
    Value r = func::CallOp::create(b, loc, h.shflSync,
                                   ValueRange{mode, v, s.getOffset(), s.getMaskAndClamp(),
                                              s.getThreadMask()})
                  .getResult(0);
    Value d = arith::TruncIOp::create(b, loc, b.getI32Type(), r);
    if (!t.isInteger(32))
      d = arith::BitcastOp::create(b, loc, t, d);
    Value result = d;
    if (auto st = dyn_cast<LLVM::LLVMStructType>(s.getType())) {
      Value c32 = arith::ConstantIntOp::create(b, loc, 32, 64);
      Value p = arith::TruncIOp::create(b, loc, b.getI1Type(),
                                        arith::ShRUIOp::create(b, loc, r, c32));
      result = LLVM::UndefOp::create(b, loc, st);
      result = LLVM::InsertValueOp::create(b, loc, result, d, ArrayRef<int64_t>{0});
      result = LLVM::InsertValueOp::create(b, loc, result, p, ArrayRef<int64_t>{1});
    }
    s.getResult().replaceAllUsesWith(result);
    op->erase();
    return success();
  }
  if (auto vote = dyn_cast<NVVM::VoteSyncOp>(op)) {
    // vote.sync.{any,all,uni}.pred / .ballot.b32: the emulator numbers the
    // modes all 0, any 1, uni 2, ballot 3.
    int64_t mode = 0;
    switch (vote.getKind()) {
    case NVVM::VoteSyncKind::all: mode = 0; break;
    case NVVM::VoteSyncKind::any: mode = 1; break;
    case NVVM::VoteSyncKind::uni: mode = 2; break;
    case NVVM::VoteSyncKind::ballot: mode = 3; break;
    }
    Value pred = arith::ExtUIOp::create(b, loc, b.getI32Type(), vote.getPred());
    Value r = func::CallOp::create(
                  b, loc, h.voteSync,
                  ValueRange{arith::ConstantIntOp::create(b, loc, mode, 32), pred, vote.getMask()})
                  .getResult(0);
    if (vote.getType().isInteger(1))
      r = arith::TruncIOp::create(b, loc, b.getI1Type(), r);
    vote.getResult().replaceAllUsesWith(r);
    op->erase();
    return success();
  }
  if (auto tma = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
    if (tma.getMode() != NVVM::TMALoadMode::TILE || !tma.getIm2colOffsets().empty() ||
        tma.getMulticastMask() || tma.getPredicate() || tma.getGroup())
      return op->emitError("rlx-gpu-outline-for-emulator: only tile-mode TMA loads without "
                           "multicast, CTA groups or a predicate are emulated");
    auto coords = tma.getCoordinates();
    if (coords.size() > 5)
      return op->emitError("rlx-gpu-outline-for-emulator: a TMA load of rank ")
             << coords.size() << " (at most 5)";
    Value slotC = slot(b, loc, 5, i32);
    for (auto [i, c] : llvm::enumerate(coords))
      memref::StoreOp::create(b, loc, c, slotC,
                              ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    Value rank = arith::ConstantIntOp::create(b, loc, coords.size(), 32);
    func::CallOp::create(b, loc, h.tmaLoad,
                         ValueRange{tma.getDstMem(), tma.getTmaDescriptor(), slotC, rank,
                                    tma.getMbar()});
    op->erase();
    return success();
  }
  if (auto cp = dyn_cast<NVVM::CpAsyncOp>(op)) {
    Value size = arith::ConstantIntOp::create(b, loc, cp.getSize(), 32);
    Value srcSize = cp.getCpSize() ? cp.getCpSize() : size;
    func::CallOp::create(b, loc, h.cpAsync, ValueRange{cp.getDst(), cp.getSrc(), size, srcSize});
    op->erase();
    return success();
  }
  if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    func::CallOp::create(b, loc, h.cpCommit, ValueRange{});
    op->erase();
    return success();
  }
  if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    Value n = arith::ConstantIntOp::create(b, loc, wait.getN(), 32);
    func::CallOp::create(b, loc, h.cpWait, ValueRange{n});
    op->erase();
    return success();
  }
  if (std::optional<LogicalResult> r = rewriteMBarrierOp(op, h))
    return *r;
  return op->emitError("rlx-gpu-outline-for-emulator: no emulation for '")
         << op->getName() << "'";
}

/// NVPTX intrinsics kernels call (llvm.call_intrinsic "llvm.nvvm.*"), as
/// the PTX ISA defines the instruction each one is:
///  - ex2.approx.ftz.f32 d, a: 2^a, a subnormal a read as a zero of its sign
///    and a subnormal result written as +0 (the relative error, at most
///    2^-22 on hardware, is 0 here; -inf gives +0, +inf and NaN pass).
/// Any other NVPTX intrinsic is an error, never a guess.
LogicalResult rewriteNvvmIntrinsic(LLVM::CallIntrinsicOp op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  StringRef name = op.getIntrin();
  if (name != "llvm.nvvm.ex2.approx.ftz.f32" || op.getArgs().size() != 1 ||
      !op.getArgs()[0].getType().isF32() || op->getNumResults() != 1 ||
      !op->getResult(0).getType().isF32())
    return op->emitError("rlx-gpu-outline-for-emulator: no emulation for the intrinsic '")
           << name << "'";
  Value a = op.getArgs()[0];
  Type f32 = b.getF32Type();
  auto cst = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(v)))
        .getResult();
  };
  Value tiny = cst(std::numeric_limits<float>::min()), zero = cst(0.0);
  Value absA = math::AbsFOp::create(b, loc, a);
  Value subnormalIn = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, absA, tiny);
  Value in = arith::SelectOp::create(b, loc, subnormalIn, zero, a);
  Value r = math::Exp2Op::create(b, loc, in);
  Value subnormalOut = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, tiny);
  op.getResult(0).replaceAllUsesWith(arith::SelectOp::create(b, loc, subnormalOut, zero, r));
  op->erase();
  return success();
}

/// The register-A wgmma and the operand fences (WgmmaRegisterA.h), the only
/// inline asm kernels carry.
LogicalResult rewriteInlineAsm(Operation *op, const Hooks &h) {
  if (std::optional<SmallVector<Value>> fenced = nvvm::matchWgmmaFenceOperands(op)) {
    // A register fence orders nothing on the emulator: the values pass.
    OpBuilder b(op);
    Value r = op->getResult(0);
    if (fenced->size() == 1) {
      r.replaceAllUsesWith((*fenced)[0]);
    } else {
      Value st = LLVM::UndefOp::create(b, op->getLoc(), r.getType());
      for (auto [i, v] : llvm::enumerate(*fenced))
        st = LLVM::InsertValueOp::create(b, op->getLoc(), st, v,
                                         ArrayRef<int64_t>{static_cast<int64_t>(i)});
      r.replaceAllUsesWith(st);
    }
    op->erase();
    return success();
  }
  std::optional<nvvm::WgmmaRegisterAOperands> w = nvvm::matchWgmmaRegisterA(op);
  if (!w)
    return op->getAttr(nvvm::kWgmmaRegisterAAttr)
               ? failure()
               : op->emitError("rlx-gpu-outline-for-emulator: no emulation for inline PTX "
                               "(only the register-A wgmma of WgmmaRegisterA.h)");
  // What runs is what the PTX text says (EmulatorInlinePtx.h).
  FailureOr<nvvm::PtxWgmmaRegisterA> ptx =
      nvvm::readWgmmaRegisterAPtx(cast<LLVM::InlineAsmOp>(op));
  if (failed(ptx))
    return failure();
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value a = slot(b, loc, 4, i32), c = slot(b, loc, 128, f32), d = slot(b, loc, 128, f32);
  for (auto [i, v] : llvm::enumerate(ptx->a))
    storeBits(b, loc, v, a, i, i32);
  for (auto [i, v] : llvm::enumerate(ptx->acc))
    if (v)
      storeBits(b, loc, v, c, i, f32);
  auto cst = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  // flags: bit 0 scale-d, bits 1, 2 negate A, B, bit 4 transposed B.
  Value flags = cst((ptx->scaleD ? 1 : 0) | (ptx->negA ? 2 : 0) | (ptx->negB ? 4 : 0) |
                    (ptx->transB ? 16 : 0));
  if (auto id = op->getAttrOfType<IntegerAttr>(kWgmmaIdAttr))
    func::CallOp::create(b, loc, h.wgmmaOp, ValueRange{cst(id.getInt())});
  func::CallOp::create(b, loc, h.wgmmaRs,
                       ValueRange{cst(ptx->bf16 ? 1 : 0), cst(ptx->n), a, ptx->descB, c, d,
                                  flags});
  // D register i defines the result's element resultIndex[i].
  Type resultType = op->getResult(0).getType();
  Value result = LLVM::UndefOp::create(b, loc, resultType);
  for (auto [i, k] : llvm::enumerate(ptx->resultIndex)) {
    Value v = memref::LoadOp::create(
        b, loc, d, ValueRange{arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(i))});
    result = LLVM::InsertValueOp::create(b, loc, result, v, ArrayRef<int64_t>{k});
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

LogicalResult rewriteGpuOp(Operation *op, const Hooks &h) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value repl;
  if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
    repl = idCall(b, loc, h, 0, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::BlockIdOp>(op))
    repl = idCall(b, loc, h, 1, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
    repl = idCall(b, loc, h, 2, dimOf(o.getDimension()));
  else if (auto o = dyn_cast<gpu::GridDimOp>(op))
    repl = idCall(b, loc, h, 3, dimOf(o.getDimension()));
  else if (isa<gpu::LaneIdOp>(op))
    repl = idCall(b, loc, h, 4, 0);
  else if (isa<gpu::BarrierOp>(op)) {
    func::CallOp::create(b, loc, h.barrier, ValueRange{});
    op->erase();
    return success();
  } else if (auto r = dyn_cast<gpu::ReturnOp>(op)) {
    func::ReturnOp::create(b, loc, r.getOperands());
    op->erase();
    return success();
  } else if (auto s = dyn_cast<gpu::ShuffleOp>(op)) {
    Type t = s.getValue().getType();
    if (t.getIntOrFloatBitWidth() != 32)
      return op->emitError("rlx-gpu-outline-for-emulator: gpu.shuffle of ")
             << t << " (the emulator shuffles 32-bit values, as shfl.sync.b32)";
    Value v = s.getValue();
    if (!t.isInteger(32))
      v = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
    Value mode = arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(s.getMode()), 32);
    Value r = func::CallOp::create(b, loc, h.shuffle,
                                   ValueRange{mode, v, s.getOffset(), s.getWidth()})
                  .getResult(0);
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), r);
    Value c32 = arith::ConstantIntOp::create(b, loc, 32, 64);
    Value valid = arith::TruncIOp::create(b, loc, b.getI1Type(),
                                          arith::ShRUIOp::create(b, loc, r, c32));
    if (!t.isInteger(32))
      lo = arith::BitcastOp::create(b, loc, t, lo);
    s.getShuffleResult().replaceAllUsesWith(lo);
    s.getValid().replaceAllUsesWith(valid);
    op->erase();
    return success();
  } else {
    return op->emitError("rlx-gpu-outline-for-emulator: no emulation for '")
           << op->getName() << "'";
  }
  op->getResult(0).replaceAllUsesWith(repl);
  op->erase();
  return success();
}

/// Numbers the wgmmas of `fn` and calls __rlx_emu_wgmma_read(id) before the
/// first op of each block that accesses the registers of wgmma `id`'s
/// accumulators: any use of a value derived from its result (through
/// extractvalue / insertvalue, register fences and scf control flow) that
/// is not another wgmma's operand (accumulators chain between in-flight
/// wgmmas of one shape, PTX ISA "wgmma.fence").
void markAccumulatorReads(func::FuncOp fn, const Hooks &h) {
  SmallVector<Operation *> wgmmas;
  fn.walk([&](Operation *op) {
    if (isWgmma(op))
      wgmmas.push_back(op);
  });
  // (block, id) -> its first accessing op.
  llvm::MapVector<std::pair<Block *, unsigned>, Operation *> first;
  for (auto [id, w] : llvm::enumerate(wgmmas)) {
    w->setAttr(kWgmmaIdAttr, IntegerAttr::get(IntegerType::get(fn.getContext(), 32), id));
    SmallVector<Value> work(w->getResults());
    DenseSet<Value> seen;
    auto derive = [&](Value v) { work.push_back(v); };
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        unsigned i = use.getOperandNumber();
        if (isWgmma(user))
          continue;
        if (isa<LLVM::ExtractValueOp, LLVM::InsertValueOp>(user) ||
            nvvm::matchWgmmaFenceOperands(user)) {
          llvm::for_each(user->getResults(), derive);
          continue;
        }
        if (auto y = dyn_cast<scf::YieldOp>(user)) {
          Operation *parent = y->getParentOp();
          if (i < parent->getNumResults())
            derive(parent->getResult(i));
          if (auto f = dyn_cast<scf::ForOp>(parent))
            derive(f.getRegionIterArgs()[i]);
          continue;
        }
        if (auto f = dyn_cast<scf::ForOp>(user); f && i >= f.getNumControlOperands()) {
          derive(f.getRegionIterArgs()[i - f.getNumControlOperands()]);
          derive(f.getResult(i - f.getNumControlOperands()));
          continue;
        }
        auto key = std::make_pair(user->getBlock(), static_cast<unsigned>(id));
        Operation *&at = first[key];
        // The first in its block: `user` may lie in a nested region.
        Operation *inBlock = user;
        if (!at || inBlock->isBeforeInBlock(at))
          at = inBlock;
      }
    }
  }
  for (auto &[key, op] : first) {
    OpBuilder b(op);
    Value id = arith::ConstantIntOp::create(b, op->getLoc(), key.second, 32);
    func::CallOp::create(b, op->getLoc(), h.wgmmaRead, ValueRange{id});
  }
}

struct GPUOutlineForEmulatorPass
    : rlx::impl::GPUOutlineForEmulatorBase<GPUOutlineForEmulatorPass> {
  using GPUOutlineForEmulatorBase::GPUOutlineForEmulatorBase;

  LogicalResult outline(gpu::GPUFuncOp kernel, ModuleOp module, const Hooks &hooks) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> inputs(kernel.getArgumentTypes());
    for (BlockArgument a : kernel.getWorkgroupAttributions())
      inputs.push_back(stripMemorySpace(a.getType()));
    // Dynamic shared memory is one more buffer after the static ones (the
    // scheduler passes it last; its size is the launch's, which the bounds
    // checks know): a parameter as large as the shared window.
    bool dynamicShared = false;
    kernel.walk([&](gpu::DynamicSharedMemoryOp) { dynamicShared = true; });
    auto window = MemRefType::get({kSharedWindowBytes}, b.getI8Type());
    if (dynamicShared)
      inputs.push_back(window);
    auto fn = func::FuncOp::create(b, kernel.getLoc(), (kernel.getName() + "__body").str(),
                                   b.getFunctionType(inputs, {}));
    // The body as it is; its entry block's arguments are the parameters,
    // the workgroup buffers (now function arguments) and the private
    // buffers (now allocas).
    IRMapping map;
    kernel.getBody().cloneInto(&fn.getBody(), map);
    Block *entry = &fn.getBody().front();
    unsigned numArgs = inputs.size() - (dynamicShared ? 1 : 0);
    b.setInsertionPointToStart(entry);
    while (entry->getNumArguments() > numArgs) {
      BlockArgument a = entry->getArgument(numArgs);
      auto type = cast<MemRefType>(stripMemorySpace(a.getType()));
      a.replaceAllUsesWith(memref::AllocaOp::create(b, kernel.getLoc(), type).getResult());
      entry->eraseArgument(numArgs);
    }
    if (dynamicShared) {
      Value buffer = entry->addArgument(window, kernel.getLoc());
      SmallVector<gpu::DynamicSharedMemoryOp> uses;
      fn.walk([&](gpu::DynamicSharedMemoryOp op) { uses.push_back(op); });
      for (gpu::DynamicSharedMemoryOp op : uses) {
        b.setInsertionPoint(op);
        Value v = memref::CastOp::create(b, op.getLoc(), stripMemorySpace(op.getType()), buffer);
        op.replaceAllUsesWith(v);
        op.erase();
      }
    }
    markAccumulatorReads(fn, hooks);
    if (auto maxnreg = kernel->getAttrOfType<IntegerAttr>("nvvm.maxnreg"))
      fn.walk([&](NVVM::SetMaxRegisterOp r) { r->setAttr(kMaxnregAttr, maxnreg); });
    // Address spaces do not exist on the CPU; GPU ops become emulator calls.
    SmallVector<Operation *> gpuOps;
    fn.walk([&](Operation *op) {
      for (Value r : op->getResults())
        r.setType(stripMemorySpace(r.getType()));
      for (Region &reg : op->getRegions())
        for (Block &blk : reg)
          for (BlockArgument a : blk.getArguments())
            a.setType(stripMemorySpace(a.getType()));
      auto intrinsic = dyn_cast<LLVM::CallIntrinsicOp>(op);
      if (isa<gpu::GPUDialect, NVVM::NVVMDialect>(op->getDialect()) ||
          isa<LLVM::InlineAsmOp>(op) || (intrinsic && intrinsic.getIntrin().starts_with("llvm.nvvm.")))
        gpuOps.push_back(op);
    });
    for (Operation *op : gpuOps)
      if (failed(isa<LLVM::CallIntrinsicOp>(op) ? rewriteNvvmIntrinsic(cast<LLVM::CallIntrinsicOp>(op))
                 : isa<LLVM::InlineAsmOp>(op)               ? rewriteInlineAsm(op, hooks)
                 : isa<NVVM::NVVMDialect>(op->getDialect()) ? rewriteNvvmOp(op, hooks)
                                                            : rewriteGpuOp(op, hooks)))
        return failure();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Hooks hooks;
    hooks.id = declare(b, module, "__rlx_emu_id",
                       b.getFunctionType({b.getI32Type()}, {b.getI64Type()}));
    hooks.barrier = declare(b, module, "__rlx_emu_barrier", b.getFunctionType({}, {}));
    Type i32 = b.getI32Type();
    hooks.shuffle =
        declare(b, module, "__rlx_emu_shuffle", b.getFunctionType({i32, i32, i32, i32},
                                                                  {b.getI64Type()}));
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto i32Slot = [&](int64_t n) { return MemRefType::get({n}, b.getI32Type()); };
    auto f32Slot = MemRefType::get({4}, b.getF32Type());
    hooks.mma = declare(b, module, "__rlx_emu_mma_m16n8k16",
                        b.getFunctionType({i32, i32Slot(4), i32Slot(2), f32Slot, f32Slot}, {}));
    hooks.ldmatrix = declare(b, module, "__rlx_emu_ldmatrix",
                             b.getFunctionType({i32, i32, ptr, i32Slot(4)}, {}));
    hooks.cpAsync =
        declare(b, module, "__rlx_emu_cp_async", b.getFunctionType({ptr, ptr, i32, i32}, {}));
    hooks.cpCommit = declare(b, module, "__rlx_emu_cp_async_commit", b.getFunctionType({}, {}));
    hooks.cpWait = declare(b, module, "__rlx_emu_cp_async_wait", b.getFunctionType({i32}, {}));
    Type i64 = b.getI64Type();
    hooks.mbInit = declare(b, module, "__rlx_emu_mbarrier_init", b.getFunctionType({ptr, i32}, {}));
    hooks.mbInval = declare(b, module, "__rlx_emu_mbarrier_inval", b.getFunctionType({ptr}, {}));
    hooks.mbArrive = declare(b, module, "__rlx_emu_mbarrier_arrive",
                             b.getFunctionType({ptr, i32, i32}, {i64}));
    hooks.mbTx = declare(b, module, "__rlx_emu_mbarrier_tx", b.getFunctionType({ptr, i64}, {}));
    hooks.mbTestWait = declare(b, module, "__rlx_emu_mbarrier_test_wait",
                               b.getFunctionType({ptr, i64, i32}, {i32}));
    hooks.mbWaitParity = declare(b, module, "__rlx_emu_mbarrier_wait_parity",
                                 b.getFunctionType({ptr, i32}, {}));
    auto f32Regs = MemRefType::get({128}, b.getF32Type());
    hooks.wgmma = declare(b, module, "__rlx_emu_wgmma",
                          b.getFunctionType({i32, i32, i64, i64, f32Regs, f32Regs, i32}, {}));
    hooks.wgmmaRs = declare(b, module, "__rlx_emu_wgmma_rs",
                            b.getFunctionType({i32, i32, i32Slot(4), i64, f32Regs, f32Regs, i32}, {}));
    hooks.wgmmaOp = declare(b, module, "__rlx_emu_wgmma_op", b.getFunctionType({i32}, {}));
    hooks.wgmmaFence = declare(b, module, "__rlx_emu_wgmma_fence", b.getFunctionType({}, {}));
    hooks.wgmmaCommit = declare(b, module, "__rlx_emu_wgmma_commit", b.getFunctionType({}, {}));
    hooks.wgmmaWait = declare(b, module, "__rlx_emu_wgmma_wait", b.getFunctionType({i32}, {}));
    hooks.wgmmaRead = declare(b, module, "__rlx_emu_wgmma_read", b.getFunctionType({i32}, {}));
    hooks.fenceProxyAsync =
        declare(b, module, "__rlx_emu_fence_proxy_async", b.getFunctionType({}, {}));
    hooks.setMaxnreg =
        declare(b, module, "__rlx_emu_setmaxnreg", b.getFunctionType({i32, i32, i32}, {}));
    hooks.shflSync = declare(b, module, "__rlx_emu_shfl_sync",
                             b.getFunctionType({i32, i32, i32, i32, i32}, {i64}));
    hooks.voteSync =
        declare(b, module, "__rlx_emu_vote_sync", b.getFunctionType({i32, i32, i32}, {i32}));
    hooks.namedBarrier = declare(b, module, "__rlx_emu_named_barrier",
                                 b.getFunctionType({i32, i32, i32}, {}));
    hooks.tmaLoad = declare(b, module, "__rlx_emu_tma_load",
                            b.getFunctionType({ptr, ptr, i32Slot(5), i32, ptr}, {}));
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    SmallVector<memref::GlobalOp> globals;
    for (gpu::GPUModuleOp gm : gpuModules) {
      // Constant tables of the GPU module move along, renamed per module.
      llvm::StringMap<std::string> renamed;
      for (auto g : gm.getOps<memref::GlobalOp>()) {
        std::string name = (gm.getName() + "__" + g.getSymName()).str();
        renamed[g.getSymName()] = name;
        b.setInsertionPointToEnd(module.getBody());
        auto copy = cast<memref::GlobalOp>(b.clone(*g));
        copy.setSymName(name);
        copy.setType(cast<MemRefType>(stripMemorySpace(copy.getType())));
        globals.push_back(copy);
      }
      for (auto kernel : gm.getOps<gpu::GPUFuncOp>()) {
        // Kernels of instructions the emulator does not run (tcgen05) stay
        // out of the library; the artifact says why (GPUArtifact.cpp).
        if (kernel->hasAttr("rlx.emulator_unavailable"))
          continue;
        if (failed(outline(kernel, module, hooks)))
          return signalPassFailure();
        auto fn = module.lookupSymbol<func::FuncOp>((kernel.getName() + "__body").str());
        fn.walk([&](memref::GetGlobalOp get) {
          auto it = renamed.find(get.getName());
          if (it != renamed.end())
            get.setNameAttr(FlatSymbolRefAttr::get(b.getContext(), it->second));
        });
      }
    }
    // Only the kernels remain: host functions and the GPU modules go.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (auto g = dyn_cast<memref::GlobalOp>(op); g && llvm::is_contained(globals, g))
        continue;
      auto fn = dyn_cast<func::FuncOp>(op);
      if (!fn || !(fn.getName().starts_with("__rlx_emu_") || fn.getName().ends_with("__body")))
        op.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
