// Round trips of every rlx_hir op: custom form, generic form, and bytecode.
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s -emit-bytecode | rlx-opt | FileCheck %s

// CHECK-LABEL: func @linear
func.func @linear(%x: tensor<1x?x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<3072xf32>,
                  %wt: tensor<768x3072xf32>) -> (tensor<1x?x3072xf32>, tensor<1x?x3072xf32>, tensor<1x?x3072xf32>) {
  // CHECK: rlx_hir.linear %{{.*}}, %{{.*}} : tensor<1x?x768xf32>, tensor<3072x768xf32>
  %0 = rlx_hir.linear %x, %w : tensor<1x?x768xf32>, tensor<3072x768xf32>
  // CHECK: rlx_hir.linear %{{.*}}, %{{.*}} bias %{{.*}} activation gelu : tensor<1x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>
  %1 = rlx_hir.linear %x, %w bias %b activation gelu : tensor<1x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>
  // CHECK: rlx_hir.linear %{{.*}}, %{{.*}} bias %{{.*}} activation gelu_tanh layout in_out : tensor<1x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>
  %2 = rlx_hir.linear %x, %wt bias %b activation gelu_tanh layout in_out : tensor<1x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>
  return %0, %1, %2 : tensor<1x?x3072xf32>, tensor<1x?x3072xf32>, tensor<1x?x3072xf32>
}

