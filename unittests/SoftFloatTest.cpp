//===- SoftFloatTest.cpp - f64/f32 <-> f16/bf16 on hand-worked bit patterns ===//
//
// Expected values are worked out by hand from IEEE 754's round to nearest,
// ties to even (the Python tests compare the compiled code with ml_dtypes and
// numpy over dense samples). Also checks the exported compiler-rt builtins.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/SoftFloat.h"

#include "gtest/gtest.h"

#include <cstring>
#include <dlfcn.h>

using namespace rlx::softfloat;

extern "C" {
__bf16 __truncsfbf2(float);
__bf16 __truncdfbf2(double);
_Float16 __truncsfhf2(float);
_Float16 __truncdfhf2(double);
float __extendhfsf2(_Float16);
}

namespace {
template <typename To, typename From>
To bits(From v) {
  To r;
  std::memcpy(&r, &v, sizeof(To));
  return r;
}
} // namespace

TEST(SoftFloat, F32ToBf16RoundsToNearestEven) {
  EXPECT_EQ(f32ToBf16(0x3F800000u), 0x3F80); // 1.0
  EXPECT_EQ(f32ToBf16(0x3F808000u), 0x3F80); // tie, even below
  EXPECT_EQ(f32ToBf16(0x3F818000u), 0x3F82); // tie, odd below: up
  EXPECT_EQ(f32ToBf16(0x3F808001u), 0x3F81); // above the tie
  EXPECT_EQ(f32ToBf16(0x3F807FFFu), 0x3F80); // below the tie
  EXPECT_EQ(f32ToBf16(0xBF818000u), 0xBF82); // sign kept
  EXPECT_EQ(f32ToBf16(0x7F7F7FFFu), 0x7F7F); // largest finite stays
  EXPECT_EQ(f32ToBf16(0x7F7F8000u), 0x7F80); // tie past it: +inf
  EXPECT_EQ(f32ToBf16(0x7F7FFFFFu), 0x7F80); // FLT_MAX: +inf
  EXPECT_EQ(f32ToBf16(0xFF7FFFFFu), 0xFF80);
}

TEST(SoftFloat, F32ToBf16Specials) {
  EXPECT_EQ(f32ToBf16(0x7F800000u), 0x7F80); // +inf
  EXPECT_EQ(f32ToBf16(0xFF800000u), 0xFF80); // -inf
  EXPECT_EQ(f32ToBf16(0x00000000u), 0x0000);
  EXPECT_EQ(f32ToBf16(0x80000000u), 0x8000); // -0
  EXPECT_EQ(f32ToBf16(0x7FC00000u), 0x7FC0); // quiet NaN
  EXPECT_EQ(f32ToBf16(0x7F800001u), 0x7FC0); // signalling NaN: quieted, not inf
  EXPECT_EQ(f32ToBf16(0xFFA12345u), 0xFFE1); // payload's top bits, sign kept
  // Subnormals (bf16 has f32's exponent range).
  EXPECT_EQ(f32ToBf16(0x00000001u), 0x0000);
  EXPECT_EQ(f32ToBf16(0x80000001u), 0x8000);
  EXPECT_EQ(f32ToBf16(0x00008000u), 0x0000); // tie, even
  EXPECT_EQ(f32ToBf16(0x00018000u), 0x0002); // tie, odd: up
  EXPECT_EQ(f32ToBf16(0x00008001u), 0x0001);
  EXPECT_EQ(f32ToBf16(0x007FFFFFu), 0x0080); // up to the smallest normal
}

TEST(SoftFloat, F32ToF16) {
  EXPECT_EQ(f32ToF16(0x3F800000u), 0x3C00);    // 1.0
  EXPECT_EQ(f32ToF16(0x477FE000u), 0x7BFF);    // 65504, the largest finite
  EXPECT_EQ(f32ToF16(0x477FEFFFu), 0x7BFF);    // just under the tie
  EXPECT_EQ(f32ToF16(0x477FF000u), 0x7C00);    // 65520: tie, even is inf
  EXPECT_EQ(f32ToF16(0x38800000u), 0x0400);    // 2^-14, the smallest normal
  EXPECT_EQ(f32ToF16(0x33800000u), 0x0001);    // 2^-24, the smallest subnormal
  EXPECT_EQ(f32ToF16(0x33000000u), 0x0000);    // 2^-25: tie, even
  EXPECT_EQ(f32ToF16(0x33000001u), 0x0001);    // above it
  EXPECT_EQ(f32ToF16(0x33C00000u), 0x0002);    // 3·2^-25: tie, odd: up
  EXPECT_EQ(f32ToF16(0xB3C00000u), 0x8002);
  EXPECT_EQ(f32ToF16(0x7F800000u), 0x7C00);    // +inf
  EXPECT_EQ(f32ToF16(0x7FC00000u), 0x7E00);    // quiet NaN
  EXPECT_EQ(f32ToF16(0x7F800001u), 0x7E00);    // signalling NaN: quieted
  EXPECT_EQ(f32ToF16(0xFFFFFFFFu), 0xFFFF);
  EXPECT_EQ(f32ToF16(0x5F800000u), 0x7C00);    // 2^64: inf
}

