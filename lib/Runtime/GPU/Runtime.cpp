//===- Runtime.cpp - The GPU artifact runtime's C API ----------------------===//
//
// Holds one opened artifact: its manifest, a backend and, per function, the
// device allocations and the kernel parameter arrays of every launch (built
// once at open: a parameter is a pointer to a 64-bit device address).
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPURuntime.h"
#include "RLX/Runtime/Trace.h"
#include "RLX/Runtime/GPU/Backend.h"
#include "RLX/Runtime/GPU/NCCL.h"
#include "RLX/Runtime/IndexCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <set>

using namespace rlx::gpu;

namespace {

/// Block events of one launch in a trace (emulator): at most this many.
constexpr size_t kTracedBlocks = 1024;

struct alignas(64) TensorMapImage {
  unsigned char bytes[128];
};

struct FunctionState {
  DevicePtr arena = 0;
  bool arenaAllocated = false;
  std::vector<DevicePtr> buffers;
  std::vector<bool> allocated;
  std::vector<bool> set;
  /// Freed by rlx_gpu_release_packed_sources (allocated again when set).
  std::vector<bool> released;
  /// A packing function's inputs were set since it last ran; its runs.
  bool dirty = false;
  uint64_t runs = 0;
  /// Per packed parameter: the run of its packer it holds (0: none).
  std::vector<uint64_t> packedRun;
  std::vector<std::vector<DevicePtr>> argValues; ///< per launch
  std::vector<std::vector<void *>> argPointers;  ///< per launch, into argValues
  /// The tensor maps of launch arguments: device copies and their host
  /// images (kept: the copy to the device may be asynchronous).
  std::vector<DevicePtr> tensorMaps;
  std::vector<std::unique_ptr<TensorMapImage>> tensorMapImages;
};

} // namespace

struct rlx_gpu_artifact {
  Manifest manifest;
  std::unique_ptr<Backend> backend;
  std::vector<FunctionState> functions;
  /// The module's constants on the device, and their bytes (kept: the copy
  /// to the device may be asynchronous).
  std::vector<DevicePtr> constants;
  std::vector<std::vector<char>> constantImages;
  std::string error;
  /// The device bytes the artifact allocated (constants, arenas, buffers,
  /// tensor maps).
  uint64_t deviceBytes = 0;
  /// rlx_gpu_time flushes the device's caches before each timed run.
  bool flushCaches = false;
  /// rlx_gpu_set_trace: every kernel launch timed on its own (the backend's
  /// timer: CUDA events, the emulator's wall clock) into `trace`.
  bool tracing = false;
  std::chrono::steady_clock::time_point traceStart;
  std::vector<rlx::TraceEvent> trace;

