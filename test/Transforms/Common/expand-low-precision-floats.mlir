// rlx-expand-low-precision-floats: arith.truncf/extf to and from f8E4M3FN and
// f4E2M1FN (scalars and vectors) become integer arithmetic on the bit
// patterns (upstream 22 leaves them for LLVM, which cannot select them: case
// L1); without include-bf16 other float conversions are left alone, with it
// (the CPU pipeline) f32/f64 → bf16 is integer code too and f64 → f16 goes
// through f32 rounded to odd. The values are checked against ml_dtypes by
// test/python/test_field_cases.py (test_l1_*) and test_float_conversions.py.
// RUN: rlx-opt %s --rlx-expand-low-precision-floats | FileCheck %s
// RUN: rlx-opt %s --rlx-expand-low-precision-floats=include-bf16 | FileCheck %s --check-prefix=BF16
// LLVM keeps the integer code: on a CPU with AVX512-BF16 no vcvtneps2bf16
// (it flushes subnormal inputs to zero), elsewhere no compiler-rt calls.
// RUN: rlx-opt %s --rlx-expand-low-precision-floats=include-bf16 --convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx512bf16,+avx512vl | FileCheck %s --check-prefix=ASM
// RUN: rlx-opt %s --rlx-expand-low-precision-floats=include-bf16 --convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 | FileCheck %s --check-prefix=ASM
// ASM-NOT: vcvtneps2bf16
// ASM-NOT: __trunc
// ASM:     bf16_vector:
// ASM-NOT: vcvtneps2bf16
// ASM-NOT: __trunc
// RUN: rlx-opt %s --rlx-expand-low-precision-floats --convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func @f8_round_trip
// Decode: exponent + 120 (bias 127 - 7), mantissa << 20; NaN (0x7FC00000)
// for S.1111.111; subnormals scale by 2^-9.
// CHECK-DAG: arith.constant 120 : i32
// CHECK-DAG: arith.constant 2143289344 : i32
// CHECK-DAG: arith.constant 0.001953125 : f32
// Encode: round to nearest even on the f32 bits.
// CHECK:     arith.bitcast %{{.*}} : f32 to i32
// CHECK:     math.roundeven
// CHECK:     arith.trunci %{{.*}} : i32 to i8
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK:     return
// LLVM-LABEL: define float @f8_round_trip
// LLVM-NOT:   fptrunc
// LLVM-NOT:   fpext
func.func @f8_round_trip(%x: f32) -> f32 {
  %t = arith.truncf %x : f32 to f8E4M3FN
  %e = arith.extf %t : f8E4M3FN to f32
  return %e : f32
}

// CHECK-LABEL: func @f4_vector_round_trip
// LLVM-LABEL: define <4 x float> @f4_vector_round_trip
// LLVM-NOT:   fptrunc
// LLVM-NOT:   fpext
// CHECK:     arith.trunci %{{.*}} : vector<4xi32> to vector<4xi4>
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK:     return
func.func @f4_vector_round_trip(%x: vector<4xf32>) -> vector<4xf32> {
  %t = arith.truncf %x : vector<4xf32> to vector<4xf4E2M1FN>
  %e = arith.extf %t : vector<4xf4E2M1FN> to vector<4xf32>
  return %e : vector<4xf32>
}

// Without include-bf16 (GPU kernels: cvt.rn) bf16 is left to LLVM; with it
// (CPU code) f32 → bf16 is integer rounding to nearest even, NaN quieted
// with its sign and payload (0x40 set on the shifted bits).
// CHECK-LABEL: func @bf16(
// CHECK:     arith.truncf %{{.*}} : f32 to bf16
// BF16-LABEL: func @bf16(
// BF16-DAG:   arith.constant 32767 : i32
// BF16-DAG:   arith.constant 2139095040 : i32
// BF16-DAG:   arith.constant 64 : i32
// BF16:       arith.cmpi ugt
// BF16:       arith.select
// BF16:       arith.trunci %{{.*}} : i32 to i16
// BF16:       arith.bitcast %{{.*}} : i16 to bf16
// BF16-NOT:   arith.truncf
// BF16:       return
// LLVM-LABEL: define bfloat @bf16(
// LLVM:       fptrunc float %{{.*}} to bfloat
func.func @bf16(%x: f32) -> bf16 {
  %t = arith.truncf %x : f32 to bf16
  return %t : bf16
}

// An f64 source goes through f32 rounded to odd (truncated toward zero, the
// last bit set when inexact), so that E4M3 rounds the f64 value once.
// CHECK-LABEL: func @f64_to_f8_rounds_once
// CHECK:     %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:     %[[BACK:.*]] = arith.extf %[[R]] : f32 to f64
// CHECK:     arith.cmpf oeq, %[[BACK]]
// CHECK:     arith.cmpf ogt
// CHECK:     arith.subi
// CHECK:     arith.ori
// CHECK:     math.roundeven
// CHECK:     arith.trunci %{{.*}} : i32 to i8
// CHECK-NOT: arith.truncf %{{.*}} to f8E4M3FN
// CHECK:     return
func.func @f64_to_f8_rounds_once(%x: f64) -> f8E4M3FN {
  %t = arith.truncf %x : f64 to f8E4M3FN
  return %t : f8E4M3FN
}

// f64 → f16: f32 rounded to odd, then the f32 → f16 conversion (F16C's).
// CHECK-LABEL: func @f64_to_f16
// CHECK:       arith.truncf %{{.*}} : vector<4xf64> to vector<4xf16>
// BF16-LABEL:  func @f64_to_f16
// BF16:        arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// BF16:        arith.ori
// BF16:        arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// BF16-NOT:    arith.truncf %{{.*}} : vector<4xf64> to vector<4xf16>
func.func @f64_to_f16(%x: vector<4xf64>) -> vector<4xf16> {
  %t = arith.truncf %x : vector<4xf64> to vector<4xf16>
  return %t : vector<4xf16>
}

// CHECK-LABEL: func @bf16_vector
// CHECK:       arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// BF16-LABEL:  func @bf16_vector
// BF16:        arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// BF16-NOT:    arith.truncf
func.func @bf16_vector(%x: vector<16xf32>) -> vector<16xbf16> {
  %t = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %t : vector<16xbf16>
}

