//===- HostTensor.cpp - Host arrays, .npy files, seeded values ------------===//

#include "RLX/Target/CPU/HostTensor.h"

#include "RLX/Dialect/Common/IR/StorageSize.h"
#include "RLX/Runtime/Npy.h"
#include "RLX/Runtime/SoftFloat.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <unistd.h>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;

size_t HostTensor::elementBytes(StringRef dtype) {
  // The element's bits, stored as the generated code stores them.
  // Byte-sized: i8/u8, the E4M3 scale bytes, FP4 codes one per byte (the
  // manifest's spellings included). An unknown name is 0 bytes: callers
  // reject it (tensorBytes, GpuRun) instead of guessing its size.
  unsigned bits = llvm::StringSwitch<unsigned>(dtype)
                      .Cases({"f64", "i64"}, 64)
                      .Cases({"f32", "i32"}, 32)
                      .Cases({"f16", "bf16"}, 16)
                      .Case("i1", 1)
                      .Cases({"i8", "u8", "ui8", "f8e4m3fn", "f8E4M3FN", "f4E2M1FN"}, 8)
                      .Default(0);
  return bits ? storageBytesForBits(bits) : 0;
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostTensor HostTensor::zeros(StringRef dtype, ArrayRef<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype.str();
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(t.numElements() * elementBytes(dtype), 0);
  return t;
}

double HostTensor::at(int64_t i) const {
  const uint8_t *p = data.data() + i * elementBytes(dtype);
  if (dtype == "f32") {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (dtype == "f64") {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (dtype == "f16" || dtype == "bf16") {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return dtype == "f16" ? ::rlx::softfloat::f16ToDouble(v) : ::rlx::softfloat::bf16ToDouble(v);
  }
  if (dtype == "i64") {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  if (dtype == "i32") {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (dtype == "i8")
    return static_cast<int8_t>(*p);
  if (dtype == "u8")
    return *p;
  return *p ? 1.0 : 0.0;
}

/// `v` as the integer type T: truncated toward zero like a C cast, but NaN is
/// 0 and values past T's range saturate (the cast is undefined behaviour
/// there, and values come from user files).
template <typename T>
static T toInteger(double v) {
  if (std::isnan(v))
    return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

void HostTensor::set(int64_t i, double v) {
  uint8_t *p = data.data() + i * elementBytes(dtype);
  if (dtype == "f32") {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else if (dtype == "f64") {
    std::memcpy(p, &v, 8);
  } else if (dtype == "f16" || dtype == "bf16") {
    // One rounding from f64 (not through f32).
    uint16_t h = dtype == "f16" ? ::rlx::softfloat::doubleToF16(v) : ::rlx::softfloat::doubleToBf16(v);
    std::memcpy(p, &h, 2);
  } else if (dtype == "i64") {
    int64_t x = toInteger<int64_t>(v);
    std::memcpy(p, &x, 8);
  } else if (dtype == "i32") {
    int32_t x = toInteger<int32_t>(v);
    std::memcpy(p, &x, 4);
  } else if (dtype == "i8") {
    *p = static_cast<uint8_t>(toInteger<int8_t>(v));
  } else if (dtype == "u8") {
    *p = toInteger<uint8_t>(v);
  } else {
    *p = v != 0.0;
  }
}

HostTensor mlir::rlx::convert(const HostTensor &t, StringRef dtype) {
  if (t.dtype == dtype)
    return t;
  // Bytes stay bytes: uint8/int8 arrays feed packed FP4 weights (i8) and
  // E4M3 scales (f8e4m3fn) with their bit patterns. (The runner refuses
  // other sources for f8e4m3fn arguments.)
  auto isByte = [](StringRef d) { return d == "i8" || d == "u8" || d == "f8e4m3fn"; };
  if (isByte(t.dtype) && (dtype == "i8" || dtype == "f8e4m3fn")) {
    HostTensor out = t;
    out.dtype = dtype.str();
    return out;
  }
  HostTensor out = HostTensor::zeros(dtype, t.shape);
  int64_t n = t.numElements();
  if (t.dtype == "f32" && dtype == "bf16") {
    const float *src = reinterpret_cast<const float *>(t.data.data());
    uint16_t *dst = reinterpret_cast<uint16_t *>(out.data.data());
    for (int64_t i = 0; i < n; ++i)
      dst[i] = ::rlx::softfloat::floatToBf16(src[i]);
    return out;
  }
  for (int64_t i = 0; i < n; ++i)
    out.set(i, t.at(i));
  return out;
}

std::optional<uint64_t> mlir::rlx::tensorBytes(StringRef dtype, ArrayRef<int64_t> shape) {
  uint64_t count = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(count, uint64_t(d), &count))
      return std::nullopt;
  // Sub-byte dtypes are stored a byte (or more) per element here.
  uint64_t bytes, width = HostTensor::elementBytes(dtype);
  if (width == 0 || __builtin_mul_overflow(count, width, &bytes) ||
      bytes > uint64_t(INT64_MAX))
    return std::nullopt;
  return bytes;
}

uint64_t mlir::rlx::memoryBudget() {
  std::string ignored;
  return memoryBudget(ignored);
}

uint64_t mlir::rlx::memoryBudget(std::string &error) {
  if (const char *env = std::getenv("RLX_MEMORY_BUDGET")) {
    StringRef s(env);
    uint64_t scale = 1;
    if (!s.empty()) {
      char last = char(std::toupper(static_cast<unsigned char>(s.back())));
      int shift = last == 'K' ? 10 : last == 'M' ? 20 : last == 'G' ? 30 : last == 'T' ? 40 : 0;
      if (shift) {
        scale = uint64_t(1) << shift;
        s = s.drop_back();
      }
    }
    uint64_t v;
    if (!s.getAsInteger(10, v) && !__builtin_mul_overflow(v, scale, &v))
      return v;
    error = std::string("RLX_MEMORY_BUDGET='") + env +
            "' is not a byte count (digits, optionally with K, M, G or T)";
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
}

static std::string shapeString(ArrayRef<int64_t> shape, StringRef dtype) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + dtype.str();
}

LogicalResult mlir::rlx::checkMemoryBudget(ArrayRef<BudgetItem> items, uint64_t extraBytes,
                                           StringRef extraWhat, std::string &error) {
  uint64_t budget = memoryBudget(error), total = extraBytes;
  if (!error.empty())
    return failure();
  auto tooBig = [&](StringRef what, std::string size) {
    error = what.str() + " needs " + size + ", more than the memory budget of " +
            std::to_string(budget) +
            " bytes (the machine's memory; RLX_MEMORY_BUDGET sets another)";
    return failure();
  };
  if (extraBytes > budget)
    return tooBig(extraWhat, std::to_string(extraBytes) + " bytes");
  for (const BudgetItem &item : items) {
    std::optional<uint64_t> bytes = tensorBytes(item.dtype, item.shape);
    if (!bytes)
      return tooBig(item.what + " (" + shapeString(item.shape, item.dtype) + ")",
                    "more than 2^63 bytes");
    if (*bytes > budget || __builtin_add_overflow(total, *bytes, &total) || total > budget)
      return tooBig(item.what + " (" + shapeString(item.shape, item.dtype) + ")",
                    std::to_string(*bytes) + " bytes" +
                        (*bytes > budget ? "" : " (with the tensors before it)"));
  }
  return success();
}

FailureOr<HostTensor> mlir::rlx::convertExact(const HostTensor &t, StringRef dtype,
                                              StringRef name, std::string &error) {
  if (t.dtype == dtype)
    return t;
  auto isByte = [](StringRef d) { return d == "i8" || d == "u8" || d == "f8e4m3fn"; };
  // FP8 scales are bytes: only byte arrays feed them (their values are no
  // numbers to convert).
  if (dtype == "f8e4m3fn" && !isByte(t.dtype)) {
    error = ("argument '" + name + "' is " + dtype +
             ": pass its bytes (uint8, int8 or ml_dtypes.float8_e4m3fn), got " + t.dtype)
                .str();
    return failure();
  }
  if (HostTensor::elementBytes(dtype) == 0) {
    error = ("argument '" + name + "' has dtype '" + dtype + "', which the host cannot hold").str();
    return failure();
  }
  HostTensor out = convert(t, dtype);
  // Bytes stay bytes (see convert): uint8 arrays feed packed FP4 codes (i8).
  if (isByte(t.dtype) && (dtype == "i8" || dtype == "f8e4m3fn"))
    return out;
  // Round trip: a value that does not come back was changed.
  HostTensor back = convert(out, t.dtype);
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    double a = t.at(i), b = back.at(i);
    if (a == b || (std::isnan(a) && std::isnan(b)))
      continue;
    llvm::raw_string_ostream os(error);
    os << "argument '" << name << "' is " << dtype << " but the value given is " << t.dtype
       << ", and its element " << i << " (" << a << ") is not exactly a " << dtype
       << " (values convert only when every one converts exactly; convert them first)";
    return failure();
  }
  return out;
}

std::string mlir::rlx::dtypeOf(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isInteger(64))
    return "i64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(8))
    return "i8";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3fn";
  if (t.isInteger(1))
    return "i1";
  return "";
}

std::string mlir::rlx::dtypeOf(StringRef elementType, MLIRContext *context) {
  size_t read = 0;
  Type t = parseType(elementType, context, &read, /*isKnownNullTerminated=*/false);
  return t && read == elementType.size() ? dtypeOf(t) : "";
}

//===----------------------------------------------------------------------===//
// .npy (the project's one reader, RLX/Runtime/Npy.h)
//===----------------------------------------------------------------------===//

FailureOr<HostTensor> mlir::rlx::readNpy(StringRef path, std::string &error) {
  ::rlx::npy::NpyArray a;
  if (!::rlx::npy::readNpy(path.str(), a, error))
    return failure();
  HostTensor t;
  t.dtype = ::rlx::npy::hostDtypeOf(a.descr);
  if (t.dtype.empty()) {
    error = (path + ": unsupported dtype '" + a.descr +
             "' (supported: float32/64/16, int64/32/8, uint8, bool, ml_dtypes bfloat16 and "
             "float8_e4m3fn)")
                .str();
    return failure();
  }
  // The reader checked the data against the descr's item size; the host's
  // element size is the same for every dtype it reads.
  t.shape = a.shape;
  t.data = std::move(a.data);
  return t;
}

LogicalResult mlir::rlx::writeNpy(StringRef path, const HostTensor &in, std::string &error) {
  HostTensor t = in.dtype == "bf16" ? convert(in, "f32") : in;
  std::string descr = ::rlx::npy::descrOf(t.dtype);
  if (descr.empty()) {
    error = (path + ": no .npy dtype for '" + t.dtype + "'").str();
    return failure();
  }
  return success(::rlx::npy::writeNpy(path.str(), descr, t.shape, t.data.data(), t.data.size(),
                                      error));
}

//===----------------------------------------------------------------------===//
// Seeded values
//===----------------------------------------------------------------------===//

static uint64_t fnv1a64(StringRef s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// splitmix64 of counter `i` in the stream `key`.
static uint64_t mix(uint64_t key, uint64_t i) {
  uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

mlir::rlx::SeededStream::SeededStream(uint64_t seed, StringRef name)
    : key(seed ^ fnv1a64(name)) {}

double mlir::rlx::SeededStream::normal(uint64_t i) const {
  double u1 = (static_cast<double>(mix(key, 2 * i) >> 11) + 1.0) * 0x1.0p-53; // (0, 1]
  double u2 = static_cast<double>(mix(key, 2 * i + 1) >> 11) * 0x1.0p-53;     // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t mlir::rlx::SeededStream::uniformInt(uint64_t i, uint64_t bound) const {
  return mix(key, i) % bound;
}

void mlir::rlx::fillNormal(HostTensor &t, const SeededStream &stream, double scale,
                           double shift) {
  int64_t n = t.numElements();
  constexpr int64_t kChunk = 1 << 16;
  bool isF32 = t.dtype == "f32";
  // Element i depends only on (stream, i): chunks fill in parallel.
  llvm::parallelFor(0, (n + kChunk - 1) / kChunk, [&](size_t c) {
    int64_t begin = static_cast<int64_t>(c) * kChunk, end = std::min(n, begin + kChunk);
    if (isF32) {
      auto *p = reinterpret_cast<float *>(t.data.data());
      for (int64_t i = begin; i < end; ++i)
        p[i] = static_cast<float>(shift + scale * stream.normal(i));
    } else {
      for (int64_t i = begin; i < end; ++i)
        t.set(i, shift + scale * stream.normal(i));
    }
  });
}
