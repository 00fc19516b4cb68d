//===- HostTensorTest.cpp - Host arrays: element conversions --------------===//

#include "RLX/Target/CPU/HostTensor.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace mlir::rlx;

namespace {
template <typename T>
T element(const HostTensor &t, int64_t i) {
  T v;
  std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
  return v;
}
} // namespace

// Out-of-range and NaN values stored into integer dtypes saturate (the C cast
// is undefined there; rlx-fuzz-npy found i64 -> f32 -> i64 reaching it).
TEST(HostTensor, IntegerStoresSaturate) {
  const double inf = std::numeric_limits<double>::infinity();
  const double values[] = {1e30, -1e30, std::nan(""), inf, -inf, 9.223372036854775807e18, -7.9};
  HostTensor i64 = HostTensor::zeros("i64", {7});
  HostTensor i32 = HostTensor::zeros("i32", {7});
  HostTensor i8 = HostTensor::zeros("i8", {7});
  HostTensor u8 = HostTensor::zeros("u8", {7});
  for (int64_t i = 0; i < 7; ++i) {
    i64.set(i, values[i]);
    i32.set(i, values[i]);
    i8.set(i, values[i]);
    u8.set(i, values[i]);
  }
  constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
  constexpr int64_t min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(element<int64_t>(i64, 0), max64);
  EXPECT_EQ(element<int64_t>(i64, 1), min64);
  EXPECT_EQ(element<int64_t>(i64, 2), 0);
  EXPECT_EQ(element<int64_t>(i64, 3), max64);
  EXPECT_EQ(element<int64_t>(i64, 4), min64);
  EXPECT_EQ(element<int64_t>(i64, 5), max64); // 2^63 as a double
  EXPECT_EQ(element<int64_t>(i64, 6), -7);    // toward zero
  EXPECT_EQ(element<int32_t>(i32, 0), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(element<int32_t>(i32, 1), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(element<int32_t>(i32, 2), 0);
  EXPECT_EQ(element<int32_t>(i32, 6), -7);
  EXPECT_EQ(element<int8_t>(i8, 0), 127);
  EXPECT_EQ(element<int8_t>(i8, 1), -128);
  EXPECT_EQ(element<int8_t>(i8, 6), -7);
  EXPECT_EQ(element<uint8_t>(u8, 0), 255);
  EXPECT_EQ(element<uint8_t>(u8, 1), 0);
  EXPECT_EQ(element<uint8_t>(u8, 2), 0);
}

TEST(HostTensor, ConvertToIntegerSaturates) {
  HostTensor f32 = HostTensor::zeros("f32", {2});
  f32.set(0, 3e9);
  f32.set(1, -3e9);
  HostTensor i32 = convert(f32, "i32");
  EXPECT_EQ(element<int32_t>(i32, 0), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(element<int32_t>(i32, 1), std::numeric_limits<int32_t>::min());
}

// Every dtype readNpy reads is written back as itself (u8 was written as
// bool, '|b1'; rlx-fuzz-npy's round trip found it).
TEST(HostTensor, NpyRoundTripKeepsTheDtype) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("rlx-hosttensor", "npy", path));
  for (const char *dtype : {"f32", "f64", "f16", "i64", "i32", "i8", "u8", "i1"}) {
    HostTensor t = HostTensor::zeros(dtype, {3});
    t.set(1, 1);
    t.set(2, 5);
    std::string error;
    ASSERT_TRUE(mlir::succeeded(writeNpy(path, t, error))) << error;
    mlir::FailureOr<HostTensor> back = readNpy(path, error);
    ASSERT_TRUE(mlir::succeeded(back)) << error;
    EXPECT_EQ(back->dtype, t.dtype);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->data, t.data);
  }
  llvm::sys::fs::remove(path);
}
