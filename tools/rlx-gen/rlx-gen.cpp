//===- rlx-gen.cpp - Generate a HIR model from a HF config.json -----------===//
//
//   rlx-gen preprocessor_config.json [--seq N] [--batch N] [--dtype ...] [-o out.mlir]
//   rlx-gen (config.json | --gguf FILE.gguf) [--layers N] [--dtype f32|bf16|f16] [--seq N]
//           [--kv-cache [--past N]] [--attention-mask] [--layer-only] [--nvfp4-weights] [--stacked-experts]
//           [--lora ADAPTER_DIR [--lora-merge] | --lora NAME=DIR...] [--set key=value]...
//           [-o out.mlir]
//
//===----------------------------------------------------------------------===//

#include "RLX/InitAll.h"
#include "RLX/ModelGen/ModelGen.h"
#include "RLX/Target/CPU/Gguf.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include <set>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory genCat("rlx-gen options");
static cl::opt<std::string> configPath(cl::Positional, cl::desc("<config.json>"), cl::cat(genCat));
static cl::opt<std::string> ggufPath(
    "gguf",
    cl::desc("take the model's config from a GGUF file's metadata (llama, qwen2, qwen3) "
             "instead of a config.json; rlx-run --weights FILE.gguf binds its tensors"),
    cl::cat(genCat));
static cl::opt<std::string> outputPath("o", cl::desc("output file"), cl::init("-"), cl::cat(genCat));
static cl::opt<int64_t> layers("layers", cl::desc("number of decoder layers (default: the config's)"),
                               cl::init(-1), cl::cat(genCat));
static cl::opt<std::string> dtype("dtype", cl::desc("f32, bf16 or f16"), cl::init("f32"), cl::cat(genCat));
static cl::opt<int64_t> seq("seq", cl::desc("static sequence length (default: dynamic `seq`)"),
                            cl::init(-1), cl::cat(genCat));
static cl::opt<bool> kvCache("kv-cache", cl::desc("past K/V inputs and present K/V outputs"), cl::cat(genCat));
static cl::opt<int64_t> past("past", cl::desc("static past length (default: dynamic `past_seq`)"),
                             cl::init(-1), cl::cat(genCat));
static cl::opt<bool> attentionMask(
    "attention-mask",
    cl::desc("an attention_mask input [batch, past_seq + seq] (1: attend, 0: padding), as "
             "transformers' padding mask"),
    cl::cat(genCat));
static cl::opt<bool> layerOnly("layer-only", cl::desc("one decoder layer on hidden states"), cl::cat(genCat));
static cl::opt<bool> nvfp4Weights(
    "nvfp4-weights",
    cl::desc("store every decoder-layer linear weight as NVFP4 (dequant_linear; embeddings, norms "
             "and the LM head stay in --dtype)"),
    cl::cat(genCat));
static cl::opt<bool> stackedExperts(
    "stacked-experts",
    cl::desc("MoE expert weights under transformers 5's stacked names (experts.gate_up_proj "
             "[E, 2I, H], experts.down_proj [E, H, I]) instead of the checkpoint's per-expert "
             "names"),
    cl::cat(genCat));
static cl::opt<int64_t> batch("batch", cl::desc("batch size"), cl::init(1), cl::cat(genCat));
static cl::list<std::string> overrides("set", cl::desc("override a config.json key (key=value)"), cl::cat(genCat));
static cl::list<std::string> loraDirs(
    "lora",
    cl::desc("apply the PEFT LoRA adapter in this directory (its adapter_config.json) to the "
             "linear layers it targets; its parameters keep PEFT's names "
             "(base_model.model.<module>.lora_A.weight): bind them with a second --weights "
             "DIR/adapter_model.safetensors. Repeated as NAME=DIR, several adapters, one per "
             "sequence chosen by the input adapter_ids (their parameters named "
             "...lora_A.NAME.weight: rlx-run --weights NAME=DIR/adapter_model.safetensors)"),
    cl::cat(genCat));
static cl::opt<bool> loraMerge(
    "lora-merge",
    cl::desc("merge the --lora adapter into the weights (W + s·B·A, PEFT's merge_and_unload) "
             "once at load instead of applying it on every call"),
    cl::cat(genCat));
static cl::opt<std::string> funcName("func", cl::desc("function name"), cl::init("forward"), cl::cat(genCat));

