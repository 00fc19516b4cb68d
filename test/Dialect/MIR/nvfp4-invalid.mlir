// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @k_not_16(%q: tensor<8x4xi8>, %s: tensor<8x1xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{NVFP4 needs a static K that is a multiple of 16, got K = 8}}
  %d = rlx_mir.nvfp4_dequantize %q, %s, %g : tensor<8x4xi8>, tensor<8x1xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @scales(%q: tensor<8x16xi8>, %s: tensor<8x4xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{scales 8x4 must be [N, K/16] = [8, 2]}}
  %d = rlx_mir.nvfp4_dequantize %q, %s, %g : tensor<8x16xi8>, tensor<8x4xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @scales_in_out(%q: tensor<16x8xi8>, %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{scales 8x2 must be [K/16, N] = [2, 8]}}
  %d = rlx_mir.nvfp4_dequantize %q, %s, %g layout in_out : tensor<16x8xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @matmul_k(%x: tensor<4x48xf32>, %q: tensor<8x16xi8>, %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{packed weight 8x16 must hold K/2 = 24 bytes per row along K}}
  %y = rlx_mir.nvfp4_matmul %x, %q, %s, %g : tensor<4x48xf32>, tensor<8x16xi8>, tensor<8x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @quantize_rank(%w: tensor<2x4x32xf32>) {
  // expected-error @+1 {{nvfp4_quantize needs a static rank-2 weight, got 2x4x32}}
  %q, %s, %g = rlx_mir.nvfp4_quantize %w : tensor<2x4x32xf32>
  return
}

// -----

func.func @quantize_k(%w: tensor<4x24xf32>) {
  // expected-error @+1 {{NVFP4 needs a static K that is a multiple of 16, got K = 24}}
  %q, %s, %g = rlx_mir.nvfp4_quantize %w : tensor<4x24xf32>
  return
}

// -----

func.func @weight_type(%q: tensor<8x16xi32>, %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 8-bit signless integer values}}
  %d = rlx_mir.nvfp4_dequantize %q, %s, %g : tensor<8x16xi32>, tensor<8x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @fused_i8_without_scales(%x: tensor<2x32xf32>, %q: tensor<8x16xi8>) {
  // expected-error @+1 {{an i8 rhs needs nvfp4(scales, global_scale)}}
  %y = rlx_mir.fused_matmul %x, %q transpose_b : tensor<2x32xf32>, tensor<8x16xi8>
  return
}

// -----

func.func @fused_nvfp4_float_rhs(%x: tensor<2x32xf32>, %w: tensor<8x32xf32>,
                                 %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{an NVFP4 weight is i8 (two E2M1 codes per byte), got f32}}
  %y = rlx_mir.fused_matmul %x, %w transpose_b nvfp4(%s, %g : tensor<8x2xf8E4M3FN>, tensor<f32>) : tensor<2x32xf32>, tensor<8x32xf32>
  return
}

// -----

func.func @fused_nvfp4_scales_shape(%x: tensor<2x32xf32>, %q: tensor<8x16xi8>,
                                    %s: tensor<8x4xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{scales 8x4 must be [N, K/16] = [8, 2]}}
  %y = rlx_mir.fused_matmul %x, %q transpose_b nvfp4(%s, %g : tensor<8x4xf8E4M3FN>, tensor<f32>) : tensor<2x32xf32>, tensor<8x16xi8>
  return
}

// -----

func.func @fused_nvfp4_k(%x: tensor<2x48xf32>, %q: tensor<8x16xi8>,
                         %s: tensor<8x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{packed weight 8x16 must hold K/2 = 24 bytes per row along K}}
  %y = rlx_mir.fused_matmul %x, %q transpose_b nvfp4(%s, %g : tensor<8x2xf8E4M3FN>, tensor<f32>) : tensor<2x48xf32>, tensor<8x16xi8>
  return
}

// -----

func.func @block_scales_twice(%s: tensor<130x5xf8E4M3FN>) {
  %b = rlx_mir.nvfp4_block_scales %s : tensor<130x5xf8E4M3FN>
  // expected-error @+1 {{nvfp4_block_scales needs static [N, K/16] scales, got 2x2x32x16 (blocked scales are rank 4 and are not blocked again)}}
  %c = rlx_mir.nvfp4_block_scales %b : tensor<2x2x32x16xf8E4M3FN>
  return
}

// -----

func.func @blocked_in_out(%x: tensor<2x64xf32>, %q: tensor<32x8xi8>, %b: tensor<1x1x32x16xf8E4M3FN>,
                          %g: tensor<f32>) {
  // expected-error @+1 {{blocked NVFP4 scales go with NVIDIA's [N, K/2] weight layout}}
  %y = rlx_mir.nvfp4_matmul %x, %q, %b, %g layout in_out : tensor<2x64xf32>, tensor<32x8xi8>, tensor<1x1x32x16xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @blocked_shape(%x: tensor<2x64xf32>, %q: tensor<130x32xi8>, %b: tensor<1x1x32x16xf8E4M3FN>,
                         %g: tensor<f32>) {
  // expected-error @+1 {{blocked scales 1x1x32x16 must be 2x1x32x16 for N = 130, K = 64}}
  %y = rlx_mir.nvfp4_matmul %x, %q, %b, %g : tensor<2x64xf32>, tensor<130x32xi8>, tensor<1x1x32x16xf8E4M3FN>, tensor<f32>
  return
}
