//===- SoftFloat.cpp - f64/f32 <-> f16/bf16, and the compiler-rt builtins -===//
//
// See include/RLX/Runtime/SoftFloat.h for the rules. One routine converts
// between any two IEEE binary formats that have infinities: the value is read
// as an integer significand times a power of two, then rounded once to the
// destination's quantum at its exponent (or at its subnormal exponent).
//
// The builtins: on x86-64 LLVM lowers fptrunc/fpext it has no instruction for
// to these compiler-rt calls (f32 → bf16 without AVX512-BF16, f32 ↔ f16
// without F16C, f64 → f16/bf16 always). Debian 12's libgcc (GCC 12) has the
// f16 ones but not the bf16 ones, and the JIT resolves only against what the
// process and RLX's runtime export, so RLX's runtimes export all of them,
// with the same ABI as compiler-rt's (__bf16 and _Float16 in SSE registers).
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/SoftFloat.h"

#include <algorithm>
#include <cstring>

namespace {

struct Format {
  unsigned exp, mant; // field widths; sign is the bit above them
};
constexpr Format kF64{11, 52}, kF32{8, 23}, kF16{5, 10}, kBf16{8, 7};

uint64_t convert(uint64_t src, Format s, Format d) {
  const uint64_t expS = (src >> s.mant) & ((uint64_t{1} << s.exp) - 1);
  const uint64_t mantS = src & ((uint64_t{1} << s.mant) - 1);
  const uint64_t sign = ((src >> (s.exp + s.mant)) & 1) << (d.exp + d.mant);
  const uint64_t expAllD = ((uint64_t{1} << d.exp) - 1) << d.mant;
  if (expS == (uint64_t{1} << s.exp) - 1) {
    if (mantS == 0)
      return sign | expAllD; // ±inf
    uint64_t payload = d.mant >= s.mant ? mantS << (d.mant - s.mant) : mantS >> (s.mant - d.mant);
    return sign | expAllD | payload | (uint64_t{1} << (d.mant - 1)); // quiet NaN
  }
  // |value| = m · 2^e.
  const uint64_t m = expS ? mantS | (uint64_t{1} << s.mant) : mantS;
  if (m == 0)
    return sign;
  const int64_t biasS = (int64_t{1} << (s.exp - 1)) - 1;
  const int64_t biasD = (int64_t{1} << (d.exp - 1)) - 1;
  const int64_t e = (expS ? static_cast<int64_t>(expS) : 1) - biasS - s.mant;
  const int64_t p = 63 - __builtin_clzll(m); // m's leading bit
  // Bits dropped: those below the destination's quantum, which is 2^(p + e -
  // d.mant) for a normal result and 2^(1 - biasD - d.mant) for a subnormal.
  const int64_t shift = std::max<int64_t>(p - d.mant, 1 - biasD - d.mant - e);
  uint64_t q;
  if (shift <= 0) {
    q = m << -shift; // exact (widening)
  } else if (shift > 63) {
    q = 0; // below half the smallest subnormal (m < 2^53 <= half)
  } else {
    q = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q; // a carry into the exponent field encodes itself
  }
  // q counts quanta; the exponent field below is 0 at the subnormal quantum,
  // so a subnormal that rounds up to 2^d.mant becomes the smallest normal.
  const uint64_t expField = static_cast<uint64_t>(e + shift + biasD + d.mant - 1);
  const uint64_t bits = q + (expField << d.mant);
  return sign | std::min(bits, expAllD); // past the largest finite: ±inf
}

template <typename To, typename From>
To bitCast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  std::memcpy(&r, &v, sizeof(To));
  return r;
}

} // namespace

namespace rlx::softfloat {

uint16_t f32ToBf16(uint32_t bits) { return static_cast<uint16_t>(convert(bits, kF32, kBf16)); }
uint16_t f64ToBf16(uint64_t bits) { return static_cast<uint16_t>(convert(bits, kF64, kBf16)); }
uint16_t f32ToF16(uint32_t bits) { return static_cast<uint16_t>(convert(bits, kF32, kF16)); }
uint16_t f64ToF16(uint64_t bits) { return static_cast<uint16_t>(convert(bits, kF64, kF16)); }
uint32_t bf16ToF32(uint16_t bits) { return static_cast<uint32_t>(convert(bits, kBf16, kF32)); }
uint64_t bf16ToF64(uint16_t bits) { return convert(bits, kBf16, kF64); }
uint32_t f16ToF32(uint16_t bits) { return static_cast<uint32_t>(convert(bits, kF16, kF32)); }
uint64_t f16ToF64(uint16_t bits) { return convert(bits, kF16, kF64); }

uint16_t floatToBf16(float v) { return f32ToBf16(bitCast<uint32_t>(v)); }
uint16_t doubleToBf16(double v) { return f64ToBf16(bitCast<uint64_t>(v)); }
uint16_t floatToF16(float v) { return f32ToF16(bitCast<uint32_t>(v)); }
uint16_t doubleToF16(double v) { return f64ToF16(bitCast<uint64_t>(v)); }
float bf16ToFloat(uint16_t bits) { return bitCast<float>(bf16ToF32(bits)); }
float f16ToFloat(uint16_t bits) { return bitCast<float>(f16ToF32(bits)); }
double bf16ToDouble(uint16_t bits) { return bitCast<double>(bf16ToF64(bits)); }
double f16ToDouble(uint16_t bits) { return bitCast<double>(f16ToF64(bits)); }

} // namespace rlx::softfloat

// The builtins need the compiler's __bf16/_Float16 to match LLVM's ABI for
// them (SSE registers on x86-64): clang, or GCC from 13 (__bf16).
#if (defined(__x86_64__) || defined(__aarch64__)) &&                                    \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 13))
#define RLX_BUILTIN extern "C" __attribute__((visibility("default"), used))
using namespace rlx::softfloat;

RLX_BUILTIN __bf16 __truncsfbf2(float v) { return bitCast<__bf16>(floatToBf16(v)); }
RLX_BUILTIN __bf16 __truncdfbf2(double v) { return bitCast<__bf16>(doubleToBf16(v)); }
RLX_BUILTIN _Float16 __truncsfhf2(float v) { return bitCast<_Float16>(floatToF16(v)); }
RLX_BUILTIN _Float16 __truncdfhf2(double v) { return bitCast<_Float16>(doubleToF16(v)); }
RLX_BUILTIN float __extendhfsf2(_Float16 v) { return f16ToFloat(bitCast<uint16_t>(v)); }
RLX_BUILTIN double __extendhfdf2(_Float16 v) { return f16ToDouble(bitCast<uint16_t>(v)); }
RLX_BUILTIN float __extendbfsf2(__bf16 v) { return bf16ToFloat(bitCast<uint16_t>(v)); }
#elif defined(__x86_64__)
#warning "RLX's runtimes need clang or GCC >= 13 to export the compiler-rt float builtins: JIT code for CPUs without F16C would not resolve __truncsfhf2"
#endif
