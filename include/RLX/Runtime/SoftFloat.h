//===- SoftFloat.h - Conversions between f64/f32 and f16/bf16 ---*- C++ -*-===//
//
// The one definition of RLX's conversions between the IEEE binary formats
// f64, f32, f16 and bf16, on bit patterns: narrowing rounds once to nearest,
// ties to even (through subnormals, to ±inf past the largest finite value);
// widening is exact; a NaN stays a NaN of the same sign with its payload's
// leading bits and the quiet bit set (the rule of x86's vcvtneps2bf16 /
// vcvtps2ph and of PTX's cvt.rn). f64 → f16/bf16 rounds once, not through f32.
//
// Who calls it:
//  * the compiler-rt builtins (`__truncsfbf2`, `__truncdfbf2`, `__truncsfhf2`,
//    `__truncdfhf2`, `__extendhfsf2`, ...) that LLVM's x86-64 backend calls
//    where the CPU it compiles for has no instruction (no AVX512-BF16, no F16C,
//    and f64 → f16/bf16 on every CPU). The CPU runtime (what the JIT and
//    compiled models resolve against) and the GPU emulator's runtime both
//    export them from this one file (lib/Runtime/Common/SoftFloat.cpp);
//  * the host tensors' dtype conversions (lib/Target/CPU/HostTensor.cpp).
//
// Plain C++17 without LLVM/MLIR: the runtimes ship without them.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_SOFTFLOAT_H
#define RLX_RUNTIME_SOFTFLOAT_H

#include <cstdint>

namespace rlx::softfloat {

uint16_t f32ToBf16(uint32_t bits);
uint16_t f64ToBf16(uint64_t bits);
uint16_t f32ToF16(uint32_t bits);
uint16_t f64ToF16(uint64_t bits);
uint32_t bf16ToF32(uint16_t bits);
uint64_t bf16ToF64(uint16_t bits);
uint32_t f16ToF32(uint16_t bits);
uint64_t f16ToF64(uint16_t bits);

/// The same on values (bit casts around the functions above).
uint16_t floatToBf16(float v);
uint16_t doubleToBf16(double v);
uint16_t floatToF16(float v);
uint16_t doubleToF16(double v);
float bf16ToFloat(uint16_t bits);
float f16ToFloat(uint16_t bits);
double bf16ToDouble(uint16_t bits);
double f16ToDouble(uint16_t bits);

} // namespace rlx::softfloat

#endif // RLX_RUNTIME_SOFTFLOAT_H
