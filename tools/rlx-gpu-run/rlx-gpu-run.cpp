//===- rlx-gpu-run.cpp - Run an RLX GPU artifact --------------------------===//
//
//   rlx-gpu-run ARTIFACT_DIR [--device cuda|emu|auto] [--function NAME]
//               [--input NAME=FILE.npy]... [--inputs-dir DIR]
//               [--output-dir DIR] [--repeat N] [--time ITERS [--warmup N] [--flush-l2]]
//               [--json] [--zero-missing] [--nccl] [--trace FILE.json]
//   rlx-gpu-run --info ARTIFACT_DIR
//
// --nccl runs the plan's collective steps (an artifact compiled with --tp 1)
// with NCCL as rank 0 of 1: the single-GPU check of the NCCL path (a job of
// several ranks runs under `mpirun -np N rlx-run --tp N --device cuda`).
//
// --flush-l2 writes a buffer twice the GPU's L2 size before each timed run
// (outside the timed interval): the time is that of inputs read from memory,
// not from an L2 the previous run filled.
//
// --trace writes the kernel timeline of the run (and of --repeat's runs, not
// of --time's) as Chrome trace-event JSON for Perfetto: one event per kernel
// launch, timed on its own, with the kernel's source positions.
//
// --zero-missing fills the inputs no file gives with zero bytes (timing runs
// of problems too large to ship as .npy, e.g. a 32k-token KV cache).
// Runs one function of an artifact (docs/gpu-artifact.md) on the GPU or the
// CPU emulator with inputs and weights from .npy files and writes the outputs
// as NAME.npy. Links only the GPU runtime: no LLVM/MLIR, no CUDA at build
// time. Exit status 0 on success, 1 on any error (the message names it).
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPURuntime.h"
#include "RLX/Runtime/GPU/Manifest.h"
#include "RLX/Runtime/GPU/Npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace rlx::gpu;

namespace {

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "rlx-gpu-run: error: %s\n", msg.c_str());
  std::exit(1);
}

void usage(FILE *to) {
  std::fprintf(to, "usage: rlx-gpu-run ARTIFACT_DIR [--device cuda|emu|auto] [--function NAME]\n"
                   "                   [--input NAME=FILE.npy]... [--inputs-dir DIR] [--output-dir DIR]\n"
                   "                   [--repeat N] [--time ITERS [--warmup N] [--flush-l2]]\n"
                   "                   [--json] [--zero-missing] [--nccl] [--trace FILE.json]\n"
                   "       rlx-gpu-run --info ARTIFACT_DIR\n");
}

std::string dims(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dim3(const Dim3 &d) {
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + "]";
}

std::string orUnknown(int64_t v) { return v < 0 ? "?" : std::to_string(v); }

int info(const std::string &dir) {
  Manifest m;
  std::string err;
  if (!loadManifest(dir, m, err))
    die(err);
  std::printf("artifact %s: target %s, PTX %s, entry '%s'%s\n", dir.c_str(), m.chip.c_str(), m.ptxVersion.c_str(),
              m.entry.c_str(), m.emulatorLibrary.empty() ? "" : (", emulator " + m.emulatorLibrary).c_str());
  for (const ModuleInfo &mo : m.modules)
    std::printf("module %s: cubin %s, ptx %s\n", mo.name.c_str(), mo.cubin.empty() ? "-" : mo.cubin.c_str(),
                mo.ptx.empty() ? "-" : mo.ptx.c_str());
  std::printf("kernels:\n");
  for (const KernelInfo &k : m.kernels)
    std::printf("  %s (%s): block %s, %u params, registers %s, spill %s B, stack %s B, static shared %llu B%s\n",
                k.name.c_str(), k.module.c_str(), dim3(k.block).c_str(), k.numParams, orUnknown(k.registers).c_str(),
                orUnknown(k.spillBytes).c_str(), orUnknown(k.stackBytes).c_str(),
                (unsigned long long)k.staticSharedBytes, k.hasEmu ? (", emu " + k.emuSymbol).c_str() : "");
  for (const FunctionInfo &f : m.functions) {
    std::printf("function %s: arena %llu B, %zu launches\n", f.name.c_str(), (unsigned long long)f.arenaBytes,
                f.launches.size());
    for (const BufferInfo &b : f.buffers)
      std::printf("  %-6s %s: %s%s (%llu B)\n", roleName(b.role), b.name.c_str(), b.dtype.c_str(),
                  dims(b.shape).c_str(), (unsigned long long)b.bytes);
    for (const LaunchInfo &l : f.launches)
      if (!l.collective.empty())
        std::printf("  collective %s %s of %llu %s\n", l.collective.c_str(), l.reduction.c_str(),
                    (unsigned long long)l.elements, l.dtype.c_str());
      else
        std::printf("  launch %s grid %s block %s dynamic shared %llu B\n", m.kernels[l.kernel].name.c_str(),
                    dim3(l.grid).c_str(), dim3(l.block).c_str(), (unsigned long long)l.dynamicSharedBytes);
  }
  return 0;
}

long parseCount(const std::string &flag, const std::string &v, long min) {
  char *end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < min || n > 1000000)
    die(flag + " expects an integer >= " + std::to_string(min) + ", got '" + v + "'");
  return n;
}

