//===- Npy.cpp - The project's one .npy reader and writer ------------------===//
//
// LLVM-free (the GPU runtime links it): rlx-run's host tensors, rlx-gpu-run,
// the GPU runtime's tests and the fuzzers all read .npy files here.
//
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rlx::npy {
namespace {

constexpr uint64_t kMaxNpyBytes = uint64_t(1) << 48;

// A cursor over the header's Python dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (4, 64), }
struct HeaderParser {
  const std::string &s;
  size_t i = 0;

  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool str(std::string &out) {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return false;
    char q = s[i++];
    size_t end = s.find(q, i);
    if (end == std::string::npos)
      return false;
    out = s.substr(i, end - i);
    i = end + 1;
    return true;
  }
  bool word(const char *w) {
    ws();
    size_t n = std::strlen(w);
    if (s.compare(i, n, w) != 0)
      return false;
    i += n;
    return true;
  }
  bool integer(int64_t &out) {
    ws();
    size_t start = i;
    uint64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 10 + uint64_t(s[i] - '0');
      if (v > kMaxNpyBytes)
        return false;
      ++i;
    }
    if (i < s.size() && s[i] == 'L') // Python 2 longs
      ++i;
    out = int64_t(v);
    return i > start;
  }
};

bool parseHeader(const std::string &h, NpyArray &out, std::string &error) {
  HeaderParser p{h};
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!p.eat('{')) {
    error = "header is not a dict";
    return false;
  }
  while (!p.eat('}')) {
    std::string key;
    if (!p.str(key) || !p.eat(':')) {
      error = "malformed header dict";
      return false;
    }
    if (key == "descr") {
      if (!p.str(out.descr)) {
        error = "'descr' is not a string (structured dtypes are not supported)";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      if (p.word("True")) {
        error = "Fortran-order arrays are not supported (save with C order)";
        return false;
      }
      if (!p.word("False")) {
        error = "'fortran_order' is not True or False";
        return false;
      }
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.eat('(')) {
        error = "'shape' is not a tuple";
        return false;
      }
      out.shape.clear();
      while (!p.eat(')')) {
        int64_t d;
        if (!p.integer(d)) {
          error = "'shape' holds something other than non-negative integers";
          return false;
        }
        if (out.shape.size() >= 64) {
          error = "'shape' has more than 64 dimensions";
          return false;
        }
        out.shape.push_back(d);
        if (!p.eat(',')) {
          if (!p.eat(')')) {
            error = "malformed 'shape' tuple";
            return false;
          }
          break;
        }
      }
      haveShape = true;
    } else {
      error = "unknown header key '" + key + "'";
      return false;
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) {
        error = "malformed header dict";
        return false;
      }
      break;
    }
  }
  if (!haveDescr || !haveOrder || !haveShape) {
    error = std::string("header lacks '") + (!haveDescr ? "descr" : !haveOrder ? "fortran_order" : "shape") + "'";
    return false;
  }
  return true;
}

// Item size of a simple little-endian descr, 0 when not supported.
uint64_t itemSize(const std::string &descr, std::string &error) {
  if (descr.size() < 3) {
    error = "unsupported dtype '" + descr + "'";
    return 0;
  }
  char order = descr[0], kind = descr[1];
  std::string digits = descr.substr(2);
  if (order == '>') {
    error = "big-endian dtype '" + descr + "' is not supported";
    return 0;
  }
  if (order != '<' && order != '|' && order != '=') {
    error = "unsupported dtype '" + descr + "'";
    return 0;
  }
  if (std::string("fiubV").find(kind) == std::string::npos || digits.empty() || digits.size() > 2 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    error = "unsupported dtype '" + descr + "'";
    return 0;
  }
  uint64_t n = std::stoul(digits);
  bool ok = (kind == 'f' && (n == 2 || n == 4 || n == 8)) || ((kind == 'i' || kind == 'u') && (n == 1 || n == 2 || n == 4 || n == 8)) ||
            (kind == 'b' && n == 1) || (kind == 'V' && (n == 1 || n == 2));
  if (!ok) {
    error = "unsupported dtype '" + descr + "'";
    return 0;
  }
  return n;
}

} // namespace

std::string canonical(const std::string &descr) {
  if (descr.size() >= 2 && (descr[0] == '=' || descr[0] == '|'))
    return "<" + descr.substr(1);
  return descr;
}

std::string joinShape(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  return s + ")";
}

uint64_t NpyArray::count() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

