// rlx_mir.custom_fn: the op round-trips; rlx-mir-prepare-for-ad inlines its
// body; rlx-mir-grad uses a vjp region where there is one (the body's own
// derivative otherwise); the verifier's errors.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: rlx-opt %s -split-input-file --rlx-mir-prepare-for-ad 2>&1 | FileCheck %s --check-prefix=INLINE
// RUN: rlx-opt %s -split-input-file --rlx-mir-grad | FileCheck %s --check-prefix=GRAD

// ROUND-LABEL: func.func @ste
// ROUND: rlx_mir.custom_fn "ste_clamp" ins(%{{.*}} : tensor<8xf32>) -> tensor<8xf32> {
// ROUND: } vjp {
// ROUND: ^bb0(%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %[[DR:.*]]: tensor<8xf32>):
// ROUND-NEXT: rlx_mir.yield %[[DR]] : tensor<8xf32>
// INLINE: warning: custom_fn 'ste_clamp' is inlined here; its vjp/jvp rules no longer apply to the result
// INLINE-LABEL: func.func @ste
// INLINE-NOT: custom_fn
// INLINE: rlx_mir.max
// INLINE: rlx_mir.min
// GRAD-LABEL: func.func @ste_grad
// The forward copy keeps the op (it carries its rule); the cotangent of %y
// (2·y·d_output) passes to d_x unchanged: no min/max mask after it.
// GRAD: rlx_mir.custom_fn "ste_clamp"
// GRAD: } vjp {
// GRAD: rlx_mir.elementwise
// GRAD-NOT: arith.cmpf
// GRAD: %[[D:.*]] = rlx_mir.add
// GRAD-NEXT: return %{{.*}}, %[[D]]
func.func @ste(%x: tensor<8xf32> {rlx.input = "x"}) -> tensor<f32> {
  %y = rlx_mir.custom_fn "ste_clamp" ins(%x : tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %lo = rlx_mir.constant dense<-1.0> : tensor<f32>
    %hi = rlx_mir.constant dense<1.0> : tensor<f32>
    %m = rlx_mir.max %a, %lo : tensor<8xf32>, tensor<f32>
    %c = rlx_mir.min %m, %hi : tensor<8xf32>, tensor<f32>
    rlx_mir.yield %c : tensor<8xf32>
  } vjp {
  ^bb0(%a: tensor<8xf32>, %r: tensor<8xf32>, %dr: tensor<8xf32>):
    rlx_mir.yield %dr : tensor<8xf32>
  }
  %s = rlx_mir.mul %y, %y : tensor<8xf32>, tensor<8xf32>
  %r = rlx_mir.reduce sum %s axes = [0] : tensor<8xf32>
  return %r : tensor<f32>
}
