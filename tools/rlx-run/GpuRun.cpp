//===- GpuRun.cpp - rlx-run --device=cuda|emu ------------------------------===//

#include "GpuRun.h"
#include "HostArguments.h"

#include "RLX/Dialect/MIR/Transforms/Sharding.h"
#include "RLX/Runtime/GPURuntime.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::rlx;

namespace {

struct Buffer {
  ModelTensor tensor;
  /// A dtype the host cannot hold (rlx-run sets it by bytes only through
  /// rlx-gpu-run's files).
  bool unsupported = false;
  std::string role;
  int64_t bytes = 0;
  std::string packedBy, packedOutput; ///< producing function and its output
};

std::vector<Buffer> buffersOf(MLIRContext *context, rlx_gpu_artifact *h, const char *fn,
                              const llvm::json::Object *manifestFn) {
  std::vector<Buffer> out;
  int n = rlx_gpu_num_buffers(h, fn);
  for (int i = 0; i < n; ++i) {
    const char *name, *role, *dtype;
    int rank;
    const int64_t *shape;
    size_t bytes;
    if (rlx_gpu_buffer_info(h, fn, i, &name, &role, &dtype, &rank, &shape, &bytes))
      continue;
    Buffer b;
    b.tensor.name = name;
    // The host's name of the manifest's MLIR spelling (f8E4M3FN: the
    // E4M3 bytes kept as they are, not converted as numbers).
    b.tensor.dtype = dtypeOf(dtype, context);
    if (b.tensor.dtype.empty())
      b.tensor.dtype = dtype;
    b.tensor.isParam = StringRef(role) == "param";
    b.tensor.shape.assign(shape, shape + rank);
    // Bytes the host holds for it must be what the artifact expects.
    std::optional<uint64_t> hostBytes = tensorBytes(b.tensor.dtype, b.tensor.shape);
    if (!hostBytes || *hostBytes != bytes)
      b.unsupported = true;
    b.role = role;
    b.bytes = static_cast<int64_t>(bytes);
    if (manifestFn)
      if (const llvm::json::Array *bs = manifestFn->getArray("buffers"))
        for (const llvm::json::Value &v : *bs)
          if (const llvm::json::Object *o = v.getAsObject();
              o && o->getString("name") == StringRef(name)) {
            if (const llvm::json::Object *p = o->getObject("packed_by")) {
              b.packedBy = p->getString("function").value_or("").str();
              b.packedOutput = p->getString("output").value_or("").str();
            }
            b.tensor.indexBound = o->getInteger("index_bound").value_or(0);
          }
    out.push_back(std::move(b));
  }
  return out;
}

int fail(const std::string &message) {
  llvm::errs() << "rlx-run: " << message << "\n";
  return 1;
}

} // namespace

