// rlx_mir.if, while and scan: the ops round-trip; the CPU path's lowering to
// scf (convert-rlx-mir-to-linalg); the GPU path's unrolled form
// (rlx-mir-unroll-control-flow). Derivatives: control-flow-grad.mlir.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: rlx-opt %s -split-input-file --convert-rlx-mir-to-linalg | FileCheck %s --check-prefix=SCF
// RUN: rlx-opt %s -split-input-file --rlx-mir-unroll-control-flow | FileCheck %s --check-prefix=UNROLL

// ROUND-LABEL: func.func @rnn
// ROUND: rlx_mir.scan init(%{{.*}} : tensor<2x4xf32>) xs(%{{.*}} : tensor<3x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) reverse -> tensor<2x4xf32>, tensor<3x2x4xf32> {
// SCF-LABEL: func.func @rnn
// SCF: %[[EMPTY:.*]] = tensor.empty() : tensor<3x2x4xf32>
// SCF: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[YS:.*]] = %[[EMPTY]]) -> (tensor<2x4xf32>, tensor<3x2x4xf32>)
// SCF: %[[T:.*]] = arith.subi %{{.*}}, %[[I]] : index
// SCF: tensor.extract_slice %{{.*}}[%[[T]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
// SCF: linalg.matmul
// SCF: %[[Y:.*]] = tensor.insert_slice %{{.*}} into %[[YS]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// SCF: scf.yield %{{.*}}, %[[Y]] : tensor<2x4xf32>, tensor<3x2x4xf32>
// UNROLL-LABEL: func.func @rnn
// UNROLL-NOT: rlx_mir.scan
// UNROLL: rlx_mir.slice %{{.*}} offsets [2, 0, 0] sizes [1, 2, 4]
// UNROLL: rlx_mir.slice %{{.*}} offsets [1, 0, 0] sizes [1, 2, 4]
// UNROLL: rlx_mir.slice %{{.*}} offsets [0, 0, 0] sizes [1, 2, 4]
// UNROLL: rlx_mir.concat
func.func @rnn(%h: tensor<2x4xf32>, %x: tensor<3x2x4xf32>, %w: tensor<4x4xf32>) -> tensor<f32> {
  %hT, %ys = rlx_mir.scan init(%h : tensor<2x4xf32>) xs(%x : tensor<3x2x4xf32>) consts(%w : tensor<4x4xf32>) reverse -> tensor<2x4xf32>, tensor<3x2x4xf32> {
  ^bb0(%c: tensor<2x4xf32>, %xt: tensor<2x4xf32>, %wk: tensor<4x4xf32>):
    %m = rlx_mir.matmul %c, %wk : tensor<2x4xf32>, tensor<4x4xf32>
    %s = rlx_mir.add %m, %xt : tensor<2x4xf32>, tensor<2x4xf32>
    %n = rlx_mir.tanh %s : tensor<2x4xf32>
    rlx_mir.yield %n, %s : tensor<2x4xf32>, tensor<2x4xf32>
  }
  %l = rlx_mir.reduce sum %ys axes = [0, 1, 2] : tensor<3x2x4xf32>
  return %l : tensor<f32>
}

// -----

// ROUND-LABEL: func.func @cf1
// ROUND: rlx_mir.while ins(%{{.*}} : tensor<f32>) max_iterations = 3 -> tensor<f32>, tensor<i64> cond {
// ROUND: } do {
// SCF-LABEL: func.func @cf1
// SCF: %[[W:.*]]:2 = scf.while (%[[X:.*]] = %{{.*}}, %[[N:.*]] = %c0_i64) : (tensor<f32>, i64) -> (tensor<f32>, i64) {
// SCF: %[[LT:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// SCF: %[[UNDER:.*]] = arith.cmpi slt, %[[N]], %c3_i64 : i64
// SCF: %[[GO:.*]] = arith.andi %[[UNDER]], %[[LT]] : i1
// SCF: scf.condition(%[[GO]]) %[[X]], %[[N]] : tensor<f32>, i64
// SCF: } do {
// SCF: arith.addi %{{.*}}, %c1_i64 : i64
// SCF: tensor.from_elements %[[W]]#1 : tensor<i64>
// UNROLL-LABEL: func.func @cf1
// UNROLL-NOT: rlx_mir.while
// UNROLL-COUNT-3: rlx_mir.select
func.func @cf1(%x0: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %x, %trips = rlx_mir.while ins(%x0 : tensor<f32>) max_iterations = 3 -> tensor<f32>, tensor<i64> cond {
  ^bb0(%a: tensor<f32>):
    %lt = rlx_mir.elementwise ins(%a : tensor<f32>) -> tensor<i1> {
    ^bb0(%s: f32):
      %c = arith.constant 100.0 : f32
      %b = arith.cmpf olt, %s, %c : f32
      rlx_mir.yield %b : i1
    }
    rlx_mir.yield %lt : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    %three = rlx_mir.constant dense<3.0> : tensor<f32>
    %y = rlx_mir.mul %a, %three : tensor<f32>, tensor<f32>
    rlx_mir.yield %y : tensor<f32>
  }
  return %x, %trips : tensor<f32>, tensor<i64>
}

// -----

// ROUND-LABEL: func.func @branch
// ROUND: rlx_mir.if %{{.*}} : tensor<i1> ins(%{{.*}} : tensor<4xf32>) -> tensor<4xf32> {
// ROUND: } else {
// SCF-LABEL: func.func @branch
// SCF: %[[P:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// SCF: scf.if %[[P]] -> (tensor<4xf32>) {
// SCF: math.exp
// SCF: } else {
// SCF: arith.negf
// UNROLL-LABEL: func.func @branch
// UNROLL: %[[E:.*]] = rlx_mir.exp
// UNROLL: %[[N:.*]] = rlx_mir.neg
// UNROLL: rlx_mir.select %{{.*}}, %[[E]], %[[N]]
func.func @branch(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx_mir.if %p : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = rlx_mir.exp %a : tensor<4xf32>
    rlx_mir.yield %e : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %n = rlx_mir.neg %a : tensor<4xf32>
    rlx_mir.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
