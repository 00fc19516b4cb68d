//===- Npy.h - Minimal .npy reading and writing ----------------*- C++ -*-===//
//
// rlx-gpu-run takes inputs and writes outputs as NumPy .npy files (format
// versions 1.0, 2.0 and 3.0, C order, little endian). Element types NumPy does
// not have travel as raw bytes of an integer type of the same size:
//
//   manifest dtype   .npy descr written   also accepted when reading
//   f32 f16 f64      <f4 <f2 <f8
//   i8 i16 i32 i64   |i1 <i2 <i4 <i8      (any same-size integer)
//   ui8              |u1                  |i1
//   i1               |b1                  |u1 |i1
//   bf16             <u2                  <i2, <V2 (ml_dtypes.bfloat16)
//   f8E4M3FN f8E5M2  |u1                  |i1, |V1 (ml_dtypes float8)
//   f4E2M1FN         |u1, the packed bytes (element 2i in the low nibble);
//                    shape = the buffer's with the last dim halved (rounded
//                    up), or [bytes] when that does not give `bytes`
//
// Malformed files (bad magic, truncated or oversized headers, a header that is
// not a dict, Fortran order, big endian, trailing or missing data) are errors.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_NPY_H
#define RLX_RUNTIME_GPU_NPY_H

#include "RLX/Runtime/GPU/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rlx::gpu {

struct NpyArray {
  std::string descr; ///< as in the header, e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  uint64_t count() const;
};

/// Parses the bytes of a whole .npy file.
bool parseNpy(const std::string &bytes, NpyArray &out, std::string &error);
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// The bytes of a version 1.0 (2.0 when the header needs it) .npy file.
std::string formatNpy(const std::string &descr, const std::vector<int64_t> &shape,
                      const void *data, uint64_t bytes);
bool writeNpy(const std::string &path, const std::string &descr, const std::vector<int64_t> &shape,
              const void *data, uint64_t bytes, std::string &error);

/// The descr written for a manifest dtype ("" for an unknown one).
std::string npyDescr(const std::string &dtype);

/// Checks `a` against buffer `b` (descr compatible with b.dtype, element count
/// or, for f4E2M1FN, byte count) and returns its bytes padded with zeros to
/// b.bytes. The error names the buffer.
bool npyToBuffer(const NpyArray &a, const BufferInfo &b, std::vector<uint8_t> &out, std::string &error);

/// Writes buffer contents (b.bytes of them) as the .npy of b.
bool writeBufferNpy(const std::string &path, const BufferInfo &b, const void *data, std::string &error);

} // namespace rlx::gpu

#endif // RLX_RUNTIME_GPU_NPY_H