bool isFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void makeDirs(const std::string &dir) {
  std::string cur;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST)
        die("--output-dir: cannot create '" + cur + "': " + std::strerror(errno));
    }
    if (i < dir.size())
      cur += dir[i];
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string dir, device = "auto", function, inputsDir, outputDir, tracePath;
  std::map<std::string, std::string> inputs;
  long iters = 0, warmup = -1, repeat = 1;
  bool json = false, showInfo = false, zeroMissing = false, nccl = false, flushL2 = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const char *flag) -> std::string {
      if (i + 1 >= args.size())
        die(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--info") {
      showInfo = true;
    } else if (a == "--device") {
      device = value("--device");
      if (device != "cuda" && device != "emu" && device != "auto")
        die("--device expects cuda, emu or auto, got '" + device + "'");
    } else if (a == "--function") {
      function = value("--function");
    } else if (a == "--input") {
      std::string v = value("--input");
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        die("bad --input '" + v + "', expected NAME=FILE.npy");
      if (!inputs.emplace(v.substr(0, eq), v.substr(eq + 1)).second)
        die("--input '" + v.substr(0, eq) + "' given twice");
    } else if (a == "--inputs-dir") {
      inputsDir = value("--inputs-dir");
    } else if (a == "--output-dir") {
      outputDir = value("--output-dir");
    } else if (a == "--repeat") {
      repeat = parseCount("--repeat", value("--repeat"), 1);
    } else if (a == "--time") {
      iters = parseCount("--time", value("--time"), 1);
    } else if (a == "--warmup") {
      warmup = parseCount("--warmup", value("--warmup"), 0);
    } else if (a == "--trace") {
      tracePath = value("--trace");
    } else if (a == "--flush-l2") {
      flushL2 = true;
    } else if (a == "--zero-missing") {
      zeroMissing = true;
    } else if (a == "--nccl") {
      nccl = true;
    } else if (a == "--json") {
      json = true;
    } else if (!a.empty() && a[0] == '-') {
      usage(stderr);
      die("unknown option '" + a + "'");
    } else if (dir.empty()) {
      dir = a;
    } else {
      die("more than one artifact directory ('" + dir + "', '" + a + "')");
    }
  }
  if (dir.empty()) {
    usage(stderr);
    die("no artifact directory");
  }
  if (showInfo)
    return info(dir);
  if (warmup >= 0 && !iters)
    die("--warmup needs --time ITERS");
  if (flushL2 && !iters)
    die("--flush-l2 needs --time ITERS");

  // The manifest again (the C API describes buffers, not kernels): for the
  // dtype and shape of each buffer's .npy.
  Manifest m;
  std::string err;
  if (!loadManifest(dir, m, err))
    die(err);
  char openErr[4096];
  rlx_gpu_artifact *h = rlx_gpu_open(dir.c_str(), device.c_str(), openErr, sizeof(openErr));
  if (!h)
    die(openErr);
  if (nccl) {
    unsigned char id[128];
    if (rlx_gpu_nccl_unique_id(id, openErr, sizeof(openErr)))
      die(openErr);
    if (rlx_gpu_set_communicator(h, 0, 1, id, nullptr, nullptr, nullptr))
      die(rlx_gpu_last_error(h));
  }
  if (function.empty())
    function = m.entry;
  int fi = m.findFunction(function);
  if (fi < 0)
    die("--function: no function '" + function + "' in the artifact (entry '" + m.entry + "')");
  const FunctionInfo &fn = m.functions[size_t(fi)];

  // The arguments: the function's inputs and params, and for its packed
  // params the originals their packing functions take (the runtime packs
  // before the first run); a packed param given directly is used as it is.
  std::vector<const BufferInfo *> arguments;
  std::map<std::string, std::vector<const BufferInfo *>> packedBy; // packer -> its packed params
  std::set<std::string> seen;
  for (const BufferInfo &b : fn.buffers) {
    if (b.role == Role::Output)
      continue;
    if (!b.packedBy.empty()) {
      packedBy[b.packedBy].push_back(&b);
      continue;
    }
    if (seen.insert(b.name).second)
      arguments.push_back(&b);
  }
  for (const auto &[packer, packed] : packedBy) {
    bool direct = std::all_of(packed.begin(), packed.end(), [&](const BufferInfo *b) {
      return inputs.count(b->name) ||
             (!inputsDir.empty() && isFile(inputsDir + "/" + b->name + ".npy"));
    });
    const std::vector<BufferInfo> &pb = m.functions[size_t(m.findFunction(packer))].buffers;
    for (const BufferInfo *b : direct ? packed : std::vector<const BufferInfo *>{})
      if (seen.insert(b->name).second)
        arguments.push_back(b);
    for (const BufferInfo &b : pb)
      if (!direct && b.role != Role::Output && seen.insert(b.name).second)
        arguments.push_back(&b);
  }
  for (const auto &[name, file] : inputs)
    if (!seen.count(name)) {
      int b = fn.findBuffer(name);
      if (b >= 0 && fn.buffers[size_t(b)].role == Role::Output)
        die("--input " + name + ": '" + name + "' is an output of function '" + fn.name + "'");
      die("--input " + name + ": function '" + fn.name + "' has no buffer '" + name + "' (nor a packing function's argument of that name)");
    }
  std::string missing;
  for (const BufferInfo *bp : arguments) {
    const BufferInfo &b = *bp;
    std::string file;
    if (auto it = inputs.find(b.name); it != inputs.end())
      file = it->second;
    else if (!inputsDir.empty() && isFile(inputsDir + "/" + b.name + ".npy"))
      file = inputsDir + "/" + b.name + ".npy";
    if (file.empty() && zeroMissing) {
      // Timing runs of large problems (e.g. a 32k-token KV cache): no .npy.
      std::vector<uint8_t> zeros(b.bytes, 0);
      if (rlx_gpu_set_buffer(h, fn.name.c_str(), b.name.c_str(), zeros.data(), zeros.size()))
        die(rlx_gpu_last_error(h));
      continue;
    }
    if (file.empty()) {
      missing += (missing.empty() ? "" : ", ") + b.name + " (" + roleName(b.role) + ")";
      continue;
    }
    NpyArray a;
    std::vector<uint8_t> bytes;
    if (!readNpy(file, a, err) || !npyToBuffer(a, b, bytes, err))
      die(err);
    if (rlx_gpu_set_buffer(h, fn.name.c_str(), b.name.c_str(), bytes.data(), bytes.size()))
      die(rlx_gpu_last_error(h));
  }
  if (!missing.empty())
    die("missing inputs of function '" + fn.name + "': " + missing +
        " (pass --input NAME=FILE.npy or --inputs-dir DIR with NAME.npy)");

  if (!tracePath.empty() && rlx_gpu_set_trace(h, 1))
    die(rlx_gpu_last_error(h));
  if (rlx_gpu_run(h, fn.name.c_str()))
    die(rlx_gpu_last_error(h));
  // --repeat: run again with the same inputs; every run's outputs must be
  // the bits of the first (races and unwaited async copies differ).
  auto readOutputs = [&] {
    std::vector<std::vector<uint8_t>> all;
    for (const BufferInfo &b : fn.buffers) {
      if (b.role != Role::Output)
        continue;
      all.emplace_back(b.bytes);
      if (rlx_gpu_get_buffer(h, fn.name.c_str(), b.name.c_str(), all.back().data(), b.bytes))
        die(rlx_gpu_last_error(h));
    }
    return all;
  };
  if (repeat > 1) {
    std::vector<std::vector<uint8_t>> first = readOutputs();
    for (long r = 2; r <= repeat; ++r) {
      if (rlx_gpu_run(h, fn.name.c_str()))
        die(rlx_gpu_last_error(h));
      std::vector<std::vector<uint8_t>> now = readOutputs();
      size_t o = 0;
      for (const BufferInfo &b : fn.buffers) {
        if (b.role != Role::Output)
          continue;
        auto [a, c] = std::mismatch(first[o].begin(), first[o].end(), now[o].begin());
        if (a != first[o].end())
          die("--repeat: run " + std::to_string(r) + " of " + std::to_string(repeat) +
              ": output '" + b.name + "' differs from run 1 at byte " +
              std::to_string(a - first[o].begin()));
        ++o;
      }
    }
  }
  if (!tracePath.empty() && rlx_gpu_write_trace(h, tracePath.c_str()))
    die(rlx_gpu_last_error(h));
  double median = 0, minimum = 0;
  if (iters) {
    if (flushL2 && rlx_gpu_set_flush_caches(h, 1))
      die(rlx_gpu_last_error(h));
    if (rlx_gpu_time(h, fn.name.c_str(), int(warmup < 0 ? 1 : warmup), int(iters), &median, &minimum))
      die(rlx_gpu_last_error(h));
  }

  nlohmann::json outputs = nlohmann::json::array();
  if (!outputDir.empty())
    makeDirs(outputDir);
  for (const BufferInfo &b : fn.buffers) {
    if (b.role != Role::Output)
      continue;
    std::vector<uint8_t> data(b.bytes);
    if (rlx_gpu_get_buffer(h, fn.name.c_str(), b.name.c_str(), data.data(), data.size()))
      die(rlx_gpu_last_error(h));
    nlohmann::json o = {{"name", b.name}, {"dtype", b.dtype}, {"shape", b.shape}};
    if (!outputDir.empty()) {
      std::string path = outputDir + "/" + b.name + ".npy";
      if (!writeBufferNpy(path, b, data.data(), err))
        die(err);
      o["file"] = path;
      if (!json)
        std::printf("wrote %s (%s%s)\n", path.c_str(), b.dtype.c_str(), dims(b.shape).c_str());
    }
    outputs.push_back(o);
  }
  const char *dev = rlx_gpu_device(h);
  if (repeat > 1 && !json)
    std::printf("repeat: %ld runs, outputs identical (%s)\n", repeat, dev);
  if (iters && !json)
    std::printf("time: median %.4f ms, min %.4f ms over %ld iterations (%s)\n", median, minimum, iters, dev);
  if (json) {
    nlohmann::json line = {{"artifact", dir}, {"device", dev}, {"function", fn.name}, {"outputs", outputs}};
    if (repeat > 1)
      line["repeat"] = repeat;
    if (iters) {
      line["iters"] = iters;
      line["warmup"] = warmup < 0 ? 1 : warmup;
      line["flush_l2"] = flushL2;
      line["median_ms"] = median;
      line["min_ms"] = minimum;
    }
    std::printf("%s\n", line.dump().c_str());
  }
  rlx_gpu_close(h);
  return 0;
}
