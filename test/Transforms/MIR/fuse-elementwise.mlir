// rlx-mir-fuse-elementwise: connected elementwise ops → one region op.
// RUN: rlx-opt %s --rlx-mir-fuse-elementwise -split-input-file | FileCheck %s

// RoPE tables from positions: cast, mul, cos and sin become one op with two
// results; the [32] frequency table is an input, the splat is inlined.
// CHECK-LABEL: func @rope_tables
func.func @rope_tables(%pos: tensor<?x1xi64>, %f: tensor<32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  // CHECK: %[[R:.*]]:2 = rlx_mir.elementwise ins(%arg0, %arg1 : tensor<?x1xi64>, tensor<32xf32>) -> tensor<?x32xf32>, tensor<?x32xf32> {
  // CHECK-NEXT: ^bb0(%[[P:.*]]: i64, %[[F:.*]]: f32):
  // CHECK-NEXT:   %[[PF:.*]] = arith.sitofp %[[P]] : i64 to f32
  // CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.mulf %[[PF]], %[[TWO]] : f32
  // CHECK-NEXT:   %[[A:.*]] = arith.mulf %[[S]], %[[F]] : f32
  // CHECK-NEXT:   %[[C:.*]] = math.cos %[[A]] : f32
  // CHECK-NEXT:   %[[SN:.*]] = math.sin %[[A]] : f32
  // CHECK-NEXT:   rlx_mir.yield %[[C]], %[[SN]] : f32, f32
  // CHECK: return %[[R]]#0, %[[R]]#1
  %two = rlx_mir.constant dense<2.0> : tensor<f32>
  %0 = rlx_mir.cast %pos : tensor<?x1xi64> to tensor<?x1xf32>
  %1 = rlx_mir.mul %0, %two : tensor<?x1xf32>, tensor<f32>
  %2 = rlx_mir.mul %1, %f : tensor<?x1xf32>, tensor<32xf32>
  %3 = rlx_mir.cos %2 : tensor<?x32xf32>
  %4 = rlx_mir.sin %2 : tensor<?x32xf32>
  return %3, %4 : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Intermediates read outside the chain become extra results; bf16 math runs
// in f32 and rounds once per op.
// CHECK-LABEL: func @bf16_chain
func.func @bf16_chain(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  // CHECK: %[[R:.*]]:2 = rlx_mir.elementwise ins(%arg0, %arg1 : tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>, tensor<4xbf16>
  // CHECK: arith.extf
  // CHECK: arith.addf {{.*}} : f32
  // CHECK: arith.truncf
  // CHECK: math.exp {{.*}} : f32
  // CHECK: return %[[R]]#0, %[[R]]#1
  %0 = rlx_mir.add %x, %y : tensor<4xbf16>, tensor<4xbf16>
  %1 = rlx_mir.exp %0 : tensor<4xbf16>
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// -----

// A lone elementwise op, or ops separated by a matmul, stay as they are.
// CHECK-LABEL: func @no_chain
func.func @no_chain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-NOT: rlx_mir.elementwise
  // CHECK: rlx_mir.exp
  // CHECK: rlx_mir.matmul
  // CHECK: rlx_mir.tanh
  %0 = rlx_mir.exp %x : tensor<4x4xf32>
  %1 = rlx_mir.matmul %0, %0 : tensor<4x4xf32>, tensor<4x4xf32>
  %2 = rlx_mir.tanh %1 : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// A broadcast producer that feeds two consumers is not recomputed: it stays.
// CHECK-LABEL: func @shared_small_producer
func.func @shared_small_producer(%v: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[E:.*]] = rlx_mir.exp %arg0
  // CHECK: rlx_mir.add %arg1, %[[E]]
  // CHECK: rlx_mir.mul %arg1, %[[E]]
  %0 = rlx_mir.exp %v : tensor<8xf32>
  %1 = rlx_mir.add %x, %0 : tensor<4x8xf32>, tensor<8xf32>
  %2 = rlx_mir.mul %x, %0 : tensor<4x8xf32>, tensor<8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A splat constant that widens the shape stays an input (found by the mlir
// fuzzer: RoPE with theta = 1 folds inv_freq to a splat, and the fused op's
// result was wider than its inputs' broadcast shape: invalid IR).
// CHECK-LABEL: func.func @splat_widens
// CHECK: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK: rlx_mir.elementwise ins(%arg0, %[[C]] : tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK:   arith.mulf
// CHECK:   math.exp
func.func @splat_widens(%x: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<2.0> : tensor<8xf32>
  %m = rlx_mir.mul %x, %c : tensor<4x1xf32>, tensor<8xf32>
  %e = rlx_mir.exp %m : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
