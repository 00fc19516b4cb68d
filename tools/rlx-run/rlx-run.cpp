//===- rlx-run.cpp - Compile an RLX module for the CPU and run it ---------===//
//
//   rlx-run model.mlir [--input name=file.npy]... [--weights CHECKPOINT]... [--dims name=size]...
//                      [--seed N] [--output-dir DIR] [--repeat N] [--warmup N] [--trace FILE.json]
//                      [--fusion-policy direct|fusable] [--no-fuse] [--no-blas]
//                      [--blas-threads N] [--blas-min-flops N] [--dump-ir DIR] [--entry NAME]
//   mpirun -np N rlx-run model.mlir --tp N ...   (tensor parallelism, Open MPI)
//
// Arguments without --input get seeded values (RLX's generator, mirrored by
// python/rlx/random.py): parameters named *norm*/ln_* weight 1 + 0.1·z,
// other 1-D parameters 0.1·z, matrices z/sqrt(last dim); float inputs z;
// integer inputs named *position* count up from past_seq (or 0), other
// integer inputs are uniform in [0, 1000).
//
// --trace writes the timed runs' kernel timeline as Chrome trace-event JSON
// (Perfetto, chrome://tracing): one event per kernel run with its name and
// the source positions (file:line:col) of the ops fused into it; on the CPU
// path each LIR kernel, on --device=emu|cuda each kernel launch (the GPU
// runtime's rlx_gpu_set_trace).
//
// With --tp N (under `mpirun -np N`), every rank compiles the model's
// rank-local program (rlx-mir-shard + upstream sharding-propagation and
// shard-partition), makes, reads or generates each weight and input whole
// and keeps its block (tensorParallelSplit: a pure function of the name,
// rank and tp), and runs; the collectives are Open MPI calls. Rank 0 prints
// and writes the outputs; KV-cache outputs, split by KV head, are gathered
// to it first.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/Transforms/Sharding.h"
#include "RLX/InitAll.h"
#include "RLX/Target/CPU/CpuRunner.h"
#include "RLX/Target/CPU/Safetensors.h"
#include "RLX/Runtime/Trace.h"
#include "GpuRun.h"
#include "HostArguments.h"
#include "TensorParallelRun.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <thread>

using namespace mlir;
using namespace mlir::rlx;
namespace cl = llvm::cl;

static cl::OptionCategory runCat("rlx-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<module.mlir>"), cl::Required, cl::cat(runCat));
static cl::list<std::string> inputs("input", cl::desc("name=file.npy for an argument"), cl::cat(runCat));
static cl::list<std::string> weights(
    "weights",
    cl::desc("bind every parameter from a safetensors checkpoint (a file, or a directory with "
             "model.safetensors.index.json or .safetensors files) or a GGUF file (.gguf: "
             "dequantized to f32, transformers' names), by name; repeat it for "
             "several (a base model and its LoRA adapter), which must not share a name; "
             "NAME=FILE binds one of several adapters (rlx-gen --lora NAME=DIR)"),
    cl::cat(runCat));
static cl::opt<uint64_t> seed("seed", cl::desc("seed of generated values"), cl::init(0), cl::cat(runCat));
static cl::opt<std::string> outputDir("output-dir", cl::desc("write outputs as .npy here"), cl::cat(runCat));
static cl::opt<std::string> tracePath(
    "trace", cl::desc("write the timed runs' kernel timeline here (Chrome trace-event JSON)"),
    cl::cat(runCat));
static cl::opt<unsigned> repeat("repeat", cl::desc("timed runs"), cl::init(1), cl::cat(runCat));
static cl::opt<unsigned> warmup("warmup", cl::desc("untimed runs first"), cl::init(0), cl::cat(runCat));
static cl::opt<std::string> dumpDir("dump-ir", cl::desc("write the IR after each stage here"), cl::cat(runCat));
static cl::opt<std::string> device("device",
                                   cl::desc("cpu (JIT, default), cuda (the CUDA driver), emu (the "
                                            "GPU emulator: the GPU kernels on this CPU) or auto"),
                                   cl::init("cpu"), cl::cat(runCat));
