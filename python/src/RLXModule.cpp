//===- RLXModule.cpp - The rlx._rlx extension: RLX's C++ API in Python ----===//
//
// A thin nanobind layer: an MLIR context with every RLX and upstream dialect,
// modules (parse, print, verify, bytecode), pass pipelines by text, the
// model generator (HF config.json → HIR), op type inference for the HIR
// builder (rlx.hir), and the CPU JIT with numpy arrays in and out. Every
// MLIR diagnostic raised while a call runs becomes the message of an
// rlx.RlxError.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/Common/IR/DiagnosticCollector.h"
#include "RLX/Dialect/MIR/Transforms/Sharding.h"
#include "RLX/InitAll.h"
#include "RLX/ModelGen/ModelGen.h"
#include "RLX/Target/CPU/CpuRunner.h"
#include "RLX/Target/CPU/HostTensor.h"
#include "RLX/Target/CPU/Safetensors.h"
#include "RLX/Target/NVVM/GPUArtifact.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace nb = nanobind;
using namespace mlir;

namespace {

struct RlxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The project's diagnostic text (DiagnosticCollector), raised as RlxError.
class Diagnostics : public rlx::DiagnosticCollector {
public:
  using DiagnosticCollector::DiagnosticCollector;
  [[noreturn]] void raise(const std::string &what) {
    throw RlxError(text.empty() ? what : what + ":\n" + text);
  }
};

class RlxContext {
public:
  RlxContext() {
    DialectRegistry registry;
    rlx::registerEverything(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    // Errors name the op and the reason; the IR around them is not part of
    // the message (it can run to hundreds of lines).
    ctx->printOpOnDiagnostic(false);
  }
  MLIRContext *get() { return ctx.get(); }

private:
  std::unique_ptr<MLIRContext> ctx;
};

class RlxModule {
public:
  RlxModule(std::shared_ptr<RlxContext> ctx, OwningOpRef<ModuleOp> module)
      : ctx(std::move(ctx)), module(std::move(module)) {}

  std::string text(bool generic, bool debugInfo) {
    std::string s;
    llvm::raw_string_ostream os(s);
    OpPrintingFlags flags;
    if (generic)
      flags.printGenericOpForm();
    if (debugInfo)
      flags.enableDebugInfo();
    module->print(os, flags);
    return s;
  }

  nb::bytes bytecode() {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (failed(writeBytecodeToFile(*module, os)))
      throw RlxError("cannot write bytecode");
    return nb::bytes(s.data(), s.size());
  }

  void verify() {
    Diagnostics diags(ctx->get());
    if (failed(mlir::verify(*module)))
      diags.raise("the module does not verify");
  }

  void runPipeline(const std::string &pipeline) {
    Diagnostics diags(ctx->get());
    PassManager pm(ctx->get(), ModuleOp::getOperationName());
    // Accept both "a,b" and the anchored "builtin.module(a,b)".
    llvm::StringRef text = llvm::StringRef(pipeline).trim();
    if (text.consume_front("builtin.module(") && text.consume_back(")"))
      text = text.trim();
    std::string parseError;
    llvm::raw_string_ostream es(parseError);
    if (failed(parsePassPipeline(text, pm, es)))
      throw RlxError("bad pass pipeline '" + pipeline + "': " + parseError);
    if (failed(pm.run(*module)))
      diags.raise("pass pipeline '" + pipeline + "' failed");
  }

  std::shared_ptr<RlxModule> clone() {
    return std::make_shared<RlxModule>(ctx, OwningOpRef<ModuleOp>(module->clone()));
  }

  std::vector<std::string> functions() {
    std::vector<std::string> names;
    for (auto fn : module->getOps<func::FuncOp>())
      names.push_back(fn.getSymName().str());
    return names;
  }

