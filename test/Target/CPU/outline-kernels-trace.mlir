// rlx-cpu-outline-kernels{trace=true} (rlx-run --trace): each kernel call
// between rlx_trace_kernel_begin(id) and rlx_trace_kernel_end(id), and the
// module's rlx.trace_kernels naming kernel id's function and the source
// positions of every op fused into it (here the two ops of kernel 0).
// RUN: rlx-opt %s --rlx-cpu-outline-kernels=trace=true --split-input-file --verify-diagnostics | FileCheck %s

// CHECK:       module attributes {rlx.trace_kernels = [{locations = ["{{.*}}outline-kernels-trace.mlir:21:3", "{{.*}}outline-kernels-trace.mlir:23:10", "{{.*}}outline-kernels-trace.mlir:24:10"], name = "traced__kernel_0"}, {locations = ["{{.*}}outline-kernels-trace.mlir:27:3", "{{.*}}outline-kernels-trace.mlir:29:10"], name = "traced__kernel_1"}]}
// CHECK:       func.func private @rlx_trace_kernel_begin(i64)
// CHECK:       func.func private @rlx_trace_kernel_end(i64)
// CHECK-LABEL: func.func @traced
// CHECK:         %[[ID0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    call @rlx_trace_kernel_begin(%[[ID0]]) : (i64) -> ()
// CHECK-NEXT:    call @traced__kernel_0(
// CHECK-NEXT:    call @rlx_trace_kernel_end(%[[ID0]]) : (i64) -> ()
// CHECK:         %[[ID1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    call @rlx_trace_kernel_begin(%[[ID1]]) : (i64) -> ()
// CHECK-NEXT:    call @traced__kernel_1(
// CHECK-NEXT:    call @rlx_trace_kernel_end(%[[ID1]]) : (i64) -> ()
func.func @traced(%arena: memref<512xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  %t = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  rlx_lir.kernel ins(%x : memref<8x16xf32>) outs(%t : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.exp %a : tensor<8x16xf32>
    %s = rlx_mir.neg %r : tensor<8x16xf32>
    rlx_lir.yield %s : tensor<8x16xf32>
  }
  rlx_lir.kernel ins(%t : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  return
}

// -----

// The attribute's shape is checked.
// expected-error @+1 {{rlx.trace_kernels must be an array of {name = string, locations = [string]} on a module}}
module attributes {rlx.trace_kernels = [{name = "k"}]} {
}
