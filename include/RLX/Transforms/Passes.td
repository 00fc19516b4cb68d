//===- Passes.td - Target-independent RLX utility passes ----*- tablegen -*-===//
//
// Passes that any RLX backend uses on upstream dialects: lowering of the
// low-precision float conversions upstream leaves alone, and fast math
// function approximations.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TRANSFORMS_PASSES_TD
#define RLX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandLowPrecisionFloats : Pass<"rlx-expand-low-precision-floats"> {
  let summary = "Lower arith.extf/truncf of f8E4M3FN and f4E2M1FN (and, as an option, to bf16) to integer arithmetic";
  let description = [{
    Upstream MLIR 22 leaves `arith.extf`/`arith.truncf` to and from
    `f8E4M3FN` and `f4E2M1FN` unlowered (they reach LLVM as an error or a
    silent mis-compile). This pass rewrites them into bit manipulation on
    `i8`/`i4`: decoding is exact (E4M3 NaN stays NaN), encoding rounds to
    nearest even; values out of the E4M3FN range become NaN (as APFloat
    constant folding does), f4E2M1FN saturates at ±6 and maps NaN to +0.
    `rlx_mir.cast` saturates to the finite range before the conversion, so
    MIR-level casts never overflow. An f64 source is first rounded to f32
    *to odd* (toward zero, last bit set when inexact), so the value is rounded
    once. Works on scalars and vectors of any shape.

    With `include-bf16` (the CPU pipeline) it also writes f32/f64 → bf16 as
    integer rounding to nearest even (NaN: quiet, sign and payload's top bits
    kept, as vcvtneps2bf16 and the runtime's `__truncsfbf2` do) and f64 → f16
    as f32 rounded to odd then `arith.truncf` to f16: x86's vcvtneps2bf16
    flushes subnormal inputs to zero, CPUs without it would call compiler-rt
    per element, and LLVM converts f64 → f16/bf16 with a scalar call on every
    CPU; this code vectorizes and gives the same bits everywhere. GPU kernels
    keep `cvt.rn` (the option is off).
  }];
  let options = [
    Option<"includeBf16", "include-bf16", "bool", /*default=*/"false",
           "Also expand f32/f64 -> bf16 and f64 -> f16 (CPU code)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def MathApproximations : Pass<"rlx-math-approximations"> {
  let summary = "Polynomial approximations of exp, log, tanh and erf";
  let description = [{
    Replaces `math.exp`, `math.log`, `math.tanh` and `math.erf` on f32 with
    upstream's polynomial approximations (a few ulp), which vectorize, instead
    of libm calls that do not. Trigonometric functions keep libm (RoPE angles
    can be large).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def VerifyShardGrids : Pass<"rlx-verify-shard-grids"> {
  let summary = "Reject device grids that upstream's sharding passes divide by";
  let description = [{
    Upstream's `shard.grid` verifier accepts a grid axis of size 0, and
    `sharding-propagation` / `shard-partition` then divide by it (SIGFPE).
    This pass checks every `shard.grid` under the op it runs on: each static axis size
    must be at least 1 (`?` is kept). It changes nothing. `rlx-opt` runs it
    first whenever its pipeline contains `sharding-propagation` or
    `shard-partition`, so the fault is a located error instead of a crash.
  }];
}

#endif // RLX_TRANSFORMS_PASSES_TD
