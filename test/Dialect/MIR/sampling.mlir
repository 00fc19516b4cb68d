// rlx_mir.random_uniform and rlx_mir.sample: the custom form round-trips
// with the attributes left out (their defaults turn their step off), the
// decomposition (what rlx-mir-prepare-for-ad, the linalg lowering and the
// GPU generic path use) is MIR ops.
// RUN: rlx-opt %s -split-input-file | FileCheck %s --check-prefix=RT
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=RT
// RUN: rlx-opt %s -split-input-file --rlx-mir-prepare-for-ad | FileCheck %s --check-prefix=DEC

// RT-LABEL: func.func @defaults
// RT: rlx_mir.sample %arg0, %arg1 : tensor<2x8xf32>, tensor<2xf32>
// RT: rlx_mir.sample %arg0, %arg1 top_p = 9.000000e-01 : tensor<2x8xf32>, tensor<2xf32>
// DEC-LABEL: func.func @defaults
// DEC-NOT: rlx_mir.sample
// DEC: rlx_mir.topk
// DEC: rlx_mir.cumsum
func.func @defaults(%x: tensor<2x8xf32>, %u: tensor<2xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  %a = rlx_mir.sample %x, %u : tensor<2x8xf32>, tensor<2xf32>
  %b = rlx_mir.sample %x, %u top_p = 0.9 : tensor<2x8xf32>, tensor<2xf32>
  return %a, %b : tensor<2xi64>, tensor<2xi64>
}

// -----

// RT-LABEL: func.func @uniform
// RT: rlx_mir.random_uniform %arg0 seed = 7 shape = [3, 5] : tensor<i64> -> tensor<3x5xf32>
// DEC-LABEL: func.func @uniform
// DEC-NOT: rlx_mir.random_uniform
// DEC: arith.mului_extended
func.func @uniform(%o: tensor<i64>) -> tensor<3x5xf32> {
  %u = rlx_mir.random_uniform %o seed = 7 shape = [3, 5] : tensor<i64> -> tensor<3x5xf32>
  return %u : tensor<3x5xf32>
}
