//===- EmulatorInlinePtx.h - Inline PTX as the emulator reads it -*- C++ -*-===//
//
// The register-A wgmma reaches the emulator as llvm.inline_asm. The emulator
// runs what its PTX text says (the instruction's shape, types, operand
// order, scale and transpose immediates), read here from the PTX ISA's
// syntax, not from the tag the kernel templates put next to it: a wrong
// operand order or imm-trans-b in the string is then a wrong result under
// the emulator too, as it would be on a GPU.
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_EMULATORINLINEPTX_H
#define RLX_TARGET_NVVM_EMULATORINLINEPTX_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::rlx::nvvm {

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<t>.<t> d, a, b-desc,
/// scale-d, imm-scale-a, imm-scale-b, imm-trans-b with A in registers.
struct PtxWgmmaRegisterA {
  int64_t n = 0;
  bool bf16 = true;
  bool scaleD = true, negA = false, negB = false, transB = false;
  SmallVector<Value, 4> a; ///< the four A registers, in the text's order
  Value descB;
  /// D register i: the result struct element it defines and the input
  /// value tied to it (the accumulator read when scale-d).
  SmallVector<int64_t> resultIndex;
  SmallVector<Value> acc;
};

/// Reads `op`'s PTX text and constraints; a located error on what it
/// cannot read.
FailureOr<PtxWgmmaRegisterA> readWgmmaRegisterAPtx(LLVM::InlineAsmOp op);

} // namespace mlir::rlx::nvvm

#endif // RLX_TARGET_NVVM_EMULATORINLINEPTX_H
