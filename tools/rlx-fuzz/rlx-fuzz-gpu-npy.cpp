//===- rlx-fuzz-gpu-npy.cpp - libFuzzer target: .npy into GPU buffers -----===//
//
// Input: [dtype] + a .npy file. The first byte picks a manifest dtype; the
// rest goes through the project's .npy parser (parseNpy) and, when it
// parses, into a buffer of that dtype shaped like the array (npyToBuffer, as
// rlx-gpu-run fills inputs), and the buffer is written as .npy
// (writeBufferNpy) and read back.
//
// Findings: crashes, sanitizer reports and (unless RLX_FUZZ_STRICT=0) a
// filled buffer of the wrong size, or a buffer that does not read back as
// the bytes it holds.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Runtime/GPU/Npy.h"

#include <cstring>
#include <string>

static std::string outPath;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  outPath = rlx_fuzz::tempPath("gpu-npy", ".npy");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *dtypes[] = {"f32", "f16", "f64", "bf16", "i64", "i32", "i16", "i8",
                                 "ui8", "i1", "f8E4M3FN", "f8E5M2", "f4E2M1FN"};
  if (size < 1)
    return 0;
  const char *dtype = dtypes[data[0] % (sizeof dtypes / sizeof *dtypes)];
  rlx::gpu::NpyArray a;
  std::string error;
  if (!rlx::gpu::parseNpy(std::string(reinterpret_cast<const char *>(data + 1), size - 1), a,
                          error))
    return 0;
  rlx::gpu::BufferInfo b;
  b.name = "x";
  b.dtype = dtype;
  b.shape = a.shape;
  int width = rlx::gpu::dtypeBytes(dtype);
  b.bytes = std::strcmp(dtype, "f4E2M1FN") == 0 ? a.data.size() : a.count() * uint64_t(width);
  std::vector<uint8_t> bytes;
  if (!rlx::gpu::npyToBuffer(a, b, bytes, error))
    return 0;
  if (bytes.size() != b.bytes) {
    rlx_fuzz::checkFailed("gpu-npy-size", "npyToBuffer filled " + std::to_string(bytes.size()) +
                                              " bytes of a " + std::to_string(b.bytes) + "-byte buffer");
    return 0;
  }
  if (std::strcmp(dtype, "f4E2M1FN") == 0)
    return 0; // written with its own packed shape
  if (!rlx::gpu::writeBufferNpy(outPath, b, bytes.data(), error)) {
    rlx_fuzz::checkFailed("gpu-npy-write", "writeBufferNpy: " + error);
    return 0;
  }
  rlx::gpu::NpyArray back;
  if (!rlx::gpu::readNpy(outPath, back, error) || back.data != bytes || back.shape != b.shape)
    rlx_fuzz::checkFailed("gpu-npy-roundtrip", std::string("a ") + dtype +
                                                   " buffer does not read back as written: " + error);
  return 0;
}
