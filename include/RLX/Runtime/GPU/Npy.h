//===- Npy.h - GPU buffers as .npy files ------------------------*- C++ -*-===//
//
// rlx-gpu-run takes inputs and writes outputs as NumPy .npy files, read and
// written by the project's one reader (RLX/Runtime/Npy.h). Element types
// NumPy does not have travel as raw bytes of an integer type of the same size:
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
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_NPY_H
#define RLX_RUNTIME_GPU_NPY_H

#include "RLX/Runtime/GPU/Manifest.h"
#include "RLX/Runtime/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rlx::gpu {

using npy::formatNpy;
using npy::NpyArray;
using npy::parseNpy;
using npy::readNpy;
using npy::writeNpy;

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
