// convert-rlx-hir-to-mir (fusion-policy=direct, the default): blocks with a
// fused MIR form lower to it.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir --split-input-file | FileCheck %s

// CHECK-LABEL: func @linear
func.func @linear(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: rlx_mir.fused_matmul %arg0, %arg1 transpose_b bias(%arg2 : tensor<4xf32>) activation gelu_tanh
  %0 = rlx_hir.linear %x, %w bias %b activation gelu_tanh : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  // A linear without stages is a plain matmul.
  // CHECK: rlx_mir.matmul %arg0, %arg1 transpose_b :
  %1 = rlx_hir.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// SwiGLU: one gated matmul over gate|up weights concatenated along the output
// features, then the down matmul.
// CHECK-LABEL: func @swiglu
func.func @swiglu(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>, %d: tensor<8x16xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[GU:.*]] = rlx_mir.concat %arg1, %arg2 axis = 0
  // CHECK: %[[H:.*]] = rlx_mir.fused_matmul %arg0, %[[GU]] transpose_b activation silu glu
  // CHECK: rlx_mir.matmul %[[H]], %arg3 transpose_b
  %0 = rlx_hir.swiglu %x, gate %g, up %u, down %d : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @swiglu_in_out
func.func @swiglu_in_out(%x: tensor<2x8xf32>, %g: tensor<8x16xf32>, %d: tensor<16x8xf32>) -> tensor<2x8xf32> {
  // [in, out] weights concatenate along axis 1.
  // CHECK: %[[GU:.*]] = rlx_mir.concat %arg1, %arg1 axis = 1
  // CHECK: rlx_mir.fused_matmul %arg0, %[[GU]] activation gelu glu
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d activation gelu layout in_out : tensor<2x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @blocks
func.func @blocks(%x: tensor<1x4x64xf32>, %r: tensor<1x4x64xf32>, %g: tensor<64xf32>, %pos: tensor<4xi64>,
                  %ids: tensor<1x4xi32>, %table: tensor<100x64xf32>) -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>) {
  // CHECK: %[[N:.*]], %[[S:.*]] = rlx_mir.residual_rms_norm %arg0, %arg1, %arg2 eps = 1.000000e-05
  %0:2 = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-05 : tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<64xf32>
  // CHECK: %[[K:.*]] = rlx_mir.slice %arg0
  // CHECK: rlx_mir.attention %arg0, %[[K]], %[[K]] heads = 4, kv_heads = 2, head_dim = 16 causal
  %k = rlx_mir.slice %x offsets [0, 0, 0] sizes [1, 4, 32] strides [1, 1, 1] : tensor<1x4x64xf32>
  %1 = rlx_hir.attention %x, %k, %k heads = 4, kv_heads = 2, head_dim = 16 causal : tensor<1x4x64xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>
  // RoPE from positions: inverse frequencies theta^(-2i/16) for i < 8.
  // CHECK: %[[F:.*]] = rlx_mir.constant dense<[1.000000e+00, 0.316227764, 1.000000e-01, 0.0316227749, 0.00999999977, 0.00316227763, 1.000000e-03, 3.16227757E-4]> : tensor<8xf32>
  // CHECK: %[[P:.*]] = rlx_mir.reshape %arg3 [4, 1]
  // CHECK: %[[PF:.*]] = rlx_mir.cast %[[P]] : tensor<4x1xi64> to tensor<4x1xf32>
  // CHECK: %[[ANG:.*]] = rlx_mir.mul %[[PF]], %[[F]]
  // CHECK: %[[COS:.*]] = rlx_mir.cos %[[ANG]]
  // CHECK: %[[SIN:.*]] = rlx_mir.sin %[[ANG]]
  // CHECK: rlx_mir.rope %arg0, %[[COS]], %[[SIN]] head_dim = 16
  %2 = rlx_hir.rope %x positions(%pos : tensor<4xi64>) head_dim = 16 : tensor<1x4x64xf32>
  // Per-head norm: [1, 4, 64] viewed as [1, 4, 4, 16].
  // CHECK: %[[H:.*]] = rlx_mir.reshape %arg0 [1, 4, 4, 16]
  // CHECK: %[[HN:.*]] = rlx_mir.rms_norm %[[H]], %{{.*}} eps = 9.9999999999999995E-7
  // CHECK: rlx_mir.reshape %[[HN]] [1, 4, 64]
  %g16 = rlx_mir.slice %g offsets [0] sizes [16] strides [1] : tensor<64xf32>
  %3 = rlx_hir.qk_norm %x, %g16 head_dim = 16 eps = 1.0e-06 : tensor<1x4x64xf32>, tensor<16xf32>
  // CHECK: rlx_mir.gather %arg5[%arg4]
  %4 = rlx_hir.embedding %ids, %table : tensor<1x4xi32>, tensor<100x64xf32>
  return %0#0, %1, %2, %3, %4 : tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>
}

// -----

// llama3 frequency scaling (HF _compute_llama3_parameters): with
// original_max_position_embeddings 16, low 1, high 4 the wavelengths
// 2*pi/f split into kept (< 4), smoothed and divided (> 16) frequencies.
// CHECK-LABEL: func @rope_llama3
func.func @rope_llama3(%x: tensor<1x2x8xf32>, %pos: tensor<2xi32>) -> tensor<1x2x8xf32> {
  // f = [1, 0.1]: wavelength 6.28 is smoothed: (1 - s)*f/8 + s*f with
  // s = (16/6.2832 - 1)/3 = 0.5155; wavelength 62.8 > 16 is divided by 8.
  // CHECK: rlx_mir.constant dense<[0.576056421, 1.250000e-02]> : tensor<2xf32>
  %0 = rlx_hir.rope %x positions(%pos : tensor<2xi32>) head_dim = 4 theta = 100.0
      scaling <rope_type = llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 16>
      : tensor<1x2x8xf32>
  return %0 : tensor<1x2x8xf32>
}