static cl::opt<std::string> emitArtifact("emit-artifact",
                                         cl::desc("GPU devices: keep the compiled GPU artifact "
                                                  "(cubins, PTX, emulator library, manifest) here"),
                                         cl::cat(runCat));
static cl::opt<bool> gpuReport("gpu-report",
                               cl::desc("GPU devices: print each kernel's ptxas resources"),
                               cl::cat(runCat));
static cl::opt<std::string> entry("entry", cl::desc("function to run"), cl::cat(runCat));
static cl::list<std::string> dialectPlugins(
    "load-dialect-plugin",
    cl::desc("a dialect plugin (.so, as rlx-opt's): its dialects' ops compile and run "
             "through the RLX interfaces they implement"),
    cl::cat(runCat));
static cl::opt<bool> verbose("v", cl::desc("also print the host CPU (model, LLVM's name for it)"),
                             cl::cat(runCat));
static cl::alias verboseLong("verbose", cl::desc("alias for -v"), cl::aliasopt(verbose),
                             cl::cat(runCat));
static cl::opt<std::string> runtimeDir("runtime-dir", cl::desc("directory of librlx_cpu_runtime.so"), cl::cat(runCat));
// Every compile option (CompileOptions.def) of the CPU runner and the GPU
// artifact writer; --device decides which path takes them.
static CompileOptionsFlags compileFlags(runCat,
                                        {CompileOptionGroup::Common, CompileOptionGroup::Codegen,
                                         CompileOptionGroup::Cpu,
                                         CompileOptionGroup::CpuJit, CompileOptionGroup::Gpu},
                                        /*except=*/{"rank"}); // a process's MPI rank
static cl::opt<bool> serve("serve",
                           cl::desc("after compiling, run once per 'run' line on stdin and print "
                                    "'ms <time>' (for interleaved benchmarks); 'quit' ends"), cl::cat(runCat));

static bool isNormWeight(StringRef name) {
  return name.ends_with("weight") && (name.contains("norm") || name.contains("ln_"));
}

/// Seeded values for an argument the user did not give (see the file comment).
static HostTensor generate(const ModelTensor &arg, int64_t positionOffset) {
  HostTensor t = HostTensor::zeros(arg.dtype, arg.shape);
  int64_t n = t.numElements();
  bool isFloat = arg.dtype[0] == 'f' || arg.dtype == "bf16";
  if (!isFloat) {
    bool positions = StringRef(arg.name).contains("position");
    // Ids index a table: drawn below its row count (see random.py).
    uint64_t bound = arg.indexBound > 0 ? std::min<int64_t>(arg.indexBound, 1000) : 1000;
    // MXFP4's E8M0 scale bytes (`*_scales`): near 2^-3, not NaN (0xFF) or
    // 2^127.
    bool e8m0 = arg.isParam && StringRef(arg.name).ends_with("_scales") && arg.dtype == "i8";
    int64_t last = arg.shape.empty() ? 1 : arg.shape.back();
    SeededStream stream(seed, arg.name);
    for (int64_t i = 0; i < n; ++i)
      t.set(i, positions ? static_cast<double>(positionOffset + i % last)
               : e8m0    ? static_cast<double>(120 + stream.uniformInt(i, 6))
                         : static_cast<double>(stream.uniformInt(i, bound)));
    return t;
  }
  double scale = 1.0, shift = 0.0;
  if (arg.isParam) {
    if (arg.shape.size() == 1) {
      scale = 0.1;
      shift = isNormWeight(arg.name) ? 1.0 : 0.0;
    } else if (!arg.shape.empty()) {
      scale = 1.0 / std::sqrt(static_cast<double>(arg.shape.back()));
    }
  }
  fillNormal(t, SeededStream(seed, arg.name), scale, shift);
  return t;
}

