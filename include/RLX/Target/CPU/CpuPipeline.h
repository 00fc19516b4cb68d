//===- CpuPipeline.h - RLX's CPU backend --------------------------*- C++ -*-===//
//
// The CPU path: from any RLX stage (HIR, MIR, LIR) through fusion, MIR → LIR
// (kernels, One-Shot Bufferize, the arena plan and its check), the kernels'
// bodies inlined on their buffers and lowered through linalg, BLAS calls for
// matmuls and generated loops for the rest, down to the LLVM dialect.
// Registered as the `rlx-lower-to-cpu` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_CPUPIPELINE_H
#define RLX_TARGET_CPU_CPUPIPELINE_H

#include "RLX/Conversion/HIRToMIR/HIRToMIR.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::rlx {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  Option<FusionPolicy> fusionPolicy{
      *this, "fusion-policy", llvm::cl::desc("HIR lowering: direct or fusable"),
      llvm::cl::init(FusionPolicy::Direct),
      llvm::cl::values(clEnumValN(FusionPolicy::Direct, "direct", "emit fused MIR ops"),
                       clEnumValN(FusionPolicy::Fusable, "fusable",
                                  "emit primitive chains for the fusion patterns"))};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("run rlx-mir-fuse"), llvm::cl::init(true)};
  Option<bool> importUpstream{
      *this, "import",
      llvm::cl::desc("raise TOSA/linalg input with rlx-import-to-mir (leftover TOSA is lowered "
                     "by upstream's TOSA-to-linalg passes)"),
      llvm::cl::init(true)};
  ListOption<std::string> dims{*this, "dims",
                               llvm::cl::desc("symbolic dim bindings name=size")};
  Option<int64_t> rowTile{*this, "row-tile", llvm::cl::desc("fused_matmul row tile"),
                          llvm::cl::init(512)};
  Option<bool> blas{*this, "blas", llvm::cl::desc("call BLAS for f32 matmuls"),
                    llvm::cl::init(true)};
  Option<int64_t> blasMinFlops{
      *this, "blas-min-flops",
      llvm::cl::desc("matmuls with fewer multiply-adds stay generated loops"),
      llvm::cl::init(32768)};
  Option<bool> lir{*this, "lir",
                   llvm::cl::desc("go through LIR: kernels, One-Shot Bufferize, the arena "
                                  "plan and its check (false: MIR straight to linalg)"),
                   llvm::cl::init(true)};
  Option<bool> trace{*this, "trace",
                     llvm::cl::desc("wrap each kernel call in rlx_trace_kernel_begin/end calls "
                                    "(rlx-cpu-outline-kernels' trace)"),
                     llvm::cl::init(false)};
  Option<int64_t> alignment{*this, "alignment", llvm::cl::desc("arena buffer alignment"),
                            llvm::cl::init(64)};
  Option<std::string> planReportDir{
      *this, "plan-report-dir",
      llvm::cl::desc("write each function's arena plan (JSON, SVG) into this directory")};
  Option<bool> approximateMath{*this, "approximate-math",
                               llvm::cl::desc("polynomial exp/log/tanh/erf"),
                               llvm::cl::init(true)};
};

/// Adds the whole CPU pipeline to `pm` (a module pass manager).
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// The part up to bufferized, BLAS-calling code on memrefs (before LLVM).
void buildCpuBufferPipeline(OpPassManager &pm, const CpuPipelineOptions &options);
/// The rest: loops, math, low-precision floats, LLVM dialect.
void buildCpuLLVMPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers `rlx-lower-to-cpu` and the CPU passes.
void registerCpuPipelines();

/// Memory effects for upstream's MPI collectives (read the send buffer, write
/// the receive buffer), which buffer deallocation needs to see.
void registerMPIMemoryEffectModels(DialectRegistry &registry);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_CPUPIPELINE_H
