// rlx-nvvm-assemble: ptxas turns each gpu.binary's PTX into a cubin and its
// -v report into rlx.kernels; the PTX stays as rlx.ptx. Bad PTX is an error
// with ptxas's message; a bad `spills` value is an error.
// RUN: rlx-opt %S/lower-to-nvvm.mlir --rlx-lower-to-nvvm=assemble=0 | rlx-opt --rlx-nvvm-assemble="spills=error report=1" 2>&1 | FileCheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics --rlx-nvvm-assemble
// RUN: not rlx-opt %s --split-input-file --rlx-nvvm-assemble=spills=bogus 2>&1 | FileCheck %s --check-prefix=OPT

// CHECK-DAG: remark: kernel 'f_0_rms_norm': {{[0-9]+}} registers, 0 bytes spilled, 0 bytes stack
// CHECK-DAG: remark: kernel 'f_1_softmax': {{[0-9]+}} registers, 0 bytes spilled, 0 bytes stack
// CHECK: gpu.binary @f_kernels {rlx.kernels = {f_0_rms_norm = {barriers = {{.*}}, spill_bytes = 0 : i64, stack_bytes = 0 : i64}
// CHECK-SAME: rlx.ptx = "{{.*}}.entry f_0_rms_norm
// CHECK-SAME: bin = "
// OPT: rlx-nvvm-assemble: spills must be error, warn or ignore, not 'bogus'

module attributes {gpu.container_module} {
  // expected-error-re @+1 {{rlx-nvvm-assemble: 'bad': ptxas -arch=sm_80 failed{{.*}}}}
  gpu.binary @bad [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0Anot ptx at all\0A">]
}
