//===- rlx-fuzz-gen-sizes.cpp - libFuzzer target: rlx-gen's model sizes --===//
//
// Input: [options] + little-endian int64 sizes: hidden_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, max_position_embeddings (missing ones are
// a small Llama's). They are written into a LlamaForCausalLM config.json
// (any value, negative and huge included), parsed (parseHFConfig) and, when
// accepted, built (buildModel, with the config's layer count up to 4, else
// 1; options bit 0: kv cache, 1: layer only, 2: static seq 3 and past 5).
//
// Findings: crashes, hangs (the fuzzer's timeout: a size that makes rlx-gen
// build forever), sanitizer reports and (unless RLX_FUZZ_STRICT=0) a module
// that does not verify.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/ModelGen/ModelGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <string>

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rlx_fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t opt = data[0];
  static const char *keys[] = {"hidden_size",        "num_hidden_layers", "num_attention_heads",
                               "num_key_value_heads", "head_dim",          "intermediate_size",
                               "vocab_size",          "max_position_embeddings"};
  int64_t sizes[] = {64, 2, 4, 2, 16, 128, 256, 128};
  for (size_t i = 0; i < 8 && 1 + 8 * (i + 1) <= size; ++i)
    std::memcpy(&sizes[i], data + 1 + 8 * i, 8);
  std::string json = "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
                     "\"rms_norm_eps\": 1e-5, \"rope_theta\": 10000.0";
  for (size_t i = 0; i < 8; ++i)
    json += ", \"" + std::string(keys[i]) + "\": " + std::to_string(sizes[i]);
  json += "}";
  std::string error;
  FailureOr<rlx::ModelConfig> config = rlx::parseHFConfig(json, {}, error);
  if (failed(config))
    return 0;
  rlx::ModelGenOptions options;
  options.kvCache = opt & 1;
  options.layerOnly = opt & 2;
  options.attentionMask = opt & 8;
  if (opt & 4) {
    options.seqLen = 3;
    options.pastLen = 5;
  }
  options.numLayers = config->numLayers <= 4 ? config->numLayers : 1;
  std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
  rlx_fuzz::DropDiagnostics drop(ctx.get());
  OwningOpRef<ModuleOp> module = rlx::buildModel(ctx.get(), *config, options);
  if (module && failed(verify(*module)))
    rlx_fuzz::checkFailed("gen-sizes-invalid-ir", "buildModel returned a module that does not verify: " + json);
  return 0;
}
