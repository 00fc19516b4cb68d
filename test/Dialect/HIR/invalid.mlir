// Every rlx_hir verifier error, each with a located diagnostic.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @linear_rank0(%x: tensor<f32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = rlx_hir.linear %x, %w : tensor<f32>, tensor<4x4xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{weight must be rank 2, got 4}}
  %0 = rlx_hir.linear %x, %w : tensor<2x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @linear_in_features(%x: tensor<2x4xf32>, %w: tensor<8x5xf32>) {
  // expected-error @+1 {{weight 8x5 (layout out_in) expects in_features=5 but the input's last dim is 4}}
  %0 = rlx_hir.linear %x, %w : tensor<2x4xf32>, tensor<8x5xf32>
  return
}

// -----

func.func @linear_in_out(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{weight 8x4 (layout in_out) expects in_features=8}}
  %0 = rlx_hir.linear %x, %w layout in_out : tensor<2x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must be [8], got 4}}
  %0 = rlx_hir.linear %x, %w bias %b : tensor<2x4xf32>, tensor<8x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @linear_dtype(%x: tensor<2x4xbf16>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{element type mismatch: input is bf16 but weight is f32}}
  %0 = rlx_hir.linear %x, %w : tensor<2x4xbf16>, tensor<8x4xf32>
  return
}

// -----

