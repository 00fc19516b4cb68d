// rlx-lower-to-nvvm: MIR to a cubin per function, with ptxas's report on
// the gpu.binary; the PTX uses 128-bit global loads/stores, warp shuffles and
// shared memory for the block reductions.
// RUN: rlx-opt %s --rlx-lower-to-nvvm="spills=error report=1" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --input-file=%t.mlir
// RUN: rlx-opt %s --rlx-lower-to-nvvm="assemble=0" | FileCheck %s --check-prefix=PTX
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 spills=error" -o /dev/null
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_100a spills=error" -o /dev/null
// The PTX ISA newer than the installed ptxas, or older than the chip (L3).
// RUN: not rlx-opt %s --rlx-lower-to-nvvm="features=+ptx95" 2>&1 | FileCheck %s --check-prefix=L3
// RUN: not rlx-opt %s --rlx-lower-to-nvvm="features=+ptx60" 2>&1 | FileCheck %s --check-prefix=OLD

// REPORT-DAG: remark: kernel 'f_0_rms_norm': {{[0-9]+}} registers, 0 bytes spilled, 0 bytes stack
// REPORT-DAG: remark: kernel 'f_1_softmax': {{[0-9]+}} registers, 0 bytes spilled, 0 bytes stack
// CHECK: gpu.launch_func @f_kernels::@f_0_rms_norm
// CHECK: gpu.binary @f_kernels {{.*}}rlx.kernels = {f_0_rms_norm = {barriers = {{[0-9]+}} : i64, registers = {{[0-9]+}} : i64, shared_bytes = {{[0-9]+}} : i64, spill_bytes = 0 : i64, stack_bytes = 0 : i64}
// CHECK-SAME: rlx.ptx = "
// CHECK-SAME: [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx{{[0-9]+}}">, {{.*}}bin = "
// PTX: .target sm_90a
// PTX: .entry f_0_rms_norm
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: .entry f_1_softmax
// PTX: .shared
// PTX: bar.sync
// PTX: st.global.v4.b32
// L3: PTX ISA 9.5 is newer than the installed ptxas ({{.*}}) accepts (PTX ISA {{[0-9.]+}} at most)
// OLD: PTX ISA 6.0 does not support sm_90a; it needs PTX ISA 8.0 or newer (+ptx80)
func.func @f(%x: tensor<4x1000xf32>, %g: tensor<1000xf32>) -> tensor<4x1000xf32> {
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<4x1000xf32>, tensor<1000xf32>
  %s = rlx_mir.softmax %n axis = 1 : tensor<4x1000xf32>
  return %s : tensor<4x1000xf32>
}