bool parseNpy(const std::string &bytes, NpyArray &out, std::string &error) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, magic, 6) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]);
  uint64_t headerLen, start;
  if (major == 1) {
    headerLen = uint64_t(static_cast<unsigned char>(bytes[8])) | uint64_t(static_cast<unsigned char>(bytes[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = 0;
    for (int k = 0; k < 4; ++k)
      headerLen |= uint64_t(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    start = 12;
  } else {
    error = ".npy format version " + std::to_string(major) + " is not supported";
    return false;
  }
  if (headerLen > bytes.size() - start) {
    error = "truncated .npy header (" + std::to_string(headerLen) + " bytes announced)";
    return false;
  }
  NpyArray a;
  if (!parseHeader(bytes.substr(start, headerLen), a, error)) {
    error = "bad .npy header: " + error;
    return false;
  }
  uint64_t item = itemSize(a.descr, error);
  if (!item)
    return false;
  uint64_t n = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && n > kMaxNpyBytes / uint64_t(d)) {
      error = "shape " + joinShape(a.shape) + " is too large";
      return false;
    }
    n *= uint64_t(d);
  }
  if (n > kMaxNpyBytes / item) {
    error = "shape " + joinShape(a.shape) + " is too large";
    return false;
  }
  uint64_t dataBytes = n * item, have = bytes.size() - start - headerLen;
  if (have != dataBytes) {
    error = "data is " + std::to_string(have) + " bytes, but shape " + joinShape(a.shape) + " of '" + a.descr +
            "' needs " + std::to_string(dataBytes) + (have < dataBytes ? " (truncated)" : " (trailing data)");
    return false;
  }
  a.data.assign(bytes.begin() + std::ptrdiff_t(start + headerLen), bytes.end());
  out = std::move(a);
  return true;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (!parseNpy(ss.str(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

std::string formatNpy(const std::string &descr, const std::vector<int64_t> &shape, const void *data, uint64_t bytes) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + joinShape(shape) + ", }";
  // Data starts at a multiple of 64 bytes; the header ends in '\n'.
  bool v1 = dict.size() + 11 < 65536 - 64;
  size_t pre = v1 ? 10 : 12;
  size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - pre - dict.size() - 1, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(v1 ? 1 : 2);
  out += char(0);
  uint64_t len = dict.size();
  for (size_t k = 0; k < (v1 ? 2u : 4u); ++k)
    out += char((len >> (8 * k)) & 0xff);
  out += dict;
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

bool writeNpy(const std::string &path, const std::string &descr, const std::vector<int64_t> &shape, const void *data,
              uint64_t bytes, std::string &error) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  std::string s = formatNpy(descr, shape, data, bytes);
  if (!f || !f.write(s.data(), std::streamsize(s.size())) || !f.flush()) {
    error = path + ": cannot write";
    return false;
  }
  return true;
}

namespace {
/// The project's dtype names (the host's and the manifest's MLIR spelling)
/// and the .npy descr each is written as. Read back, a descr gives the first
/// host name listed with it.
struct DtypeRow {
  const char *host, *mlir, *descr;
};
constexpr DtypeRow kDtypes[] = {
    {"f32", "f32", "<f4"},           {"f64", "f64", "<f8"},   {"f16", "f16", "<f2"},
    {"i64", "i64", "<i8"},           {"i32", "i32", "<i4"},   {"i8", "i8", "|i1"},
    {"u8", "ui8", "|u1"},            {"i1", "i1", "|b1"},     {"bf16", "bf16", "<u2"},
    {"f8e4m3fn", "f8E4M3FN", "|u1"}, {"", "i16", "<i2"},      {"", "f8E5M2", "|u1"},
    {"", "f4E2M1FN", "|u1"},
};
} // namespace

std::string descrOf(const std::string &dtype) {
  if (dtype.empty())
    return "";
  for (const DtypeRow &r : kDtypes)
    if (dtype == r.host || dtype == r.mlir)
      return r.descr;
  return "";
}

std::string hostDtypeOf(const std::string &descr) {
  std::string d = canonical(descr);
  // ml_dtypes arrays have no numpy type code: bfloat16 is saved as a two-byte
  // void, float8_e4m3fn as a one-byte void. uint16 holds bf16 bit patterns
  // (RLX has no 16-bit unsigned type); bytes are uint8.
  if (d == "<V2")
    return "bf16";
  if (d == "<V1")
    return "f8e4m3fn";
  for (const DtypeRow &r : kDtypes)
    if (*r.host && canonical(r.descr) == d)
      return r.host;
  return "";
}

} // namespace rlx::npy
