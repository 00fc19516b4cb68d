//===- rlx-fuzz-manifest.cpp - libFuzzer target: the GPU manifest ---------===//
//
// Input: a manifest.json (docs/gpu-artifact.md), through the GPU runtime's
// parseManifest, what rlx_gpu_open reads before it loads anything. A
// manifest that parses is checked against what the runtime then relies on.
//
// Findings: crashes, sanitizer reports and (unless RLX_FUZZ_STRICT=0) a
// parsed buffer smaller than its shape and dtype, or a launch argument
// naming a buffer the function does not have.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Runtime/GPU/Manifest.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  rlx::gpu::Manifest m;
  std::string error;
  if (!rlx::gpu::parseManifest(text, m, error))
    return 0;
  for (const rlx::gpu::FunctionInfo &f : m.functions) {
    for (const rlx::gpu::BufferInfo &b : f.buffers) {
      int width = rlx::gpu::dtypeBytes(b.dtype);
      uint64_t n = 1;
      bool overflow = false;
      for (int64_t d : b.shape)
        overflow |= d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n);
      if (width < 0 || overflow)
        rlx_fuzz::checkFailed("manifest-buffer", "buffer '" + b.name + "' of dtype " + b.dtype +
                                                     " passed with an unusable shape");
      else if (b.dtype != "f4E2M1FN" && n <= (uint64_t(1) << 48) / uint64_t(width ? width : 1) &&
               n * uint64_t(width) > b.bytes)
        rlx_fuzz::checkFailed("manifest-bytes", "buffer '" + b.name + "' holds " +
                                                    std::to_string(b.bytes) + " bytes, its shape needs " +
                                                    std::to_string(n * uint64_t(width)));
    }
  }
  return 0;
}
