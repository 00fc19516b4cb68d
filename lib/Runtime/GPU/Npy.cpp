//===- Npy.cpp - GPU buffers as .npy files ---------------------------------===//
//
// Buffers to and from .npy (the reader is the project's one, RLX/Runtime/Npy.h).
//
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPU/Npy.h"

#include <cstring>

namespace rlx::gpu {

using npy::canonical;
using npy::joinShape;

std::string npyDescr(const std::string &d) { return npy::descrOf(d); }

bool npyToBuffer(const NpyArray &a, const BufferInfo &b, std::vector<uint8_t> &out, std::string &error) {
  std::string want = canonical(npyDescr(b.dtype)), have = canonical(a.descr);
  bool ok = have == want;
  const std::string &d = b.dtype;
  if (!ok) {
    if (d == "i8" || d == "i16" || d == "i32" || d == "i64")
      ok = have == "<u" + want.substr(2);
    else if (d == "ui8")
      ok = have == "<i1";
    else if (d == "i1")
      ok = have == "<u1" || have == "<i1";
    else if (d == "bf16")
      ok = have == "<i2" || have == "<V2";
    else if (d == "f8E4M3FN" || d == "f8E5M2")
      ok = have == "<i1" || have == "<V1";
    else if (d == "f4E2M1FN")
      ok = have == "<i1";
  }
  if (!ok) {
    error = "buffer '" + b.name + "' (" + d + "): .npy dtype '" + a.descr + "' does not match (expected '" +
            npyDescr(d) + "')";
    return false;
  }
  if (d == "f4E2M1FN") {
    if (a.data.size() != b.bytes) {
      error = "buffer '" + b.name + "' (f4E2M1FN, packed): " + std::to_string(a.data.size()) + " bytes, expected " +
              std::to_string(b.bytes);
      return false;
    }
  } else {
    uint64_t n = 1;
    for (int64_t x : b.shape)
      n *= uint64_t(x);
    if (a.count() != n) {
      error = "buffer '" + b.name + "': " + std::to_string(a.count()) + " elements " + joinShape(a.shape) +
              ", expected " + std::to_string(n) + " " + joinShape(b.shape);
      return false;
    }
    if (a.data.size() > b.bytes) {
      error = "buffer '" + b.name + "': " + std::to_string(a.data.size()) + " bytes exceed its " +
              std::to_string(b.bytes);
      return false;
    }
  }
  out.assign(b.bytes, 0);
  if (!a.data.empty())
    std::memcpy(out.data(), a.data.data(), a.data.size());
  return true;
}

bool writeBufferNpy(const std::string &path, const BufferInfo &b, const void *data, std::string &error) {
  std::string descr = npyDescr(b.dtype);
  if (descr.empty()) {
    error = "buffer '" + b.name + "': no .npy dtype for '" + b.dtype + "'";
    return false;
  }
  std::vector<int64_t> shape = b.shape;
  uint64_t bytes;
  if (b.dtype == "f4E2M1FN") {
    if (!shape.empty())
      shape.back() = (shape.back() + 1) / 2;
    uint64_t n = 1;
    for (int64_t x : shape)
      n *= uint64_t(x);
    if (n != b.bytes)
      shape = {int64_t(b.bytes)};
    bytes = b.bytes;
  } else {
    uint64_t n = 1;
    for (int64_t x : shape)
      n *= uint64_t(x);
    bytes = n * uint64_t(dtypeBytes(b.dtype));
  }
  return writeNpy(path, descr, shape, data, bytes, error);
}

} // namespace rlx::gpu