/// The CPU's model name as /proc/cpuinfo gives it ("?" elsewhere).
static std::string hostCpuModel() {
  auto file = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!file)
    return "?";
  llvm::SmallVector<StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (StringRef line : lines)
    if (line.starts_with("model name"))
      return line.split(':').second.trim().str();
  return "?";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(runCat);
  cl::ParseCommandLineOptions(argc, argv, "RLX CPU runner: compile a module and run it\n");
  DialectRegistry registry;
  registerEverything(registry);
  for (const std::string &path : dialectPlugins) {
    auto plugin = DialectPlugin::load(path);
    if (!plugin) {
      llvm::errs() << "rlx-run: " << llvm::toString(plugin.takeError()) << "\n";
      return 1;
    }
    plugin->registerDialectRegistryCallbacks(registry);
  }
  MLIRContext ctx(registry);
  // Errors name the op and the reason, without the IR around it (--dump-ir
  // or rlx-opt show the IR).
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  std::string error;
  OwningOpRef<ModuleOp> module = mlir::rlx::parseModuleFile(inputFile, ctx, sourceMgr, "rlx-run");
  if (!module)
    return 1;

  std::map<std::string, HostTensor> values;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string &in : inputs) {
    auto [name, path] = StringRef(in).split('=');
    if (name.empty() || path.empty()) {
      llvm::errs() << "rlx-run: bad --input '" << in << "', expected name=file.npy\n";
      return 1;
    }
    auto t = readNpy(path, error);
    if (failed(t)) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return 1;
    }
    shapes[name.str()] = t->shape;
    values[name.str()] = std::move(*t);
  }
  CpuRunnerOptions options;
  static_cast<CompileOptions &>(options) = compileFlags.values();
  options.entry = entry;
  // One run: the values packing reads are the ones every call is given. A
  // server takes new values per request, a checkpoint names its parameters.
  if (options.weightArgs.empty() && !serve && weights.empty())
    options.weightArgs = {"auto"};
  options.runtimeDir = runtimeDir;
  options.trace = !tracePath.empty();
  if (failed(options.verify(error))) {
    llvm::errs() << "rlx-run: " << spellOptionError(error, /*python=*/false) << "\n";
    return 1;
  }
  std::map<std::string, int64_t> dims = options.dimBindings(error).value(); // verified
  if (!dumpDir.empty()) {
    llvm::sys::fs::create_directories(dumpDir);
    options.onStage = [](StringRef stage, ModuleOp m) {
      std::error_code ec;
      llvm::raw_fd_ostream os((dumpDir + "/" + stage + ".mlir").str(), ec);
      if (!ec)
        m.print(os);
    };
  }
  std::optional<MpiWorld> world;
  int64_t tp = options.tp;
  if (tp != 0) {
    if (serve) {
      llvm::errs() << "rlx-run: --tp runs without --serve\n";
      return 1;
    }
    auto w = MpiWorld::init(tp, error);
    if (failed(w)) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return 1;
    }
    world = *w;
    options.rank = w->rank;
  }
  // Errors end the whole MPI job (the other ranks would wait in a collective).
  auto fail = [&]() {
    if (world && world->size > 1)
      std::_Exit(1);
    return 1;
  };
  bool printer = !world || world->rank == 0;

  if (device != "cpu" && device != "cuda" && device != "emu" && device != "auto") {
    llvm::errs() << "rlx-run: --device must be cpu, cuda, emu or auto, got '" << device << "'\n";
    return 1;
  }
  // Flags of one path given for the other: an error naming the device (the
  // rest work the same on every device).
  {
    bool gpuDevice = device != "cpu";
    std::vector<std::string> wrong = compileFlags.given(
        gpuDevice ? compileOptionGroups({CompileOptionGroup::Cpu, CompileOptionGroup::CpuJit})
                  : compileOptionGroups({CompileOptionGroup::Gpu}));
    const cl::Option *cpuOnly[] = {&runtimeDir, &serve, &dumpDir};
    const cl::Option *gpuOnly[] = {&emitArtifact, &gpuReport};
    for (const cl::Option *o : gpuDevice ? ArrayRef(cpuOnly) : ArrayRef(gpuOnly))
      if (o->getNumOccurrences())
        wrong.push_back(o->ArgStr.str());
    if (!wrong.empty()) {
      llvm::errs() << "rlx-run: --" << wrong.front() << " is for "
                   << (gpuDevice ? "--device=cpu (the CPU path's JIT code)"
                                 : "--device=emu|cuda|auto (the GPU path)")
                   << ", not --device=" << device << "\n";
      return 1;
    }
  }

  if (device != "cpu") {
    GpuRunOptions gpu;
    gpu.device = device;
    gpu.artifactDir = emitArtifact;
    gpu.artifact = options;
    // Dims bound by the given inputs' shapes are left to the front end's
    // specialization: name them with --dims on the GPU path.
    gpu.entry = entry;
    gpu.warmup = warmup;
    gpu.repeat = repeat;
    gpu.outputDir = outputDir;
    gpu.tracePath = tracePath;
    gpu.report = gpuReport;
    if (world) {
      gpu.world = &*world;
    }
    gpu.weights.assign(weights.begin(), weights.end());
    int64_t positionOffset = dims.count("past_seq") ? dims["past_seq"] : 0;
    int rc = runOnGpu(*module, gpu, std::move(values),
                      [&](const ModelTensor &a) { return generate(a, positionOffset); });
    if (world) {
      if (rc)
        return fail();
      world->finalize();
    }
    return rc;
  }

  // Tensor parallelism: the collectives each step runs, counted in the
  // bufferized program (static shapes; all-gathers are all-reduces there).
  std::vector<int64_t> allReduceBytes;
  if (world) {
    auto dump = options.onStage;
    options.onStage = [&allReduceBytes, dump](StringRef stage, ModuleOp m) {
      if (stage == "buffers")
        m.walk([&](mpi::AllReduceOp op) {
          auto t = cast<MemRefType>(op.getRecvbuf().getType());
          allReduceBytes.push_back(t.getNumElements() *
                                   static_cast<int64_t>(t.getElementTypeBitWidth() / 8));
        });
      if (dump)
        dump(stage, m);
    };
  }
  // The unsharded shapes of the named tensors (tensor parallelism: a rank
  // holds a block of each, or all of one its program takes whole).
  std::map<std::string, std::vector<int64_t>> whole = world ? wholeShapes(*module)
                                                            : std::map<std::string, std::vector<int64_t>>{};
  std::set<std::string> moduleParams = moduleParamNames(*module);
  auto model = CpuModel::compile(std::move(module), options, shapes, error);
  if (failed(model)) {
    llvm::errs() << error;
    if (!error.empty() && error.back() != '\n')
      llvm::errs() << "\n";
    return fail();
  }
  CpuModel &m = **model;
  std::optional<int64_t> peakAfterCompile = peakRssBytes();
  int64_t positionOffset = dims.count("past_seq") ? dims["past_seq"] : 0;
  ArgumentSources sources;
  sources.weights.assign(weights.begin(), weights.end());
  sources.moduleParams = std::move(moduleParams);
  if (world) {
    sources.world = &*world;
    sources.tp = tp;
    sources.whole = whole;
  }
  sources.generate = [&](const ModelTensor &a) { return generate(a, positionOffset); };
  // Merged projections are read from the checkpoint straight into place.
  std::map<std::string, HostTensor> prepacked;
  sources.concats = m.packedConcats();
  sources.packed = &prepacked;
  FailureOr<unsigned> bound = bindArguments(m.arguments(), sources, values, error);
  if (failed(bound)) {
    llvm::errs() << "rlx-run: " << error << "\n";
    return fail();
  }
  unsigned generated = *bound;
  int64_t readIntoPlace = 0;
  for (auto &[name, t] : prepacked) {
    readIntoPlace += static_cast<int64_t>(t.data.size());
    if (failed(m.setPacked(name, std::move(t), error))) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return fail();
    }
  }
  prepacked.clear();
  std::optional<int64_t> peakAfterLoad = peakRssBytes();
  // The parameters this process holds (a rank's blocks under --tp), before
  // packing replaces some of them.
  int64_t paramBytes = readIntoPlace, splitBytes = 0;
  for (const ModelTensor &a : m.arguments())
    if (a.isParam && values.count(a.name)) {
      int64_t bytes = static_cast<int64_t>(values[a.name].data.size());
      paramBytes += bytes;
      if (world && mir::tensorParallelSplit(a.name, a.shape.size()).dim >= 0 &&
          globalShape(a.name, a.shape, tp, whole) != a.shape)
        splitBytes += bytes;
    }
  // Pack once now and release the originals the packed copies replace
  // (merged q|k|v and gate|up): the weights are held once.
  FailureOr<int64_t> released = m.releasePackedSources(values, error);
  if (failed(released)) {
    llvm::errs() << "rlx-run: " << error << "\n";
    return fail();
  }

  std::vector<HostTensor> outputs;
  if (serve) {
    llvm::outs() << "ready\n";
    llvm::outs().flush();
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == "quit")
        break;
      auto t0 = std::chrono::steady_clock::now();
      if (failed(m.run(values, outputs, error))) {
        llvm::errs() << "rlx-run: " << error << "\n";
        return 1;
      }
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
      llvm::outs() << llvm::format("ms %.4f\n", ms);
      llvm::outs().flush();
    }
    return 0;
  }
  for (unsigned i = 0; i < warmup; ++i)
    if (failed(m.run(values, outputs, error))) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return fail();
    }
  std::vector<double> times;
  m.trace.clear(); // the timed runs only
  for (unsigned i = 0; i < std::max(1u, repeat.getValue()); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (failed(m.run(values, outputs, error))) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return fail();
    }
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!tracePath.empty() && (!world || world->rank == 0)) {
    std::vector<::rlx::TraceEvent> events;
    for (const CpuModel::KernelRun &k : m.trace) {
      const CpuModel::TracedKernel &kernel = m.tracedKernels[size_t(k.id)];
      ::rlx::TraceEvent e;
      e.name = kernel.name;
      e.category = "cpu";
      e.startUs = k.startUs;
      e.durationUs = k.durationUs;
      e.locations = kernel.locations;
      e.args = {{"kernel", std::to_string(k.id)}};
      events.push_back(std::move(e));
    }
    if (!::rlx::writeChromeTrace(tracePath, events, "rlx-run (cpu)", error)) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return fail();
    }
  }
  // (Parameters were packed before the first run: reported separately.)
  // Outputs split over the ranks (KV caches by KV head) are gathered whole
  // on rank 0, which alone reports and writes.
  if (world) {
    for (auto [i, out] : llvm::enumerate(m.results())) {
      // rlx-mir-shard leaves only the KV caches split (by KV head).
      if (mir::tensorParallelSplit(out.name, outputs[i].shape.size()).kind !=
              mir::TensorParallelKind::KVHeads ||
          globalShape(out.name, outputs[i].shape, tp, whole) == outputs[i].shape)
        continue;
      std::vector<uint8_t> all(world->rank == 0 ? outputs[i].data.size() * tp : 0);
      if (failed(world->gather(outputs[i].data.data(), outputs[i].data.size(), all.data(),
                               error))) {
        llvm::errs() << "rlx-run: " << error << "\n";
        return fail();
      }
      if (world->rank != 0)
        continue;
      std::vector<HostTensor> blocks(tp, outputs[i]);
      for (int64_t r = 0; r < tp; ++r)
        std::copy(all.begin() + r * outputs[i].data.size(),
                  all.begin() + (r + 1) * outputs[i].data.size(), blocks[r].data.begin());
      outputs[i] = joinBlocks(out.name, blocks);
    }
    if (!printer) {
      world->finalize();
      return 0;
    }
  }
  std::sort(times.begin(), times.end());
  double sum = 0;
  for (double t : times)
    sum += t;

  llvm::outs() << "fusion: MIR ops " << m.opsBeforeFusion << " -> " << m.opsAfterFusion
               << ", compute ops (kernels) " << m.computeOpsBefore << " -> " << m.kernels << "\n";
  llvm::outs() << llvm::format("compile: %.1f ms (HIR->MIR + fusion %.1f, lowering %.1f, JIT %.1f)\n",
                               m.fuseMs + m.lowerMs + m.jitMs, m.fuseMs, m.lowerMs, m.jitMs);
  if (m.arenaBytes >= 0)
    llvm::outs() << llvm::format(
        "arena: %lld bytes (%.2f MiB), lower bound %lld (%.3fx), sum of buffers %lld\n",
        (long long)m.arenaBytes, m.arenaBytes / 1048576.0, (long long)m.arenaLowerBound,
        m.arenaLowerBound > 0 ? double(m.arenaBytes) / double(m.arenaLowerBound) : 1.0,
        (long long)m.arenaSumBytes);
  if (m.scratchBytes > 0)
    llvm::outs() << llvm::format("kernel scratch: %lld bytes (%.2f MiB) in the arena past its "
                                 "plan (the largest kernel's temporaries)\n",
                                 (long long)m.scratchBytes, m.scratchBytes / 1048576.0);
  if (m.packMs > 0)
    llvm::outs() << llvm::format("weight packing: %.1f ms (once)\n", m.packMs);
  if (!m.blasInfo.empty() || m.blasThreads > 0) {
    llvm::outs() << "blas: " << (m.blasInfo.empty() ? "?" : m.blasInfo);
    if (m.blasThreads > 0)
      llvm::outs() << "; " << m.blasThreads << " thread(s)";
    llvm::outs() << "\n";
  }
  if (verbose && peakAfterCompile && peakAfterLoad)
    llvm::outs() << "peak RSS: " << *peakAfterCompile << " bytes after compiling, "
                 << *peakAfterLoad << " after loading, " << peakRssBytes().value_or(0)
                 << " after running\n";
  if (verbose)
    llvm::outs() << "cpu: " << hostCpuModel() << " (LLVM: " << llvm::sys::getHostCPUName()
                 << "), " << std::thread::hardware_concurrency() << " hardware thread(s)\n";
  // What the code was compiled for, when it is not simply this CPU.
  if (verbose || !m.cpu.host || !m.cpu.mattr.empty())
    llvm::outs() << "code for: " << m.cpu.describe() << "\n";
  llvm::outs() << llvm::format("run: %.3f ms median, %.3f ms mean, %.3f ms min over %zu run(s)\n",
                               times[times.size() / 2], sum / times.size(), times.front(),
                               times.size());
  llvm::outs() << "weights: " << paramBytes << " bytes";
  if (world)
    llvm::outs() << " on this rank (split " << splitBytes << ", replicated "
                 << paramBytes - splitBytes << ")";
  llvm::outs() << "\n";
  if (int64_t packedBytes = m.packedBytes())
    llvm::outs() << "weights held: " << paramBytes - readIntoPlace - *released + packedBytes
                 << " bytes after packing (" << packedBytes << " packed, " << *released
                 << " of the originals released, " << readIntoPlace
                 << " read into the packed layout)\n";
  if (generated)
    llvm::outs() << "inputs: " << generated << " of " << m.arguments().size()
                 << " generated with seed " << seed << "\n";
  for (auto [i, out] : llvm::enumerate(m.results()))
    if (failed(reportOutput(out.name, outputs[i], outputDir, error))) {
      llvm::errs() << "rlx-run: " << error << "\n";
      return fail();
    }
  if (world) {
    llvm::outs() << "tensor parallel: " << world->size << " ranks (Open MPI)\n";
    if (options.ep > 0 && options.ep < tp)
      llvm::outs() << "expert parallel: " << options.ep << " groups of " << tp / options.ep
                   << " ranks (each expert split by its intermediate size)\n";
    int64_t total = 0;
    for (int64_t b : allReduceBytes)
      total += b;
    llvm::outs() << "collectives per step: " << allReduceBytes.size() << " all-reduce(s), "
                 << total << " bytes reduced\n";
    world->finalize();
  }
  return 0;
}
