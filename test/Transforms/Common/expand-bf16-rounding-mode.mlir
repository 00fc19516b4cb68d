// rlx-expand-low-precision-floats{include-bf16} writes only the default
// rounding (to nearest even) as integer code: another rounding mode is left
// to LLVM as it was written.
// RUN: rlx-opt %s --rlx-expand-low-precision-floats=include-bf16 | FileCheck %s

// CHECK-LABEL: func @bf16_toward_zero
// CHECK:       arith.truncf %{{.*}} toward_zero : f32 to bf16
func.func @bf16_toward_zero(%x: f32) -> bf16 {
  %t = arith.truncf %x toward_zero : f32 to bf16
  return %t : bf16
}

// CHECK-LABEL: func @f16_from_f64_toward_zero
// CHECK:       arith.truncf %{{.*}} toward_zero : f64 to f16
func.func @f16_from_f64_toward_zero(%x: f64) -> f16 {
  %t = arith.truncf %x toward_zero : f64 to f16
  return %t : f16
}

// The default rounding is expanded, keeping the fastmath flags on what
// stays a truncf.
// CHECK-LABEL: func @f16_from_f64_fastmath
// CHECK:       arith.truncf %{{.*}} : f64 to f32
// CHECK:       arith.truncf %{{.*}} fastmath<afn> : f32 to f16
func.func @f16_from_f64_fastmath(%x: f64) -> f16 {
  %t = arith.truncf %x fastmath<afn> : f64 to f16
  return %t : f16
}
