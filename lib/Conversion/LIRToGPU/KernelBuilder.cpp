//===- KernelBuilder.cpp - Building blocks of GPU kernel bodies -----------===//

#include "KernelBuilder.h"

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::gpu_kernels;

int64_t mlir::rlx::gpu_kernels::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

LogicalResult mlir::rlx::gpu_kernels::unsupported(KernelContext &ctx, const Twine &why) {
  return ctx.kernel->emitError() << "convert-rlx-lir-to-gpu: " << why;
}

Value KernelBuilder::idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
Value KernelBuilder::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
Value KernelBuilder::f(Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}

static bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value KernelBuilder::add(Value x, Value y) {
  return isFloat(x) ? Value(arith::AddFOp::create(b, loc, x, y))
                    : Value(arith::AddIOp::create(b, loc, x, y));
}
Value KernelBuilder::sub(Value x, Value y) {
  return isFloat(x) ? Value(arith::SubFOp::create(b, loc, x, y))
                    : Value(arith::SubIOp::create(b, loc, x, y));
}
Value KernelBuilder::mul(Value x, Value y) {
  return isFloat(x) ? Value(arith::MulFOp::create(b, loc, x, y))
                    : Value(arith::MulIOp::create(b, loc, x, y));
}
Value KernelBuilder::divui(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
Value KernelBuilder::remui(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
Value KernelBuilder::swizzle(Value offset, int mode) {
  assert(mode >= 1 && mode <= 3 && "swizzle mode is 32B (1), 64B (2) or 128B (3)");
  Value row = remui(divui(offset, idx(128)), idx(int64_t(1) << mode));
  return arith::XOrIOp::create(b, loc, offset, mul(row, idx(16)));
}
Value KernelBuilder::minui(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
Value KernelBuilder::fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
Value KernelBuilder::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}
Value KernelBuilder::slt(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
}
Value KernelBuilder::eq(Value x, Value y) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
}
Value KernelBuilder::exp(Value x) { return math::ExpOp::create(b, loc, x); }
MatrixDescriptors::MatrixDescriptors(KernelBuilder &kb, Value base) : kb(kb) {
  Location loc = kb.loc;
  Type i32 = kb.b.getI32Type();
  Value a = arith::IndexCastUIOp::create(kb.b, loc, i32, base);
  a = arith::AndIOp::create(kb.b, loc, a, kb.i32(0x3FFFF));
  baseStart = arith::ShRUIOp::create(kb.b, loc, a, kb.i32(4));
}

Value MatrixDescriptors::at(Value offset, int64_t layout) {
  Location loc = kb.loc;
  Type i32 = kb.b.getI32Type(), i64 = kb.b.getI64Type();
  // The layout's low word (LBO) above the 14-bit start address (the start
  // address never carries into it); LLVM hoists the or out of loops.
  Value word = arith::OrIOp::create(kb.b, loc, baseStart,
                                    kb.i32(static_cast<int32_t>(layout & 0xFFFFFFFFll)));
  Value off = arith::IndexCastUIOp::create(kb.b, loc, i32, offset);
  off = arith::ShRUIOp::create(kb.b, loc, off, kb.i32(4));
  Value lo = arith::AddIOp::create(kb.b, loc, word, off);
  Value wide = arith::ExtUIOp::create(kb.b, loc, i64, lo);
  return arith::OrIOp::create(kb.b, loc, wide,
                              arith::ConstantIntOp::create(kb.b, loc, layout & ~0xFFFFFFFFll, 64));
}

Value MatrixDescriptors::of(KernelBuilder &kb, Value address, int64_t layout) {
  Location loc = kb.loc;
  Type i64 = kb.b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(kb.b, loc, i64, v); };
  Value a = arith::IndexCastUIOp::create(kb.b, loc, i64, address);
  a = arith::ShRUIOp::create(kb.b, loc, arith::AndIOp::create(kb.b, loc, a, c64(0x3FFFF)), c64(4));
  return arith::OrIOp::create(kb.b, loc, a, c64(layout));
}

std::pair<Value, Value> KernelBuilder::ringSlot(Value n, int64_t stages) {
  Value n32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), n);
  Value s = arith::RemUIOp::create(b, loc, n32, i32(stages));
  Value round = arith::DivUIOp::create(b, loc, n32, i32(stages));
  Value phase = arith::AndIOp::create(b, loc, round, i32(1));
  return {arith::IndexCastUIOp::create(b, loc, b.getIndexType(), s), phase};
}

