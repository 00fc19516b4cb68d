// rlx-mir-grad through rlx_mir.scan and a capped rlx_mir.while.
// RUN: rlx-opt %s --rlx-mir-grad | FileCheck %s

// The gradient of a scan: the forward scan again, stacking the carries it
// starts each step from; then a scan the other way (no reverse) carrying dh
// and the running sum of dW, stacking dx.
// CHECK-LABEL: func.func @rnn_grad
// CHECK: rlx_mir.scan init(%{{.*}} : tensor<2x4xf32>) xs(%{{.*}} : tensor<3x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) length = 3 reverse -> tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>
// CHECK: rlx_mir.scan init(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>) xs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) length = 3 -> tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x2x4xf32>
// CHECK: rlx_mir.matmul {{.*}} transpose_b
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

// A while with max_iterations is differentiated as the scan of that many
// steps, each an rlx_mir.if on the condition (the trip count carried too).
// CHECK-LABEL: func.func @tripled_grad
// CHECK: rlx_mir.scan init(%{{.*}}, %{{.*}} : tensor<f32>, tensor<i64>) length = 3 -> tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xi64>
// CHECK: rlx_mir.if
// CHECK: rlx_mir.scan init(%{{.*}} : tensor<f32>) xs(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xi64>) length = 3 reverse -> tensor<f32>
// CHECK: rlx_mir.if %{{.*}} : tensor<i1> ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) -> tensor<f32>
func.func @tripled(%x0: tensor<f32>) -> tensor<f32> {
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
  return %x : tensor<f32>
}

// With num_checkpoints = 3 over 6 steps: a scan over the 3 segments stacks
// the carry entering each (an inner scan of 2 steps per segment), then a
// scan the other way over the segments takes each inner scan's vjp from its
// checkpoint: 3 + 2 carries kept instead of 6.
// CHECK-LABEL: func.func @checkpointed_grad
// CHECK: rlx_mir.scan init(%{{.*}} : tensor<2x4xf32>) xs(%{{.*}} : tensor<3x2x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) length = 3 -> tensor<2x4xf32>, tensor<3x2x4xf32> {
// CHECK: rlx_mir.scan init(%{{.*}} : tensor<2x4xf32>) xs(%{{.*}} : tensor<2x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) length = 2 -> tensor<2x4xf32>, tensor<2x2x4xf32>
// CHECK: rlx_mir.scan init(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>) xs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<3x2x4xf32>, tensor<3x2x2x4xf32>, tensor<3x2x2x4xf32>) consts(%{{.*}} : tensor<4x4xf32>) length = 3 reverse -> tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x2x2x4xf32>
func.func @checkpointed(%h: tensor<2x4xf32>, %x: tensor<6x2x4xf32>, %w: tensor<4x4xf32>) -> tensor<f32> {
  %hT, %ys = rlx_mir.scan init(%h : tensor<2x4xf32>) xs(%x : tensor<6x2x4xf32>) consts(%w : tensor<4x4xf32>) num_checkpoints = 3 -> tensor<2x4xf32>, tensor<6x2x4xf32> {
  ^bb0(%c: tensor<2x4xf32>, %xt: tensor<2x4xf32>, %wk: tensor<4x4xf32>):
    %m = rlx_mir.matmul %c, %wk : tensor<2x4xf32>, tensor<4x4xf32>
    %s = rlx_mir.add %m, %xt : tensor<2x4xf32>, tensor<2x4xf32>
    %n = rlx_mir.tanh %s : tensor<2x4xf32>
    rlx_mir.yield %n, %s : tensor<2x4xf32>, tensor<2x4xf32>
  }
  %l = rlx_mir.reduce sum %ys axes = [0, 1, 2] : tensor<6x2x4xf32>
  return %l : tensor<f32>
}
