// rlx-mir-pack-weights{kn-weights}: the [N, K] weights of transpose_b matmuls
// (merged or not) are stored [K, N] by the pack function, and the matmuls read
// them without transpose_b. Activations, NVFP4 weights and operands computed
// per call keep their layout.
// RUN: rlx-opt %s --rlx-mir-pack-weights=kn-weights -split-input-file | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-fuse=kn-weights -split-input-file | FileCheck %s --check-prefix=FUSE

// CHECK-LABEL: func.func @layer_pack_params
// CHECK-NEXT: %[[W:.*]] = rlx_mir.concat %{{.*}}, %{{.*}} axis = 0
// CHECK-NEXT: %[[WT:.*]] = rlx_mir.transpose %[[W]] [1, 0] : tensor<12x4xf32>
// CHECK-NEXT: %[[OT:.*]] = rlx_mir.transpose %{{.*}} [1, 0] : tensor<4x12xf32>
// CHECK-NEXT: return %[[WT]], %[[OT]] : tensor<4x12xf32>, tensor<12x4xf32>
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[PW:[^:]*]]: tensor<4x12xf32> {rlx.packed_by = {fn = @layer_pack_params, result = 0 : i64}, rlx.packed_from = ["q", "k"]
// CHECK-SAME: %[[PO:[^:]*]]: tensor<12x4xf32> {rlx.packed_by = {fn = @layer_pack_params, result = 1 : i64}, rlx.packed_from = ["o"]
// CHECK: rlx_mir.fused_matmul %{{.*}}, %[[PW]] norm rms_norm
// CHECK-SAME: tensor<2x4xf32>, tensor<4x12xf32>
// CHECK: rlx_mir.matmul %{{.*}}, %[[PO]] : tensor<2x12xf32>, tensor<12x4xf32>
// Attention-like products of activations keep transpose_b.
// CHECK: rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<2x4xf32>, tensor<2x4xf32>
func.func @layer(%x: tensor<2x4xf32> {rlx.input = "x"}, %norm: tensor<4xf32> {rlx.param = "norm"},
                 %q: tensor<8x4xf32> {rlx.param = "q"}, %k: tensor<4x4xf32> {rlx.param = "k"},
                 %o: tensor<4x12xf32> {rlx.param = "o"}) -> (tensor<2x4xf32>, tensor<2x2xf32>) {
  %w = rlx_mir.concat %q, %k axis = 0 : tensor<8x4xf32>, tensor<4x4xf32>
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%norm : tensor<4xf32>) : tensor<2x4xf32>, tensor<12x4xf32>
  %z = rlx_mir.matmul %y, %o transpose_b : tensor<2x12xf32>, tensor<4x12xf32>
  %s = rlx_mir.matmul %x, %z transpose_b : tensor<2x4xf32>, tensor<2x4xf32>
  return %z, %s : tensor<2x4xf32>, tensor<2x2xf32>
}

// -----

// NVFP4 weights ([N, K/2] codes with their scales) keep transpose_b.
// CHECK-LABEL: func.func @nvfp4
// CHECK-NOT: rlx_mir.transpose
// CHECK: rlx_mir.fused_matmul %{{.*}}, %{{.*}} transpose_b nvfp4
func.func @nvfp4(%x: tensor<2x32xf32> {rlx.input = "x"}, %w: tensor<8x16xi8> {rlx.param = "w"},
                 %s: tensor<8x2xf8E4M3FN> {rlx.param = "s"}, %g: tensor<f32> {rlx.param = "g"}) -> tensor<2x8xf32> {
  %y = rlx_mir.fused_matmul %x, %w transpose_b nvfp4(%s, %g : tensor<8x2xf8E4M3FN>, tensor<f32>) : tensor<2x32xf32>, tensor<8x16xi8>
  return %y : tensor<2x8xf32>
}

// -----

// Through rlx-mir-fuse: the merged Q/K/V weight of a layer is packed [K, N].
// FUSE-LABEL: func.func @qkv_pack_params
// FUSE: rlx_mir.concat
// FUSE: rlx_mir.transpose %{{.*}} [1, 0] : tensor<12x4xf32>
// FUSE-LABEL: func.func @qkv(
// FUSE: rlx_mir.matmul %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x12xf32>
func.func @qkv(%x: tensor<2x4xf32> {rlx.input = "x"}, %q: tensor<4x4xf32> {rlx.param = "q"},
               %k: tensor<4x4xf32> {rlx.param = "k"}, %v: tensor<4x4xf32> {rlx.param = "v"})
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = rlx_mir.matmul %x, %q transpose_b : tensor<2x4xf32>, tensor<4x4xf32>
  %b = rlx_mir.matmul %x, %k transpose_b : tensor<2x4xf32>, tensor<4x4xf32>
  %c = rlx_mir.matmul %x, %v transpose_b : tensor<2x4xf32>, tensor<4x4xf32>
  return %a, %b, %c : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// One transpose per weight, however many matmuls read it; a weight read as
// both operands, or also gathered from (a tied embedding), keeps its layout.
// (s·sᵀ depends only on parameters: the pack function computes it, as is.)
// CHECK-LABEL: func.func @shared_pack_params
// CHECK: rlx_mir.transpose %{{.*}} [1, 0] : tensor<4x4xf32>
// CHECK-NOT: rlx_mir.transpose
// CHECK: rlx_mir.matmul %[[S:[^,]*]], %[[S]] transpose_b : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NOT: rlx_mir.transpose
// CHECK-LABEL: func.func @shared(
// CHECK: rlx_mir.matmul %{{.*}}, %[[WT:[^ ]*]] : tensor<2x4xf32>, tensor<4x4xf32>
// CHECK: rlx_mir.matmul %{{.*}}, %[[WT]] : tensor<2x4xf32>, tensor<4x4xf32>
// CHECK: rlx_mir.gather
// CHECK: rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<2x4xf32>, tensor<8x4xf32>
func.func @shared(%x: tensor<2x4xf32> {rlx.input = "x"}, %ids: tensor<3xi64> {rlx.input = "ids"},
                  %w: tensor<4x4xf32> {rlx.param = "w"}, %s: tensor<4x4xf32> {rlx.param = "s"},
                  %e: tensor<8x4xf32> {rlx.param = "embed"})
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x8xf32>) {
  %a = rlx_mir.matmul %x, %w transpose_b : tensor<2x4xf32>, tensor<4x4xf32>
  %b = rlx_mir.matmul %x, %w transpose_b : tensor<2x4xf32>, tensor<4x4xf32>
  %c = rlx_mir.matmul %s, %s transpose_b : tensor<4x4xf32>, tensor<4x4xf32>
  %g = rlx_mir.gather %e[%ids] : tensor<8x4xf32>, tensor<3xi64>
  %l = rlx_mir.matmul %x, %e transpose_b : tensor<2x4xf32>, tensor<8x4xf32>
  return %a, %b, %c, %g, %l : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x8xf32>
}
