// rlx-mir-specialize binds named dims and re-infers every type.
// RUN: rlx-opt %s --rlx-mir-specialize="dims=seq=4,past_seq=16,n=32" | FileCheck %s

// L4: a reshape of a dynamic tensor to rank 3 with only the middle dim
// dynamic gets exactly the bound sizes.
// CHECK-LABEL: func @reshape_middle
// CHECK-SAME: (%arg0: tensor<32xf32>) -> tensor<1x4x8xf32>
func.func @reshape_middle(%x: tensor<?xf32> {rlx.dim_names = ["n"]}) -> tensor<1x?x8xf32> {
  // CHECK: rlx_mir.reshape %arg0 [1, -1, 8] : tensor<32xf32>
  // CHECK: return %{{.*}} : tensor<1x4x8xf32>
  %0 = rlx_mir.reshape %x [1, -1, 8] : tensor<?xf32>
  return %0 : tensor<1x?x8xf32>
}

// A decode step: new tokens (seq) against a cache (past_seq).
// CHECK-LABEL: func @decode
// CHECK-SAME: (%arg0: tensor<1x4x64xf32>, %arg1: tensor<1x16x32xf32>) -> tensor<1x4x64xf32>
func.func @decode(%q: tensor<1x?x64xf32> {rlx.dim_names = ["", "seq", ""]},
                  %past: tensor<1x?x32xf32> {rlx.dim_names = ["", "past_seq", ""]}) -> tensor<1x?x64xf32> {
  // CHECK: %[[K:.*]] = rlx_mir.slice %arg0 {{.*}} : tensor<1x4x64xf32>
  // CHECK: %[[KV:.*]] = rlx_mir.concat %arg1, %[[K]] axis = 1 : tensor<1x16x32xf32>, tensor<1x4x32xf32>
  // CHECK: rlx_mir.attention %arg0, %[[KV]], %[[KV]] {{.*}} : tensor<1x4x64xf32>, tensor<1x20x32xf32>, tensor<1x20x32xf32>
  %k = rlx_mir.slice %q offsets [0, 0, 0] sizes [-1, -1, 32] strides [1, 1, 1] : tensor<1x?x64xf32>
  %kv = rlx_mir.concat %past, %k axis = 1 : tensor<1x?x32xf32>, tensor<1x?x32xf32>
  %o = rlx_mir.attention %q, %kv, %kv heads = 4, kv_heads = 2, head_dim = 16 causal : tensor<1x?x64xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>
  return %o : tensor<1x?x64xf32>
}

// Fused elementwise ops and casts re-infer from their inputs.
// CHECK-LABEL: func @tables
// CHECK-SAME: -> (tensor<4x2xf32>, tensor<4x2xf32>)
func.func @tables(%p: tensor<?x1xi64> {rlx.dim_names = ["seq", ""]}, %f: tensor<2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  // CHECK: rlx_mir.cast %arg0 : tensor<4x1xi64> to tensor<4x1xf32>
  // CHECK: rlx_mir.elementwise ins({{.*}} : tensor<4x1xf32>, tensor<2xf32>) -> tensor<4x2xf32>, tensor<4x2xf32>
  %0 = rlx_mir.cast %p : tensor<?x1xi64> to tensor<?x1xf32>
  %1:2 = rlx_mir.elementwise ins(%0, %f : tensor<?x1xf32>, tensor<2xf32>) -> tensor<?x2xf32>, tensor<?x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %c = math.cos %m : f32
    %s = math.sin %m : f32
    rlx_mir.yield %c, %s : f32, f32
  }
  return %1#0, %1#1 : tensor<?x2xf32>, tensor<?x2xf32>
}


// Upstream ops: a tensor.cast takes the most static of its operand's type and
// its own, ops with type inference (math.exp) infer, another op (a
// collapse_shape, whose result type is written) keeps its types with its
// refined operands cast back (this was "cannot re-infer its result types"
// for any op outside MIR).
// CHECK-LABEL: func @upstream
// CHECK-SAME: (%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<?xf32>)
// CHECK: %[[C:.*]] = tensor.cast %arg0 : tensor<4x8xf32> to tensor<4x8xf32>
// CHECK: %[[E:.*]] = rlx_mir.exp %[[C]] : tensor<4x8xf32>
// CHECK: %[[M:.*]] = math.exp %arg0 : tensor<4x8xf32>
// CHECK: %[[B:.*]] = tensor.cast %arg0 : tensor<4x8xf32> to tensor<?x8xf32>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[B]]
// CHECK: return %[[E]], %[[M]], %[[F]]
func.func @upstream(%x: tensor<?x8xf32> {rlx.dim_names = ["seq", ""]}) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>) {
  %c = tensor.cast %x : tensor<?x8xf32> to tensor<?x8xf32>
  %e = rlx_mir.exp %c : tensor<?x8xf32>
  %m = math.exp %x : tensor<?x8xf32>
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<?x8xf32> into tensor<?xf32>
  return %e, %m, %f : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>
}
