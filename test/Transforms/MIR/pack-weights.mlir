// rlx-mir-pack-weights: parameter-only computations move to a pack function
// that weight loaders run once; the model takes the packed tensors.
// RUN: rlx-opt %s --rlx-mir-pack-weights -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @layer_pack_params
// CHECK-SAME: (%[[Q:.*]]: tensor<8x4xf32> {rlx.param = "q"}, %[[K:.*]]: tensor<4x4xf32> {rlx.param = "k"}, %[[G:.*]]: tensor<2xf32> {rlx.param = "g"})
// CHECK-NEXT: %[[W:.*]] = rlx_mir.concat %[[Q]], %[[K]] axis = 0
// CHECK-NEXT: %[[B:.*]] = rlx_mir.broadcast %[[G]] [2, 2]
// CHECK-NEXT: return %[[W]], %[[B]]
// CHECK-LABEL: func.func @layer
// The unused original parameters are gone; the packed ones come last.
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32> {rlx.input = "x"}, %[[N:.*]]: tensor<4xf32> {rlx.param = "norm"},
// CHECK-SAME: %[[PW:.*]]: tensor<12x4xf32> {rlx.packed_by = {fn = @layer_pack_params, result = 0 : i64}, rlx.packed_from = ["q", "k"], rlx.param = "layer_pack_params.0"},
// CHECK-SAME: %[[PB:.*]]: tensor<2x2xf32> {rlx.packed_by = {fn = @layer_pack_params, result = 1 : i64}, rlx.packed_from = ["g"], rlx.param = "layer_pack_params.1"})
// CHECK: rlx_mir.fused_matmul %[[X]], %[[PW]] transpose_b norm rms_norm eps = 1.000000e-05 norm_weight(%[[N]] : tensor<4xf32>)
// CHECK: rlx_mir.add %{{.*}}, %[[PB]]
func.func @layer(%x: tensor<2x4xf32> {rlx.input = "x"}, %norm: tensor<4xf32> {rlx.param = "norm"},
                 %q: tensor<8x4xf32> {rlx.param = "q"}, %k: tensor<4x4xf32> {rlx.param = "k"},
                 %g: tensor<2xf32> {rlx.param = "g"}) -> (tensor<2x12xf32>, tensor<2x2xf32>) {
  %w = rlx_mir.concat %q, %k axis = 0 : tensor<8x4xf32>, tensor<4x4xf32>
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%norm : tensor<4xf32>) : tensor<2x4xf32>, tensor<12x4xf32>
  %b = rlx_mir.broadcast %g [2, 2] : tensor<2xf32>
  %s = rlx_mir.slice %y offsets [0, 0] sizes [2, 2] strides [1, 1] : tensor<2x12xf32>
  %t = rlx_mir.add %s, %b : tensor<2x2xf32>, tensor<2x2xf32>
  return %y, %t : tensor<2x12xf32>, tensor<2x2xf32>
}

// -----

// Without rlx.param markers nothing is a parameter, and nothing moves.
// CHECK-LABEL: func.func @unmarked
// CHECK: rlx_mir.concat
// CHECK-NOT: pack_params
func.func @unmarked(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = rlx_mir.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<2x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A function with callers keeps its signature (and says so).
func.func @callee(%a: tensor<2x4xf32> {rlx.param = "a"}) -> tensor<4x4xf32> {
  // expected-warning @-1 {{parameter transforms left in place: @callee has callers, so its parameters cannot change}}
  %0 = rlx_mir.concat %a, %a axis = 0 : tensor<2x4xf32>, tensor<2x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func @caller(%a: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = func.call @callee(%a) : (tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
