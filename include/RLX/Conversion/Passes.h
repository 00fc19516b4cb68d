//===- Passes.h - RLX conversion passes -------------------------*- C++ -*-===//
//
// Declarations of the passes that move IR between RLX levels; generated from
// Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_PASSES_H
#define RLX_CONVERSION_PASSES_H

#include "RLX/Conversion/HIRToMIR/HIRToMIR.h"
#include "RLX/Conversion/MIRToLinalg/MIRToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rlx::mir {
class MIRDialect;
} // namespace mlir::rlx::mir
namespace mlir::rlx::lir {
class LIRDialect;
} // namespace mlir::rlx::lir

namespace mlir::rlx {

#define GEN_PASS_DECL
#include "RLX/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Conversion/Passes.h.inc"

} // namespace mlir::rlx

#endif // RLX_CONVERSION_PASSES_H