Value KernelBuilder::exp2Approx(Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
                                       ValueRange{x})
      .getResult(0);
}
Value KernelBuilder::fma(Value x, Value y, Value z) { return math::FmaOp::create(b, loc, x, y, z); }
Value KernelBuilder::select(Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

Value KernelBuilder::combine(Combine kind, Value x, Value y) {
  bool fl = isFloat(x);
  switch (kind) {
  case Combine::Sum:
    return add(x, y);
  case Combine::Prod:
    return mul(x, y);
  case Combine::Max:
    return fl ? Value(arith::MaximumFOp::create(b, loc, x, y))
              : Value(arith::MaxSIOp::create(b, loc, x, y));
  case Combine::Min:
    return fl ? Value(arith::MinimumFOp::create(b, loc, x, y))
              : Value(arith::MinSIOp::create(b, loc, x, y));
  }
  llvm_unreachable("unknown combine");
}

Value KernelBuilder::identity(Combine kind, Type t) {
  if (auto it = dyn_cast<IntegerType>(t)) {
    unsigned w = it.getWidth();
    APInt v = kind == Combine::Sum    ? APInt(w, 0)
              : kind == Combine::Prod ? APInt(w, 1)
              : kind == Combine::Max  ? APInt::getSignedMinValue(w)
                                      : APInt::getSignedMaxValue(w);
    return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
  }
  double inf = std::numeric_limits<double>::infinity();
  return f(t, kind == Combine::Sum    ? 0.0
              : kind == Combine::Prod ? 1.0
              : kind == Combine::Max  ? -inf
                                      : inf);
}

Value KernelBuilder::threadId(gpu::Dimension d) { return gpu::ThreadIdOp::create(b, loc, d); }
Value KernelBuilder::blockId(gpu::Dimension d) { return gpu::BlockIdOp::create(b, loc, d); }
Value KernelBuilder::globalId(int64_t blockSize) {
  return add(mul(blockId(), idx(blockSize)), threadId());
}

void KernelBuilder::ifThen(Value cond, function_ref<void()> then) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  then();
}

SmallVector<Value> KernelBuilder::ifElse(Value cond, function_ref<SmallVector<Value>()> then,
                                         ValueRange otherwise) {
  auto ifOp = scf::IfOp::create(b, loc, otherwise.getTypes(), cond, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, then());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, otherwise);
  }
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value>
KernelBuilder::forLoop(Value lo, Value hi, Value step, ValueRange inits,
                       function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, loc, lo, hi, step, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    // scf.for with iter args got a yield from the builder only without them.
    if (!inits.empty())
      scf::YieldOp::create(b, loc, next);
  }
  return loop.getResults();
}

void KernelBuilder::forLoop(Value lo, Value hi, Value step, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, lo, hi, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void KernelBuilder::barrier() { gpu::BarrierOp::create(b, loc); }

SmallVector<Value> KernelBuilder::delinearize(Value flat, ArrayRef<int64_t> shape) {
  SmallVector<Value> idxs(shape.size());
  Value rest = flat;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      idxs[0] = rest;
      break;
    }
    Value size = idx(shape[d]);
    idxs[d] = remui(rest, size);
    rest = divui(rest, size);
  }
  return idxs;
}

Value KernelBuilder::load(Value memref, ValueRange indices) {
  return memref::LoadOp::create(b, loc, memref, indices);
}

void KernelBuilder::store(Value value, Value memref, ValueRange indices) {
  memref::StoreOp::create(b, loc, value, memref, indices);
}

Value KernelBuilder::loadBroadcast(Value memref, ArrayRef<Value> outIdx) {
  ArrayRef<int64_t> shape = shapeOf(memref);
  size_t lead = outIdx.size() - shape.size();
  SmallVector<Value> idxs;
  for (auto [d, size] : llvm::enumerate(shape))
    idxs.push_back(size == 1 ? idx(0) : outIdx[lead + d]);
  return load(memref, idxs);
}

Value KernelBuilder::workgroupBuffer(gpu::GPUFuncOp fn, ArrayRef<int64_t> shape,
                                     Type elementType) {
  auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(), space);
  Value buffer = fn.addWorkgroupAttribution(type, loc);
  // 16-byte aligned (the .shared variable's .align): kernels read and write
  // their buffers with 16-byte vector accesses; the element type alone
  // would give 2 for a bf16 buffer.
  fn.setWorkgroupAttributionAttr(fn.getNumWorkgroupAttributions() - 1,
                                 LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(16));
  return buffer;
}

