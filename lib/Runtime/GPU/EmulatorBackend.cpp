//===- EmulatorBackend.cpp - Artifacts on the CPU GPU emulator -------------===//
//
// Runs the artifact's emulator build (kernels.emu.so: every kernel compiled
// for the host as `<kernel>__emu(void **params)`) through the emulator core
// (RLX/Runtime/Emulator.h, linked into this library). "Device" memory is host
// memory, each allocation registered with the emulator so that an access
// outside every buffer is reported with the kernel, block and thread instead
// of corrupting the process; such a report fails the launch.
//
// kernels.emu.so calls the `__rlx_emu_*` hooks, which this library defines
// and exports. When this library was itself loaded RTLD_LOCAL (Python's
// ctypes does that), its symbols are invisible to later dlopens, so it first
// re-opens itself RTLD_GLOBAL.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPU/Backend.h"
#include "RLX/Runtime/Emulator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <mutex>
#include <unordered_map>

namespace rlx::gpu {
namespace {

// The emulator core keeps process-wide state (the buffer registry, the last
// report): one launch at a time in the whole process.
std::mutex &emulatorMutex() {
  static std::mutex m;
  return m;
}

// Makes this library's symbols (the __rlx_emu_* hooks) global.
bool exportOwnSymbols(std::string &error) {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void *>(&exportOwnSymbols), &info) || !info.dli_fname) {
    error = "emulator: cannot find the GPU runtime library (dladdr failed)";
    return false;
  }
  // RTLD_NOLOAD: only promote the copy already loaded, never load a second.
  void *self = ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (!self) {
    // Linked statically into an executable: the hooks are there if it was
    // linked with -rdynamic, which the later dlopen will tell.
    return true;
  }
  // The extra reference keeps the promotion; it is dropped at exit.
  return true;
}

class EmulatorBackend final : public Backend {
public:
  ~EmulatorBackend() override;
  const char *name() const override { return "emu"; }
  bool alloc(uint64_t bytes, const std::string &label, DevicePtr &out, std::string &error) override;
  void free(DevicePtr p) override;
  bool copyToDevice(DevicePtr dst, const void *src, uint64_t bytes, std::string &error) override {
    if (bytes)
      std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
    return true;
  }
  bool copyToHost(void *dst, DevicePtr src, uint64_t bytes, std::string &error) override {
    if (bytes)
      std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
    return true;
  }
  bool loadModules(const Manifest &m, std::string &error) override;
  bool launch(size_t kernel, const Dim3 &grid, const Dim3 &block, uint64_t dynamicSharedBytes, void **params,
              std::string &error) override;
  bool synchronize(std::string &error) override { return true; }
  bool encodeTensorMap(const TensorMapInfo &map, DevicePtr base, void *out, std::string &error) override {
    static_assert(sizeof(rlx_emu_tensor_map) == 128, "a tensor map is 128 bytes");
    rlx_emu_tensor_map m;
    uint32_t box[5];
    for (int d = 0; d < 5; ++d)
      box[d] = map.box[size_t(d)];
    if (const char *why = rlx_emu_encode_tensor_map(&m, reinterpret_cast<const void *>(base), map.rank,
                                                    map.elementBytes, map.dims.data(), map.strides.data(), box,
                                                    map.swizzle)) {
      error = std::string("tensor map: ") + why;
      return false;
    }
    std::memcpy(out, &m, sizeof m);
    return true;
  }
  bool timerStart(std::string &error) override {
    start_ = std::chrono::steady_clock::now();
    return true;
  }
  bool timerStop(double &ms, std::string &error) override {
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    return true;
  }
  std::vector<std::pair<double, double>> lastBlockTimes() override {
    std::lock_guard<std::mutex> lock(emulatorMutex());
    const rlx_emu_block_time *t = nullptr;
    uint64_t n = rlx_emu_last_block_times(&t);
    std::vector<std::pair<double, double>> out;
    for (uint64_t i = 0; i < n; ++i)
      out.emplace_back(t[i].start_us, t[i].duration_us);
    return out;
  }

  // Launches run to completion, so a collective sees every earlier write.
  // Device memory is host memory: the caller's host all-reduce (MPI) runs
  // on it directly; one rank copies.
  bool setCommunicator(const Communicator &c, std::string &error) override {
    if (c.size > 1 && (!c.hostAllReduce || !c.hostAllGather)) {
      error = "the emulator runs collectives over " + std::to_string(c.size) +
              " ranks through a host all-reduce and all-gather, and none was given";
      return false;
    }
    comm_ = c;
    return true;
  }
  int communicatorSize() const override { return comm_.size; }
  bool allGather(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                 std::string &error) override {
    uint64_t bytes = count * uint64_t(dtypeBytes(dtype));
    if (comm_.size <= 1) {
      if (send != recv && bytes)
        std::memmove(reinterpret_cast<void *>(recv), reinterpret_cast<const void *>(send), bytes);
      return true;
    }
    if (comm_.hostAllGather(comm_.hostContext, reinterpret_cast<const void *>(send),
                            reinterpret_cast<void *>(recv), bytes) != 0) {
      error = "the host all-gather of " + std::to_string(count) + " " + dtype + " elements failed";
      return false;
    }
    return true;
  }
  bool allReduceSum(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                    std::string &error) override {
    int eb = dtypeBytes(dtype);
    if (comm_.size <= 1) {
      if (send != recv && count)
        std::memmove(reinterpret_cast<void *>(recv), reinterpret_cast<const void *>(send),
                     count * uint64_t(eb));
      return true;
    }
    if (comm_.hostAllReduce(comm_.hostContext, reinterpret_cast<const void *>(send),
                            reinterpret_cast<void *>(recv), count, dtype.c_str()) != 0) {
      error = "the host all-reduce of " + std::to_string(count) + " " + dtype + " elements failed";
      return false;
    }
    return true;
  }

private:
  struct Kernel {
    std::string name;
    std::vector<rlx_emu_shared> shared;
    rlx_emu_kernel desc{};
  };
  struct Allocation {
    std::string label; ///< the emulator's reports may point at it
    bool registered = false;
  };