  std::shared_ptr<RlxContext> ctx;
  OwningOpRef<ModuleOp> module;
};

std::shared_ptr<RlxModule> parseModule(std::shared_ptr<RlxContext> ctx, const std::string &text,
                                      const std::string &name) {
  Diagnostics diags(ctx->get());
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  ParserConfig config(ctx->get());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, config);
  if (!module)
    diags.raise("cannot parse " + name);
  return std::make_shared<RlxModule>(ctx, std::move(module));
}

std::shared_ptr<RlxModule> loadBytecode(std::shared_ptr<RlxContext> ctx, nb::bytes data) {
  Diagnostics diags(ctx->get());
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(data.c_str(), data.size()), "<bytecode>");
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  ParserConfig config(ctx->get());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, config);
  if (!module)
    diags.raise("cannot read the bytecode");
  return std::make_shared<RlxModule>(ctx, std::move(module));
}

/// Parses `func.func @probe(<args>) { <op> func.return }`, verifies it and
/// returns the result types of the op: the HIR builder's type inference.
std::vector<std::string> inferResultTypes(std::shared_ptr<RlxContext> ctx,
                                          const std::vector<std::string> &argTypes,
                                          const std::string &op) {
  std::string text = "func.func @probe(";
  for (size_t i = 0; i < argTypes.size(); ++i)
    text += (i ? ", " : "") + std::string("%a") + std::to_string(i) + ": " + argTypes[i];
  text += ") {\n" + op + "\n  func.return\n}\n";
  auto probe = parseModule(ctx, text, "<rlx.hir>");
  probe->verify();
  auto fn = *probe->module->getOps<func::FuncOp>().begin();
  Operation &first = fn.getBody().front().front();
  std::vector<std::string> types;
  for (Type t : first.getResultTypes()) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    types.push_back(s);
  }
  return types;
}

/// The result types of an op in generic form without results
/// (`"rlx_mir.cumsum"(%a0) <{axis = 1 : i64}> : (tensor<4x8xf32>)`, its
/// operands %a0, %a1, ... of `argTypes`): `explicitTypes` when given, else
/// the op's own inference (InferTypeOpInterface). The op with those results
/// is then verified; a parse, inference or verifier error raises RlxError.
std::vector<std::string> inferGenericResultTypes(std::shared_ptr<RlxContext> ctx,
                                                 const std::vector<std::string> &argTypes,
                                                 const std::string &op,
                                                 std::optional<std::vector<std::string>> explicitTypes) {
  MLIRContext *c = ctx->get();
  auto probeText = [&](const std::string &results, const std::string &types) {
    std::string text = "func.func @probe(";
    for (size_t i = 0; i < argTypes.size(); ++i)
      text += (i ? ", " : "") + std::string("%a") + std::to_string(i) + ": " + argTypes[i];
    return text + ") {\n  " + results + op + " -> (" + types + ")\n  func.return\n}\n";
  };
  std::vector<std::string> types;
  if (explicitTypes) {
    types = *explicitTypes;
  } else {
    Diagnostics diags(c);
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(probeText("", ""), "<rlx.hir>"),
                          llvm::SMLoc());
    ParserConfig config(c, /*verifyAfterParse=*/false);
    OwningOpRef<ModuleOp> probe = parseSourceFile<ModuleOp>(sm, config);
    if (!probe)
      diags.raise("cannot parse the op");
    auto fn = *probe->getOps<func::FuncOp>().begin();
    Operation &first = fn.getBody().front().front();
    auto infer = dyn_cast<InferTypeOpInterface>(&first);
    if (!infer)
      throw RlxError(first.getName().getStringRef().str() +
                     " does not infer its result types: give result_types");
    SmallVector<Type> inferred;
    if (failed(infer.inferReturnTypes(c, first.getLoc(), first.getOperands(),
                                      first.getRawDictionaryAttrs(), first.getPropertiesStorage(),
                                      first.getRegions(), inferred)))
      diags.raise("cannot infer the result types");
    for (Type t : inferred) {
      std::string str;
      llvm::raw_string_ostream os(str);
      os << t;
      types.push_back(str);
    }
  }
  std::string results, typeList;
  for (size_t i = 0; i < types.size(); ++i) {
    results += (i ? ", %r" : "%r") + std::to_string(i);
    typeList += (i ? ", " : "") + types[i];
  }
  auto verified = parseModule(ctx, probeText(results.empty() ? "" : results + " = ", typeList),
                              "<rlx.hir>");
  verified->verify();
  return types;
}

