//===- LIRToGPU.h - Planned LIR kernels to gpu.func + a launch plan -*- C++ -*-===//
//
// convert-rlx-lir-to-gpu turns every rlx_lir.kernel of a planned function
// into a `gpu.func` of one `gpu.module` per function, built by the kernel
// template registered for the kernel's root op (one op family per file in
// lib/Conversion/LIRToGPU), and the kernel op into a `gpu.launch_func` on the
// same buffers: the host side is a launch plan (kernel, grid, block, dynamic
// shared memory, buffers as arena views or IO arguments), which the artifact
// writer and the runtimes read; it is not lowered with gpu-to-llvm.
//
// Kernels take their buffers as statically shaped memrefs, passed as bare
// pointers (each a pointer into the arena or an IO buffer; static layouts,
// e.g. a slice of the merged QKV output, are applied inside the kernel).
// Templates query the target (NVVMTarget) for what it supports and choose
// their launch configuration from the shapes; the same gpu.func then goes to
// NVVM (rlx-lower-to-nvvm) or to the CPU emulator.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_LIRTOGPU_LIRTOGPU_H
#define RLX_CONVERSION_LIRTOGPU_LIRTOGPU_H

#include "RLX/Dialect/LIR/IR/LIROps.h"
#include "RLX/Target/NVVM/NVVMTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <memory>

namespace mlir::rlx::gpu_kernels {

/// A TMA tensor map the host builds for a kernel (upstream
/// `nvgpu.tma.create.descriptor`, written to the artifact as a `tensor_map`
/// launch argument) and the kernel takes as an `!llvm.ptr` parameter.
struct TensorMapParam {
  unsigned memrefArg = 0;        ///< the gpu.func argument (a memref) it maps
  SmallVector<int64_t> shape;    ///< the tensor as the map sees it: the memref,
                                 ///< its leading dimensions collapsed into one, or
                                 ///< its last dimension split in two ([.., H·D] ->
                                 ///< [.., H, D]; strided layouts allowed)
  SmallVector<int64_t> box;      ///< elements per load, outermost first
  unsigned swizzle = 0;          ///< 0 none, 1 32B, 2 64B, 3 128B
};

/// How a kernel is launched.
struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamicSharedBytes = 0;
  /// The kernel's tensor-map parameters, in order after its memrefs.
  SmallVector<TensorMapParam> tensorMaps;
};

/// What a template builds from: the kernel op, its root op, the gpu.func to
/// fill (its entry block is empty; the builder is at its start) and the
/// memrefs of the kernel's inputs and outputs as the function's arguments.
struct KernelContext {
  lir::KernelOp kernel;
  Operation *root = nullptr;
  gpu::GPUFuncOp fn;
  OpBuilder &b;
  const nvvm::NVVMTarget &target;
  SmallVector<Value> inputs;  ///< one per kernel input (memref arguments)
  SmallVector<Value> outputs; ///< one per kernel output
  /// Tensor-core kernels where they apply (false: the SIMT fallback only).
  bool tensorCores = true;
  /// matmul-kernel: "auto", "gemv", "simt", "tensor-cores" or "wgmma".
  std::string matmulKernel = "auto";
  /// split-k of the gemv kernel (0: the heuristic).
  int64_t splitK = 0;
  /// attention-kernel: "auto", "simt", "flash" (mma.sync) or "wgmma" (sm_90a).
  std::string attentionKernel = "auto";
  /// A matmul-kernel / attention-kernel that cannot take an op is an error
  /// (else the heuristic's kernel, with a remark).
  bool strictKernels = false;
  /// Appends an `!llvm.ptr` parameter to `fn` for the tensor map `param`
  /// (recorded in `launch`) and returns it.
  Value addTensorMapParam(LaunchConfig &launch, const TensorMapParam &param);
  /// The memref holding the kernel body's value `bodyValue` (an operand of
  /// the root op): the input's argument for a block argument, or, for a
  /// constant cloned into the kernel, a `memref.global` of the gpu.module
  /// read with `memref.get_global`. Null for anything else.
  Value operand(Value bodyValue);
  /// `value` as a constant `memref.global` of the gpu.module, read with
  /// `memref.get_global` (tables a kernel computes at build time).
  Value constantTable(DenseElementsAttr value);
};

/// A kernel template: one op family.
class KernelTemplate {
public:
  virtual ~KernelTemplate() = default;
  virtual StringRef name() const = 0;
  /// True when this template computes `root` (a kernel's root op).
  virtual bool matches(Operation *root) const = 0;
  /// Builds the body of `ctx.fn` (ending with gpu.return) and returns the
  /// launch configuration, or fails with a located error.
  virtual FailureOr<LaunchConfig> build(KernelContext &ctx) const = 0;
};

/// The templates RLX ships, in the order they are tried.
const std::vector<std::unique_ptr<KernelTemplate>> &builtinKernelTemplates();

/// Registration hooks, one per op-family file.
void addElementwiseTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addNormTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addSoftmaxTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addReduceTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addDataMovementTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addMatmulTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addAttentionTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addNvfp4Templates(std::vector<std::unique_ptr<KernelTemplate>> &out);
void addFftTemplates(std::vector<std::unique_ptr<KernelTemplate>> &out);

/// Builds the copy kernel for a host-side `memref.copy` (IO copies, the past
/// KV cache into its slice of the present one).
FailureOr<LaunchConfig> buildCopyKernel(gpu::GPUFuncOp fn, OpBuilder &b, Value src, Value dst,
                                        const nvvm::NVVMTarget &target);

/// Builds an element-wise kernel for a host-side linalg op on buffers (what
/// upstream's TOSA/linalg lowering leaves of an import: casts, compares,
/// selects, fills, transposes, reductions) whose indexing maps pick dims or
/// constants: one thread per point of its parallel loops, the reduced loops
/// in order within it (not a fast reduction: what imports leave is small),
/// the body cloned. `args` are the kernel's arguments for the op's buffer
/// operands, in order (scalar operands must be constants). Fails (the
/// caller's located error) otherwise.
/// Buffers the body captures from the host function (loaded in the body)
/// come after the operands' in `args`, in the order of capturedBuffers.
FailureOr<LaunchConfig> buildLinalgElementwiseKernel(gpu::GPUFuncOp fn, OpBuilder &b,
                                                     Operation *generic, ValueRange args);

/// The buffers `op`'s body reads from outside it (first use first).
SmallVector<Value> capturedBuffers(Operation *op);

} // namespace mlir::rlx::gpu_kernels

#endif // RLX_CONVERSION_LIRTOGPU_LIRTOGPU_H
