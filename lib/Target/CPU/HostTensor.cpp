//===- HostTensor.cpp - Host arrays, .npy files, seeded values ------------===//

#include "RLX/Target/CPU/HostTensor.h"

#include "RLX/Dialect/Common/IR/StorageSize.h"
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
  uint64_t budget = memoryBudget(), total = extraBytes;
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
  HostTensor out = convert(t, dtype);
  // Bytes stay bytes (see convert).
  bool bytes = (t.dtype == "u8" || t.dtype == "i8" || t.dtype == "f8e4m3fn") &&
               (dtype == "i8" || dtype == "f8e4m3fn");
  if (t.dtype == dtype || bytes)
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
// .npy
//===----------------------------------------------------------------------===//

static std::string npyDescr(StringRef dtype) {
  if (dtype == "f32" || dtype == "bf16")
    return "<f4";
  if (dtype == "f64")
    return "<f8";
  if (dtype == "f16")
    return "<f2";
  if (dtype == "i64")
    return "<i8";
  if (dtype == "i32")
    return "<i4";
  if (dtype == "i8")
    return "|i1";
  if (dtype == "u8" || dtype == "f8e4m3fn")
    return "|u1"; // f8e4m3fn: the E4M3 bytes
  return "|b1";
}

namespace {
/// The Python literal of a .npy header: {'descr': '<f4', 'fortran_order':
/// False, 'shape': (2, 3), } with keys in any order.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

/// A tiny reader of the header dictionary; every malformation is an error
/// naming what was expected.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  std::optional<NpyHeader> parse(std::string &why) {
    NpyHeader h;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!eat('{'))
      return fail(why, "expected '{'");
    while (!peek('}')) {
      std::string key;
      if (!string(key) || !eat(':'))
        return fail(why, "expected 'key': value");
      if (key == "descr") {
        if (!string(h.descr))
          return fail(why, "'descr' must be a string");
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (word("True"))
          h.fortran = true;
        else if (!word("False"))
          return fail(why, "'fortran_order' must be True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (!tuple(h.shape, why))
          return std::nullopt;
        haveShape = true;
      } else {
        return fail(why, "unknown key '" + key + "'");
      }
      if (!eat(',') && !peek('}'))
        return fail(why, "expected ',' or '}'");
    }
    eat('}');
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(why, "the header needs 'descr', 'fortran_order' and 'shape'");
    skipSpace();
    if (!rest.empty())
      return fail(why, "unexpected text after the header dictionary");
    return h;
  }

private:
  std::optional<NpyHeader> fail(std::string &why, const std::string &msg) {
    why = msg;
    return std::nullopt;
  }
  void skipSpace() { rest = rest.ltrim(" \t\n"); }
  bool peek(char c) {
    skipSpace();
    return !rest.empty() && rest.front() == c;
  }
  bool eat(char c) {
    if (!peek(c))
      return false;
    rest = rest.drop_front();
    return true;
  }
  bool word(StringRef w) {
    skipSpace();
    if (!rest.consume_front(w))
      return false;
    return true;
  }
  bool string(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return false;
    char q = rest.front();
    size_t end = rest.find(q, 1);
    if (end == StringRef::npos)
      return false;
    out = rest.substr(1, end - 1).str();
    rest = rest.drop_front(end + 1);
    return true;
  }
  bool tuple(std::vector<int64_t> &out, std::string &why) {
    if (!eat('(')) {
      why = "'shape' must be a tuple of integers";
      return false;
    }
    while (!peek(')')) {
      skipSpace();
      size_t n = 0;
      while (n < rest.size() && (llvm::isDigit(rest[n]) || (n == 0 && rest[n] == '-')))
        ++n;
      int64_t d;
      if (n == 0 || rest.substr(0, n).getAsInteger(10, d)) {
        why = "'shape' must be a tuple of integers";
        return false;
      }
      if (d < 0) {
        why = "shape dim " + std::to_string(out.size()) + " is negative (" + std::to_string(d) +
              ")";
        return false;
      }
      out.push_back(d);
      rest = rest.drop_front(n);
      if (!eat(',') && !peek(')')) {
        why = "'shape' must be a tuple of integers";
        return false;
      }
    }
    eat(')');
    return true;
  }

  StringRef rest;
};
} // namespace

