//===- Manifest.h - The GPU artifact's manifest.json ------------*- C++ -*-===//
//
// An RLX GPU artifact is a directory the compiler writes (cubins, PTX, an
// optional emulator build of the same kernels) plus manifest.json, which says
// which kernels exist and, per function, which buffers it takes and which
// launches run in which order. This is the runtime's parsed, validated view of
// that file (docs/gpu-artifact.md is the format's reference). Everything after
// parsing may rely on the invariants checked here: every name resolves, every
// argument offset lies inside its buffer, sizes do not overflow.
//
// No LLVM/MLIR: the GPU runtime ships on its own.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_MANIFEST_H
#define RLX_RUNTIME_GPU_MANIFEST_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::gpu {

using Dim3 = std::array<uint32_t, 3>;

struct ModuleInfo {
  std::string name;
  std::string cubin; ///< file name relative to the artifact, "" when absent
  std::string ptx;   ///< file name relative to the artifact, "" when absent
};

struct EmuShared {
  uint64_t bytes = 0;
  uint64_t align = 1;
};

struct KernelInfo {
  std::string name;
  std::string module;
  size_t moduleIndex = 0;
  uint32_t numParams = 0;
  Dim3 block{1, 1, 1};
  uint64_t staticSharedBytes = 0;
  int64_t registers = -1; ///< -1 when the manifest does not say
  int64_t spillBytes = -1;
  int64_t stackBytes = -1;
  bool hasEmu = false;
  std::string emuSymbol;
  std::string emuUnavailable; ///< why there is no emulator entry (e.g. tcgen05)
  /// The source positions of the ops the kernel computes (file:line:col).
  std::vector<std::string> locations;
  std::vector<EmuShared> emuShared;
};

enum class Role { Input, Param, Output };
const char *roleName(Role r);

struct BufferInfo {
  std::string name;
  Role role = Role::Input;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  /// A packed parameter: the function that makes it from the original
  /// parameters, and which of its outputs it is ("" when not packed).
  std::string packedBy, packedOutput;
  /// Rows of the table an integer input indexes ("index_bound"; 0: none):
  /// rlx_gpu_set_buffer checks the values against it.
  uint64_t indexBound = 0;
};

/// Index of the arena in LaunchArg::buffer.
constexpr int kArena = -1;

/// Data the compiled module carries (a non-splat or dense_resource constant
/// too large to live in a kernel): uploaded once at open from `file` in the
/// artifact directory, read by launches as `{"constant": name, "offset"}`.
struct ConstantInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  std::string file;
};

/// A tiled TMA tensor map over a launch argument's memory
/// (cuTensorMapEncodeTiled): dimensions innermost first, zero fill outside
/// the tensor, element strides 1, no interleave.
struct TensorMapInfo {
  uint32_t rank = 0;         ///< 1..5
  uint32_t elementBytes = 0; ///< 1, 2, 4 or 8
  std::string dtype;         ///< the MLIR element type (selects the driver's data type)
  std::array<uint64_t, 5> dims{};    ///< elements per dimension
  std::array<uint64_t, 4> strides{}; ///< bytes between steps of dimensions 1..rank-1
  std::array<uint32_t, 5> box{};     ///< the box's elements per dimension
  uint32_t swizzle = 0;              ///< 0 none, 1 32B, 2 64B, 3 128B
};

struct LaunchArg {
  int buffer = kArena; ///< index into FunctionInfo::buffers, or kArena
  int constant = -1;   ///< index into Manifest::constants (then `buffer` is unused)
  uint64_t offset = 0;
  /// The parameter is the address of a tensor map of the memory at
  /// buffer + offset (made once at open) rather than that address.
  bool hasTensorMap = false;
  TensorMapInfo tensorMap;
};

/// A step of a function's plan: a kernel launch, or a collective over the
/// tensor-parallel ranks (`collective` non-empty; args are send, receive).
struct LaunchInfo {
  std::string collective; ///< "" for a kernel launch, else "all_reduce" or "all_gather"
  std::string reduction;  ///< "sum" (all_reduce)
  std::string dtype;      ///< the collective's element type (f32, f16, bf16)
  uint64_t elements = 0;  ///< the elements each rank sends
  uint64_t ranks = 1;     ///< the ranks the plan was compiled for
  size_t kernel = 0; ///< index into Manifest::kernels
  Dim3 grid{1, 1, 1};
  Dim3 block{1, 1, 1};
  uint64_t dynamicSharedBytes = 0;
  std::vector<LaunchArg> args;
};

struct FunctionInfo {
  std::string name;
  uint64_t arenaBytes = 0;
  std::vector<BufferInfo> buffers;
  std::vector<LaunchInfo> launches;
  /// Which buffers a name may mean: an output may share its name with an
  /// input or param (a layer's `hidden_states` in and out).
  enum class Lookup { Any, Source, Output };
  /// -1 when absent; with Any, an input or param before an output.
  int findBuffer(const std::string &name, Lookup which = Lookup::Any) const;
};

struct Manifest {
  std::string dir; ///< the artifact directory ("" for parseManifest)
  int version = 0;
  std::string chip;
  std::string ptxVersion;
  std::vector<ModuleInfo> modules;
  std::string emulatorLibrary; ///< "" when the artifact has no emulator build
  std::vector<KernelInfo> kernels;
  std::vector<ConstantInfo> constants;
  std::string entry;
  std::vector<FunctionInfo> functions;
  /// The rank a tensor-parallel artifact was compiled for (-1: any rank).
  int64_t rank = -1;

  int findFunction(const std::string &name) const; ///< -1 when absent
  int findKernel(const std::string &name) const;   ///< -1 when absent
};

/// Bytes per element of an MLIR element type name; 0 for f4E2M1FN (packed
/// two per byte) and -1 for an unknown name.
int dtypeBytes(const std::string &dtype);

/// Parses and validates manifest text. On failure returns false and sets
/// `error` to a message naming the offending field (e.g.
/// "functions[0].launches[2].args[1].buffer: unknown buffer 'y'").
bool parseManifest(const std::string &text, Manifest &out, std::string &error);

/// Reads DIR/manifest.json, parses it, and checks that every file it names
/// exists in DIR (cubin, ptx, emulator.library).
bool loadManifest(const std::string &dir, Manifest &out, std::string &error);

} // namespace rlx::gpu

#endif // RLX_RUNTIME_GPU_MANIFEST_H
