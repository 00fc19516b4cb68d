// NVFP4 at MIR: round trips (custom, generic, bytecode), and what
// rlx_hir.dequant_linear lowers to.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --mlir-print-op-generic | rlx-opt -split-input-file | FileCheck %s
// RUN: rlx-opt %s -split-input-file --convert-rlx-hir-to-mir | FileCheck %s --check-prefix=LOWER

// CHECK-LABEL: func @ops
func.func @ops(%w: tensor<64x8xf32>, %x: tensor<2x3x32xbf16>, %q: tensor<8x16xi8>,
               %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // CHECK: rlx_mir.nvfp4_quantize %{{.*}} : tensor<64x8xf32>
  %q1, %s1, %g1 = rlx_mir.nvfp4_quantize %w layout in_out : tensor<64x8xf32>
  // CHECK: rlx_mir.nvfp4_dequantize %{{.*}} layout {{ *}}in_out : tensor<32x8xi8>, tensor<4x8xf8E4M3FN>, tensor<f32>
  %d = rlx_mir.nvfp4_dequantize %q1, %s1, %g1 layout in_out : tensor<32x8xi8>, tensor<4x8xf8E4M3FN>, tensor<f32>
  // CHECK: rlx_mir.nvfp4_matmul %{{.*}} : tensor<2x3x32xbf16>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  %y = rlx_mir.nvfp4_matmul %x, %q, %s, %g : tensor<2x3x32xbf16>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
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
