//===- KernelBuilder.h - Building blocks of GPU kernel bodies ---*- C++ -*-===//
//
// Internal to lib/Conversion/LIRToGPU. The kernel templates write their
// bodies with these: index arithmetic, thread and block ids, loops and
// guards, loads with numpy broadcasting, f32 statistics, warp and block
// reductions (gpu.shuffle, a workgroup buffer and gpu.barrier). Everything
// is upstream IR (arith, math, scf, memref, vector, gpu), so that the same
// gpu.func lowers to NVVM and, unchanged, to the CPU emulator.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_LIRTOGPU_KERNELBUILDER_H
#define RLX_LIB_CONVERSION_LIRTOGPU_KERNELBUILDER_H

#include "RLX/Conversion/LIRToGPU/LIRToGPU.h"
#include "RLX/Dialect/Common/IR/RLXDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::rlx::gpu_kernels {

enum class Combine { Sum, Prod, Max, Min };

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  // Constants.
  Value idx(int64_t v);
  Value i32(int64_t v);
  Value f(Type t, double v);
  Value f32(double v) { return f(b.getF32Type(), v); }

  // Arithmetic on index or float values (the type picks the op).
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value divui(Value x, Value y);
  Value remui(Value x, Value y);
  Value minui(Value x, Value y);
  /// Where the shared-memory swizzle `mode` of TMA and the wgmma/tcgen05
  /// matrix descriptors (1: 32-byte, 2: 64-byte, 3: 128-byte) stores byte
  /// `offset` (index) of a tile aligned to the swizzle's period (256, 512 or
  /// 1024 bytes): the 16-byte chunk bits [4, 4 + mode) of the offset XOR its
  /// bits [7, 7 + mode). The one definition on the generator side; the
  /// emulator keeps its own reading of the PTX ISA (Emulator/Tma.cpp).
  Value swizzle(Value offset, int mode);
  Value fdiv(Value x, Value y);
  Value ult(Value x, Value y);
  Value slt(Value x, Value y);
  Value eq(Value x, Value y);
  Value exp(Value x);
  /// 2^x of an f32 as `ex2.approx.ftz.f32` (subnormals flushed): one MUFU,
  /// where math.exp2 (libdevice's non-ftz ex2.approx) makes ptxas add a
  /// range check and two FMULs around it. For the flash kernels' softmax,
  /// whose values are ≤ 1 and whose subnormal terms do not count.
  Value exp2Approx(Value x);
  /// The stage (an index) and mbarrier phase parity (an i32) of the n-th
  /// use of a ring of `stages` buffers: n mod stages and (n / stages) mod 2,
  /// in 32-bit arithmetic (a 64-bit division by 3 is a dozen SASS
  /// instructions in a main loop).
  std::pair<Value, Value> ringSlot(Value n, int64_t stages);
  /// x·y + z in one FFMA (arith's mul and add stay separate .rn ops).
  Value fma(Value x, Value y, Value z);
  Value select(Value c, Value x, Value y);
  Value combine(Combine kind, Value x, Value y);
  /// The identity of `kind` in `t` (0, 1, -inf / INT_MIN, +inf / INT_MAX).
  Value identity(Combine kind, Type t);

  // Ids.
  Value threadId(gpu::Dimension d = gpu::Dimension::x);
  Value blockId(gpu::Dimension d = gpu::Dimension::x);
  /// blockId.x * blockSize + threadId.x
  Value globalId(int64_t blockSize);
  Value laneId() { return remui(threadId(), idx(32)); }
  Value warpId() { return divui(threadId(), idx(32)); }

  // Control flow.
  /// if (cond) { then() }
  void ifThen(Value cond, function_ref<void()> then);
  /// `then()`'s values where `cond` holds (computed only there: guarded
  /// loads), else `otherwise`; one scf.if.
  SmallVector<Value> ifElse(Value cond, function_ref<SmallVector<Value>()> then,
                            ValueRange otherwise);
  Value ifElse(Value cond, function_ref<Value()> then, Value otherwise) {
    return ifElse(cond, [&]() -> SmallVector<Value> { return {then()}; }, ValueRange{otherwise})[0];
  }
  /// for (iv = lo; iv < hi; iv += step) with loop-carried values; `body`
  /// returns the next values. The results are the final values.
  SmallVector<Value> forLoop(Value lo, Value hi, Value step, ValueRange inits,
                             function_ref<SmallVector<Value>(Value iv, ValueRange carried)> body);
  void forLoop(Value lo, Value hi, Value step, function_ref<void(Value iv)> body);
  void barrier();

  // Memory.
  /// Multi-index of row-major flat index `flat` in `shape`.
  SmallVector<Value> delinearize(Value flat, ArrayRef<int64_t> shape);
  /// memref[indices]
  Value load(Value memref, ValueRange indices);
  void store(Value value, Value memref, ValueRange indices);
  /// Element of `memref` at the output position `outIdx` under numpy
  /// broadcasting (leading dims dropped, size-1 dims at 0).
  Value loadBroadcast(Value memref, ArrayRef<Value> outIdx);
  /// A workgroup (shared memory) buffer of `kernel`.
  Value workgroupBuffer(gpu::GPUFuncOp fn, ArrayRef<int64_t> shape, Type elementType);

  // Rows of `width` consecutive elements along the last dim.
  /// `width` elements of `m` from `pos` on: one 16-byte-aligned vector load
  /// when `vector`, else scalar loads.
  SmallVector<Value> loadRow(Value m, ArrayRef<Value> pos, int64_t width, bool vector);
  void storeRow(ArrayRef<Value> values, Value m, ArrayRef<Value> pos, bool vector);

  // Raw addresses (tensor-core kernels: ldmatrix, cp.async, TMA).
  /// An address (an index) as an !llvm.ptr of address space `space`.
  Value pointer(Value address, unsigned space);
  /// The block's dynamic shared memory (an i8 memref of the workgroup
  /// space), the shared address (index) of its first byte aligned to
  /// `align` at run time (the launch reserves `align` bytes more), and the
  /// padding to it.
  struct AlignedShared {
    Value memory, base, pad;
  };
  AlignedShared alignedDynamicShared(int64_t align);
  /// The byte address (index) of m[pos] in the static memref `m`, its
  /// strides and offset applied.
  Value elementAddress(Value m, ArrayRef<Value> pos);
  /// One 16-byte cp.async.cg from m[pos] to `dst` (an !llvm.ptr<3>); where
  /// `valid` is false it reads nothing and zero-fills.
  void copyAsync16(Value dst, Value m, ArrayRef<Value> pos, Value valid);

  // Numerics.
  /// `v` converted to `t` with MIR's cast semantics (convertScalar).
  Value convert(Value v, Type t);
  /// The statistics type of `t`: f64 for f64, else f32.
  Type statsType(Type t);

  /// gpu.shuffle xor of any int/float scalar (64-bit values as two 32-bit
  /// halves, narrow ones widened to 32 bits).
  Value shuffleXor(Value v, int64_t offset);

  // Reductions (every thread gets the result).
  /// Over the 32 lanes of a warp (gpu.shuffle xor 16, 8, 4, 2, 1).
  Value warpReduce(Combine kind, Value v);
  /// Over the block's `threads` threads (a multiple of 32): warp reductions,
  /// then the warps' partials through `scratch` (a workgroup buffer of at
  /// least threads/32 elements); ends with a barrier so `scratch` can be
  /// reused.
  Value blockReduce(Combine kind, Value v, Value scratch, int64_t threads);
};

