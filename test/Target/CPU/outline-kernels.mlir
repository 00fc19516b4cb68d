// rlx-cpu-outline-kernels: each planned LIR kernel becomes a private function
// of its distinct buffers, called in plan order: it reads to_tensor restrict
// of its inputs and materializes its result in its output buffer; arena views
// become memref.view at the planned offset. (Inlined into one function, two
// views of the same arena bytes were two `restrict` tensors of aliasing
// memory.)
// RUN: rlx-opt %s --rlx-cpu-outline-kernels -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @planned
// CHECK-SAME:    (%[[ARENA:.*]]: memref<512xi8> {rlx_lir.arena}, %[[X:.*]]: memref<8x16xf32>, %[[Y:.*]]: memref<8x16xf32>)
// CHECK:         %[[OFF:.*]] = arith.constant 0 : index
// CHECK:         %[[T:.*]] = memref.view %[[ARENA]][%[[OFF]]][] : memref<512xi8> to memref<8x16xf32>
// CHECK:         call @planned__kernel_0(%[[X]], %[[T]])
// CHECK:         call @planned__kernel_1(%[[T]], %[[Y]])
// CHECK-NOT:     rlx_lir.
// CHECK-LABEL: func.func private @planned__kernel_0
// CHECK-SAME:    (%[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<8x16xf32>)
// CHECK:         %[[AT:.*]] = bufferization.to_tensor %[[A]] restrict :
// CHECK:         %[[E:.*]] = rlx_mir.exp %[[AT]]
// CHECK:         bufferization.materialize_in_destination %[[E]] in restrict writable %[[B]]
// CHECK-LABEL: func.func private @planned__kernel_1
// CHECK:         rlx_mir.silu
func.func @planned(%arena: memref<512xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  %t = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  rlx_lir.kernel ins(%x : memref<8x16xf32>) outs(%t : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.exp %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  rlx_lir.kernel ins(%t : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  return
}

// -----

// An in-place kernel (its output reuses its input's bytes, a different view
// of them): one argument, read writable, written without `restrict` (the
// function has a to_tensor of it).
// CHECK-LABEL: func.func @in_place
// CHECK:         %[[V0:.*]] = memref.view
// CHECK:         call @in_place__neg_0(%[[V0]])
// CHECK-LABEL: func.func private @in_place__neg_0
// CHECK-SAME:    (%[[A:.*]]: memref<4xf32>)
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[A]] restrict writable
// CHECK:         %[[N:.*]] = rlx_mir.neg %[[T]]
// CHECK:         bufferization.materialize_in_destination %[[N]] in writable %[[A]]
func.func @in_place(%arena: memref<64xi8> {rlx_lir.arena}, %x: memref<4xf32>, %y: memref<4xf32>) {
  %a = rlx_lir.view %arena[0] : memref<64xi8> to memref<4xf32>
  %b = rlx_lir.view %arena[0] : memref<64xi8> to memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  rlx_lir.kernel "neg" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) attributes {in_place = array<i64: 0>} {
  ^bb0(%t: tensor<4xf32>):
    %r = rlx_mir.neg %t : tensor<4xf32>
    rlx_lir.yield %r : tensor<4xf32>
  }
  memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  return
}
