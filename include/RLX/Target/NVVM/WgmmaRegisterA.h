//===- WgmmaRegisterA.h - wgmma with A in registers -------------*- C++ -*-===//
//
// Upstream's nvvm.wgmma.mma_async reads A from shared memory only. The
// register-A form (PTX ISA "wgmma.mma_async", A as four b16x2 registers per
// thread: FlashAttention-3 keeps P = softmax(S) in registers for O += P·V)
// is emitted here as llvm.inline_asm, the way upstream lowers its own op, and
// tagged with a dictionary attribute that carries its parameters, so that
// the GPU emulator (rlx-gpu-outline-for-emulator) recognizes exactly what it
// runs without parsing PTX. The kernel templates build it, the emulator
// outline matches it; both go through this file.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_WGMMAREGISTERA_H
#define RLX_TARGET_NVVM_WGMMAREGISTERA_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::rlx::nvvm {

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<t>.<t> with A in registers.
struct WgmmaRegisterA {
  int64_t n = 0;       ///< a multiple of 8 from 8 to 256
  bool bf16 = true;    ///< else f16
  bool transB = false; ///< B MN-major in shared memory (imm-trans-b = 1)
  bool scaleD = true;  ///< D = A·B + D (false: D = A·B)
};

/// The tag: {n = N : i64, bf16 = B, trans_b = T, scale_d = S}.
constexpr llvm::StringLiteral kWgmmaRegisterAAttr = "rlx.wgmma_register_a";

/// Emits one such wgmma: `acc` is the accumulator (an LLVM struct of n/2
/// f32, read when w.scaleD), `a` the thread's four i32 registers of A,
/// `descB` B's 64-bit matrix descriptor. Returns the new accumulator. Like
/// every wgmma it needs wgmma.fence before it and commit_group / wait_group
/// after. scale-d is an immediate, as upstream's op has it: a register
/// defined between the fence and the wgmma would make ptxas inject a
/// warpgroup.arrive (C7519).
Value createWgmmaRegisterA(OpBuilder &b, Location loc, const WgmmaRegisterA &w, Value acc,
                           ArrayRef<Value> a, Value descB);

/// FlashAttention-3's warpgroup_fence_operand: `values` (32-bit scalars)
/// through an empty inline asm with side effects, tagged
/// kWgmmaFenceOperandsAttr. Code that reads the results stays after
/// whatever precedes the fence (a wgmma.wait_group): LLVM may otherwise
/// schedule a conversion of a wgmma's registers, or coalesce a new value into
/// a register an in-flight wgmma still reads, before the wait, and ptxas then
/// serializes the wgmma pipeline (C7513). The emulator forwards the values.
SmallVector<Value> fenceWgmmaOperands(OpBuilder &b, Location loc, ValueRange values);
constexpr llvm::StringLiteral kWgmmaFenceOperandsAttr = "rlx.wgmma_fence_operands";
/// The fenced values of such an op, else nullopt.
std::optional<SmallVector<Value>> matchWgmmaFenceOperands(Operation *op);

/// The operands of an op createWgmmaRegisterA built.
struct WgmmaRegisterAOperands {
  WgmmaRegisterA shape;
  SmallVector<Value, 4> a; ///< four i32
  Value descB;             ///< i64
  SmallVector<Value> acc;  ///< n/2 f32 (the accumulator's elements)
};
/// `op`'s operands when it is such a wgmma, else nullopt (an error on `op`
/// when it carries the tag but not the form createWgmmaRegisterA builds).
std::optional<WgmmaRegisterAOperands> matchWgmmaRegisterA(Operation *op);

} // namespace mlir::rlx::nvvm

#endif // RLX_TARGET_NVVM_WGMMAREGISTERA_H
