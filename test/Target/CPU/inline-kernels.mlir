// rlx-cpu-inline-kernels: each planned LIR kernel becomes its body, reading
// to_tensor of its input buffers and materializing its result in its output
// buffer; arena views become memref.view at the planned offset.
// RUN: rlx-opt %s --rlx-cpu-inline-kernels | FileCheck %s

// CHECK-LABEL: func.func @planned
// CHECK-SAME:    (%[[ARENA:.*]]: memref<512xi8> {rlx_lir.arena}, %[[X:.*]]: memref<8x16xf32>, %[[Y:.*]]: memref<8x16xf32>)
// CHECK:         %[[OFF:.*]] = arith.constant 0 : index
// CHECK:         %[[T:.*]] = memref.view %[[ARENA]][%[[OFF]]][] : memref<512xi8> to memref<8x16xf32>
// CHECK:         %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK:         %[[E:.*]] = rlx_mir.exp %[[XT]]
// CHECK:         bufferization.materialize_in_destination %[[E]] in restrict writable %[[T]]
// CHECK:         %[[TT:.*]] = bufferization.to_tensor %[[T]] restrict
// CHECK:         %[[S:.*]] = rlx_mir.silu %[[TT]]
// CHECK:         bufferization.materialize_in_destination %[[S]] in restrict writable %[[Y]]
// CHECK-NOT:     rlx_lir.
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
