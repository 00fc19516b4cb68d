// rlx-gpu-generic-kernels: an MIR op no GPU kernel template takes (here one
// forced with `force`) is lowered through its linalg body before MIR → LIR;
// each linalg op then becomes a kernel of its own. Ops with templates stay.
// RUN: rlx-opt %s --rlx-gpu-generic-kernels="report force=rlx_mir.softmax" --verify-diagnostics | FileCheck %s
// RUN: rlx-opt %s --rlx-gpu-generic-kernels="force=rlx_mir.softmax" --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu | FileCheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @f(
// CHECK-NOT:     rlx_mir.softmax
// CHECK:         linalg.generic
// CHECK:         %[[E:.*]] = rlx_mir.exp
// GPU-LABEL: func.func @f(
// GPU:         gpu.launch_func  @f_kernels::@f_0_linalg
// GPU:         gpu.launch_func  @f_kernels::@f_6_exp
func.func @f(%x: tensor<4x6xf32> {rlx.input = "x"}) -> tensor<4x6xf32> {
  // expected-remark @+1 {{forced onto the generic path}}
  %p = rlx_mir.softmax %x axis = -1 : tensor<4x6xf32>
  %e = rlx_mir.exp %p : tensor<4x6xf32>
  return %e : tensor<4x6xf32>
}