SmallVector<Value> KernelBuilder::loadRow(Value m, ArrayRef<Value> pos, int64_t width,
                                          bool vector) {
  SmallVector<Value> out;
  if (vector && width > 1) {
    auto vt = VectorType::get({width}, elementTypeOf(m));
    Value v = vector::LoadOp::create(b, loc, vt, m, pos, /*nontemporal=*/false,
                                     llvm::MaybeAlign(16));
    for (int64_t l = 0; l < width; ++l)
      out.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l}));
    return out;
  }
  for (int64_t l = 0; l < width; ++l) {
    SmallVector<Value> p(pos);
    if (l)
      p.back() = add(pos.back(), idx(l));
    out.push_back(load(m, p));
  }
  return out;
}

void KernelBuilder::storeRow(ArrayRef<Value> values, Value m, ArrayRef<Value> pos, bool vector) {
  int64_t width = values.size();
  if (vector && width > 1) {
    auto vt = VectorType::get({width}, elementTypeOf(m));
    Value v = vector::FromElementsOp::create(b, loc, vt, values);
    vector::StoreOp::create(b, loc, v, m, pos, /*nontemporal=*/false, llvm::MaybeAlign(16));
    return;
  }
  for (int64_t l = 0; l < width; ++l) {
    SmallVector<Value> p(pos);
    if (l)
      p.back() = add(pos.back(), idx(l));
    store(values[l], m, p);
  }
}

Value KernelBuilder::pointer(Value address, unsigned space) {
  Value a = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), space), a);
}

KernelBuilder::AlignedShared KernelBuilder::alignedDynamicShared(int64_t align) {
  auto smem = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value memory = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(), smem));
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory);
  Value pad = remui(sub(idx(align), remui(raw, idx(align))), idx(align));
  return {memory, add(raw, pad), pad};
}

Value KernelBuilder::elementAddress(Value m, ArrayRef<Value> pos) {
  auto t = cast<MemRefType>(m.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  Value lin;
  if (succeeded(t.getStridesAndOffset(strides, offset)) && !ShapedType::isDynamic(offset) &&
      llvm::none_of(strides, ShapedType::isDynamic)) {
    lin = idx(offset);
    for (auto [d, v] : llvm::enumerate(pos))
      lin = add(lin, mul(v, idx(strides[d])));
  } else { // a dynamic layout: its offset and strides at run time
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
    lin = meta.getOffset();
    for (auto [d, v] : llvm::enumerate(pos))
      lin = add(lin, mul(v, meta.getStrides()[d]));
  }
  int64_t bytes = (t.getElementTypeBitWidth() + 7) / 8;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
  return add(base, mul(lin, idx(bytes)));
}

void KernelBuilder::copyAsync16(Value dst, Value m, ArrayRef<Value> pos, Value valid) {
  MLIRContext *ctx = b.getContext();
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
  Value src = select(valid, elementAddress(m, pos), base);
  Value srcBytes = select(valid, i32(16), i32(0));
  NVVM::CpAsyncOp::create(b, loc, dst, pointer(src, 1), b.getI32IntegerAttr(16),
                          NVVM::LoadCacheModifierKindAttr::get(ctx, NVVM::LoadCacheModifierKind::CG),
                          srcBytes);
}

bool mlir::rlx::gpu_kernels::vectorizable(Value m, ArrayRef<int64_t> shape, int64_t width) {
  auto t = dyn_cast<MemRefType>(m.getType());
  if (!t || t.getShape() != shape || shape.empty() || width <= 1 || shape.back() % width != 0)
    return false;
  unsigned bits = t.getElementType().getIntOrFloatBitWidth();
  // Sub-byte types are stored one per byte; LLVM packs vectors of them.
  if (bits < 8 || bits % 8 != 0 || (bits / 8) * width != 16)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset) ||
      strides.back() != 1 || offset % width != 0)
    return false;
  for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(s) || s % width != 0)
      return false;
  return true;
}

int64_t mlir::rlx::gpu_kernels::vectorWidth(ArrayRef<Value> full, ArrayRef<int64_t> shape) {
  int64_t widest = 1;
  for (Value m : full)
    widest = std::max<int64_t>(widest, (elementTypeOf(m).getIntOrFloatBitWidth() + 7) / 8);
  int64_t width = widest >= 16 ? 1 : 16 / widest;
  for (Value m : full)
    if (!vectorizable(m, shape, width))
      return 1;
  return width;
}