std::shared_ptr<RlxModule> generateModel(std::shared_ptr<RlxContext> ctx, const std::string &json,
                                        const std::vector<std::string> &overrides,
                                        std::optional<int64_t> layers, const std::string &dtype,
                                        std::optional<int64_t> seq, bool kvCache,
                                        std::optional<int64_t> past, bool layerOnly,
                                        int64_t batch, const std::string &funcName,
                                        bool nvfp4Weights, bool stackedExperts,
                                        bool attentionMask) {
  std::string error;
  auto config = rlx::parseHFConfig(json, overrides, error);
  if (failed(config))
    throw RlxError("config.json: " + error);
  rlx::ModelGenOptions options;
  options.numLayers = layers;
  options.dtype = dtype;
  options.seqLen = seq;
  options.kvCache = kvCache;
  options.pastLen = past;
  options.layerOnly = layerOnly;
  options.nvfp4Weights = nvfp4Weights;
  options.stackedExperts = stackedExperts;
  options.attentionMask = attentionMask;
  options.batch = batch;
  options.funcName = funcName;
  Diagnostics diags(ctx->get());
  OwningOpRef<ModuleOp> module = rlx::buildModel(ctx->get(), *config, options);
  if (!module)
    diags.raise("cannot build the model");
  return std::make_shared<RlxModule>(ctx, std::move(module));
}

//===----------------------------------------------------------------------===//
// numpy <-> HostTensor
//===----------------------------------------------------------------------===//

using Array = nb::ndarray<nb::numpy, nb::c_contig>;

std::string dtypeOf(const nb::dlpack::dtype &dt) {
  using nb::dlpack::dtype_code;
  auto code = static_cast<dtype_code>(dt.code);
  if (code == dtype_code::Float && dt.bits == 32) return "f32";
  if (code == dtype_code::Float && dt.bits == 64) return "f64";
  if (code == dtype_code::Float && dt.bits == 16) return "f16";
  if (code == dtype_code::Bfloat && dt.bits == 16) return "bf16";
  if (code == dtype_code::Int && dt.bits == 64) return "i64";
  if (code == dtype_code::Int && dt.bits == 32) return "i32";
  if (code == dtype_code::Int && dt.bits == 8) return "i8";
  if (code == dtype_code::UInt && dt.bits == 8) return "u8"; // bytes (E4M3 scales, packed FP4)
  if (code == dtype_code::Bool) return "i1";
  return "";
}

rlx::HostTensor toHost(const std::string &name, Array a) {
  std::string dt = dtypeOf(a.dtype());
  if (dt.empty())
    throw RlxError("argument '" + name + "': unsupported numpy dtype");
  std::vector<int64_t> shape;
  for (size_t i = 0; i < a.ndim(); ++i)
    shape.push_back(a.shape(i));
  rlx::HostTensor t = rlx::HostTensor::zeros(dt, shape);
  if (!t.data.empty())
    std::memcpy(t.data.data(), a.data(), t.data.size());
  return t;
}

