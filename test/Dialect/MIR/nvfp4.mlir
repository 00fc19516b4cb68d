// NVFP4 at MIR: round trips (custom, generic, bytecode), and what
// rlx_hir.dequant_linear lowers to.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --mlir-print-op-generic | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --convert-rlx-hir-to-mir | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @ops
func.func @ops(%w: tensor<64x8xf32>, %x: tensor<2x3x32xbf16>, %q: tensor<8x16xi8>,
               %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>, %q2: tensor<16x8xi8>,
               %s2: tensor<2x8xf8E4M3FN>) {
  // CHECK: rlx_mir.nvfp4_quantize %{{.*}} : tensor<64x8xf32>
  %q1, %s1, %g1 = rlx_mir.nvfp4_quantize %w layout in_out : tensor<64x8xf32>
  // CHECK: rlx_mir.nvfp4_dequantize %{{.*}} layout {{ *}}in_out : tensor<32x8xi8>, tensor<4x8xf8E4M3FN>, tensor<f32>
  %d = rlx_mir.nvfp4_dequantize %q1, %s1, %g1 layout in_out : tensor<32x8xi8>, tensor<4x8xf8E4M3FN>, tensor<f32>
  // CHECK: rlx_mir.nvfp4_matmul %{{.*}} : tensor<2x3x32xbf16>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  %y = rlx_mir.nvfp4_matmul %x, %q, %s, %g : tensor<2x3x32xbf16>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  // A fused_matmul on the NVFP4 weight (NVIDIA's [N, K/2] layout: transpose_b).
  // CHECK: rlx_mir.fused_matmul %{{.*}}, %{{.*}} transpose_b nvfp4(%{{.*}}, %{{.*}} : tensor<8x2xf8E4M3FN>, tensor<f32>) activation{{ *}}silu : tensor<2x3x32xbf16>, tensor<8x16xi8>
  %f = rlx_mir.fused_matmul %x, %q transpose_b nvfp4(%s, %g : tensor<8x2xf8E4M3FN>, tensor<f32>) activation silu : tensor<2x3x32xbf16>, tensor<8x16xi8>
  // CHECK: rlx_mir.fused_matmul %{{.*}}, %{{.*}} nvfp4(%{{.*}}, %{{.*}} : tensor<2x8xf8E4M3FN>, tensor<f32>) : tensor<2x3x32xbf16>, tensor<16x8xi8>
  %f2 = rlx_mir.fused_matmul %x, %q2 nvfp4(%s2, %g : tensor<2x8xf8E4M3FN>, tensor<f32>) : tensor<2x3x32xbf16>, tensor<16x8xi8>
  // Scales in the 128x4 tile layout of block-scaled MMA (case G7b).
  // CHECK: rlx_mir.nvfp4_block_scales %{{.*}} : tensor<8x2xf8E4M3FN>
  %b = rlx_mir.nvfp4_block_scales %s : tensor<8x2xf8E4M3FN>
  return
}

// -----

// LOWER-LABEL: func @dequant_linear
// LOWER:         %[[Y:.*]] = rlx_mir.nvfp4_matmul %arg0, %arg1, %arg2, %arg3 : tensor<4x32xf32>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
// LOWER-NEXT:    %[[B:.*]] = rlx_mir.add %[[Y]], %arg4 : tensor<4x8xf32>, tensor<8xf32>
// LOWER-NEXT:    %[[A:.*]] = rlx_mir.silu %[[B]]
// LOWER-NEXT:    return %[[A]]
func.func @dequant_linear(%x: tensor<4x32xf32>, %q: tensor<8x16xi8>, %s: tensor<8x2xf8E4M3FN>,
                          %g: tensor<f32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = rlx_hir.dequant_linear %x, %q, %s, %g bias(%b : tensor<8xf32>) activation silu
      : tensor<4x32xf32>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  return %y : tensor<4x8xf32>
}