/// Matrix descriptors of wgmma/tcgen05 operands in shared memory (PTX ISA,
/// "Matrix Descriptor Format"): bits 0-13 the start address >> 4 (of its low
/// 18 bits), the rest (LBO, SBO, base offset, swizzle mode, version) from a
/// constant `layout`. The one definition of the start-address field: the
/// descriptor of `base` is built once, and the descriptor of base + offset
/// is one 32-bit add of offset >> 4 to its low word (shared addresses stay
/// below 2^18, so the field never carries into LBO), not a 64-bit rebuild
/// per operand (FlashAttention-3 and CUTLASS advance descriptors so).
class MatrixDescriptors {
public:
  MatrixDescriptors(KernelBuilder &kb, Value base);
  /// The descriptor of base + `offset` bytes (an index, a multiple of 16).
  Value at(Value offset, int64_t layout);
  Value at(int64_t offset, int64_t layout) { return at(kb.idx(offset), layout); }
  /// The descriptor of any shared address (no base).
  static Value of(KernelBuilder &kb, Value address, int64_t layout);

private:
  KernelBuilder &kb;
  Value baseStart; ///< i32: (base & 0x3FFFF) >> 4
};

/// True when `m` (a memref of shape `shape`) can be accessed as `width`
/// consecutive elements of its last dim with 16-byte alignment: unit stride
/// there, every other stride and the offset multiples of `width`, and a
/// `width`-element group 16 bytes.
bool vectorizable(Value m, ArrayRef<int64_t> shape, int64_t width);

/// The widest vector width (elements per thread) for which every memref in
/// `full` is vectorizable on `shape`: 16 bytes of the widest element type,
/// or 1.
int64_t vectorWidth(ArrayRef<Value> full, ArrayRef<int64_t> shape);

/// One thread per group of `width` consecutive elements of `shape` (256
/// threads per block); `body` gets the position of the group's first
/// element, inside the bounds guard.
LaunchConfig forEachElementGroup(KernelBuilder &kb, ArrayRef<int64_t> shape, int64_t width,
                                 function_ref<void(ArrayRef<Value> pos)> body);

/// RoPE's pairing of head dim `dim` (< rotary): its partner dim, the table
/// column of the pair, and whether `dim` is the pair's first element.
struct RopePair {
  Value partner, column, first;
};
RopePair ropePair(KernelBuilder &kb, Value dim, int64_t rotary, RopeStyle style);
/// The rotated value of `self` (f32): self·cos ∓ partner·sin.
Value rotate(KernelBuilder &kb, Value self, Value partner, Value cos, Value sin, Value first);

/// Shape of a memref or tensor value.
inline ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }
inline Type elementTypeOf(Value v) { return cast<ShapedType>(v.getType()).getElementType(); }
int64_t numElements(ArrayRef<int64_t> shape);
/// ceil(a / b)
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The position of NVFP4 block scale (weight row n, 16-element block
/// `block`) in `scales`: linear [N, K/16] (or [K/16, N] without `outIn`),
/// or blocked [N/128, K/64, 32, 16] (nvfp4_block_scales, case G7b).
SmallVector<Value> nvfp4ScalePosition(KernelBuilder &kb, Value scales, bool outIn, Value n,
                                      Value block);

/// A located error at the kernel for a case its template does not handle.
LogicalResult unsupported(KernelContext &ctx, const Twine &why);

} // namespace mlir::rlx::gpu_kernels

#endif // RLX_LIB_CONVERSION_LIRTOGPU_KERNELBUILDER_H