nb::object toNumpy(const rlx::HostTensor &t) {
  // bf16 comes back as float32 (exactly), as rlx-run writes it.
  rlx::HostTensor host = t.dtype == "bf16" ? rlx::convert(t, "f32") : t;
  auto *copy = new std::vector<uint8_t>(std::move(host.data));
  nb::capsule owner(copy, [](void *p) noexcept { delete static_cast<std::vector<uint8_t> *>(p); });
  std::vector<size_t> shape(host.shape.begin(), host.shape.end());
  nb::dlpack::dtype dt;
  const std::string &d = host.dtype;
  if (d == "f32") dt = nb::dtype<float>();
  else if (d == "f64") dt = nb::dtype<double>();
  else if (d == "i64") dt = nb::dtype<int64_t>();
  else if (d == "i32") dt = nb::dtype<int32_t>();
  else if (d == "i8") dt = nb::dtype<int8_t>();
  else if (d == "f8e4m3fn") dt = nb::dtype<uint8_t>(); // the E4M3 bytes
  else if (d == "i1") dt = nb::dtype<bool>();
  else if (d == "f16") dt = {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
  else throw RlxError("unsupported result dtype " + d);
  return nb::cast(Array(copy->data(), shape.size(), shape.data(), owner, nullptr, dt));
}

/// Elements [start, stop) of the seeded normal stream of tensor `name`
/// (rlx::SeededStream, what rlx-run fills arguments with), as float64.
nb::object seededNormal(uint64_t seed, const std::string &name, uint64_t start, uint64_t stop) {
  if (stop < start)
    throw RlxError("seeded_normal: stop < start");
  rlx::HostTensor t = rlx::HostTensor::zeros("f64", {static_cast<int64_t>(stop - start)});
  rlx::SeededStream stream(seed, name);
  auto *p = reinterpret_cast<double *>(t.data.data());
  for (uint64_t i = start; i < stop; ++i)
    p[i - start] = stream.normal(i);
  return toNumpy(t);
}

/// `n` seeded integers in [0, bound) of tensor `name`, as int64.
nb::object seededUniformInt(uint64_t seed, const std::string &name, uint64_t n, uint64_t bound) {
  if (bound == 0)
    throw RlxError("seeded_uniform_int: bound must be positive");
  rlx::HostTensor t = rlx::HostTensor::zeros("i64", {static_cast<int64_t>(n)});
  rlx::SeededStream stream(seed, name);
  auto *p = reinterpret_cast<int64_t *>(t.data.data());
  for (uint64_t i = 0; i < n; ++i)
    p[i] = static_cast<int64_t>(stream.uniformInt(i, bound));
  return toNumpy(t);
}

/// Every tensor of a safetensors checkpoint (rlx::readSafetensors) as numpy
/// arrays by name (bf16 as float32, exactly).
nb::dict readSafetensorsPy(const std::string &path) {
  std::string error;
  auto tensors = rlx::readSafetensors(path, error);
  if (failed(tensors))
    throw RlxError(error);
  nb::dict out;
  // One tensor at a time: the checkpoint is held about once, not twice.
  while (!tensors->empty()) {
    auto it = tensors->begin();
    out[it->first.c_str()] = toNumpy(it->second);
    tensors->erase(it);
  }
  return out;
}

/// tensorParallelSplit for Python: {"kind", "dim" (None: not split), "parts"}.
nb::dict tensorParallelSplitPy(const std::string &name, int64_t ndim) {
  rlx::mir::TensorParallelSplit split = rlx::mir::tensorParallelSplit(name, ndim);
  nb::dict out;
  out["kind"] = rlx::mir::stringifyTensorParallelKind(split.kind).str();
  out["dim"] = split.dim < 0 ? nb::none() : nb::cast(split.dim);
  out["parts"] = split.parts;
  return out;
}

/// The [begin, end) runs of the split dim (of `size`) that rank `rank` of
/// `tp` holds (mir::rankRuns); RlxError when tp does not divide them.
std::vector<std::pair<int64_t, int64_t>> tensorParallelRunsPy(const std::string &name,
                                                              int64_t ndim, int64_t size,
                                                              int64_t rank, int64_t tp) {
  rlx::mir::TensorParallelSplit split = rlx::mir::tensorParallelSplit(name, ndim);
  auto runs = rlx::mir::rankRuns(split, size, rank, tp);
  if (runs.empty())
    throw RlxError("tp = " + std::to_string(tp) + " (rank " + std::to_string(rank) +
                   ") does not divide dim " + std::to_string(split.dim) + " (size " +
                   std::to_string(size) +
                   (split.parts > 1 ? ", " + std::to_string(split.parts) + " packed parts" : "") +
                   ") of '" + name + "'");
  return runs;
}

/// The runs along every dim of `whole` that rank `rank` of `tp` holds when
/// its shape is `local` (mir::rankRegion); RlxError when `local` is no
/// block of `whole`.
std::vector<std::vector<std::pair<int64_t, int64_t>>>
tensorParallelRegionPy(const std::string &name, const std::vector<int64_t> &whole,
                       const std::vector<int64_t> &local, int64_t rank, int64_t tp) {
  auto region = rlx::mir::rankRegion(name, whole, local, rank, tp);
  if (region.empty())
    throw RlxError("the per-rank shape of '" + name + "' is not a block of tp = " +
                   std::to_string(tp) + " (rank " + std::to_string(rank) +
                   ") of its whole shape");
  return region;
}

/// Compile options from Python's keyword arguments, as text (Python turns
/// bools, lists and dims mappings into it), for the entry point that takes
/// `groups`: an unknown name or a bad value raises RlxError naming it.
void setOptions(rlx::CompileOptions &options, const std::map<std::string, std::string> &values,
                std::initializer_list<rlx::CompileOptionGroup> groups) {
  std::string error;
  unsigned mask = rlx::compileOptionGroups(groups);
  for (const auto &[name, value] : values)
    if (failed(options.set(name, value, mask, error)))
      throw RlxError(error);
  if (failed(options.verify(error)))
    throw RlxError(rlx::spellOptionError(error, /*python=*/true));
}

/// rlx-compile from Python: the module (not modified) into a GPU artifact.
void writeGpuArtifact(std::shared_ptr<RlxModule> module, const std::string &dir,
                      const std::map<std::string, std::string> &values) {
  rlx::CompileOptions options;
  setOptions(options, values,
             {rlx::CompileOptionGroup::Common, rlx::CompileOptionGroup::Codegen,
              rlx::CompileOptionGroup::Gpu, rlx::CompileOptionGroup::GpuArtifact});
  OwningOpRef<ModuleOp> copy(module->module->clone());
  Diagnostics diags(copy->getContext());
  if (failed(rlx::writeGPUArtifact(*copy, options, dir)))
    diags.raise("GPU compilation failed");
}

/// The compile options (CompileOptions.def) as Python sees them.
nb::list compileOptionsPy() {
  nb::list out;
  static const char *groupNames[] = {"common", "codegen",      "cpu",         "cpu_pipeline",
                                     "cpu_jit", "gpu", "gpu_pipeline", "gpu_artifact"};
  for (const rlx::CompileOptionInfo &info : rlx::compileOptionInfos()) {
    nb::dict d;
    d["name"] = info.pythonName;
    d["flag"] = info.flag;
    d["type"] = info.type;
    d["default"] = info.defaultValue;
    d["help"] = info.help;
    d["group"] = groupNames[llvm::countr_zero(static_cast<unsigned>(info.group))];
    out.append(d);
  }
  return out;
}

class RlxCpuModel {
public:
  std::unique_ptr<rlx::CpuModel> model;

  static std::shared_ptr<RlxCpuModel>
  compile(std::shared_ptr<RlxModule> module, const std::string &entry,
          const std::map<std::string, std::string> &values,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          const std::string &runtimeDir) {
    rlx::CpuRunnerOptions options;
    setOptions(options, values,
               {rlx::CompileOptionGroup::Common, rlx::CompileOptionGroup::Codegen,
                rlx::CompileOptionGroup::Cpu, rlx::CompileOptionGroup::CpuJit});
    if (options.tp > 0)
      throw RlxError("tp: tensor parallelism runs over MPI processes: mpirun -np N rlx-run "
                     "--tp N (Python: rlx.gpu.compile(tp=N) for a per-rank GPU artifact)");
    options.entry = entry;
    options.runtimeDir = runtimeDir;
    std::string error;
    auto compiled = rlx::CpuModel::compile(OwningOpRef<ModuleOp>(module->module->clone()),
                                           options, inputShapes, error);
    if (failed(compiled))
      throw RlxError(error);
    auto m = std::make_shared<RlxCpuModel>();
    m->model = std::move(*compiled);
    return m;
  }

  static nb::list describe(const std::vector<rlx::ModelTensor> &ts) {
    nb::list out;
    for (const rlx::ModelTensor &t : ts) {
      nb::dict d;
      d["name"] = t.name;
      d["shape"] = t.shape;
      d["dtype"] = t.dtype;
      d["is_param"] = t.isParam;
      out.append(d);
    }
    return out;
  }

  nb::dict run(std::map<std::string, Array> inputs) {
    std::map<std::string, rlx::HostTensor> host;
    for (auto &[name, a] : inputs)
      host.emplace(name, toHost(name, a));
    std::vector<rlx::HostTensor> outputs;
    std::string error;
    {
      nb::gil_scoped_release release;
      if (failed(model->run(host, outputs, error)))
        error = error.empty() ? "run failed" : error;
      else
        error.clear();
    }
    if (!error.empty())
      throw RlxError(error);
    nb::dict out;
    for (size_t i = 0; i < outputs.size(); ++i)
      out[model->results()[i].name.c_str()] = toNumpy(outputs[i]);
    return out;
  }
};

} // namespace