  void *library_ = nullptr;
  std::deque<Kernel> kernels_; ///< stable addresses: desc points into it
  std::unordered_map<DevicePtr, Allocation> allocations_;
  std::chrono::steady_clock::time_point start_;
  Communicator comm_;
};

EmulatorBackend::~EmulatorBackend() {
  for (auto &[p, a] : allocations_) {
    if (a.registered) {
      std::lock_guard<std::mutex> lock(emulatorMutex());
      rlx_emu_unregister_buffer(reinterpret_cast<void *>(p));
    }
    std::free(reinterpret_cast<void *>(p));
  }
  if (library_)
    ::dlclose(library_);
}

bool EmulatorBackend::alloc(uint64_t bytes, const std::string &label, DevicePtr &out, std::string &error) {
  // 256-byte aligned like cuMemAlloc; never-written bytes read as NaN (0xFF),
  // as the emulator fills shared memory, so a missing store shows up.
  uint64_t rounded = (bytes + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, rounded ? rounded : 256);
  if (!p) {
    error = "emulator: out of host memory allocating " + std::to_string(bytes) + " bytes for " + label;
    return false;
  }
  std::memset(p, 0xFF, rounded ? rounded : 256);
  Allocation &a = allocations_[reinterpret_cast<DevicePtr>(p)];
  a.label = label;
  // A zero-byte buffer is not registered: any access to it is out of bounds.
  if (bytes) {
    std::lock_guard<std::mutex> lock(emulatorMutex());
    if (rlx_emu_register_buffer(p, bytes, a.label.c_str()) != 0) {
      allocations_.erase(reinterpret_cast<DevicePtr>(p));
      std::free(p);
      error = "emulator: rlx_emu_register_buffer failed for " + label;
      return false;
    }
    a.registered = true;
  }
  out = reinterpret_cast<DevicePtr>(p);
  return true;
}

void EmulatorBackend::free(DevicePtr p) {
  auto it = allocations_.find(p);
  if (it == allocations_.end())
    return;
  if (it->second.registered) {
    std::lock_guard<std::mutex> lock(emulatorMutex());
    rlx_emu_unregister_buffer(reinterpret_cast<void *>(p));
  }
  allocations_.erase(it);
  std::free(reinterpret_cast<void *>(p));
}

bool EmulatorBackend::loadModules(const Manifest &m, std::string &error) {
  if (m.emulatorLibrary.empty()) {
    error = "emulator: the artifact has no emulator build (manifest field 'emulator.library' is absent)";
    return false;
  }
  if (!exportOwnSymbols(error))
    return false;
  std::string path = m.dir + "/" + m.emulatorLibrary;
  if (path[0] != '/' && path.find('/') == std::string::npos)
    path = "./" + path;
  library_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char *why = ::dlerror();
    error = "emulator.library: cannot load '" + path + "': " + (why ? why : "unknown error");
    return false;
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelInfo &k = m.kernels[i];
    if (!k.hasEmu) {
      error = "kernels[" + std::to_string(i) + "].emu: kernel '" + k.name + "' has no emulator entry" +
              (k.emuUnavailable.empty() ? std::string() : " (" + k.emuUnavailable + ")");
      return false;
    }
    ::dlerror();
    void *sym = ::dlsym(library_, k.emuSymbol.c_str());
    if (!sym) {
      error = "kernels[" + std::to_string(i) + "].emu.symbol: '" + k.emuSymbol + "' (kernel '" + k.name +
              "') not found in " + m.emulatorLibrary;
      return false;
    }
    Kernel &kk = kernels_.emplace_back();
    kk.name = k.name;
    for (const EmuShared &s : k.emuShared)
      kk.shared.push_back(rlx_emu_shared{s.bytes, s.align});
    kk.desc.name = kk.name.c_str();
    kk.desc.entry = reinterpret_cast<rlx_emu_entry>(sym);
    kk.desc.num_params = k.numParams;
    kk.desc.shared = kk.shared.empty() ? nullptr : kk.shared.data();
    kk.desc.num_shared = uint32_t(kk.shared.size());
  }
  return true;
}

bool EmulatorBackend::launch(size_t kernel, const Dim3 &grid, const Dim3 &block, uint64_t dynamicSharedBytes,
                             void **params, std::string &error) {
  if (kernel >= kernels_.size()) {
    error = "launch of kernel #" + std::to_string(kernel) + ": modules not loaded";
    return false;
  }
  const Kernel &k = kernels_[kernel];
  std::lock_guard<std::mutex> lock(emulatorMutex());
  if (rlx_emu_launch(&k.desc, grid.data(), block.data(), dynamicSharedBytes, params) != 0) {
    const char *report = rlx_emu_last_report();
    error = "emulator: kernel '" + k.name + "' failed:\n" + (report && *report ? report : "(no report)");
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Backend> createEmulatorBackend(std::string &error) { return std::make_unique<EmulatorBackend>(); }

} // namespace rlx::gpu
