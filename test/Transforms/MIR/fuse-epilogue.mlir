// rlx-mir-fuse-epilogue: bias, activation and residual adds into the matmul
// epilogue, only when legal; misses are remarks with a reason.
// RUN: rlx-opt %s --rlx-mir-fuse-epilogue=report -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @bias_act_residual
func.func @bias_act_residual(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %r: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[Y:.*]] = rlx_mir.fused_matmul %arg0, %arg1 transpose_b bias(%arg2 : tensor<4xf32>) activation silu residual(%arg3 : tensor<2x4xf32>)
  // CHECK-NEXT: return %[[Y]]
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = rlx_mir.add %0, %b : tensor<2x4xf32>, tensor<4xf32>
  %2 = rlx_mir.silu %1 : tensor<2x4xf32>
  %3 = rlx_mir.add %r, %2 : tensor<2x4xf32>, tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}

// -----

// A bias that broadcasts against a batched output also fuses.
// CHECK-LABEL: func @batched_bias
func.func @batched_bias(%x: tensor<1x5x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<1x5x4xf32> {
  // CHECK: rlx_mir.fused_matmul %arg0, %arg1 bias(%arg2 : tensor<4xf32>) activation gelu :
  %0 = rlx_mir.matmul %x, %w : tensor<1x5x8xf32>, tensor<8x4xf32>
  %1 = rlx_mir.add %b, %0 : tensor<4xf32>, tensor<1x5x4xf32>
  %2 = rlx_mir.gelu %1 : tensor<1x5x4xf32>
  return %2 : tensor<1x5x4xf32>
}

// -----

// residual_rms_norm(matmul, r): the add moves into the matmul, a plain norm stays.
// CHECK-LABEL: func @residual_norm
func.func @residual_norm(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %r: tensor<2x8xf32>, %g: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[S:.*]] = rlx_mir.fused_matmul %arg0, %arg1 residual(%arg2 : tensor<2x8xf32>)
  // CHECK: %[[N:.*]] = rlx_mir.rms_norm %[[S]], %arg3
  // CHECK: return %[[N]], %[[S]]
  %0 = rlx_mir.matmul %x, %w : tensor<2x8xf32>, tensor<8x8xf32>
  %n, %s = rlx_mir.residual_rms_norm %0, %r, %g eps = 1.0e-05 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>
  return %n, %s : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Multi-use intermediate: the matmul result is read twice.
// CHECK-LABEL: func @multi_use
func.func @multi_use(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: rlx_mir.matmul
  // CHECK: rlx_mir.add
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  // expected-remark @+1 {{rlx_mir.add not fused: [rlx-mir-fuse-epilogue] multi-use: the intermediate has 2 uses}}
  %1 = rlx_mir.add %0, %b : tensor<2x4xf32>, tensor<4xf32>
  %2 = rlx_mir.mul %1, %0 : tensor<2x4xf32>, tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// Graph output: the matmul result is also returned, so it must survive.
// CHECK-LABEL: func @graph_output
func.func @graph_output(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[MM:.*]] = rlx_mir.matmul
  // CHECK: %[[A:.*]] = rlx_mir.relu %[[MM]]
  // CHECK: return %[[MM]], %[[A]]
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  // expected-remark @+1 {{rlx_mir.relu not fused: [rlx-mir-fuse-epilogue] graph output: the intermediate is returned from the function}}
  %1 = rlx_mir.relu %0 : tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Unsupported epilogue: a bias after the activation is not a bias stage.
// CHECK-LABEL: func @bias_after_activation
func.func @bias_after_activation(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[F:.*]] = rlx_mir.fused_matmul %arg0, %arg1 transpose_b activation relu
  // CHECK: rlx_mir.add %[[F]], %arg2
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = rlx_mir.relu %0 : tensor<2x4xf32>
  // expected-remark @+1 {{rlx_mir.add not fused: [rlx-mir-fuse-epilogue] unsupported epilogue: a bias or residual cannot follow the existing epilogue stages}}
  %2 = rlx_mir.add %1, %b : tensor<2x4xf32>, tensor<4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// Wrong activation order: an activation after a residual stays separate.
// CHECK-LABEL: func @activation_after_residual
func.func @activation_after_residual(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %r: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[F:.*]] = rlx_mir.fused_matmul %arg0, %arg1 transpose_b residual
  // CHECK: rlx_mir.tanh %[[F]]
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = rlx_mir.add %0, %r : tensor<2x4xf32>, tensor<2x4xf32>
  // expected-remark @+1 {{rlx_mir.tanh not fused: [rlx-mir-fuse-epilogue] unsupported epilogue: an activation after later epilogue stages}}
  %2 = rlx_mir.tanh %1 : tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// Shape mismatch: the add broadcasts the matmul result to a larger shape.
// CHECK-LABEL: func @broadcasting_add
func.func @broadcasting_add(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %r: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  // CHECK: rlx_mir.matmul
  // CHECK: rlx_mir.add
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x8xf32>
  // expected-remark @+1 {{rlx_mir.add not fused: [rlx-mir-fuse-epilogue] shape mismatch: the add broadcasts the matmul result to tensor<3x2x4xf32>}}
  %1 = rlx_mir.add %0, %r : tensor<2x4xf32>, tensor<3x2x4xf32>
  return %1 : tensor<3x2x4xf32>
}

// -----

// Batched matmuls (rank-3 rhs, as in attention) have no fused form.
// CHECK-LABEL: func @batched_rhs
func.func @batched_rhs(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  // CHECK: rlx_mir.matmul
  // CHECK: rlx_mir.silu
  %0 = rlx_mir.matmul %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  %1 = rlx_mir.silu %0 : tensor<2x3x5xf32>
  return %1 : tensor<2x3x5xf32>
}