  ~rlx_gpu_artifact() {
    if (!backend)
      return;
    for (DevicePtr p : constants)
      backend->free(p);
    for (FunctionState &f : functions) {
      if (f.arenaAllocated)
        backend->free(f.arena);
      for (size_t i = 0; i < f.buffers.size(); ++i)
        if (f.allocated[i])
          backend->free(f.buffers[i]);
      for (DevicePtr p : f.tensorMaps)
        backend->free(p);
    }
    functions.clear();
    backend.reset();
  }

  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }

  // Resolves `function` (NULL = entry) or records an error.
  int function(const char *name) {
    std::string n = name ? name : manifest.entry;
    int f = manifest.findFunction(n);
    if (f < 0)
      fail("unknown function '" + n + "'");
    return f;
  }

  bool alloc(uint64_t bytes, const std::string &what, DevicePtr &p, std::string &err) {
    if (!backend->alloc(bytes, what, p, err))
      return false;
    deviceBytes += bytes;
    return true;
  }

  bool allocate(std::string &err) {
    for (const ConstantInfo &c : manifest.constants) {
      std::ifstream in(manifest.dir + "/" + c.file, std::ios::binary);
      std::vector<char> bytes(c.bytes);
      if (!in || !in.read(bytes.data(), std::streamsize(c.bytes))) {
        err = "cannot read constant '" + c.name + "' from " + manifest.dir + "/" + c.file;
        return false;
      }
      DevicePtr p = 0;
      if (!alloc(c.bytes, "@constant/" + c.name, p, err))
        return false;
      constants.push_back(p);
      if (!backend->copyToDevice(p, bytes.data(), c.bytes, err))
        return false;
      constantImages.push_back(std::move(bytes));
    }
    functions.resize(manifest.functions.size());
    // Every buffer first, but a packed parameter: it is its packing
    // function's output buffer itself (the packer writes it in place; the
    // weights are not held twice on the device).
    for (size_t fi = 0; fi < manifest.functions.size(); ++fi) {
      const FunctionInfo &f = manifest.functions[fi];
      FunctionState &s = functions[fi];
      if (!alloc(f.arenaBytes, f.name + "/@arena", s.arena, err))
        return false;
      s.arenaAllocated = true;
      s.buffers.assign(f.buffers.size(), 0);
      s.allocated.assign(f.buffers.size(), false);
      s.set.assign(f.buffers.size(), false);
      s.released.assign(f.buffers.size(), false);
      s.packedRun.assign(f.buffers.size(), 0);
      for (size_t b = 0; b < f.buffers.size(); ++b) {
        if (packerOutput(f.buffers[b]).first >= 0)
          continue;
        if (!alloc(f.buffers[b].bytes, f.name + "/" + f.buffers[b].name, s.buffers[b], err))
          return false;
        s.allocated[b] = true;
      }
    }
    for (size_t fi = 0; fi < manifest.functions.size(); ++fi)
      for (size_t b = 0; b < manifest.functions[fi].buffers.size(); ++b)
        if (auto [p, o] = packerOutput(manifest.functions[fi].buffers[b]); p >= 0)
          functions[fi].buffers[b] = functions[size_t(p)].buffers[size_t(o)];
    // A packer of constants alone (a frozen int8 weight dequantized) has no
    // input whose setting would mark it: it runs once, before the first run.
    for (const FunctionInfo &f : manifest.functions)
      for (const BufferInfo &bi : f.buffers)
        if (int p = bi.packedBy.empty() ? -1 : manifest.findFunction(bi.packedBy); p >= 0) {
          const FunctionInfo &pf = manifest.functions[size_t(p)];
          if (std::none_of(pf.buffers.begin(), pf.buffers.end(),
                           [](const BufferInfo &x) { return x.role != Role::Output; }))
            functions[size_t(p)].dirty = true;
        }
    for (size_t fi = 0; fi < manifest.functions.size(); ++fi) {
      const FunctionInfo &f = manifest.functions[fi];
      FunctionState &s = functions[fi];
      for (size_t li = 0; li < f.launches.size(); ++li) {
        std::vector<DevicePtr> values;
        for (size_t ai = 0; ai < f.launches[li].args.size(); ++ai) {
          const LaunchArg &a = f.launches[li].args[ai];
          DevicePtr p = (a.constant >= 0     ? constants[size_t(a.constant)]
                         : a.buffer == kArena ? s.arena
                                              : s.buffers[size_t(a.buffer)]) +
                        a.offset;
          if (a.hasTensorMap && !tensorMap(f, s, li, ai, p, err))
            return false;
          values.push_back(p);
        }
        s.argValues.push_back(std::move(values));
      }
      // Pointers only after argValues stopped growing.
      for (std::vector<DevicePtr> &values : s.argValues) {
        std::vector<void *> ptrs;
        for (DevicePtr &v : values)
          ptrs.push_back(&v);
        s.argPointers.push_back(std::move(ptrs));
      }
    }
    return true;
  }

  // Whether a launch of function f reads buffer b through a tensor map
  // (built over its address once: such a buffer never moves).
  bool mapped(int f, int b) const {
    for (const LaunchInfo &l : manifest.functions[size_t(f)].launches)
      for (const LaunchArg &a : l.args)
        if (a.buffer == b && a.hasTensorMap)
          return true;
    return false;
  }

  // Frees the input buffers of f's packing functions once they have run:
  // the packed parameters (their outputs) are what f reads. Returns the
  // bytes freed.
  bool releasePackedSources(int f, uint64_t &freed) {
    if (!pack(f))
      return false;
    for (const BufferInfo &bi : manifest.functions[size_t(f)].buffers) {
      int p = bi.packedBy.empty() ? -1 : manifest.findFunction(bi.packedBy);
      if (p < 0)
        continue;
      const FunctionInfo &pf = manifest.functions[size_t(p)];
      FunctionState &ps = functions[size_t(p)];
      // Only what a run of the packer has turned into packed parameters.
      if (ps.runs == 0 || ps.dirty)
        continue;
      for (size_t b = 0; b < pf.buffers.size(); ++b) {
        if (pf.buffers[b].role == Role::Output || !ps.allocated[b] || mapped(p, int(b)))
          continue;
        backend->free(ps.buffers[b]);
        deviceBytes -= pf.buffers[b].bytes;
        freed += pf.buffers[b].bytes;
        ps.allocated[b] = ps.set[b] = false;
        ps.released[b] = true;
      }
    }
    return true;
  }

  // Buffer b of function f on the device again after a release: a new
  // allocation, and the launches that read it pointed at it.
  bool reallocate(int f, int b, std::string &err) {
    FunctionState &s = functions[size_t(f)];
    if (s.allocated[size_t(b)] || !s.released[size_t(b)])
      return true;
    const FunctionInfo &fn = manifest.functions[size_t(f)];
    if (!alloc(fn.buffers[size_t(b)].bytes, fn.name + "/" + fn.buffers[size_t(b)].name,
               s.buffers[size_t(b)], err))
      return false;
    s.allocated[size_t(b)] = true;
    s.released[size_t(b)] = false;
    for (size_t li = 0; li < fn.launches.size(); ++li)
      for (size_t ai = 0; ai < fn.launches[li].args.size(); ++ai)
        if (fn.launches[li].args[ai].buffer == b)
          s.argValues[li][ai] = s.buffers[size_t(b)] + fn.launches[li].args[ai].offset;
    return true;
  }

  // The packing function and its output buffer that packed parameter `bi`
  // is ({-1, -1} when it is not one, or when the two differ in size).
  std::pair<int, int> packerOutput(const BufferInfo &bi) const {
    int p = bi.packedBy.empty() ? -1 : manifest.findFunction(bi.packedBy);
    if (p < 0)
      return {-1, -1};
    const FunctionInfo &pf = manifest.functions[size_t(p)];
    int o = pf.findBuffer(bi.packedOutput, FunctionInfo::Lookup::Output);
    if (o < 0 || pf.buffers[size_t(o)].bytes != bi.bytes || pf.buffers[size_t(o)].packedBy.size())
      return {-1, -1};
    return {p, o};
  }

  // Replaces `p` by the device address of a tensor map over it (built once:
  // the buffers never move).
  bool tensorMap(const FunctionInfo &f, FunctionState &s, size_t li, size_t ai, DevicePtr &p, std::string &err) {
    std::string where = f.name + "/launches[" + std::to_string(li) + "].args[" + std::to_string(ai) + "]";
    auto image = std::make_unique<TensorMapImage>();
    DevicePtr map = 0;
    if (!backend->encodeTensorMap(f.launches[li].args[ai].tensorMap, p, image->bytes, err)) {
      err = where + ": " + err;
      return false;
    }
    if (!alloc(sizeof image->bytes, where + " tensor map", map, err))
      return false;
    s.tensorMaps.push_back(map);
    if (!backend->copyToDevice(map, image->bytes, sizeof image->bytes, err))
      return false;
    s.tensorMapImages.push_back(std::move(image));
    p = map;
    return true;
  }

  // Launches every kernel of function f, without waiting.
  bool launchAll(int f) {
    const FunctionInfo &fn = manifest.functions[size_t(f)];
    FunctionState &s = functions[size_t(f)];
    std::string missing;
    for (size_t b = 0; b < fn.buffers.size(); ++b)
      if (fn.buffers[b].role != Role::Output && !s.set[b])
        missing += (missing.empty() ? "'" : ", '") + fn.buffers[b].name + "' (" + roleName(fn.buffers[b].role) +
                   (s.released[b] ? ", released after packing: set every original again" : "") + ")";
    if (!missing.empty())
      return fail("function '" + fn.name + "': buffers never set: " + missing);
    std::string err;
    for (size_t i = 0; i < fn.launches.size(); ++i) {
      const LaunchInfo &l = fn.launches[i];
      if (!l.collective.empty()) {
        // A plan compiled for N ranks runs over a communicator of N: one
        // rank alone would compute a partial result.
        if (uint64_t(backend->communicatorSize()) != l.ranks)
          return fail("function '" + fn.name + "', launches[" + std::to_string(i) + "] (" + l.collective +
                      "): the plan is for " + std::to_string(l.ranks) + " ranks, the communicator has " +
                      std::to_string(backend->communicatorSize()) +
                      " (rlx_gpu_set_communicator; mpirun -np N rlx-run --tp N)");
        // args are (send, receive): their device addresses.
        bool ok = l.collective == "all_gather"
                      ? backend->allGather(s.argValues[i][0], s.argValues[i][1], l.elements, l.dtype, err)
                      : backend->allReduceSum(s.argValues[i][0], s.argValues[i][1], l.elements, l.dtype, err);
        if (!ok)
          return fail("function '" + fn.name + "', launches[" + std::to_string(i) + "] (" +
                      l.collective + "): " + err);
        continue;
      }
      void **params = s.argPointers[i].empty() ? nullptr : s.argPointers[i].data();
      auto started = std::chrono::steady_clock::now();
      if (tracing && !backend->timerStart(err))
        return fail(err);
      bool launched = backend->launch(l.kernel, l.grid, l.block, l.dynamicSharedBytes, params, err);
      double ms = 0;
      if (launched && tracing) {
        if (!backend->timerStop(ms, err))
          return fail("function '" + fn.name + "', launches[" + std::to_string(i) + "]: " + err);
        const KernelInfo &k = manifest.kernels[l.kernel];
        rlx::TraceEvent e;
        e.name = k.name;
        e.category = backend->name();
        e.startUs = std::chrono::duration<double, std::micro>(started - traceStart).count();
        e.durationUs = ms * 1000.0;
        e.locations = k.locations;
        auto dims = [](const Dim3 &d) {
          return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
        };
        e.args = {{"function", fn.name}, {"launch", std::to_string(i)},
                  {"grid", dims(l.grid)}, {"block", dims(l.block)}};
        // Where the backend times blocks (the emulator): after the launch's
        // event, one event per block on thread 1, up to kTracedBlocks.
        std::vector<std::pair<double, double>> blocks = backend->lastBlockTimes();
        size_t shown = std::min<size_t>(blocks.size(), kTracedBlocks);
        if (!blocks.empty())
          e.args.push_back({"blocks_traced", std::to_string(shown) + " of " +
                                                 std::to_string(blocks.size())});
        double kernelStart = e.startUs;
        trace.push_back(std::move(e));
        for (size_t b = 0; b < shown; ++b) {
          rlx::TraceEvent be;
          be.name = k.name;
          be.category = std::string(backend->name()) + "-block";
          be.thread = 1;
          be.startUs = kernelStart + blocks[b].first;
          be.durationUs = blocks[b].second;
          uint64_t x = b % l.grid[0], y = b / l.grid[0] % l.grid[1], z = b / l.grid[0] / l.grid[1];
          be.args = {{"block", "(" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                                   std::to_string(z) + ")"},
                     {"launch", std::to_string(i)}};
          trace.push_back(std::move(be));
        }
      }
      if (!launched)
        return fail("function '" + fn.name + "', launches[" + std::to_string(i) + "] (kernel '" +
                    manifest.kernels[l.kernel].name + "'): " + err);
    }
    return true;
  }

  // Runs the packing functions of f's packed parameters whose inputs were
  // set since they last ran, and copies their outputs into f's parameters.
  bool pack(int f) {
    const FunctionInfo &fn = manifest.functions[size_t(f)];
    FunctionState &s = functions[size_t(f)];
    std::string err;
    for (size_t b = 0; b < fn.buffers.size(); ++b) {
      const BufferInfo &bi = fn.buffers[b];
      int p = bi.packedBy.empty() ? -1 : manifest.findFunction(bi.packedBy);
      if (p < 0)
        continue;
      if (functions[size_t(p)].dirty) {
        if (!run(p))
          return false;
        functions[size_t(p)].dirty = false;
      }
      // Each run of the packer copied once (a parameter set directly and no
      // packer run: nothing to copy).
      uint64_t runs = functions[size_t(p)].runs;
      if (runs == 0 || s.packedRun[b] == runs)
        continue;
      s.packedRun[b] = runs;
      const FunctionInfo &pf = manifest.functions[size_t(p)];
      int o = pf.findBuffer(bi.packedOutput, FunctionInfo::Lookup::Output);
      if (!s.allocated[b]) { // the packer's output itself: written in place
        s.set[b] = true;
        continue;
      }
      std::vector<unsigned char> bytes(bi.bytes);
      if (!backend->copyToHost(bytes.data(), functions[size_t(p)].buffers[size_t(o)], bi.bytes, err) ||
          !backend->copyToDevice(s.buffers[b], bytes.data(), bi.bytes, err) || !backend->synchronize(err))
        return fail("packing '" + bi.name + "' with '" + pf.name + "': " + err);
      s.set[b] = true;
    }
    return true;
  }

  bool run(int f) {
    std::string err;
    if (!pack(f))
      return false;
    if (!launchAll(f))
      return false;
    if (!backend->synchronize(err))
      return fail("function '" + manifest.functions[size_t(f)].name + "': " + err);
    ++functions[size_t(f)].runs;
    return true;
  }

  // Finds buffer `name` of function f (`which` first, when an input and an
  // output share the name) and checks `bytes` against its size.
  int buffer(int f, const char *name, size_t bytes, FunctionInfo::Lookup which) {
    const FunctionInfo &fn = manifest.functions[size_t(f)];
    int b = name ? fn.findBuffer(name, which) : -1;
    if (b < 0 && name)
      b = fn.findBuffer(name);
    if (b < 0) {
      fail("function '" + fn.name + "' has no buffer '" + (name ? name : "(null)") + "'");
      return -1;
    }
    if (bytes != fn.buffers[size_t(b)].bytes) {
      fail("buffer '" + fn.buffers[size_t(b)].name + "' of function '" + fn.name + "' is " +
           std::to_string(fn.buffers[size_t(b)].bytes) + " bytes, got " + std::to_string(bytes));
      return -1;
    }
    return b;
  }
};