// CHECK-LABEL: func @linear_bf16_rank2
func.func @linear_bf16_rank2(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<4x32xbf16> {
  // CHECK: rlx_hir.linear {{.*}} activation silu : tensor<4x64xbf16>, tensor<32x64xbf16>
  %0 = rlx_hir.linear %x, %w activation silu : tensor<4x64xbf16>, tensor<32x64xbf16>
  return %0 : tensor<4x32xbf16>
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<1x?x2048xf32>, %r: tensor<1x?x2048xf32>, %g: tensor<2048xf32>)
    -> (tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>) {
  // CHECK: rlx_hir.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>
  %0 = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>
  // CHECK: rlx_hir.residual_rms_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 9.9999999999999995E-7
  %1:2 = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-06 : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2048xf32>
  // CHECK: rlx_hir.layer_norm %{{.*}} weight(%{{.*}} : tensor<2048xf32>) bias(%{{.*}} : tensor<2048xf32>) eps = 1.000000e-05 : tensor<1x?x2048xf32>
  %2 = rlx_hir.layer_norm %x weight(%g : tensor<2048xf32>) bias(%g : tensor<2048xf32>) eps = 1.0e-05 : tensor<1x?x2048xf32>
  // CHECK: rlx_hir.layer_norm %{{.*}} eps = 1.000000e-05 : tensor<1x?x2048xf32>
  %3 = rlx_hir.layer_norm %x eps = 1.0e-05 : tensor<1x?x2048xf32>
  return %0, %1#0, %1#1, %2, %3 : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>
}

// CHECK-LABEL: func @swiglu
func.func @swiglu(%x: tensor<1x?x2048xf32>, %wg: tensor<8192x2048xf32>, %wu: tensor<8192x2048xf32>,
                  %wd: tensor<2048x8192xf32>, %wgt: tensor<2048x8192xf32>, %wdt: tensor<8192x2048xf32>)
    -> (tensor<1x?x2048xf32>, tensor<1x?x2048xf32>) {
  // CHECK: rlx_hir.swiglu %{{.*}}, gate %{{.*}}, up %{{.*}}, down %{{.*}} : tensor<1x?x2048xf32>, tensor<8192x2048xf32>, tensor<8192x2048xf32>, tensor<2048x8192xf32>
  %0 = rlx_hir.swiglu %x, gate %wg, up %wu, down %wd : tensor<1x?x2048xf32>, tensor<8192x2048xf32>, tensor<8192x2048xf32>, tensor<2048x8192xf32>
  // CHECK: rlx_hir.swiglu {{.*}} activation gelu_tanh layout in_out
  %1 = rlx_hir.swiglu %x, gate %wgt, up %wgt, down %wdt activation gelu_tanh layout in_out : tensor<1x?x2048xf32>, tensor<2048x8192xf32>, tensor<2048x8192xf32>, tensor<8192x2048xf32>
  return %0, %1 : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<1x?x2048xf32>, %k: tensor<1x?x512xf32>, %v: tensor<1x?x512xf32>,
                     %m: tensor<?x?xi1>, %am: tensor<1x32x?x?xf32>,
                     %q4: tensor<2x14x37x64xbf16>, %k4: tensor<2x2x37x64xbf16>, %v4: tensor<2x2x37x96xbf16>)
    -> (tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2x14x37x96xbf16>) {
  // CHECK: rlx_hir.attention %{{.*}}, %{{.*}}, %{{.*}} heads = 32, kv_heads = 8, head_dim = 64 causal :
  %0 = rlx_hir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 64 causal : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
  // CHECK: rlx_hir.attention {{.*}} heads = 32, kv_heads = 8, head_dim = 64 sliding_window window = 4096 :
  %1 = rlx_hir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 64 sliding_window window = 4096 : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
  // CHECK: rlx_hir.attention {{.*}} mask(%{{.*}} : tensor<?x?xi1>) heads = 32, kv_heads = 8, head_dim = 64 scale = 1.250000e-01 softcap = 5.000000e+01 :
  %2 = rlx_hir.attention %q, %k, %v mask(%m : tensor<?x?xi1>) heads = 32, kv_heads = 8, head_dim = 64 scale = 0.125 softcap = 50.0 : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
  // CHECK: rlx_hir.attention {{.*}} mask(%{{.*}} : tensor<1x32x?x?xf32>) heads = 32, kv_heads = 8, head_dim = 64 causal :
  %3 = rlx_hir.attention %q, %k, %v mask(%am : tensor<1x32x?x?xf32>) heads = 32, kv_heads = 8, head_dim = 64 causal : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
  // Rank-4 BHSD with GQA 14/2 and a value head size different from head_dim.
  // CHECK: rlx_hir.attention {{.*}} heads = 14, kv_heads = 2, head_dim = 64 causal layout bhsd : tensor<2x14x37x64xbf16>, tensor<2x2x37x64xbf16>, tensor<2x2x37x96xbf16>
  %4 = rlx_hir.attention %q4, %k4, %v4 heads = 14, kv_heads = 2, head_dim = 64 causal layout bhsd : tensor<2x14x37x64xbf16>, tensor<2x2x37x64xbf16>, tensor<2x2x37x96xbf16>
  return %0, %1, %2, %3, %4 : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2x14x37x96xbf16>
}

// CHECK-LABEL: func @rope
func.func @rope(%x: tensor<1x?x2048xf32>, %pos: tensor<?xi64>, %pos2: tensor<1x?xi32>,
                %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>)
    -> (tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>) {
  // CHECK: rlx_hir.rope %{{.*}} positions(%{{.*}} : tensor<?xi64>) head_dim = 64 theta = 5.000000e+05 scaling <rope_type = llama3, factor = 3.200000e+01> : tensor<1x?x2048xf32>
  %0 = rlx_hir.rope %x positions(%pos : tensor<?xi64>) head_dim = 64 theta = 500000.0
      scaling <rope_type = llama3, factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>
      : tensor<1x?x2048xf32>
  // CHECK: rlx_hir.rope %{{.*}} positions(%{{.*}} : tensor<1x?xi32>) head_dim = 64 rotary_dim = 32 style gptj : tensor<1x?x2048xf32>
  %1 = rlx_hir.rope %x positions(%pos2 : tensor<1x?xi32>) head_dim = 64 rotary_dim = 32 style gptj : tensor<1x?x2048xf32>
  // CHECK: rlx_hir.rope %{{.*}} tables(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x32xf32>) head_dim = 64 : tensor<1x?x2048xf32>
  %2 = rlx_hir.rope %x tables(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) head_dim = 64 : tensor<1x?x2048xf32>
  return %0, %1, %2 : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<1x?x2048xf32>
}

// CHECK-LABEL: func @embedding
func.func @embedding(%ids: tensor<1x?xi64>, %table: tensor<128256x2048xf32>) -> tensor<1x?x2048xf32> {
  // CHECK: rlx_hir.embedding %{{.*}}, %{{.*}} : tensor<1x?xi64>, tensor<128256x2048xf32>
  %0 = rlx_hir.embedding %ids, %table : tensor<1x?xi64>, tensor<128256x2048xf32>
  return %0 : tensor<1x?x2048xf32>
}

// HIR functions may hold MIR ops directly.
// CHECK-LABEL: func @mixed
func.func @mixed(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // CHECK: rlx_hir.linear
  %0 = rlx_hir.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // CHECK: rlx_mir.silu
  %1 = rlx_mir.silu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func @qk_norm
func.func @qk_norm(%q: tensor<1x?x2048xf32>, %g: tensor<128xf32>) -> tensor<1x?x2048xf32> {
  // CHECK: rlx_hir.qk_norm %{{.*}}, %{{.*}} head_dim = 128 eps = 9.9999999999999995E-7 : tensor<1x?x2048xf32>, tensor<128xf32>
  %0 = rlx_hir.qk_norm %q, %g head_dim = 128 eps = 1.0e-06 : tensor<1x?x2048xf32>, tensor<128xf32>
  return %0 : tensor<1x?x2048xf32>
}

// CHECK-LABEL: func @dequant_linear
func.func @dequant_linear(%x: tensor<1x?x4096xbf16>, %w: tensor<14336x2048xi8>, %s: tensor<14336x256xf8E4M3FN>,
                          %g: tensor<f32>, %b: tensor<14336xbf16>, %wt: tensor<2048x14336xi8>, %st: tensor<256x14336xf8E4M3FN>)
    -> (tensor<1x?x14336xbf16>, tensor<1x?x14336xbf16>) {
  // CHECK: rlx_hir.dequant_linear %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x?x4096xbf16>, tensor<14336x2048xi8>, tensor<14336x256xf8E4M3FN>, tensor<f32>
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g : tensor<1x?x4096xbf16>, tensor<14336x2048xi8>, tensor<14336x256xf8E4M3FN>, tensor<f32>
  // CHECK: rlx_hir.dequant_linear {{.*}} bias(%{{.*}} : tensor<14336xbf16>) activation silu layout in_out
  %1 = rlx_hir.dequant_linear %x, %wt, %st, %g bias(%b : tensor<14336xbf16>) activation silu layout in_out : tensor<1x?x4096xbf16>, tensor<2048x14336xi8>, tensor<256x14336xf8E4M3FN>, tensor<f32>
  return %0, %1 : tensor<1x?x14336xbf16>, tensor<1x?x14336xbf16>
}

// CHECK-LABEL: func @decoder_layer
func.func @decoder_layer(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                         %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>, %qn: tensor<16xf32>,
                         %pk: tensor<1x?x32xf32>) -> (tensor<1x?x64xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>) {
  // CHECK: = rlx_hir.decoder_layer %{{.*}} positions(%{{.*}} : tensor<?xi64>) weights({{.*}} : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) heads = 4, kv_heads = 2, head_dim = 16 eps = 1.000000e-05 theta = 1.000000e+04 : tensor<1x?x64xf32>
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xf32>
  // Qwen3-style q/k norms, a KV cache, a sliding window and llama3 scaling.
  // CHECK: rlx_hir.decoder_layer {{.*}} qk_norm(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>) cache(%{{.*}}, %{{.*}} : tensor<1x?x32xf32>, tensor<1x?x32xf32>) heads = 4, kv_heads = 2, head_dim = 16 eps = 1.000000e-05 theta = 5.000000e+05 scaling <rope_type = llama3, factor = 8.000000e+00> mask sliding_window window = 8 activation gelu_tanh
  %1:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      qk_norm(%qn, %qn : tensor<16xf32>, tensor<16xf32>) cache(%pk, %pk : tensor<1x?x32xf32>, tensor<1x?x32xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 500000.0 scaling <rope_type = llama3, factor = 8.0>
      mask sliding_window window = 8 activation gelu_tanh : tensor<1x?x64xf32>
  return %1#0, %1#1, %1#2 : tensor<1x?x64xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>
}

// CHECK-LABEL: func @moe
func.func @moe(%x: tensor<1x?x64xf32>, %w: tensor<8x64xf32>, %b: tensor<8xf32>,
               %gu: tensor<8x48x64xf32>, %d: tensor<8x64x24xf32>) -> tensor<1x?x64xf32> {
  // CHECK: rlx_hir.moe_router %{{.*}}, %{{.*}} top_k = 2 norm_topk_prob : tensor<1x?x64xf32>, tensor<8x64xf32>
  %w0, %i0 = rlx_hir.moe_router %x, %w top_k = 2 norm_topk_prob : tensor<1x?x64xf32>, tensor<8x64xf32>
  // CHECK: rlx_hir.moe_router %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<8xf32>) top_k = 4 scoring topk_softmax
  %w1, %i1 = rlx_hir.moe_router %x, %w bias(%b : tensor<8xf32>) top_k = 4 scoring topk_softmax : tensor<1x?x64xf32>, tensor<8x64xf32>
  // CHECK: rlx_hir.moe_router %{{.*}}, %{{.*}} correction_bias(%{{.*}} : tensor<8xf32>) top_k = 3 scoring sigmoid norm_topk_prob routed_scaling_factor = 2.500000e+00 n_group = 4 topk_group = 2
  %w2, %i2 = rlx_hir.moe_router %x, %w correction_bias(%b : tensor<8xf32>) top_k = 3 scoring sigmoid norm_topk_prob routed_scaling_factor = 2.5 n_group = 4 topk_group = 2 : tensor<1x?x64xf32>, tensor<8x64xf32>
  // CHECK: rlx_hir.moe_experts %{{.*}}, %{{.*}}, %{{.*}}, gate_up %{{.*}}, down %{{.*}} activation gelu : tensor<1x?x64xf32>, tensor<1x?x2xf32>, tensor<1x?x2xi64>, tensor<8x48x64xf32>, tensor<8x64x24xf32>
  %y = rlx_hir.moe_experts %x, %w0, %i0, gate_up %gu, down %d activation gelu : tensor<1x?x64xf32>, tensor<1x?x2xf32>, tensor<1x?x2xi64>, tensor<8x48x64xf32>, tensor<8x64x24xf32>
  // Llama-4: the routing weight scales the expert's input.
  // CHECK: rlx_hir.moe_experts %{{.*}}, %{{.*}}, %{{.*}}, gate_up %{{.*}}, down %{{.*}} weights_on_input : tensor<1x?x64xf32>
  %y2 = rlx_hir.moe_experts %x, %w0, %i0, gate_up %gu, down %d weights_on_input : tensor<1x?x64xf32>, tensor<1x?x2xf32>, tensor<1x?x2xi64>, tensor<8x48x64xf32>, tensor<8x64x24xf32>
  return %y : tensor<1x?x64xf32>
}

func.func @log_mel(%x: tensor<2x80000xf32>, %y: tensor<1000xbf16>) -> (tensor<2x80x3000xf32>, tensor<64x10xbf16>) {
  // CHECK: rlx_hir.log_mel_spectrogram %{{.*}} n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 n_samples = 480000 : tensor<2x80000xf32>
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 n_samples = 480000 : tensor<2x80000xf32>
  // CHECK: rlx_hir.log_mel_spectrogram %{{.*}} n_fft = 256 hop_length = 100 n_mels = 64 sampling_rate = 8000 f_min = 2.000000e+01 f_max = 4.000000e+03 : tensor<1000xbf16>
  %g = rlx_hir.log_mel_spectrogram %y n_fft = 256 hop_length = 100 n_mels = 64 sampling_rate = 8000 f_min = 20.0 f_max = 4000.0 : tensor<1000xbf16>
  return %f, %g : tensor<2x80x3000xf32>, tensor<64x10xbf16>
}
