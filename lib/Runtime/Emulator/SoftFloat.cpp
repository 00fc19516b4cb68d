//===- SoftFloat.cpp - Compiler-runtime conversions the kernels may need ---===//
//
// LLVM's x86-64 backend turns the bf16 rounding that arith-expand writes as
// integer arithmetic back into an fptrunc, which it lowers to a call to
// compiler-rt's __truncsfbf2 when the CPU has no native instruction. libgcc
// only has it from GCC 13 (Debian 12 ships 12), so the emulator runtime,
// which kernels.emu.so resolves its undefined symbols against, provides it:
// round to nearest even, NaN stays a (quiet) NaN — cvt.rn.bf16.f32's rule.
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>

#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
extern "C" __attribute__((visibility("default"))) __bf16 __truncsfbf2(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t h;
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    h = static_cast<uint16_t>((bits >> 16) | 0x40u); // quiet NaN, sign kept
  else
    h = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  __bf16 r;
  std::memcpy(&r, &h, 2);
  return r;
}
#endif
