//===- Passes.h - RLX NVVM backend passes -----------------------*- C++ -*-===//
//
// Generated declarations of the NVVM passes (rlx-nvvm-check-target,
// rlx-nvvm-assemble) and the rlx-lower-to-nvvm pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_NVVM_PASSES_H
#define RLX_TARGET_NVVM_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::rlx {
#define GEN_PASS_DECL
#include "RLX/Target/NVVM/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Target/NVVM/Passes.h.inc"

struct NVVMPipelineOptions : public PassPipelineOptions<NVVMPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("NVIDIA chip"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("+ptxNN (default: the chip's PTX ISA)"),
                               llvm::cl::init("")};
  Option<int> optLevel{*this, "O", llvm::cl::desc("LLVM and ptxas optimization level"),
                       llvm::cl::init(3)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("run rlx-mir-fuse"), llvm::cl::init(true)};
  Option<bool> tensorCores{*this, "tensor-cores",
                           llvm::cl::desc("tensor-core kernels where they apply (false: SIMT)"),
                           llvm::cl::init(true)};
  Option<std::string> matmulKernel{
      *this, "matmul-kernel",
      llvm::cl::desc("auto | gemv | simt | tensor-cores | wgmma | tcgen05 (convert-rlx-lir-to-gpu)"),
      llvm::cl::init("auto")};
  Option<int64_t> splitK{*this, "split-k",
                         llvm::cl::desc("K splits of the gemv kernel (0: the heuristic)"),
                         llvm::cl::init(0)};
  Option<int64_t> rank{*this, "rank",
                       llvm::cl::desc("with tp: the rank this artifact is for, when the per-rank "
                                      "program uses it (a vocab-parallel lookup; -1: not given)"),
                       llvm::cl::init(-1)};
  Option<std::string> attentionKernel{
      *this, "attention-kernel",
      llvm::cl::desc("auto | simt | flash | wgmma (convert-rlx-lir-to-gpu)"), llvm::cl::init("auto")};
  Option<bool> strictKernels{
      *this, "strict-kernels",
      llvm::cl::desc("a matmul-kernel / attention-kernel that cannot take an op is an error"),
      llvm::cl::init(false)};
  Option<int64_t> kvSplits{
      *this, "kv-splits",
      llvm::cl::desc("split-KV attention (rlx-mir-split-kv): 0 the heuristic, 1 never, N forced"),
      llvm::cl::init(0)};
  ListOption<std::string> genericKernels{
      *this, "generic-kernels",
      llvm::cl::desc("MIR op names to run on the generic path (their linalg lowering) even "
                     "where a kernel template exists (rlx-gpu-generic-kernels' force)")};
  ListOption<std::string> weightArgs{
      *this, "weight-args",
      llvm::cl::desc("which unmarked arguments are weights (rlx-import-to-mir's weights)")};
  ListOption<std::string> dims{*this, "dims",
                               llvm::cl::desc("symbolic dim bindings name=size")};
  Option<int64_t> tp{*this, "tp",
                     llvm::cl::desc("tensor-parallel ranks: the per-rank program of "
                                    "rlx-mir-shard{tp=N}, its all-reduces as collective steps "
                                    "(0: none)"),
                     llvm::cl::init(0)};
  Option<std::string> spills{*this, "spills",
                             llvm::cl::desc("error | warn | ignore: a spill or stack frame"),
                             llvm::cl::init("warn")};
  Option<bool> report{*this, "report", llvm::cl::desc("a remark per kernel with its resources"),
                      llvm::cl::init(false)};
  Option<bool> assemble{*this, "assemble",
                        llvm::cl::desc("run ptxas (false: stop at PTX in gpu.binary)"),
                        llvm::cl::init(true)};
};

/// From HIR/MIR/planned LIR to LIR kernels in gpu.modules, checked for the
/// target, with the kernels still in the gpu dialect (what the emulator runs).
void buildNVVMKernelPipeline(OpPassManager &pm, const NVVMPipelineOptions &options);
/// From there to gpu.binary ops with cubins (gpu → nvvm → PTX → ptxas).
void buildNVVMCodegenPipeline(OpPassManager &pm, const NVVMPipelineOptions &options);
/// The kernels of a module after buildNVVMKernelPipeline, for the CPU
/// emulator: outlined, lowered to the LLVM dialect for the host, with access
/// checks (when `checks`) and packed `<kernel>__emu` entries.
void buildEmulatorCodegenPipeline(OpPassManager &pm, bool checks);
/// Registers `rlx-lower-to-nvvm` and the NVVM passes.
void registerNVVMPipelines();

} // namespace mlir::rlx

#endif // RLX_TARGET_NVVM_PASSES_H