func.func @linear_unknown_activation(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+2 {{expected ::mlir::rlx::ActivationKind to be one of: none, relu, gelu, gelu_tanh, silu, sigmoid, tanh}}
  // expected-error @+1 {{failed to parse RLX_ActivationAttr parameter 'value'}}
  %0 = rlx_hir.linear %x, %w activation swish : tensor<2x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @linear_int(%x: tensor<2x4xi32>, %w: tensor<8x4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = "rlx_hir.linear"(%x, %w) : (tensor<2x4xi32>, tensor<8x4xi32>) -> tensor<2x8xi32>
  return
}

// -----

func.func @linear_wrong_result(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+2 {{'rlx_hir.linear' op inferred type(s) 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "rlx_hir.linear"(%x, %w) : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @rms_norm_eps_zero(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{eps must be a finite value > 0, got 0}}
  %0 = rlx_hir.rms_norm %x, %g eps = 0.0 : tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @rms_norm_eps_negative(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{eps must be a finite value > 0, got -1e-05}}
  %0 = rlx_hir.rms_norm %x, %g eps = -1.0e-05 : tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @rms_norm_weight(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{weight must be [8] (the input's last dim), got 4}}
  %0 = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<2x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @rms_norm_dtype(%x: tensor<2x8xbf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{element type mismatch: input is bf16 but weight is f32}}
  %0 = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<2x8xbf16>, tensor<8xf32>
  return
}

// -----

func.func @rms_norm_rank0(%x: tensor<f32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = rlx_hir.rms_norm %x, %g eps = 1.0e-05 : tensor<f32>, tensor<8xf32>
  return
}

// -----

func.func @residual_rms_norm_mismatch(%x: tensor<2x8xf32>, %r: tensor<3x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{input tensor<2x8xf32> and residual tensor<3x8xf32> must have the same type}}
  %0:2 = rlx_hir.residual_rms_norm %x, %r, %g eps = 1.0e-05 : tensor<2x8xf32>, tensor<3x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @residual_rms_norm_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{eps must be a finite value > 0}}
  %0:2 = rlx_hir.residual_rms_norm %x, %x, %g eps = 0.0 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{bias must be [8] (the input's last dim), got 2}}
  %0 = rlx_hir.layer_norm %x bias(%b : tensor<2xf32>) eps = 1.0e-05 : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_bias_dtype(%x: tensor<2x8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{element type mismatch: input is f32 but bias is f16}}
  %0 = rlx_hir.layer_norm %x bias(%b : tensor<8xf16>) eps = 1.0e-05 : tensor<2x8xf32>
  return
}

// -----

func.func @swiglu_activation(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %d: tensor<8x16xf32>) {
  // expected-error @+1 {{swiglu activation must be silu, gelu, gelu_tanh or relu, got sigmoid}}
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d activation sigmoid : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @swiglu_gate_up(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %u: tensor<12x8xf32>, %d: tensor<8x16xf32>) {
  // expected-error @+1 {{gate weight 16x8 and up weight 12x8 must have the same shape}}
  %0 = rlx_hir.swiglu %x, gate %g, up %u, down %d : tensor<2x8xf32>, tensor<16x8xf32>, tensor<12x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @swiglu_down(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %d: tensor<8x12xf32>) {
  // expected-error @+1 {{down weight 8x12 (layout out_in) expects in_features=12 but the input's last dim is 16}}
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x12xf32>
  return
}

// -----

func.func @swiglu_down_hidden(%x: tensor<2x8xf32>, %g: tensor<16x8xf32>, %d: tensor<4x16xf32>) {
  // expected-error @+1 {{down weight 4x16 maps to 4 features, but the input has 8}}
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<4x16xf32>
  return
}

// -----

func.func @swiglu_hidden(%x: tensor<2x6xf32>, %g: tensor<16x8xf32>, %d: tensor<8x16xf32>) {
  // expected-error @+1 {{gate weight 16x8 (layout out_in) expects in_features=8 but the input's last dim is 6}}
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d : tensor<2x6xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @swiglu_dtype(%x: tensor<2x8xf32>, %g: tensor<16x8xbf16>, %d: tensor<8x16xf32>) {
  // expected-error @+1 {{element type mismatch: input is f32 but gate weight is bf16}}
  %0 = rlx_hir.swiglu %x, gate %g, up %g, down %d : tensor<2x8xf32>, tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<8x16xf32>
  return
}

// -----

func.func @attention_gqa_divisible(%q: tensor<1x4x768xf32>, %k: tensor<1x4x320xf32>) {
  // expected-error @+1 {{num_heads (12) must be divisible by num_kv_heads (5)}}
  %0 = rlx_hir.attention %q, %k, %k heads = 12, kv_heads = 5, head_dim = 64 : tensor<1x4x768xf32>, tensor<1x4x320xf32>, tensor<1x4x320xf32>
  return
}

// -----

func.func @attention_heads_positive(%q: tensor<1x4x768xf32>) {
  // expected-error @+1 {{num_heads and num_kv_heads must be > 0, got 0 and 0}}
  %0 = rlx_hir.attention %q, %q, %q heads = 0, kv_heads = 0, head_dim = 64 : tensor<1x4x768xf32>, tensor<1x4x768xf32>, tensor<1x4x768xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<1x4x768xf32>) {
  // expected-error @+1 {{head_dim must be > 0, got 0}}
  %0 = rlx_hir.attention %q, %q, %q heads = 12, kv_heads = 12, head_dim = 0 : tensor<1x4x768xf32>, tensor<1x4x768xf32>, tensor<1x4x768xf32>
  return
}

// -----

func.func @attention_hidden(%q: tensor<1x4x2048xf32>, %k: tensor<1x4x512xf32>) {
  // expected-error @+1 {{query hidden size 2048 != 32 heads x 128 head_dim}}
  %0 = rlx_hir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 128 : tensor<1x4x2048xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_kv_hidden(%q: tensor<1x4x2048xf32>, %k: tensor<1x4x1024xf32>) {
  // expected-error @+1 {{key hidden size 1024 != 8 heads x 64 head_dim}}
  %0 = rlx_hir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 64 : tensor<1x4x2048xf32>, tensor<1x4x1024xf32>, tensor<1x4x1024xf32>
  return
}

// -----

func.func @attention_value_heads(%q: tensor<1x4x2048xf32>, %k: tensor<1x4x512xf32>, %v: tensor<1x4x100xf32>) {
  // expected-error @+1 {{value hidden size 100 is not divisible by 8 heads}}
  %0 = rlx_hir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 64 : tensor<1x4x2048xf32>, tensor<1x4x512xf32>, tensor<1x4x100xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<4x2048xf32>) {
  // expected-error @+1 {{query must be rank 3 [batch, seq, heads*head_dim] for layout bsd, got 4x2048}}
  %0 = rlx_hir.attention %q, %q, %q heads = 32, kv_heads = 32, head_dim = 64 : tensor<4x2048xf32>, tensor<4x2048xf32>, tensor<4x2048xf32>
  return
}

// -----

func.func @attention_rank4(%q: tensor<1x4x2048xf32>) {
  // expected-error @+1 {{query must be rank 4 for layout bshd, got 1x4x2048}}
  %0 = rlx_hir.attention %q, %q, %q heads = 32, kv_heads = 32, head_dim = 64 layout bshd : tensor<1x4x2048xf32>, tensor<1x4x2048xf32>, tensor<1x4x2048xf32>
  return
}

// -----

func.func @attention_rank4_heads(%q: tensor<1x4x32x64xf32>, %k: tensor<1x4x4x64xf32>) {
  // expected-error @+1 {{key has 4 heads, expected 8}}
  %0 = rlx_hir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 64 layout bshd : tensor<1x4x32x64xf32>, tensor<1x4x4x64xf32>, tensor<1x4x4x64xf32>
  return
}

// -----

func.func @attention_rank4_head_dim(%q: tensor<1x32x4x64xf32>, %k: tensor<1x8x4x32xf32>) {
  // expected-error @+1 {{key head size 32 != head_dim 64}}
  %0 = rlx_hir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 64 layout bhsd : tensor<1x32x4x64xf32>, tensor<1x8x4x32xf32>, tensor<1x8x4x32xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x2048xf32>, %k: tensor<1x4x512xf32>) {
  // expected-error @+1 {{query, key and value batch sizes differ}}
  %0 = rlx_hir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 64 : tensor<2x4x2048xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_kv_seq(%q: tensor<1x4x2048xf32>, %k: tensor<1x4x512xf32>, %v: tensor<1x5x512xf32>) {
  // expected-error @+1 {{key and value sequence lengths differ: 1x4x512 vs 1x5x512}}
  %0 = rlx_hir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 64 : tensor<1x4x2048xf32>, tensor<1x4x512xf32>, tensor<1x5x512xf32>
  return
}

// -----

func.func @attention_window_missing(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{sliding_window needs a window > 0}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 sliding_window : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_window_zero(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{sliding_window needs a window > 0}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 sliding_window window = 0 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_window_without_kind(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{window is only valid with mask kind sliding_window or chunked}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 causal window = 16 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_chunk_missing(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{chunked needs a window > 0 (the chunk size)}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 chunked : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{scale must be finite and > 0, got -1}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 scale = -1.0 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_softcap(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{softcap must be finite and > 0, got 0}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 softcap = 0.0 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_dtype(%q: tensor<1x4x512xf32>, %k: tensor<1x4x512xbf16>) {
  // expected-error @+1 {{element type mismatch: query is f32 but key is bf16}}
  %0 = rlx_hir.attention %q, %k, %k heads = 8, kv_heads = 8, head_dim = 64 : tensor<1x4x512xf32>, tensor<1x4x512xbf16>, tensor<1x4x512xbf16>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x4x512xf32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{mask must be rank 2 [Sq, Sk], 3 [B, Sq, Sk] or 4 [B, 1|heads, Sq, Sk], got 4}}
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<4xi1>) heads = 8, kv_heads = 8, head_dim = 64 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x4x512xf32>, %m: tensor<4x5xi1>) {
  // expected-error @+1 {{mask 4x5 does not match [Sq, Sk] = [4x4]}}
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<4x5xi1>) heads = 8, kv_heads = 8, head_dim = 64 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_mask_batch(%q: tensor<2x4x512xf32>, %m: tensor<3x4x4xi1>) {
  // expected-error @+1 {{mask batch dim 3 does not match the query batch}}
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<3x4x4xi1>) heads = 8, kv_heads = 8, head_dim = 64 : tensor<2x4x512xf32>, tensor<2x4x512xf32>, tensor<2x4x512xf32>
  return
}

// -----

func.func @attention_mask_heads(%q: tensor<1x4x512xf32>, %m: tensor<1x4x4x4xi1>) {
  // expected-error @+1 {{mask head dim 4 must be 1 or num_heads (8)}}
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<1x4x4x4xi1>) heads = 8, kv_heads = 8, head_dim = 64 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_mask_dtype(%q: tensor<1x4x512xf32>, %m: tensor<4x4xbf16>) {
  // expected-error @+1 {{mask must be i1 (boolean) or f32 (additive), got bf16}}
  %0 = rlx_hir.attention %q, %q, %q mask(%m : tensor<4x4xbf16>) heads = 8, kv_heads = 8, head_dim = 64 : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @attention_unknown_mask_kind(%q: tensor<1x4x512xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = rlx_hir.attention %q, %q, %q heads = 8, kv_heads = 8, head_dim = 64 diagonal : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_no_form(%x: tensor<1x4x512xf32>) {
  // expected-error @+1 {{rope needs either positions or cos/sin tables (exactly one of the two forms)}}
  %0 = rlx_hir.rope %x head_dim = 64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_both_forms(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>, %c: tensor<4x32xf32>) {
  // expected-error @+1 {{rope needs either positions or cos/sin tables (exactly one of the two forms)}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) tables(%c, %c : tensor<4x32xf32>, tensor<4x32xf32>) head_dim = 64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_cos_only(%x: tensor<1x4x512xf32>, %c: tensor<4x32xf32>) {
  // expected-error @+2 {{cos and sin must be given together}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "rlx_hir.rope"(%x, %c) <{head_dim = 64 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 0>}> : (tensor<1x4x512xf32>, tensor<4x32xf32>) -> tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_hidden(%x: tensor<1x4x500xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{rope input hidden size 500 is not a multiple of head_dim 64}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 : tensor<1x4x500xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{rope input must be rank 3 [batch, seq, heads*head_dim], got 4x512}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 : tensor<4x512xf32>
  return
}

// -----

func.func @rope_head_dim(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{head_dim must be > 0, got -64}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = -64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_rotary_odd(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{rotary_dim must be even and in (0, head_dim=64], got 31}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 rotary_dim = 31 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_rotary_large(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{rotary_dim must be even and in (0, head_dim=64], got 128}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 rotary_dim = 128 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_theta(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{theta must be > 0}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 theta = 0.0 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_positions(%x: tensor<1x4x512xf32>, %p: tensor<5xi64>) {
  // expected-error @+1 {{positions must be [S] or [B, S] matching the input 1x4x512, got 5}}
  %0 = rlx_hir.rope %x positions(%p : tensor<5xi64>) head_dim = 64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_positions_float(%x: tensor<1x4x512xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "rlx_hir.rope"(%x, %p) <{head_dim = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x4x512xf32>, tensor<4xf32>) -> tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_tables_with_theta(%x: tensor<1x4x512xf32>, %c: tensor<4x32xf32>) {
  // expected-error @+1 {{theta and scaling only apply to the positions form; cos/sin tables are already final}}
  %0 = rlx_hir.rope %x tables(%c, %c : tensor<4x32xf32>, tensor<4x32xf32>) head_dim = 64 theta = 10000.0 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_tables_types(%x: tensor<1x4x512xf32>, %c: tensor<4x32xf32>, %s: tensor<4x32xbf16>) {
  // expected-error @+1 {{cos tensor<4x32xf32> and sin tensor<4x32xbf16> must have the same type}}
  %0 = rlx_hir.rope %x tables(%c, %s : tensor<4x32xf32>, tensor<4x32xbf16>) head_dim = 64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_tables_shape(%x: tensor<1x4x512xf32>, %c: tensor<4x64xf32>) {
  // expected-error @+1 {{cos/sin must be [S, rotary_dim/2] or [B, S, rotary_dim/2] = [.., 32] for input 1x4x512, got 4x64}}
  %0 = rlx_hir.rope %x tables(%c, %c : tensor<4x64xf32>, tensor<4x64xf32>) head_dim = 64 : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_scaling_factor(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{rope_scaling factor must be finite and > 0}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 scaling <rope_type = linear, factor = 0.0> : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_scaling_llama3(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{llama3 rope_scaling needs 0 < low_freq_factor < high_freq_factor, got 4 and 1}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 scaling <rope_type = llama3, factor = 8.0, low_freq_factor = 4.0, high_freq_factor = 1.0> : tensor<1x4x512xf32>
  return
}

// -----

func.func @rope_scaling_positions(%x: tensor<1x4x512xf32>, %p: tensor<4xi64>) {
  // expected-error @+1 {{original_max_position_embeddings must be > 0}}
  %0 = rlx_hir.rope %x positions(%p : tensor<4xi64>) head_dim = 64 scaling <rope_type = llama3, factor = 8.0, original_max_position_embeddings = 0> : tensor<1x4x512xf32>
  return
}

// -----

func.func @embedding_table(%ids: tensor<1x4xi64>, %t: tensor<8xf32>) {
  // expected-error @+1 {{embedding table must be rank 2 [vocab, hidden], got 8}}
  %0 = rlx_hir.embedding %ids, %t : tensor<1x4xi64>, tensor<8xf32>
  return
}

// -----

func.func @embedding_float_ids(%ids: tensor<1x4xf32>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "rlx_hir.embedding"(%ids, %t) : (tensor<1x4xf32>, tensor<8x4xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @qk_norm_head_dim(%x: tensor<1x4x100xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{input hidden size 100 is not a multiple of head_dim 16}}
  %0 = rlx_hir.qk_norm %x, %g head_dim = 16 eps = 1.0e-06 : tensor<1x4x100xf32>, tensor<16xf32>
  return
}

// -----

func.func @qk_norm_weight(%x: tensor<1x4x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{weight must be [head_dim] = [16], got 64}}
  %0 = rlx_hir.qk_norm %x, %g head_dim = 16 eps = 1.0e-06 : tensor<1x4x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @qk_norm_zero_head_dim(%x: tensor<1x4x64xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{head_dim must be > 0, got 0}}
  %0 = rlx_hir.qk_norm %x, %g head_dim = 0 eps = 1.0e-06 : tensor<1x4x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @dequant_k(%x: tensor<2x40xf32>, %w: tensor<4x20xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{NVFP4 needs a static K that is a multiple of 16, got K = 40}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g : tensor<2x40xf32>, tensor<4x20xi8>, tensor<4x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @dequant_packed(%x: tensor<2x32xf32>, %w: tensor<4x32xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{packed weight 4x32 must hold K/2 = 16 bytes per row along K}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g : tensor<2x32xf32>, tensor<4x32xi8>, tensor<4x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @dequant_scales(%x: tensor<2x32xf32>, %w: tensor<4x16xi8>, %s: tensor<4x4xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{scales 4x4 must be [N, K/16] = [4, 2]}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g : tensor<2x32xf32>, tensor<4x16xi8>, tensor<4x4xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @dequant_bias(%x: tensor<2x32xf32>, %w: tensor<4x16xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<f32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias must be [4], got 8}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g bias(%b : tensor<8xf32>) : tensor<2x32xf32>, tensor<4x16xi8>, tensor<4x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @dequant_scheme(%x: tensor<2x32xf32>, %w: tensor<4x16xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<f32>) {
  // expected-error @+1 {{dequant_linear supports the nvfp4 scheme only}}
  %0 = rlx_hir.dequant_linear %x, %w, %s, %g scheme none : tensor<2x32xf32>, tensor<4x16xi8>, tensor<4x2xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @dequant_global_scale(%x: tensor<2x32xf32>, %w: tensor<4x16xi8>, %s: tensor<4x2xf8E4M3FN>, %g: tensor<1xf32>) {
  // expected-error @+1 {{operand #3 must be 0D tensor of 32-bit float values}}
  %0 = "rlx_hir.dequant_linear"(%x, %w, %s, %g) : (tensor<2x32xf32>, tensor<4x16xi8>, tensor<4x2xf8E4M3FN>, tensor<1xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @decoder_layer_weight(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // Q and K/V swapped: q_proj must be [heads*head_dim, hidden] = [64, 64].
  // expected-error @+1 {{q_proj must be 64x64, got 32x64}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wkv, %wq, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_heads(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                               %wkv: tensor<48x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{num_heads (4) must be divisible by num_kv_heads (3)}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<48x64xf32>, tensor<48x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 3, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_eps(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                             %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{eps must be a finite value > 0, got 0}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 0.0 theta = 10000.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_theta(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                               %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{theta must be > 0}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = -1.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_mask(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                              %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{a decoder layer's mask must be causal or sliding_window}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 mask none : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_chunked(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                 %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{a decoder layer's mask must be causal or sliding_window (chunked attention is written with rlx_hir.attention)}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 mask chunked : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_window(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{sliding_window needs a window > 0 (and only it takes one)}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 mask sliding_window : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_cache(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                               %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>, %pk: tensor<1x?x64xf32>) {
  // expected-error @+1 {{past_key must be 1x?x32, got 1x?x64}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      cache(%pk, %pk : tensor<1x?x64xf32>, tensor<1x?x64xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_qk_norm(%x: tensor<1x?x64xf32>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                 %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{q_norm must be 16, got 64}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      qk_norm(%n, %n : tensor<64xf32>, tensor<64xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xf32>
  return
}

// -----

func.func @decoder_layer_dtype(%x: tensor<1x?x64xbf16>, %pos: tensor<?xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                               %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{element type mismatch: input is bf16 but input_norm is f32}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<?xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x?x64xbf16>
  return
}

// -----

func.func @decoder_layer_positions(%x: tensor<1x8x64xf32>, %pos: tensor<4xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                   %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{positions must be [S] or [B, S] matching the input 1x8x64, got 4}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<4xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x8x64xf32>
  return
}

// -----

func.func @decoder_layer_rank(%x: tensor<8x64xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                              %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{decoder_layer input must be [batch, seq, hidden], got 8x64}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<8xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<8x64xf32>
  return
}

// -----

func.func @decoder_layer_static_hidden(%x: tensor<1x8x?xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                       %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{decoder_layer needs a static hidden size}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<8xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x8x?xf32>
  return
}

// -----

func.func @decoder_layer_zero_heads(%x: tensor<1x8x64xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                    %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{num_heads, num_kv_heads and head_dim must be > 0}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<8xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 0, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x8x64xf32>
  return
}

// -----

func.func @decoder_layer_gate(%x: tensor<1x8x64xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                              %wkv: tensor<32x64xf32>, %wg: tensor<128xf32>, %wd: tensor<64x128xf32>) {
  // expected-error @+1 {{gate_proj must be [intermediate, hidden]}}
  %0:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<8xi64>)
      weights(%n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd : tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128xf32>, tensor<128xf32>, tensor<64x128xf32>)
      heads = 4, kv_heads = 2, head_dim = 16 eps = 1.0e-05 theta = 10000.0 : tensor<1x8x64xf32>
  return
}

// -----

func.func @decoder_layer_pairs(%x: tensor<1x8x64xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                               %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>, %qn: tensor<16xf32>) {
  // expected-error @+2 {{q_norm and k_norm must be given together}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = "rlx_hir.decoder_layer"(%x, %pos, %n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd, %qn) <{eps = 1.0e-05 : f64, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, theta = 1.0e4 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0>}> : (tensor<1x8x64xf32>, tensor<8xi64>, tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>, tensor<16xf32>) -> (tensor<1x8x64xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>)
  return
}

// -----

func.func @decoder_layer_cache_pair(%x: tensor<1x8x64xf32>, %pos: tensor<8xi64>, %n: tensor<64xf32>, %wq: tensor<64x64xf32>,
                                    %wkv: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wd: tensor<64x128xf32>, %pk: tensor<1x4x32xf32>) {
  // expected-error @+2 {{past_key and past_value must be given together}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = "rlx_hir.decoder_layer"(%x, %pos, %n, %wq, %wkv, %wkv, %wq, %n, %wg, %wg, %wd, %pk) <{eps = 1.0e-05 : f64, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, theta = 1.0e4 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0>}> : (tensor<1x8x64xf32>, tensor<8xi64>, tensor<64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>, tensor<1x4x32xf32>) -> (tensor<1x8x64xf32>, tensor<1x12x32xf32>, tensor<1x12x32xf32>)
  return
}

// -----

func.func @moe_router_top_k(%x: tensor<2x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @+1 {{moe_router top_k must be in [1, E = 8], got 9}}
  %w0, %i0 = rlx_hir.moe_router %x, %w top_k = 9 : tensor<2x64xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @moe_router_hidden(%x: tensor<2x32xf32>, %w: tensor<8x64xf32>) {
  // expected-error @+1 {{moe_router weight 8x64 is [E, H] for H = 64, but the input has H = 32}}
  %w0, %i0 = rlx_hir.moe_router %x, %w top_k = 2 : tensor<2x32xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @moe_router_groups(%x: tensor<2x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @+1 {{moe_router n_group = 8 must split the 8 experts into equal groups of at least two}}
  %w0, %i0 = rlx_hir.moe_router %x, %w top_k = 2 scoring sigmoid n_group = 8 topk_group = 2 : tensor<2x64xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @moe_experts_down(%x: tensor<2x64xf32>, %w: tensor<2x2xf32>, %i: tensor<2x2xi64>,
                            %gu: tensor<8x48x64xf32>, %d: tensor<8x64x20xf32>) {
  // expected-error @+1 {{moe_experts down must be [E, H, I] = [8, 64, 24] for gate_up 8x48x64, got 8x64x20}}
  %y = rlx_hir.moe_experts %x, %w, %i, gate_up %gu, down %d : tensor<2x64xf32>, tensor<2x2xf32>, tensor<2x2xi64>, tensor<8x48x64xf32>, tensor<8x64x20xf32>
  return
}

// -----

func.func @moe_experts_routing(%x: tensor<2x64xf32>, %w: tensor<3x2xf32>, %i: tensor<2x2xi64>,
                               %gu: tensor<8x48x64xf32>, %d: tensor<8x64x24xf32>) {
  // expected-error @+1 {{moe_experts weights and ids must both be [..., k] over the input's leading dims 2, got 3x2 and 2x2}}
  %y = rlx_hir.moe_experts %x, %w, %i, gate_up %gu, down %d : tensor<2x64xf32>, tensor<3x2xf32>, tensor<2x2xi64>, tensor<8x48x64xf32>, tensor<8x64x24xf32>
  return
}

// -----

func.func @moe_experts_k(%x: tensor<2x64xf32>, %w: tensor<2x9xf32>, %i: tensor<2x9xi64>,
                         %gu: tensor<8x48x64xf32>, %d: tensor<8x64x24xf32>) {
  // expected-error @+1 {{moe_experts needs a static k in [1, E = 8] experts per token, got 2x9}}
  %y = rlx_hir.moe_experts %x, %w, %i, gate_up %gu, down %d : tensor<2x64xf32>, tensor<2x9xf32>, tensor<2x9xi64>, tensor<8x48x64xf32>, tensor<8x64x24xf32>
  return
}

// -----

func.func @moe_router_dynamic_experts(%x: tensor<2x64xf32>, %w: tensor<?x64xf32>) {
  // expected-error @+1 {{moe_router needs a static number of experts, got weight ?x64}}
  %w0, %i0 = rlx_hir.moe_router %x, %w top_k = 2 : tensor<2x64xf32>, tensor<?x64xf32>
  return
}

// -----

func.func @attention_sinks_shape(%q: tensor<1x4x64xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{sinks must be [num_heads] = [4], got 3}}
  %0 = rlx_hir.attention %q, %q, %q sinks(%s : tensor<3xf32>) heads = 4, kv_heads = 4, head_dim = 16 : tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>
  return
}

// -----

func.func @attention_sinks_type(%q: tensor<1x4x64xbf16>, %s: tensor<4xf32>) {
  // expected-error @+1 {{sinks must have the query's element type}}
  %0 = rlx_hir.attention %q, %q, %q sinks(%s : tensor<4xf32>) heads = 4, kv_heads = 4, head_dim = 16 : tensor<1x4x64xbf16>, tensor<1x4x64xbf16>, tensor<1x4x64xbf16>
  return
}

// -----

func.func @log_mel_rank(%x: tensor<1x2x800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram needs samples [L] or [B, L] with a static L, got 1x2x800}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 : tensor<1x2x800xf32>
  return
}

// -----

func.func @log_mel_dynamic_length(%x: tensor<1x?xf32>) {
  // expected-error @+1 {{log_mel_spectrogram needs samples [L] or [B, L] with a static L, got 1x?}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 : tensor<1x?xf32>
  return
}

// -----

func.func @log_mel_hop(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram hop_length must be in [1, 2^30], got 0}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 0 n_mels = 80 sampling_rate = 16000 : tensor<800xf32>
  return
}

// -----

func.func @log_mel_dynamic_batch_padded(%x: tensor<?x800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram pads or trims to n_samples = 1600 only with a static batch, got ?x800}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 n_samples = 1600 : tensor<?x800xf32>
  return
}

// -----

func.func @log_mel_short(%x: tensor<200xf32>) {
  // expected-error @+1 {{log_mel_spectrogram: reflect padding of n_fft/2 = 200 needs more than that many samples, got 200}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 : tensor<200xf32>
  return
}

// -----

func.func @log_mel_one_frame(%x: tensor<300xf32>) {
  // expected-error @+1 {{log_mel_spectrogram: 300 samples make one frame of n_fft = 400, and the last frame is dropped}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 400 n_mels = 80 sampling_rate = 16000 : tensor<300xf32>
  return
}

// -----

func.func @log_mel_band(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram needs 0 <= f_min, f_min + 1 <= f_max <= 1e9, got f_min = 4000, f_max = 100}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 f_min = 4000.0 f_max = 100.0 : tensor<800xf32>
  return
}

// -----

func.func @log_mel_n_fft_one(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram n_fft must be in [2, 2^16], got 1}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 1 hop_length = 160 n_mels = 80 sampling_rate = 16000 : tensor<800xf32>
  return
}

// -----

func.func @log_mel_bank(%x: tensor<80000xf32>) {
  // expected-error @+1 {{log_mel_spectrogram: a filter bank of n_mels x (n_fft/2 + 1) = 4096 x 32769 is over 2^24 entries}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 65536 hop_length = 160 n_mels = 4096 sampling_rate = 16000 : tensor<80000xf32>
  return
}

// -----

func.func @log_mel_n_samples(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram n_samples must be in [1, 2^32], got 1099511627776}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 131072 n_mels = 80 sampling_rate = 16000 n_samples = 1099511627776 : tensor<800xf32>
  return
}

// -----

func.func @log_mel_frames(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram: 4194305 frames of n_fft = 400 are over 2^28 samples}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 1024 n_mels = 80 sampling_rate = 16000 n_samples = 4294967296 : tensor<800xf32>
  return
}

// -----

func.func @log_mel_narrow_band(%x: tensor<800xf32>) {
  // expected-error @+1 {{log_mel_spectrogram needs 0 <= f_min, f_min + 1 <= f_max <= 1e9, got f_min = 0, f_max = 1e-310}}
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 f_max = 1.0e-310 : tensor<800xf32>
  return
}
