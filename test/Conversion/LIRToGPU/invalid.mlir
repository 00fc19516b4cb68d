// convert-rlx-lir-to-gpu rejects what it cannot lower with a located error.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --split-input-file --verify-diagnostics --convert-rlx-lir-to-gpu
// RUN: not rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu=chip=sm_42 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: unknown NVIDIA chip 'sm_42'; supported: sm_80,

// expected-error @+1 {{convert-rlx-lir-to-gpu needs planned LIR (run rlx-lir-plan-buffers first)}}
func.func @unplanned(%x: tensor<4x64xf32>, %g: tensor<64xf32>) -> tensor<4x64xf32> {
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<4x64xf32>, tensor<64xf32>
  return %n : tensor<4x64xf32>
}
