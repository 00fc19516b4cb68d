//===- Npy.h - The project's one .npy reader and writer ---------*- C++ -*-===//
//
// NumPy .npy files (format versions 1.0, 2.0 and 3.0, C order, little
// endian), read and written by every tool: rlx-run's host tensors
// (HostTensor.h), rlx-gpu-run and the GPU runtime's buffers (GPU/Npy.h).
// Malformed files (bad magic, truncated or oversized headers, a header that
// is not a dict, Fortran order, big endian, unknown dtypes, trailing or
// missing data) are errors. LLVM-free.
//
// One table of dtype names: the host's (f32 ... u8, f8e4m3fn) and the
// manifest's MLIR spelling (ui8, f8E4M3FN, f4E2M1FN, ...) and the descr each
// is written as. Types NumPy lacks travel as bytes of a same-size type:
// bf16 as <u2 (read also from ml_dtypes' <V2), FP8/FP4 as |u1 (read also
// from |V1).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_RUNTIME_NPY_H
#define RLX_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace rlx::npy {

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

/// The descr a dtype (host or MLIR name) is written as; "" when unknown.
std::string descrOf(const std::string &dtype);
/// The host dtype a descr is read as; "" when the host has none.
std::string hostDtypeOf(const std::string &descr);

/// The descr with '=' and '|' as '<' (every host RLX runs on is little endian).
std::string canonical(const std::string &descr);
/// "(2, 3)" as NumPy prints a shape.
std::string joinShape(const std::vector<int64_t> &shape);

} // namespace rlx::npy

#endif // RLX_RUNTIME_NPY_H
