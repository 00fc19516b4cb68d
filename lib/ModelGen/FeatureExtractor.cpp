//===- FeatureExtractor.cpp - Whisper's log-mel front end from its config -===//
//
// preprocessor_config.json (WhisperFeatureExtractor) → one HIR function
// around rlx_hir.log_mel_spectrogram.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"
#include "HFConfigReader.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::rlx;

bool mlir::rlx::isFeatureExtractorConfig(StringRef json) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(json);
  if (!root) {
    llvm::consumeError(root.takeError());
    return false;
  }
  const llvm::json::Object *obj = root->getAsObject();
  return obj && obj->get("feature_extractor_type");
}

FailureOr<FeatureExtractorConfig> mlir::rlx::parseFeatureExtractorConfig(StringRef json,
                                                                         std::string &error) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(json);
  if (!root) {
    error = "invalid JSON: " + llvm::toString(root.takeError());
    return failure();
  }
  const llvm::json::Object *obj = root->getAsObject();
  if (!obj) {
    error = "the config must be a JSON object";
    return failure();
  }
  hfconfig::Reader r{*obj, error};
  std::string type = r.string("feature_extractor_type", "");
  if (error.empty() && type != "WhisperFeatureExtractor")
    r.fail("feature_extractor_type '" + type + "' is not supported (supported: "
           "WhisperFeatureExtractor)");
  FeatureExtractorConfig c;
  c.featureSize = r.integer("feature_size", c.featureSize);
  c.samplingRate = r.integer("sampling_rate", c.samplingRate);
  c.hopLength = r.integer("hop_length", c.hopLength);
  c.chunkLength = r.integer("chunk_length", c.chunkLength);
  c.nFft = r.integer("n_fft", c.nFft);
  if (c.nFft < 2)
    r.fail("'n_fft' must be at least 2, got " + Twine(c.nFft));
  for (auto [key, value] : {std::pair<StringRef, int64_t>{"feature_size", c.featureSize},
                            {"sampling_rate", c.samplingRate},
                            {"hop_length", c.hopLength},
                            {"chunk_length", c.chunkLength},
                            {"n_fft", c.nFft}})
    if (value < 1 || value > (int64_t{1} << 30))
      r.fail("'" + key + "' must be in [1, 2^30], got " + Twine(value));
  if (r.number("padding_value", 0.0) != 0.0)
    r.fail("'padding_value' must be 0.0 (the log-mel op pads with zeros)");
  if (r.number("dither", 0.0) != 0.0)
    r.fail("'dither' must be 0.0: dithering adds random noise, which the compiled front end "
           "does not (add it to the samples before)");
  if (!error.empty())
    return failure();
  return c;
}

namespace {

class FeatureExtractorBuilder : FunctionBuilder {
public:
  FeatureExtractorBuilder(MLIRContext *ctx, const FeatureExtractorConfig &c,
                          const ModelGenOptions &o)
      : FunctionBuilder(ctx, o, "WhisperFeatureExtractor"), c(c) {}

  OwningOpRef<ModuleOp> build() {
    OwningOpRef<ModuleOp> module = begin();
    int64_t seq = o.seqLen.value_or(c.nSamples());
    Value audio = input("audio", {o.batch, seq}, {"batch", "seq"});
    Builder &bd = b;
    output(mb.create<hir::LogMelSpectrogramOp>(
               audio, bd.getI64IntegerAttr(c.nFft), bd.getI64IntegerAttr(c.hopLength),
               bd.getI64IntegerAttr(c.featureSize), bd.getI64IntegerAttr(c.samplingRate),
               bd.getI64IntegerAttr(c.nSamples()), FloatAttr(), FloatAttr()),
           "input_features");
    return finish(std::move(module));
  }

private:
  const FeatureExtractorConfig &c;
};

} // namespace

OwningOpRef<ModuleOp> mlir::rlx::buildFeatureExtractor(MLIRContext *ctx,
                                                       const FeatureExtractorConfig &config,
                                                       const ModelGenOptions &options) {
  ctx->loadDialect<hir::HIRDialect, mir::MIRDialect, func::FuncDialect>();
  Location loc = NameLoc::get(StringAttr::get(ctx, "WhisperFeatureExtractor"));
  if (options.dtype != "f32" && options.dtype != "bf16" && options.dtype != "f16") {
    emitError(loc) << "dtype must be f32, f16 or bf16, got " << options.dtype;
    return nullptr;
  }
  if (options.batch < 1 || (options.seqLen && *options.seqLen < 1)) {
    emitError(loc) << "the batch and --seq must be at least 1";
    return nullptr;
  }
  return FeatureExtractorBuilder(ctx, config, options).build();
}
