//===- rlx-fuzz-hfconfig.cpp - libFuzzer target: config.json -> HIR model -===//
//
// Input: [options] config.json (or preprocessor_config.json) text. The JSON goes through
// mlir::rlx::parseHFConfig and, when it parses, mlir::rlx::buildModel with
// 1 or 2 layers (what rlx-gen does), and the module is verified. The options
// byte picks the ModelGenOptions (bit 0: kv cache, 1: layer only, 2: NVFP4
// weights, 3-4: dtype f32/f16/bf16/f32, 5: static seq 3 and past 5, 6: two
// layers, 7: batch 2).
//
// Findings: crashes, sanitizer reports, LLVM fatal errors, assertions in
// RLX's code (e.g. building an invalid tensor type) and (unless
// RLX_FUZZ_STRICT=0) a module from buildModel that does not verify.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/ModelGen/ModelGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

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
  std::string json(reinterpret_cast<const char *>(data + 1), size - 1);
  std::string error;
  if (rlx::isFeatureExtractorConfig(json)) {
    // preprocessor_config.json: the log-mel front end (its own options:
    // bit 5 a short static seq, bit 7 batch 2).
    FailureOr<rlx::FeatureExtractorConfig> fe = rlx::parseFeatureExtractorConfig(json, error);
    if (failed(fe))
      return 0;
    rlx::ModelGenOptions options;
    if (opt & 32)
      options.seqLen = 1000;
    options.batch = (opt & 128) ? 2 : 1;
    std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
    rlx_fuzz::DropDiagnostics drop(ctx.get());
    OwningOpRef<ModuleOp> module = rlx::buildFeatureExtractor(ctx.get(), *fe, options);
    if (module && failed(verify(*module)))
      rlx_fuzz::checkFailed("hfconfig-invalid-ir",
                            "buildFeatureExtractor returned a module that does not verify");
    return 0;
  }
  FailureOr<rlx::ModelConfig> config = rlx::parseHFConfig(json, {}, error);
  if (failed(config)) {
    if (rlx_fuzz::verbose())
      llvm::errs() << "parseHFConfig: " << error << "\n";
    return 0;
  }
  rlx::ModelGenOptions options;
  options.kvCache = opt & 1;
  options.layerOnly = opt & 2;
  options.nvfp4Weights = opt & 4;
  static const char *dtypes[] = {"f32", "f16", "bf16", "f32"};
  options.dtype = dtypes[(opt >> 3) & 3];
  if (opt & 32) {
    options.seqLen = 3;
    options.pastLen = 5;
  }
  options.numLayers = (opt & 64) ? 2 : 1;
  options.batch = (opt & 128) ? 2 : 1;

  std::unique_ptr<MLIRContext> ctx = rlx_fuzz::makeContext();
  rlx_fuzz::DropDiagnostics drop(ctx.get());
  OwningOpRef<ModuleOp> module = rlx::buildModel(ctx.get(), *config, options);
  if (module && failed(verify(*module)))
    rlx_fuzz::checkFailed("hfconfig-invalid-ir", "buildModel returned a module that does not verify");
  return 0;
}
