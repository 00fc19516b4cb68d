//===- rlx-fuzz-gguf.cpp - libFuzzer target: GGUF checkpoints --------------===//
//
// Input: a .gguf file (magic, version, counts, metadata, tensor infos, data).
// It goes to a per-process temporary file and through readGgufHeader (what
// rlx-gen --gguf reads, then ggufConfigJson), indexGguf (what rlx-run
// --weights FILE.gguf and rlx.load_weights read) and, for a file that
// indexes, each tensor's dequantization (readCheckpointTensor) and a binding
// to parameters of its own names and shapes in f32.
//
// Findings: crashes, sanitizer reports and (unless RLX_FUZZ_STRICT=0) an
// indexed tensor whose f32 size does not match its shape, or a binding to
// the file's own shapes that fails.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Target/CPU/Gguf.h"

#include <string>

using namespace mlir;

static std::string path;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  path = rlx_fuzz::tempPath("gguf", ".gguf");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rlx_fuzz::writeFile(path, data, size);
  std::string error;
  auto header = rlx::readGgufHeader(path, error);
  if (failed(header))
    return 0;
  (void)rlx::ggufConfigJson(*header, error);
  auto index = rlx::indexGguf(path, error);
  if (failed(index))
    return 0;
  std::vector<rlx::ParamSpec> params;
  for (const auto &[name, t] : *index) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    if (t.dtype != "f32" || uint64_t(n) * 4 != t.bytes) {
      rlx_fuzz::checkFailed("gguf-size", "'" + name + "': " + std::to_string(n) +
                                             " elements read as " + std::to_string(t.bytes) +
                                             " bytes of " + t.dtype);
      return 0;
    }
    params.push_back({name, "f32", t.shape});
  }
  std::map<std::string, rlx::HostTensor> values;
  if (failed(rlx::bindCheckpoint(*index, params, values, error)))
    rlx_fuzz::checkFailed("gguf-bind", "binding to its own shapes failed: " + error);
  return 0;
}