LaunchConfig mlir::rlx::gpu_kernels::forEachElementGroup(
    KernelBuilder &kb, ArrayRef<int64_t> shape, int64_t width,
    function_ref<void(ArrayRef<Value> pos)> body) {
  constexpr int64_t kThreads = 256;
  int64_t groups = ceilDiv(numElements(shape), width);
  LaunchConfig launch;
  launch.block = {kThreads, 1, 1};
  launch.grid = {std::max<int64_t>(1, ceilDiv(groups, kThreads)), 1, 1};
  if (groups == 0)
    return launch;
  Value t = kb.globalId(kThreads);
  kb.ifThen(kb.ult(t, kb.idx(groups)), [&] {
    SmallVector<Value> pos;
    if (!shape.empty())
      pos = kb.delinearize(kb.mul(t, kb.idx(width)), shape);
    body(pos);
  });
  return launch;
}

Value KernelBuilder::convert(Value v, Type t) { return mir::convertScalar(b, loc, v, t); }

Type KernelBuilder::statsType(Type t) { return t.isF64() ? t : b.getF32Type(); }

Value KernelBuilder::shuffleXor(Value v, int64_t offset) {
  Type t = v.getType();
  unsigned bits = t.getIntOrFloatBitWidth();
  auto shuffle32 = [&](Value x) -> Value {
    return gpu::ShuffleOp::create(b, loc, x, i32(offset), i32(32), gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32)
    return shuffle32(v);
  Type i64 = b.getI64Type(), i32t = b.getI32Type();
  if (bits == 64) {
    // Two 32-bit shuffles of the halves.
    Value x = isFloat(v) ? Value(arith::BitcastOp::create(b, loc, i64, v)) : v;
    Value lo = shuffle32(arith::TruncIOp::create(b, loc, i32t, x));
    Value hi = shuffle32(arith::TruncIOp::create(
        b, loc, i32t, arith::ShRUIOp::create(b, loc, x, arith::ConstantIntOp::create(b, loc, i64, 32))));
    Value r = arith::OrIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64, lo),
        arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, hi),
                              arith::ConstantIntOp::create(b, loc, i64, 32)));
    return isFloat(v) ? Value(arith::BitcastOp::create(b, loc, t, r)) : r;
  }
  // Narrow types travel in 32 bits.
  if (isFloat(v))
    return arith::TruncFOp::create(b, loc, t, shuffle32(arith::ExtFOp::create(b, loc, b.getF32Type(), v)));
  return arith::TruncIOp::create(b, loc, t, shuffle32(arith::ExtSIOp::create(b, loc, i32t, v)));
}

Value KernelBuilder::warpReduce(Combine kind, Value v) {
  for (int64_t offset : {16, 8, 4, 2, 1})
    v = combine(kind, v, shuffleXor(v, offset));
  return v;
}

Value KernelBuilder::blockReduce(Combine kind, Value v, Value scratch, int64_t threads) {
  v = warpReduce(kind, v);
  if (threads <= 32)
    return v;
  int64_t warps = threads / 32;
  Value lane = laneId(), warp = warpId();
  ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0)),
         [&] { store(v, scratch, {warp}); });
  barrier();
  // Every warp reduces the partials (lane i reads partial i), so all threads
  // end with the result without a second broadcast.
  Value inRange = ult(lane, idx(warps));
  Value safe = select(inRange, lane, idx(0));
  Value partial = select(inRange, load(scratch, {safe}), identity(kind, v.getType()));
  Value r = warpReduce(kind, partial);
  barrier();
  return r;
}

Value KernelContext::operand(Value bodyValue) {
  auto arg = dyn_cast<BlockArgument>(bodyValue);
  if (arg && arg.getOwner() == &kernel.getBody().front())
    return inputs[arg.getArgNumber()];
  auto c = bodyValue.getDefiningOp<mir::ConstantOp>();
  auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
  if (!dense)
    return Value();
  return constantTable(dense);
}

Value KernelContext::constantTable(DenseElementsAttr dense) {
  auto module = fn->getParentOfType<gpu::GPUModuleOp>();
  auto type = MemRefType::get(dense.getType().getShape(), dense.getElementType());
  SymbolTable symbols(module);
  OpBuilder::InsertPoint ip = b.saveInsertionPoint();
  b.setInsertionPointToStart(module.getBody());
  auto global = memref::GlobalOp::create(b, fn.getLoc(), "__rlx_constant",
                                         b.getStringAttr("private"), type, dense,
                                         /*constant=*/true, IntegerAttr());
  symbols.insert(global); // uniques the name
  b.restoreInsertionPoint(ip);
  return memref::GetGlobalOp::create(b, fn.getLoc(), type, global.getSymName());
}