// f64 rounds once: through f32 these would land on a tie and round to even.
TEST(SoftFloat, F64RoundsOnce) {
  EXPECT_EQ(f64ToBf16(0x3FF0100000001000ull), 0x3F81); // 1 + 2^-8 + 2^-40
  EXPECT_EQ(f64ToBf16(0x3FF0100000000000ull), 0x3F80); // 1 + 2^-8: tie, even
  EXPECT_EQ(f64ToF16(0x3FF0020000001000ull), 0x3C01);  // 1 + 2^-11 + 2^-40
  EXPECT_EQ(f64ToF16(0x3FF0020000000000ull), 0x3C00);  // 1 + 2^-11: tie, even
  EXPECT_EQ(f64ToBf16(0x0000000000000001ull), 0x0000); // f64 subnormal
  EXPECT_EQ(f64ToBf16(0x7FEFFFFFFFFFFFFFull), 0x7F80); // DBL_MAX: +inf
  EXPECT_EQ(f64ToF16(0xFFF0000000000000ull), 0xFC00);  // -inf
  EXPECT_EQ(f64ToF16(0x7FF0000000000001ull), 0x7E00);  // signalling NaN: quieted
}

TEST(SoftFloat, WideningIsExact) {
  EXPECT_EQ(f16ToF32(0x3C00), 0x3F800000u);
  EXPECT_EQ(f16ToF32(0x0001), 0x33800000u);     // 2^-24 becomes normal
  EXPECT_EQ(f16ToF32(0x03FF), 0x387FC000u);     // the largest subnormal
  EXPECT_EQ(f16ToF32(0x8000), 0x80000000u);
  EXPECT_EQ(f16ToF32(0x7C00), 0x7F800000u);
  EXPECT_EQ(f16ToF32(0x7C01), 0x7FC02000u);     // NaN payload kept, quieted
  EXPECT_EQ(f16ToF64(0x3C00), 0x3FF0000000000000ull);
  EXPECT_EQ(bf16ToF32(0x7F81), 0x7FC10000u);
  EXPECT_EQ(bf16ToF32(0x0001), 0x00010000u);    // subnormal stays subnormal
  EXPECT_EQ(bf16ToF64(0xBF80), 0xBFF0000000000000ull);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7FFF) > 0x7C00) // f16 NaN: quieted, so not a round trip
      continue;
    EXPECT_EQ(f32ToF16(f16ToF32(static_cast<uint16_t>(h))), h);
    EXPECT_EQ(f64ToF16(f16ToF64(static_cast<uint16_t>(h))), h);
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7FFF) > 0x7F80)
      continue;
    EXPECT_EQ(f32ToBf16(bf16ToF32(static_cast<uint16_t>(h))), h);
  }
}

// The builtins LLVM calls: the same conversions under compiler-rt's ABI.
TEST(SoftFloat, CompilerRtBuiltins) {
  EXPECT_EQ(bits<uint16_t>(__truncsfbf2(bits<float>(0x3F818000u))), 0x3F82);
  EXPECT_EQ(bits<uint16_t>(__truncdfbf2(bits<double>(0x3FF0100000001000ull))), 0x3F81);
  EXPECT_EQ(bits<uint16_t>(__truncsfhf2(bits<float>(0x33C00000u))), 0x0002);
  EXPECT_EQ(bits<uint16_t>(__truncdfhf2(bits<double>(0x3FF0020000001000ull))), 0x3C01);
  EXPECT_EQ(bits<uint32_t>(__extendhfsf2(bits<_Float16>(uint16_t{0x03FF}))), 0x387FC000u);
}

// What the JIT and the emulator's libraries resolve against: the runtimes'
// exported builtins (dlopen'ed as they are, not this binary's static copy).
TEST(SoftFloat, RuntimesExportTheBuiltins) {
  for (const char *path : {RLX_CPU_RUNTIME_PATH, RLX_GPU_RUNTIME_PATH}) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << path << ": " << dlerror();
    auto sym = [&](const char *name) {
      void *p = dlsym(lib, name);
      EXPECT_NE(p, nullptr) << path << " does not export " << name;
      return p;
    };
    auto truncsfbf2 = reinterpret_cast<__bf16 (*)(float)>(sym("__truncsfbf2"));
    auto truncdfbf2 = reinterpret_cast<__bf16 (*)(double)>(sym("__truncdfbf2"));
    auto truncsfhf2 = reinterpret_cast<_Float16 (*)(float)>(sym("__truncsfhf2"));
    auto truncdfhf2 = reinterpret_cast<_Float16 (*)(double)>(sym("__truncdfhf2"));
    auto extendhfsf2 = reinterpret_cast<float (*)(_Float16)>(sym("__extendhfsf2"));
    if (!truncsfbf2 || !truncdfbf2 || !truncsfhf2 || !truncdfhf2 || !extendhfsf2)
      continue;
    EXPECT_EQ(bits<uint16_t>(truncsfbf2(bits<float>(0x00018000u))), 0x0002) << path;
    EXPECT_EQ(bits<uint16_t>(truncsfbf2(bits<float>(0xFFA12345u))), 0xFFE1) << path;
    EXPECT_EQ(bits<uint16_t>(truncdfbf2(bits<double>(0x3FF0100000001000ull))), 0x3F81) << path;
    EXPECT_EQ(bits<uint16_t>(truncsfhf2(bits<float>(0x477FF000u))), 0x7C00) << path;
    EXPECT_EQ(bits<uint16_t>(truncdfhf2(bits<double>(0x3FF0020000001000ull))), 0x3C01) << path;
    EXPECT_EQ(bits<uint32_t>(extendhfsf2(bits<_Float16>(uint16_t{0x7C01}))), 0x7FC02000u) << path;
  }
}