/// Builds the module in a context with every RLX dialect and writes it to -o.
static int buildAndWrite(
    llvm::function_ref<OwningOpRef<ModuleOp>(MLIRContext *)> build) {
  DialectRegistry registry;
  rlx::registerEverything(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = build(&ctx);
  if (!module)
    return 1;
  std::string error;
  auto out = openOutputFile(outputPath, &error);
  if (!out) {
    llvm::errs() << "rlx-gen: " << error << "\n";
    return 1;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}

/// What every generated function takes from the command line.
static rlx::ModelGenOptions commonOptions() {
  rlx::ModelGenOptions options;
  if (seq > 0)
    options.seqLen = seq;
  options.dtype = dtype;
  options.batch = batch;
  options.funcName = funcName;
  return options;
}

/// A preprocessor_config.json: the feature extractor's function (only
/// --dtype, --seq, --batch and --func apply).
static int generateFeatureExtractor(StringRef configText) {
  std::string error;
  // The model options would be ignored: refused instead.
  for (const cl::Option *opt :
       std::initializer_list<const cl::Option *>{&layers, &past, &kvCache, &attentionMask,
                                                 &layerOnly, &nvfp4Weights, &stackedExperts,
                                                 std::addressof(overrides),
                                                 std::addressof(loraDirs),
                                                 &loraMerge})
    if (opt->getNumOccurrences()) {
      llvm::errs() << "rlx-gen: error: --" << opt->ArgStr
                   << " does not apply to a feature extractor's config (only --seq, --batch, "
                      "--dtype, --func and -o do)\n";
      return 1;
    }
  auto config = rlx::parseFeatureExtractorConfig(configText, error);
  if (failed(config)) {
    llvm::errs() << configPath << ": error: " << error << "\n";
    return 1;
  }
  rlx::ModelGenOptions options = commonOptions();
  return buildAndWrite(
      [&](MLIRContext *ctx) { return rlx::buildFeatureExtractor(ctx, *config, options); });
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(genCat);
  cl::ParseCommandLineOptions(argc, argv, "RLX model generator: HF config.json -> rlx_hir\n");
  std::string error;
  if (configPath.empty() == ggufPath.empty()) {
    llvm::errs() << "rlx-gen: error: give a config.json or --gguf FILE (one of them)\n";
    return 1;
  }
  std::string configText;
  if (!ggufPath.empty()) {
    auto gguf = rlx::readGgufHeader(ggufPath, error);
    auto text = succeeded(gguf) ? rlx::ggufConfigJson(*gguf, error) : FailureOr<std::string>();
    if (failed(text)) {
      llvm::errs() << "rlx-gen: error: " << error << "\n";
      return 1;
    }
    configText = std::move(*text);
  } else {
    auto file = openInputFile(configPath, &error);
    if (!file) {
      llvm::errs() << "rlx-gen: " << error << "\n";
      return 1;
    }
    configText = file->getBuffer().str();
  }
  if (ggufPath.empty() && rlx::isFeatureExtractorConfig(configText))
    return generateFeatureExtractor(configText);
  auto config = rlx::parseHFConfig(configText, overrides, error);
  if (failed(config)) {
    // The config file is the location: JSON keys carry no line numbers.
    llvm::errs() << (ggufPath.empty() ? configPath : ggufPath) << ": error: " << error << "\n";
    return 1;
  }
  // A --layers that is given is used or refused, never ignored (it was when
  // negative).
  if (layers.getNumOccurrences() && (layers < 1 || layers > 4096)) {
    llvm::errs() << "rlx-gen: error: --layers must be in [1, 4096], got " << layers << "\n";
    return 1;
  }
  rlx::ModelGenOptions options = commonOptions();
  if (layers >= 0)
    options.numLayers = layers;
  if (past >= 0)
    options.pastLen = past;
  options.nvfp4Weights = nvfp4Weights;
  options.stackedExperts = stackedExperts;
  options.kvCache = kvCache;
  options.attentionMask = attentionMask;
  options.layerOnly = layerOnly;
  if (loraMerge && loraDirs.size() != 1) {
    llvm::errs() << "rlx-gen: error: --lora-merge needs one --lora DIR (several adapters are "
                    "chosen per sequence, so they cannot all be merged)\n";
    return 1;
  }
  std::set<std::string> loraNames;
  for (const std::string &entry : loraDirs) {
    // NAME=DIR names an adapter (needed, and only meaningful, for several).
    std::string name, dir = entry;
    if (size_t eq = entry.find('='); eq != std::string::npos && loraDirs.size() > 1) {
      name = entry.substr(0, eq);
      dir = entry.substr(eq + 1);
    }
    if (loraDirs.size() > 1 &&
        (name.empty() || name.find_first_of("./ ") != std::string::npos)) {
      llvm::errs() << "rlx-gen: error: --lora " << entry
                   << ": several adapters are given as NAME=DIR (NAME without '.', '/' or "
                      "spaces)\n";
      return 1;
    }
    if (!loraNames.insert(name).second) {
      llvm::errs() << "rlx-gen: error: --lora: adapter name '" << name << "' given twice\n";
      return 1;
    }
    llvm::SmallString<256> path(dir);
    if (llvm::sys::fs::is_directory(path))
      llvm::sys::path::append(path, "adapter_config.json");
    auto text = openInputFile(path, &error);
    if (!text) {
      llvm::errs() << "rlx-gen: --lora: " << error << "\n";
      return 1;
    }
    auto lora = rlx::parseLoraConfig(text->getBuffer(), error);
    if (failed(lora)) {
      llvm::errs() << path << ": error: " << error << "\n";
      return 1;
    }
    options.loras.push_back({name, std::move(*lora)});
  }
  options.loraMerge = loraMerge;
  return buildAndWrite([&](MLIRContext *ctx) { return rlx::buildModel(ctx, *config, options); });
}