FailureOr<HostTensor> mlir::rlx::readNpy(StringRef path, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = (path + ": " + buf.getError().message()).str();
    return failure();
  }
  auto fail = [&](const Twine &msg) {
    error = (path + ": " + msg).str();
    return failure();
  };
  StringRef bytes = (*buf)->getBuffer();
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return fail("not a .npy file");
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return fail("unsupported .npy format version " + Twine(major));
  }
  if (headerLen > bytes.size() - headerStart)
    return fail("truncated .npy header (" + Twine(headerLen) + " header bytes announced, " +
                Twine(bytes.size() - headerStart) + " in the file)");
  std::string why;
  std::optional<NpyHeader> h = HeaderParser(bytes.substr(headerStart, headerLen)).parse(why);
  if (!h)
    return fail("bad .npy header: " + why);
  if (h->fortran)
    return fail("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  HostTensor t;
  t.dtype.clear();
  // '|' (not applicable) and '<' (little endian) byte orders; '=' is native,
  // which is little endian on every machine RLX runs on.
  static const std::pair<StringRef, StringRef> kinds[] = {
      {"f4", "f32"}, {"f8", "f64"}, {"f2", "f16"}, {"i8", "i64"}, {"i4", "i32"},
      {"i1", "i8"},  {"b1", "i1"},  {"u1", "u8"},
      // ml_dtypes arrays have no numpy type code: bfloat16 is saved as a
      // two-byte void, float8_e4m3fn as a one-byte void.
      {"V2", "bf16"}, {"V1", "f8e4m3fn"},
      // uint16: bf16 bit patterns, as rlx-gpu-run writes bf16 outputs (RLX
      // has no 16-bit unsigned integer type).
      {"u2", "bf16"}};
  StringRef descr = h->descr;
  if (descr.size() >= 2 && (descr[0] == '>' && descr.substr(1) != "i1" &&
                            descr.substr(1) != "u1" && descr.substr(1) != "b1" &&
                            !descr.substr(1).starts_with("V1")))
    return fail("big-endian arrays ('" + descr + "') are not supported; save with astype('<...')");
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=' || descr[0] == '>'))
    descr = descr.drop_front();
  for (auto [d, name] : kinds)
    if (descr == d)
      t.dtype = name.str();
  if (t.dtype.empty())
    return fail("unsupported dtype '" + h->descr +
                "' (supported: float32/64/16, int64/32/8, uint8, bool, ml_dtypes bfloat16 and "
                "float8_e4m3fn)");
  t.shape = h->shape;
  // Element count and size without overflow.
  uint64_t n = HostTensor::elementBytes(t.dtype);
  for (int64_t d : t.shape)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return fail("shape too large");
  size_t start = headerStart + headerLen;
  size_t available = bytes.size() - start;
  if (available != n)
    return fail(Twine(available < n ? "truncated data: " : "trailing data: ") + Twine(available) +
                " bytes for a " + Twine(n) + "-byte " + t.dtype + " array");
  t.data.assign(bytes.begin() + start, bytes.end());
  return t;
}

LogicalResult mlir::rlx::writeNpy(StringRef path, const HostTensor &in, std::string &error) {
  HostTensor t = in.dtype == "bf16" ? convert(in, "f32") : in;
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ", ";
  if (t.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (t.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + npyDescr(t.dtype) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = (path + ": " + ec.message()).str();
    return failure();
  }
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF)
     << char((header.size() >> 8) & 0xFF) << header;
  os.write(reinterpret_cast<const char *>(t.data.data()), t.data.size());
  return success();
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
