//===- rlx-fuzz-safetensors.cpp - libFuzzer target: checkpoints -----------===//
//
// Input: a .safetensors file (8-byte header length, JSON header, data). It
// goes to a per-process temporary file and through readSafetensors, what
// rlx.load_weights reads; a checkpoint that reads is then indexed again
// (indexSafetensors, what rlx-run --weights reads) and bound (bindCheckpoint,
// each tensor read again with pread) to parameters of its own names and
// shapes in f32 where it holds floats (the conversion a bf16 checkpoint
// takes).
//
// Findings: crashes, sanitizer reports and (unless RLX_FUZZ_STRICT=0) a
// tensor whose data size does not match its shape and dtype, a checkpoint
// that reads but does not index, or a binding to the checkpoint's own shapes
// that fails.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Target/CPU/Safetensors.h"

#include <string>

using namespace mlir;

static std::string path;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  path = rlx_fuzz::tempPath("safetensors", ".safetensors");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rlx_fuzz::writeFile(path, data, size);
  std::string error;
  auto checkpoint = rlx::readSafetensors(path, error);
  if (failed(checkpoint))
    return 0;
  std::vector<rlx::ParamSpec> params;
  for (const auto &[name, t] : *checkpoint) {
    int64_t n = t.numElements();
    if (n < 0 || uint64_t(n) * rlx::HostTensor::elementBytes(t.dtype) != t.data.size()) {
      rlx_fuzz::checkFailed("safetensors-size", "'" + name + "': " + t.dtype + " of " +
                                                    std::to_string(n) + " elements holds " +
                                                    std::to_string(t.data.size()) + " bytes");
      return 0;
    }
    bool isFloat = t.dtype[0] == 'f' || t.dtype == "bf16";
    params.push_back({name, isFloat && t.dtype != "f8e4m3fn" && n <= 65536 ? "f32" : t.dtype,
                      t.shape});
  }
  std::map<std::string, rlx::HostTensor> values;
  auto index = rlx::indexSafetensors(path, error);
  if (failed(index)) {
    rlx_fuzz::checkFailed("safetensors-index", "read but not indexed: " + error);
    return 0;
  }
  if (failed(rlx::bindCheckpoint(*index, params, values, error)))
    rlx_fuzz::checkFailed("safetensors-bind", "binding to its own shapes failed: " + error);
  return 0;
}
