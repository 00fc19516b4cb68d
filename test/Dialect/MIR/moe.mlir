// rlx_mir.grouped_matmul: the custom form round-trips, the verifier's
// errors are located, and the decomposition is MIR ops (every expert's
// matmul, a one-hot pick).
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=RT
// RUN: rlx-opt %s -split-input-file --rlx-mir-prepare-for-ad | FileCheck %s --check-prefix=DEC

// RT-LABEL: func.func @grouped
// RT: rlx_mir.grouped_matmul %arg0, %arg1, %arg2 : tensor<6x64xf32>, tensor<8x128x64xf32>, tensor<6xi64>
// DEC-LABEL: func.func @grouped
// DEC-NOT: rlx_mir.grouped_matmul
// DEC: rlx_mir.matmul {{.*}} transpose_b : tensor<6x64xf32>, tensor<8x128x64xf32>
// DEC: rlx_mir.reduce sum
func.func @grouped(%x: tensor<6x64xf32>, %w: tensor<8x128x64xf32>, %ids: tensor<6xi64>) -> tensor<6x128xf32> {
  %y = rlx_mir.grouped_matmul %x, %w, %ids : tensor<6x64xf32>, tensor<8x128x64xf32>, tensor<6xi64>
  return %y : tensor<6x128xf32>
}