namespace {

void copyError(const std::string &msg, char *err, size_t errlen) {
  if (!err || !errlen)
    return;
  size_t n = std::min(msg.size(), errlen - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

std::unique_ptr<rlx_gpu_artifact> open(const std::string &dir, const std::string &device, std::string &err) {
  auto h = std::make_unique<rlx_gpu_artifact>();
  if (!loadManifest(dir, h->manifest, err))
    return nullptr;
  if (device == "cuda" || device == "auto") {
    std::string cudaErr;
    h->backend = createCUDABackend(cudaErr);
    // "auto" falls back to the emulator only when there is no driver or no
    // device; a driver that rejects the artifact is an error.
    if (!h->backend && (device == "cuda" || h->manifest.emulatorLibrary.empty())) {
      err = device == "cuda" ? cudaErr : cudaErr + ", and the artifact has no emulator build";
      return nullptr;
    }
    if (h->backend && !h->backend->loadModules(h->manifest, err))
      return nullptr;
  } else if (device != "emu") {
    err = "unknown device '" + device + "' (expected cuda, emu or auto)";
    return nullptr;
  }
  if (!h->backend) {
    h->backend = createEmulatorBackend(err);
    if (!h->backend || !h->backend->loadModules(h->manifest, err))
      return nullptr;
  }
  if (!h->allocate(err))
    return nullptr;
  return h;
}

template <typename F> int guarded(rlx_gpu_artifact *h, F &&body) {
  if (!h)
    return -1;
  try {
    h->error.clear();
    return body() ? 0 : -1;
  } catch (const std::bad_alloc &) {
    h->error = "out of host memory";
  } catch (...) {
    h->error = "internal error";
  }
  return -1;
}

} // namespace

extern "C" {

rlx_gpu_artifact *rlx_gpu_open(const char *dir, const char *device, char *err, size_t errlen) {
  std::string e;
  try {
    if (!dir) {
      copyError("rlx_gpu_open: no artifact directory", err, errlen);
      return nullptr;
    }
    std::unique_ptr<rlx_gpu_artifact> h = open(dir, device ? device : "auto", e);
    if (h) {
      copyError("", err, errlen);
      return h.release();
    }
  } catch (const std::bad_alloc &) {
    e = "out of host memory";
  } catch (...) {
    e = "internal error";
  }
  copyError(e, err, errlen);
  return nullptr;
}

void rlx_gpu_close(rlx_gpu_artifact *h) { delete h; }

const char *rlx_gpu_last_error(rlx_gpu_artifact *h) { return h ? h->error.c_str() : "no artifact (NULL handle)"; }

const char *rlx_gpu_device(rlx_gpu_artifact *h) { return h && h->backend ? h->backend->name() : ""; }

const char *rlx_gpu_entry(rlx_gpu_artifact *h) { return h ? h->manifest.entry.c_str() : nullptr; }

uint64_t rlx_gpu_device_bytes(rlx_gpu_artifact *h) { return h ? h->deviceBytes : 0; }

int rlx_gpu_num_functions(rlx_gpu_artifact *h) { return h ? int(h->manifest.functions.size()) : -1; }

const char *rlx_gpu_function_name(rlx_gpu_artifact *h, int index) {
  if (!h || index < 0 || size_t(index) >= h->manifest.functions.size())
    return nullptr;
  return h->manifest.functions[size_t(index)].name.c_str();
}

int rlx_gpu_num_buffers(rlx_gpu_artifact *h, const char *function) {
  if (!h)
    return -1;
  int f = h->function(function);
  return f < 0 ? -1 : int(h->manifest.functions[size_t(f)].buffers.size());
}

int rlx_gpu_buffer_info(rlx_gpu_artifact *h, const char *function, int index, const char **name, const char **role,
                        const char **dtype, int *rank, const int64_t **shape, uint64_t *bytes) {
  return guarded(h, [&] {
    int f = h->function(function);
    if (f < 0)
      return false;
    const FunctionInfo &fn = h->manifest.functions[size_t(f)];
    if (index < 0 || size_t(index) >= fn.buffers.size())
      return h->fail("function '" + fn.name + "' has no buffer #" + std::to_string(index));
    const BufferInfo &b = fn.buffers[size_t(index)];
    if (name)
      *name = b.name.c_str();
    if (role)
      *role = roleName(b.role);
    if (dtype)
      *dtype = b.dtype.c_str();
    if (rank)
      *rank = int(b.shape.size());
    if (shape)
      *shape = b.shape.data();
    if (bytes)
      *bytes = b.bytes;
    return true;
  });
}

int rlx_gpu_set_buffer(rlx_gpu_artifact *h, const char *function, const char *name, const void *data, size_t bytes) {
  return guarded(h, [&] {
    int f = h->function(function);
    if (f < 0)
      return false;
    // The function's own buffer, and the inputs of the same name of the
    // functions that pack its parameters (which run before it when set).
    std::vector<std::pair<int, int>> targets;
    const FunctionInfo &fn = h->manifest.functions[size_t(f)];
    if (name && fn.findBuffer(name) >= 0) {
      int b = h->buffer(f, name, bytes, FunctionInfo::Lookup::Source);
      if (b < 0)
        return false;
      targets.push_back({f, b});
    }
    std::set<int> packers;
    for (const BufferInfo &bi : fn.buffers)
      if (!bi.packedBy.empty())
        packers.insert(h->manifest.findFunction(bi.packedBy));
    for (int p : packers) {
      int b = name ? h->manifest.functions[size_t(p)].findBuffer(name, FunctionInfo::Lookup::Source) : -1;
      if (b < 0 || h->manifest.functions[size_t(p)].buffers[size_t(b)].role == Role::Output)
        continue;
      if (h->buffer(p, name, bytes, FunctionInfo::Lookup::Source) < 0)
        return false;
      targets.push_back({p, b});
    }
    if (targets.empty())
      return h->buffer(f, name, bytes, FunctionInfo::Lookup::Source) >= 0; // its error
    if (!data && bytes)
      return h->fail("rlx_gpu_set_buffer: NULL data for buffer '" + std::string(name) + "'");
    // Ids against the tables they index (the kernels would clamp them).
    for (auto [tf, b] : targets) {
      const BufferInfo &bi = h->manifest.functions[size_t(tf)].buffers[size_t(b)];
      if (bi.indexBound == 0)
        continue;
      int width = dtypeBytes(bi.dtype);
      std::string bad = ::rlx::checkIndices(bi.name, data, width > 0 ? bytes / size_t(width) : 0,
                                            unsigned(width), bi.dtype[0] == 'u',
                                            int64_t(bi.indexBound));
      if (!bad.empty())
        return h->fail("input " + bad);
    }
    std::string err;
    for (auto [tf, b] : targets) {
      FunctionState &s = h->functions[size_t(tf)];
      if (!h->reallocate(tf, b, err))
        return h->fail("uploading buffer '" + std::string(name) + "': " + err);
      // Synchronous: the caller may free `data` as soon as this returns.
      if (!h->backend->copyToDevice(s.buffers[size_t(b)], data, bytes, err) || !h->backend->synchronize(err))
        return h->fail("uploading buffer '" + std::string(name) + "': " + err);
      s.set[size_t(b)] = true;
      if (tf != f)
        s.dirty = true;
    }
    return true;
  });
}

int rlx_gpu_release_packed_sources(rlx_gpu_artifact *h, const char *function,
                                   uint64_t *released) {
  return guarded(h, [&] {
    int f = h->function(function);
    uint64_t freed = 0;
    if (f < 0 || !h->releasePackedSources(f, freed))
      return false;
    if (released)
      *released = freed;
    return true;
  });
}

int rlx_gpu_pack(rlx_gpu_artifact *h, const char *function) {
  return guarded(h, [&] {
    int f = h->function(function);
    return f >= 0 && h->pack(f);
  });
}

int rlx_gpu_run(rlx_gpu_artifact *h, const char *function) {
  return guarded(h, [&] {
    int f = h->function(function);
    return f >= 0 && h->run(f);
  });
}

int rlx_gpu_get_buffer(rlx_gpu_artifact *h, const char *function, const char *name, void *data, size_t bytes) {
  return guarded(h, [&] {
    int f = h->function(function);
    if (f < 0)
      return false;
    int b = h->buffer(f, name, bytes, FunctionInfo::Lookup::Output);
    if (b < 0)
      return false;
    if (h->functions[size_t(f)].released[size_t(b)])
      return h->fail("buffer '" + std::string(name) + "' of '" + h->manifest.functions[size_t(f)].name +
                     "' was released after packing (rlx_gpu_release_packed_sources)");
    if (!data && bytes)
      return h->fail("rlx_gpu_get_buffer: NULL data for buffer '" + std::string(name) + "'");
    std::string err;
    if (!h->backend->copyToHost(data, h->functions[size_t(f)].buffers[size_t(b)], bytes, err))
      return h->fail("downloading buffer '" + std::string(name) + "': " + err);
    return true;
  });
}

int rlx_gpu_set_trace(rlx_gpu_artifact *h, int on) {
  return guarded(h, [&] {
    h->tracing = on != 0;
    h->trace.clear();
    h->traceStart = std::chrono::steady_clock::now();
    return true;
  });
}

int rlx_gpu_write_trace(rlx_gpu_artifact *h, const char *path) {
  return guarded(h, [&] {
    std::string err;
    if (!rlx::writeChromeTrace(path, h->trace,
                               std::string("rlx-gpu (") + h->backend->name() + ")", err))
      return h->fail(err);
    return true;
  });
}

int rlx_gpu_set_flush_caches(rlx_gpu_artifact *h, int on) {
  return guarded(h, [&] {
    h->flushCaches = on != 0;
    return true;
  });
}

int rlx_gpu_time(rlx_gpu_artifact *h, const char *function, int warmups, int iters, double *median_ms,
                 double *min_ms) {
  return guarded(h, [&] {
    int f = h->function(function);
    if (f < 0)
      return false;
    if (iters < 1 || warmups < 0)
      return h->fail("rlx_gpu_time: iters must be >= 1 and warmups >= 0");
    // Timed runs are not traced: the trace's per-launch timers would nest
    // in the run's timer.
    struct Untraced {
      bool &flag, saved;
      ~Untraced() { flag = saved; }
    } untraced{h->tracing, h->tracing};
    h->tracing = false;
    for (int i = 0; i < warmups; ++i)
      if (!h->run(f))
        return false;
    std::vector<double> times;
    std::string err;
    for (int i = 0; i < iters; ++i) {
      double ms = 0;
      if (h->flushCaches && !h->backend->flushCaches(err))
        return h->fail(err);
      if (!h->backend->timerStart(err))
        return h->fail(err);
      if (!h->launchAll(f))
        return false;
      if (!h->backend->timerStop(ms, err))
        return h->fail("function '" + h->manifest.functions[size_t(f)].name + "': " + err);
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    if (median_ms)
      *median_ms = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    if (min_ms)
      *min_ms = times.front();
    return true;
  });
}

int rlx_gpu_set_communicator(rlx_gpu_artifact *h, int rank, int size, const unsigned char *nccl_id,
                             rlx_gpu_host_allreduce_fn host_allreduce,
                             rlx_gpu_host_allgather_fn host_allgather, void *ctx) {
  return guarded(h, [&] {
    if (size < 1 || rank < 0 || rank >= size)
      return h->fail("rlx_gpu_set_communicator: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                     " is not a rank");
    if (h->manifest.rank >= 0 && h->manifest.rank != rank)
      return h->fail("rlx_gpu_set_communicator: the artifact was compiled for rank " +
                     std::to_string(h->manifest.rank) + ", not rank " + std::to_string(rank));
    Communicator c;
    c.rank = rank;
    c.size = size;
    if (nccl_id) {
      c.hasNcclId = true;
      std::memcpy(c.ncclId, nccl_id, sizeof(c.ncclId));
    }
    c.hostAllReduce = host_allreduce;
    c.hostAllGather = host_allgather;
    c.hostContext = ctx;
    std::string err;
    if (!h->backend->setCommunicator(c, err))
      return h->fail("rlx_gpu_set_communicator: " + err);
    return true;
  });
}

int rlx_gpu_nccl_unique_id(unsigned char *id, char *err, size_t errlen) {
  std::string error;
  NCCLLibrary nccl;
  if (id && loadNCCL(nccl, error)) {
    NcclUniqueId u;
    if (int r = nccl.ncclGetUniqueId(&u))
      error = std::string("ncclGetUniqueId: ") + nccl.ncclGetErrorString(r);
    else {
      std::memcpy(id, u.internal, sizeof(u.internal));
      return 0;
    }
  } else if (!id) {
    error = "rlx_gpu_nccl_unique_id: NULL id";
  }
  if (err && errlen) {
    std::strncpy(err, error.c_str(), errlen - 1);
    err[errlen - 1] = 0;
  }
  return 1;
}

} // extern "C"
