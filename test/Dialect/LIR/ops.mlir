// Round trips of every rlx_lir op: custom form, generic form, and bytecode.
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s -emit-bytecode | rlx-opt | FileCheck %s

// CHECK-LABEL: func @planned
// CHECK-SAME: %[[ARENA:.*]]: memref<1536xi8> {rlx_lir.arena}
func.func @planned(%arena: memref<1536xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %w: memref<16x16xf32>,
                   %y: memref<8x16xf32>) {
  // CHECK: %[[T:.*]] = rlx_lir.view %[[ARENA]][0] : memref<1536xi8> to memref<8x16xf32>
  %t = rlx_lir.view %arena[0] : memref<1536xi8> to memref<8x16xf32>
  // CHECK: %[[H:.*]] = rlx_lir.view %[[ARENA]][512] : memref<1536xi8> to memref<4x16xbf16>
  %h = rlx_lir.view %arena[512] : memref<1536xi8> to memref<4x16xbf16>
  // CHECK: rlx_lir.kernel "mm0" ins(%{{.*}}, %{{.*}} : memref<8x16xf32>, memref<16x16xf32>) outs(%[[T]] : memref<8x16xf32>)
  rlx_lir.kernel "mm0" ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%t : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>):
    // CHECK: rlx_mir.matmul
    %r = rlx_mir.matmul %a, %b : tensor<8x16xf32>, tensor<16x16xf32>
    // CHECK: rlx_lir.yield %{{.*}} : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  // A kernel without inputs and with a constant in its body.
  // CHECK: rlx_lir.kernel outs(%{{.*}} : memref<8x16xf32>)
  rlx_lir.kernel outs(%y : memref<8x16xf32>) {
    %c = rlx_mir.constant dense<0.5> : tensor<8x16xf32>
    rlx_lir.yield %c : tensor<8x16xf32>
  }
  // CHECK: rlx_lir.kernel ins(%[[T]] : memref<8x16xf32>) outs(%{{.*}} : memref<8x16xf32>) attributes {note = "silu"}
  rlx_lir.kernel ins(%t : memref<8x16xf32>) outs(%y : memref<8x16xf32>) attributes {note = "silu"} {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  return
}

// The tensor form: what convert-rlx-mir-to-lir makes and One-Shot Bufferize
// turns into the buffer form.
// CHECK-LABEL: func @on_tensors
func.func @on_tensors(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  // CHECK: %{{.*}} = rlx_lir.kernel "silu" ins(%{{.*}} : tensor<8x16xf32>) outs(%[[E]] : tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = rlx_lir.kernel "silu" ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x16xf32>):
    %s = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %s : tensor<8x16xf32>
  }
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func @in_place
func.func @in_place(%arena: memref<512xi8> {rlx_lir.arena}) {
  %t = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  // CHECK: rlx_lir.kernel ins(%{{.*}} : memref<8x16xf32>) outs(%{{.*}} : memref<8x16xf32>) attributes {in_place = array<i64: 0>}
  rlx_lir.kernel ins(%t : memref<8x16xf32>) outs(%t : memref<8x16xf32>) attributes {in_place = array<i64: 0>} {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  return
}
