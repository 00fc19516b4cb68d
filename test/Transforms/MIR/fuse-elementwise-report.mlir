// rlx-mir-fuse-elementwise=report says why elementwise ops stay apart (the
// option was accepted and did nothing).
// RUN: rlx-opt %s --rlx-mir-fuse-elementwise=report -verify-diagnostics | FileCheck %s

// A [8] value read by two [4, 8] chains is not recomputed in both: it stays
// its own op, and the report says so.
// CHECK-LABEL: func.func @shared_broadcast(
// CHECK:         rlx_mir.exp
// CHECK-COUNT-2: rlx_mir.elementwise
func.func @shared_broadcast(%a: tensor<8xf32>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @+1 {{rlx_mir.exp not fused: [rlx-mir-fuse-elementwise] shape mismatch: tensor<8xf32> broadcasts into tensor<4x8xf32> and has other readers (only a sole reader recomputes it)}}
  %e = rlx_mir.exp %a : tensor<8xf32>
  %0 = rlx_mir.add %x, %e : tensor<4x8xf32>, tensor<8xf32>
  %1 = rlx_mir.tanh %0 : tensor<4x8xf32>
  %2 = rlx_mir.mul %y, %e : tensor<4x8xf32>, tensor<8xf32>
  %3 = rlx_mir.neg %2 : tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