NB_MODULE(_rlx, m) {
  m.doc() = "RLX-MLIR's C++ API (contexts, modules, pipelines, model generator, CPU JIT).";
  nb::exception<RlxError>(m, "RlxError");
  rlx::registerAllPasses();

  nb::class_<RlxContext>(m, "Context", "An MLIR context with every RLX and upstream dialect.")
      .def(nb::init<>())
      .def(
          "registered_ops",
          [](RlxContext &c, const std::string &dialect) {
            std::vector<std::string> names;
            for (RegisteredOperationName op : c.get()->getRegisteredOperations())
              if (op.getDialectNamespace() == dialect)
                names.push_back(op.getStringRef().str());
            llvm::sort(names);
            return names;
          },
          nb::arg("dialect"),
          "The names of the ops registered for `dialect` (e.g. \"rlx_mir\"), sorted.");

  nb::class_<RlxModule>(m, "Module", "A builtin.module owned by a Context.")
      .def("text", &RlxModule::text, nb::arg("generic") = false, nb::arg("debug_info") = false,
           "The module as MLIR text (custom or generic form).")
      .def("bytecode", &RlxModule::bytecode, "The module as MLIR bytecode.")
      .def("verify", &RlxModule::verify, "Raises RlxError with the diagnostics if invalid.")
      .def("run_pipeline", &RlxModule::runPipeline, nb::arg("pipeline"),
           "Runs a textual pass pipeline on the module in place, e.g. "
           "'convert-rlx-hir-to-mir,rlx-mir-fuse' or 'builtin.module(...)'.")
      .def("clone", &RlxModule::clone)
      .def("functions", &RlxModule::functions, "Names of the func.func ops.");

  m.def("parse", &parseModule, nb::arg("context"), nb::arg("text"),
        nb::arg("name") = "<string>", "Parses MLIR text into a Module (RlxError on errors).");
  m.def("load_bytecode", &loadBytecode, nb::arg("context"), nb::arg("data"));
  m.def("read_safetensors", &readSafetensorsPy, nb::arg("path"));
  m.def("seeded_normal", &seededNormal, nb::arg("seed"), nb::arg("name"), nb::arg("start"),
        nb::arg("stop"), "Elements [start, stop) of rlx-run's seeded normal stream of `name`.");
  m.def("seeded_uniform_int", &seededUniformInt, nb::arg("seed"), nb::arg("name"), nb::arg("n"),
        nb::arg("bound"), "rlx-run's seeded integers in [0, bound) of `name`.");
  m.def("tensor_parallel_split", &tensorParallelSplitPy, nb::arg("name"), nb::arg("ndim"));
  m.def("tensor_parallel_region", &tensorParallelRegionPy, nb::arg("name"), nb::arg("whole"),
        nb::arg("local"), nb::arg("rank"), nb::arg("tp"));
  m.def("tensor_parallel_runs", &tensorParallelRunsPy, nb::arg("name"), nb::arg("ndim"),
        nb::arg("size"), nb::arg("rank"), nb::arg("tp"));
  m.def("infer_result_types", &inferResultTypes, nb::arg("context"), nb::arg("arg_types"),
        nb::arg("op"));
  m.def("infer_generic_result_types", &inferGenericResultTypes, nb::arg("context"),
        nb::arg("arg_types"), nb::arg("op"), nb::arg("result_types").none());
  m.def("write_gpu_artifact", &writeGpuArtifact, nb::arg("module"), nb::arg("dir"),
        nb::arg("options"));
  m.def("compile_options", &compileOptionsPy,
        "Every compile option (CompileOptions.def): name, flag, type, default, help, group.");
  m.def("generate_model", &generateModel, nb::arg("context"), nb::arg("config_json"),
        nb::arg("overrides"), nb::arg("layers").none(), nb::arg("dtype"),
        nb::arg("seq").none(), nb::arg("kv_cache"), nb::arg("past").none(),
        nb::arg("layer_only"), nb::arg("batch"), nb::arg("func_name"),
        nb::arg("nvfp4_weights") = false, nb::arg("stacked_experts") = false,
        nb::arg("attention_mask") = false);

  nb::class_<RlxCpuModel>(m, "CpuModel", "A module JIT-compiled for this CPU.")
      .def_static("compile", &RlxCpuModel::compile, nb::arg("module"), nb::arg("entry"),
                  nb::arg("options"), nb::arg("input_shapes"), nb::arg("runtime_dir"))
      .def("run", &RlxCpuModel::run, nb::arg("inputs"))
      .def("invalidate_packed_params",
           [](RlxCpuModel &m) { m.model->invalidatePackedParams(); })
      .def("hold_weights",
           [](RlxCpuModel &m, std::map<std::string, Array> params) {
             std::map<std::string, rlx::HostTensor> host;
             for (auto &[name, a] : params)
               host.emplace(name, toHost(name, a));
             std::string error;
             FailureOr<int64_t> bytes = m.model->holdWeights(std::move(host), error);
             if (failed(bytes))
               throw RlxError(error);
             return *bytes;
           },
           nb::arg("params"))
      .def("load_weights",
           [](RlxCpuModel &m, const std::string &path) {
             std::string error;
             FailureOr<int64_t> bytes;
             {
               nb::gil_scoped_release released;
               bytes = m.model->loadWeights(path, error);
             }
             if (failed(bytes))
               throw RlxError(error);
             return *bytes;
           },
           nb::arg("path"))
      .def_prop_ro("packed_sources", [](RlxCpuModel &m) { return m.model->packedSources(); })
      .def_prop_ro("arguments", [](RlxCpuModel &m) { return RlxCpuModel::describe(m.model->arguments()); })
      .def_prop_ro("other_parameters", [](RlxCpuModel &m) { return m.model->otherParameters(); })
      .def_prop_ro("results", [](RlxCpuModel &m) { return RlxCpuModel::describe(m.model->results()); })
      .def_prop_ro("stats", [](RlxCpuModel &m) {
        const rlx::CpuModel &c = *m.model;
        nb::dict d;
        d["compile_ms"] = c.fuseMs + c.lowerMs + c.jitMs;
        d["pack_ms"] = c.packMs;
        d["mir_ops_before_fusion"] = c.opsBeforeFusion;
        d["mir_ops_after_fusion"] = c.opsAfterFusion;
        d["kernels"] = c.kernels;
        d["arena_bytes"] = c.arenaBytes;
        d["arena_lower_bound_bytes"] = c.arenaLowerBound;
        d["blas"] = c.blasInfo;
        d["blas_threads"] = c.blasThreads;
        d["cpu"] = c.cpu.describe();
        return d;
      });
}