int mlir::rlx::runOnGpu(ModuleOp module, const GpuRunOptions &options,
                        std::map<std::string, HostTensor> values,
                        const std::function<HostTensor(const ModelTensor &)> &generate) {
  // The artifact.
  const MpiWorld *world = options.world;
  int64_t tp = world ? options.artifact.tp : 0;
  if (world && options.device == "auto")
    return fail("--tp runs on --device cuda or emu (every rank on the same kind), not auto");
  // One GPU per rank: the node-local rank's, unless RLX_CUDA_DEVICE says.
  if (world && options.device == "cuda" && !std::getenv("RLX_CUDA_DEVICE"))
    if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
      ::setenv("RLX_CUDA_DEVICE", local, 1);
  bool printer = !world || world->rank == 0;
  // Under --tp every rank compiles its artifact (its rank's, where the
  // program looks up by rank): rank 0's is the one --emit-artifact keeps.
  SmallString<128> dir(printer ? options.artifactDir : "");
  bool temporary = dir.empty();
  if (temporary && llvm::sys::fs::createUniqueDirectory("rlx-gpu-artifact", dir))
    return fail("cannot create a temporary directory");
  llvm::scope_exit cleanup([&] {
    if (temporary)
      llvm::sys::fs::remove_directories(dir);
  });
  // The unsharded shapes of the named tensors (before compiling shards it).
  std::map<std::string, std::vector<int64_t>> whole =
      world ? wholeShapes(module) : std::map<std::string, std::vector<int64_t>>{};
  CompileOptions artifact = options.artifact;
  // The emulator needs no cubin (and no ptxas); CUDA needs no emulator library.
  if (options.device == "emu")
    artifact.cubin = (!options.artifactDir.empty() || options.report) && artifact.cubin;
  if (options.device == "cuda")
    artifact.emulator = !options.artifactDir.empty() && artifact.emulator;
  auto t0 = std::chrono::steady_clock::now();
  if (failed(writeGPUArtifact(module, artifact, dir)))
    return 1;
  double compileMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto text = llvm::MemoryBuffer::getFile(dir + "/manifest.json");
  llvm::Expected<llvm::json::Value> manifest =
      text ? llvm::json::parse((*text)->getBuffer()) : llvm::json::Value(nullptr);
  if (!manifest)
    return fail("cannot read the artifact's manifest.json");

  char err[1024] = {0};
  rlx_gpu_artifact *h = rlx_gpu_open(dir.c_str(), options.device.c_str(), err, sizeof(err));
  if (!h)
    return fail(err);
  llvm::scope_exit close([&] { rlx_gpu_close(h); });
  if (world) {
    // NCCL's id from rank 0 (its status first, so that no rank waits for an
    // id that never comes); the emulator's collectives are MPI_Allreduce.
    unsigned char id[1 + 128] = {0};
    std::string error;
    if (options.device == "cuda") {
      if (world->rank == 0)
        id[0] = rlx_gpu_nccl_unique_id(id + 1, err, sizeof(err)) ? 1 : 0;
      if (failed(world->broadcast(id, sizeof(id), error)))
        return fail(error);
      if (id[0])
        return fail(world->rank == 0 ? std::string(err) : "rank 0 has no NCCL id");
      if (rlx_gpu_set_communicator(h, world->rank, world->size, id + 1, nullptr, nullptr, nullptr))
        return fail(rlx_gpu_last_error(h));
    } else if (rlx_gpu_set_communicator(h, world->rank, world->size, nullptr,
                                        &MpiWorld::hostAllReduce, &MpiWorld::hostAllGather,
                                        const_cast<MpiWorld *>(world))) {
      return fail(rlx_gpu_last_error(h));
    }
  }
  std::string entry = options.entry.empty() ? rlx_gpu_entry(h) : options.entry;
  auto manifestFn = [&](StringRef name) -> const llvm::json::Object * {
    if (const llvm::json::Array *fns = manifest->getAsObject()->getArray("functions"))
      for (const llvm::json::Value &f : *fns)
        if (f.getAsObject()->getString("name") == name)
          return f.getAsObject();
    return nullptr;
  };
  if (!manifestFn(entry))
    return fail("no function '" + entry + "' in the compiled module");
  std::vector<Buffer> buffers = buffersOf(module.getContext(), h, entry.c_str(), manifestFn(entry));

  // What the user gives: the entry's inputs and parameters, with packed
  // parameters replaced by the originals their packing functions take.
  std::vector<ModelTensor> arguments;
  std::set<std::string> packers, seen;
  auto unsupported = [&](const Buffer &b) {
    return fail("buffer '" + b.tensor.name + "' is " + b.tensor.dtype + " of shape " +
                std::to_string(b.tensor.shape.size()) +
                "-D, whose bytes the host does not lay out as the artifact does (rlx-gpu-run "
                "takes its raw bytes)");
  };
  for (const Buffer &b : buffers) {
    if (b.unsupported)
      return unsupported(b);
    if (b.role == "output")
      continue;
    if (!b.packedBy.empty()) {
      packers.insert(b.packedBy);
      continue;
    }
    if (seen.insert(b.tensor.name).second)
      arguments.push_back(b.tensor);
  }
  for (const std::string &p : packers)
    for (const Buffer &b : buffersOf(module.getContext(), h, p.c_str(), manifestFn(p))) {
      if (b.unsupported)
        return unsupported(b);
      if (b.role != "output" && seen.insert(b.tensor.name).second)
        arguments.push_back(b.tensor);
    }
  ArgumentSources sources;
  sources.weights = options.weights;
  sources.moduleParams = moduleParamNames(module);
  if (world) {
    sources.world = world;
    sources.tp = tp;
    sources.whole = whole;
  }
  sources.generate = generate;
  std::string error;
  FailureOr<unsigned> bound = bindArguments(arguments, sources, values, error);
  if (failed(bound))
    return fail(error);
  unsigned generated = *bound;

  // Every argument by name on the entry: the runtime sets the originals of
  // packed parameters on their packing functions and packs before the
  // first run (rlx_gpu_set_buffer).
  std::vector<Buffer> all = buffers;
  for (const std::string &p : packers)
    for (Buffer &b : buffersOf(module.getContext(), h, p.c_str(), manifestFn(p)))
      all.push_back(std::move(b));
  std::set<std::string> uploaded;
  for (const Buffer &b : all) {
    if (b.role == "output" || !b.packedBy.empty() || !values.count(b.tensor.name) ||
        !uploaded.insert(b.tensor.name).second)
      continue;
    std::string convertError;
    FailureOr<HostTensor> exact =
        convertExact(values[b.tensor.name], b.tensor.dtype, b.tensor.name, convertError);
    if (failed(exact))
      return fail(convertError);
    HostTensor &t = *exact;
    if (t.shape != b.tensor.shape || static_cast<int64_t>(t.data.size()) != b.bytes)
      return fail("input '" + b.tensor.name + "' does not have the argument's shape");
    if (rlx_gpu_set_buffer(h, entry.c_str(), b.tensor.name.c_str(), t.data.data(), t.data.size()))
      return fail(rlx_gpu_last_error(h));
  }
  auto p0 = std::chrono::steady_clock::now();
  if (rlx_gpu_pack(h, entry.c_str()))
    return fail(rlx_gpu_last_error(h));
  double packMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
  // Packed once: the originals leave the device (the weights held once).
  uint64_t released = 0;
  if (!packers.empty() && rlx_gpu_release_packed_sources(h, entry.c_str(), &released))
    return fail(rlx_gpu_last_error(h));
  // The weights on the device: the entry's parameters (packed ones are
  // their packing function's outputs) and the originals still held.
  int64_t weightBytes = -static_cast<int64_t>(released);
  for (const Buffer &b : all)
    if (b.role == "param")
      weightBytes += b.bytes;
  std::vector<double> times;
  for (unsigned i = 0; i < options.warmup + std::max(1u, options.repeat); ++i) {
    if (i == options.warmup && !options.tracePath.empty() && rlx_gpu_set_trace(h, 1))
      return fail(rlx_gpu_last_error(h));
    auto r0 = std::chrono::steady_clock::now();
    if (rlx_gpu_run(h, entry.c_str()))
      return fail(rlx_gpu_last_error(h));
    if (i >= options.warmup)
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r0).count());
  }
  if (!options.tracePath.empty() && (!options.world || options.world->rank == 0) &&
      rlx_gpu_write_trace(h, options.tracePath.c_str()))
    return fail(rlx_gpu_last_error(h));
  std::sort(times.begin(), times.end());
  // Outputs: split ones (KV caches by KV head) gathered to rank 0, which
  // alone prints and writes.
  std::vector<HostTensor> outputs;
  for (const Buffer &b : buffers) {
    if (b.role != "output")
      continue;
    HostTensor t = HostTensor::zeros(b.tensor.dtype, b.tensor.shape);
    if (rlx_gpu_get_buffer(h, entry.c_str(), b.tensor.name.c_str(), t.data.data(), t.data.size()))
      return fail(rlx_gpu_last_error(h));
    if (world &&
        mir::tensorParallelSplit(b.tensor.name, t.shape.size()).kind ==
            mir::TensorParallelKind::KVHeads &&
        globalShape(b.tensor.name, t.shape, tp, whole) != t.shape) {
      std::string error;
      std::vector<uint8_t> all(world->rank == 0 ? t.data.size() * tp : 0);
      if (failed(world->gather(t.data.data(), t.data.size(), all.data(), error)))
        return fail(error);
      std::vector<HostTensor> blocks(tp, t);
      for (int64_t r = 0; r < tp && world->rank == 0; ++r)
        std::copy(all.begin() + r * t.data.size(), all.begin() + (r + 1) * t.data.size(),
                  blocks[r].data.begin());
      t = joinBlocks(b.tensor.name, blocks);
    }
    outputs.push_back(std::move(t));
  }
  if (!printer)
    return 0;
  llvm::outs() << "device: " << rlx_gpu_device(h) << " (" << artifact.chip << ")\n";
  llvm::outs() << llvm::format("compile: %.1f ms (GPU artifact%s)\n", compileMs,
                               temporary ? "" : (" in " + options.artifactDir).c_str());
  if (const llvm::json::Object *f = manifestFn(entry)) {
    int64_t arena = f->getInteger("arena_bytes").value_or(0);
    size_t launches = f->getArray("launches") ? f->getArray("launches")->size() : 0;
    llvm::outs() << llvm::format("arena: %lld bytes (%.2f MiB), %zu kernel launches\n",
                                 (long long)arena, arena / 1048576.0, launches);
  }
  if (options.report)
    if (const llvm::json::Array *ks = manifest->getAsObject()->getArray("kernels"))
      for (const llvm::json::Value &kv : *ks) {
        const llvm::json::Object *k = kv.getAsObject();
        auto num = [&](StringRef f) { return k->getInteger(f).value_or(-1); };
        llvm::outs() << "kernel " << k->getString("name").value_or("?") << ": "
                     << (num("registers") < 0 ? std::string("no cubin")
                                              : std::to_string(num("registers")) + " registers")
                     << ", " << num("spill_bytes") << " B spilled, " << num("stack_bytes")
                     << " B stack, " << num("static_shared_bytes") << " B shared\n";
      }
  if (!packers.empty())
    llvm::outs() << llvm::format("weight packing: %.1f ms (once)\n", packMs);
  llvm::outs() << "device memory: " << rlx_gpu_device_bytes(h) << " bytes, weights "
               << weightBytes << " of them (" << released
               << " bytes of packed originals released)\n";
  llvm::outs() << llvm::format("run: %.3f ms median, %.3f ms min over %zu run(s) (wall clock)\n",
                               times[times.size() / 2], times.front(), times.size());
  if (generated)
    llvm::outs() << "inputs: " << generated << " of " << arguments.size() << " generated\n";
  if (world) {
    int64_t steps = 0, bytes = 0, gathers = 0, gatheredBytes = 0;
    if (const llvm::json::Object *f = manifestFn(entry))
      if (const llvm::json::Array *ls = f->getArray("launches"))
        for (const llvm::json::Value &l : *ls)
          if (auto kind = l.getAsObject()->getString("collective")) {
            int64_t b = l.getAsObject()->getInteger("elements").value_or(0) *
                        (l.getAsObject()->getString("dtype") == "f32" ? 4 : 2);
            if (*kind == "all_reduce")
              ++steps, bytes += b;
            else
              ++gathers, gatheredBytes += b * world->size;
          }
    llvm::outs() << "tensor parallel: " << world->size << " ranks ("
                 << (StringRef(rlx_gpu_device(h)) == "cuda" ? "NCCL" : "Open MPI") << ")\n";
    if (int64_t ep = options.artifact.ep; ep > 0 && ep < tp)
      llvm::outs() << "expert parallel: " << ep << " groups of " << tp / ep
                   << " ranks (each expert split by its intermediate size)\n";
    llvm::outs() << "collectives per step: " << steps << " all-reduce(s), " << bytes
                 << " bytes reduced";
    if (gathers)
      llvm::outs() << "; " << gathers << " all-gather(s), " << gatheredBytes << " bytes gathered";
    llvm::outs() << "\n";
  }
  size_t nextOutput = 0;
  for (const Buffer &b : buffers) {
    if (b.role != "output")
      continue;
    if (failed(reportOutput(b.tensor.name, outputs[nextOutput++], options.outputDir, error)))
      return fail(error);
  }
  return 0;
}
