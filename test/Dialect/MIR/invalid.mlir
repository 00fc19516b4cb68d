// Every rlx_mir verifier error, each with a located diagnostic.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes 2x3 and 4 are not broadcast-compatible (dim 1: 3 vs 4)}}
  %0 = rlx_mir.add %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @binary_dtype(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{element type mismatch: lhs is f32 but rhs is f16}}
  %0 = rlx_mir.mul %a, %b : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @binary_unranked(%a: tensor<*xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = "rlx_mir.add"(%a, %b) : (tensor<*xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = "rlx_mir.exp"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.cast' op cannot change the shape: 'tensor<4xf32>' to 'tensor<2xf16>'}}
  %0 = rlx_mir.cast %a : tensor<4xf32> to tensor<2xf16>
  return
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{matmul operands must have rank >= 2, got lhs 4 and rhs 4x4}}
  %0 = rlx_mir.matmul %a, %b : tensor<4xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<2x4xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{matmul contraction dims differ: lhs 2x4 has K=4, rhs 5x4 has K=5}}
  %0 = rlx_mir.matmul %a, %b : tensor<2x4xf32>, tensor<5x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x4xf32>, %b: tensor<3x4x4xf32>) {
  // expected-error @+1 {{shapes 2 and 3 are not broadcast-compatible (dim 0: 2 vs 3)}}
  %0 = rlx_mir.matmul %a, %b : tensor<2x2x4xf32>, tensor<3x4x4xf32>
  return
}

// -----

func.func @matmul_dtype(%a: tensor<2x4xbf16>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{element type mismatch: lhs is bf16 but rhs is f32}}
  %0 = rlx_mir.matmul %a, %b : tensor<2x4xbf16>, tensor<4x4xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "rlx_mir.matmul"(%a, %b) : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @reduce_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = rlx_mir.reduce sum %a axes = [2] : tensor<2x4xf32>
  return
}

// -----

func.func @reduce_repeated(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{axis -1 is repeated}}
  %0 = rlx_mir.reduce sum %a axes = [1, -1] : tensor<2x4xf32>
  return
}

// -----

func.func @reduce_no_axes(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{reduce needs at least one axis}}
  %0 = rlx_mir.reduce sum %a axes = [] : tensor<2x4xf32>
  return
}

// -----

func.func @reduce_unknown_kind(%a: tensor<2x4xf32>) {
  // expected-error @+2 {{expected ::mlir::rlx::ReduceKind to be one of: sum, mean, max, min, prod}}
  // expected-error @+1 {{failed to parse RLX_ReduceKindAttr parameter 'value'}}
  %0 = rlx_mir.reduce argmax %a axes = [1] : tensor<2x4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = rlx_mir.softmax %a axis = -3 : tensor<2x4xf32>
  return
}

// -----

func.func @rms_norm_eps(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{eps must be a finite value > 0, got 0}}
  %0 = rlx_mir.rms_norm %a eps = 0.0 : tensor<2x4xf32>
  return
}

// -----

func.func @rms_norm_weight(%a: tensor<2x4xf32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{weight must be [4] (the input's last dim), got 2x4}}
  %0 = rlx_mir.rms_norm %a, %g eps = 1.0e-05 : tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<1x4x896xf32>, %k: tensor<1x4x192xf32>) {
  // expected-error @+1 {{num_heads (14) must be divisible by num_kv_heads (3)}}
  %0 = rlx_mir.attention %q, %k, %k heads = 14, kv_heads = 3, head_dim = 64 causal : tensor<1x4x896xf32>, tensor<1x4x192xf32>, tensor<1x4x192xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<1x4x128xf32>, %m: tensor<4x4xi32>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 1-bit signless integer or 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = "rlx_mir.attention"(%q, %q, %q, %m) <{head_dim = 64 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (tensor<1x4x128xf32>, tensor<1x4x128xf32>, tensor<1x4x128xf32>, tensor<4x4xi32>) -> tensor<1x4x128xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{reshape of 2x4 to 3x3 changes the number of elements}}
  %0 = rlx_mir.reshape %a [3, 3] : tensor<2x4xf32>
  return
}

// -----

func.func @reshape_dim(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{reshape dims must be >= 0 or -1 (dynamic), got -2}}
  %0 = rlx_mir.reshape %a [-2, 8] : tensor<2x4xf32>
  return
}

// -----

// 0-size dims are valid, but the element count must still match.
func.func @reshape_to_empty(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{reshape of 2x4 to 0x8 changes the number of elements}}
  %0 = rlx_mir.reshape %a [0, 8] : tensor<2x4xf32>
  return
}

// -----

// Sizes from the text are overflow-checked (the products wrapped: UB).
func.func @reshape_overflow(%a: tensor<288230376151711745x32xf32>) {
  // expected-error @+1 {{shape 288230376151711745x32 has more elements than an int64_t counts}}
  %0 = rlx_mir.reshape %a [-1, 32, 4] : tensor<288230376151711745x32xf32>
  return
}

// -----

func.func @slice_stride_overflow(%a: tensor<8xf32>) {
  // expected-error @+1 {{slice [1, size 3, stride 9223372036854775807] runs past dim 0 of size 8}}
  %0 = rlx_mir.slice %a offsets [1] sizes [3] strides [9223372036854775807] : tensor<8xf32>
  return
}

// -----

func.func @reshape_ambiguous(%a: tensor<?xf32>) {
  // expected-error @+1 {{reshape of ? to [?x?] is ambiguous: one input group maps to several dynamic output dims}}
  %0 = rlx_mir.reshape %a [-1, -1] : tensor<?xf32>
  return
}

// -----

func.func @reshape_static_after_dynamic(%a: tensor<?x64xf32>) {
  // expected-error @+1 {{reshape of ?x64 to static dims 4x64 cannot be checked; use -1 for the dims that follow the dynamic input dims}}
  %0 = rlx_mir.reshape %a [4, 64] : tensor<?x64xf32>
  return
}

// -----

func.func @reshape_indivisible(%a: tensor<30xf32>) {
  // expected-error @+1 {{reshape of 30 to 1x?x8: 30 elements do not divide into 8}}
  %0 = rlx_mir.reshape %a [1, -1, 8] : tensor<30xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{permutation has 3 entries for an input of rank 2}}
  %0 = rlx_mir.transpose %a [0, 1, 2] : tensor<2x4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{permutation must be a permutation of 0..1}}
  %0 = rlx_mir.transpose %a [1, 1] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_lengths(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{offsets, sizes and strides need one entry per input dim (2)}}
  %0 = rlx_mir.slice %a offsets [0] sizes [1] strides [1] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_offset(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{slice offset -1 at dim 1 is negative}}
  %0 = rlx_mir.slice %a offsets [0, -1] sizes [1, 1] strides [1, 1] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_stride(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{slice stride at dim 0 must be >= 1}}
  %0 = rlx_mir.slice %a offsets [0, 0] sizes [1, 1] strides [0, 1] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_size(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{slice size at dim 1 must be >= 0 or -1 (to the end)}}
  %0 = rlx_mir.slice %a offsets [0, 0] sizes [1, -2] strides [1, 1] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_past_end(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{slice [2, size 2, stride 2] runs past dim 1 of size 4}}
  %0 = rlx_mir.slice %a offsets [0, 2] sizes [1, 2] strides [1, 2] : tensor<2x4xf32>
  return
}

// -----

func.func @slice_offset_past_end(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{slice offset 5 is past the end of dim 1 (size 4)}}
  %0 = rlx_mir.slice %a offsets [0, 5] sizes [1, -1] strides [1, 1] : tensor<2x4xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{concat input 1 has rank 1, expected 2}}
  %0 = rlx_mir.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x4xf32>, %b: tensor<2x5xf32>) {
  // expected-error @+1 {{concat input 1 2x5 differs at dim 1}}
  %0 = rlx_mir.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<2x5xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = rlx_mir.concat %a, %a axis = 2 : tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @concat_dtype(%a: tensor<2x4xf32>, %b: tensor<2x4xf16>) {
  // expected-error @+1 {{element type mismatch: input 0 is f32 but input 1 is f16}}
  %0 = rlx_mir.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<2x4xf16>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{concat needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "rlx_mir.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_rank(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{cannot broadcast 2x4 to a lower rank (1)}}
  %0 = rlx_mir.broadcast %a [8] : tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_dim(%a: tensor<2x4xf32>) {
  // expected-error @+1 {{cannot broadcast dim 1 of size 4 to 8}}
  %0 = rlx_mir.broadcast %a [2, 8] : tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_keep_leading(%a: tensor<4xf32>) {
  // expected-error @+1 {{-1 at broadcast dim 0 has no input dim to keep}}
  %0 = rlx_mir.broadcast %a [-1, 4] : tensor<4xf32>
  return
}

// -----

func.func @broadcast_zero(%a: tensor<4xf32>) {
  // expected-error @+1 {{broadcast dims must be >= 0 or -1, got -2}}
  %0 = rlx_mir.broadcast %a [-2, 4] : tensor<4xf32>
  return
}

// -----

func.func @constant_unranked() {
  // expected-error @+1 {{constant value must have a ranked tensor type}}
  %0 = rlx_mir.constant dense<1.0> : vector<4xf32>
  return
}

// -----

func.func @select_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = "rlx_mir.select"(%c, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_values(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{element type mismatch: on_true is f32 but on_false is bf16}}
  %0 = rlx_mir.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @select_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{shapes 3 and 4 are not broadcast-compatible}}
  %0 = rlx_mir.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must be [8] (the input's last dim), got 4}}
  %0 = rlx_mir.layer_norm %x bias(%b : tensor<4xf32>) eps = 1.0e-05 : tensor<2x8xf32>
  return
}

// -----

func.func @residual_rms_norm_types(%x: tensor<2x8xf32>, %r: tensor<2x8xf16>) {
  // expected-error @+1 {{input tensor<2x8xf32> and residual tensor<2x8xf16> must have the same type}}
  %0:2 = rlx_mir.residual_rms_norm %x, %r eps = 1.0e-05 : tensor<2x8xf32>, tensor<2x8xf16>
  return
}

// -----

func.func @gather_indices(%t: tensor<8x4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "rlx_mir.gather"(%t, %i) : (tensor<8x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_scalar_table(%t: tensor<f32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{table must have rank >= 1}}
  %0 = rlx_mir.gather %t[%i] : tensor<f32>, tensor<2xi32>
  return
}

// -----

func.func @rope_tables(%x: tensor<1x4x64xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{cos/sin must be [S, rotary_dim/2] or [B, S, rotary_dim/2] = [.., 8] for input 1x4x64, got 4x16}}
  %0 = rlx_mir.rope %x, %c, %c head_dim = 16 : tensor<1x4x64xf32>, tensor<4x16xf32>, tensor<4x16xf32>
  return
}

// -----

func.func @rope_rotary(%x: tensor<1x4x64xf32>, %c: tensor<4x8xf32>) {
  // expected-error @+1 {{rotary_dim must be even and in (0, head_dim=16], got 17}}
  %0 = rlx_mir.rope %x, %c, %c head_dim = 16 rotary_dim = 17 : tensor<1x4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @causal_mask_rank(%s: tensor<4xf32>) {
  // expected-error @+1 {{causal_mask needs scores of rank >= 2 [..., Sq, Sk], got 4}}
  %0 = rlx_mir.causal_mask %s : tensor<4xf32>
  return
}

// -----

func.func @causal_mask_window(%s: tensor<4x4xf32>) {
  // expected-error @+1 {{window must be > 0, got 0}}
  %0 = rlx_mir.causal_mask %s window = 0 : tensor<4x4xf32>
  return
}

// -----

func.func @causal_mask_chunked_without_window(%s: tensor<4x4xf32>) {
  // expected-error @+1 {{causal_mask chunked needs a window (the chunk size)}}
  %0 = rlx_mir.causal_mask %s chunked : tensor<4x4xf32>
  return
}

// -----

// Integer attributes are read as signed: a negative window is an error, not a
// huge unsigned one.
func.func @causal_mask_negative_window(%s: tensor<4x4xf32>) {
  // expected-error @+1 {{window must be > 0, got -2}}
  %0 = rlx_mir.causal_mask %s window = -2 : tensor<4x4xf32>
  return
}

// -----

func.func @rope_negative_rotary_dim(%x: tensor<1x4x64xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{rotary_dim must be even and in (0, head_dim=32], got -32}}
  %0 = rlx_mir.rope %x, %c, %c head_dim = 32 rotary_dim = -32 : tensor<1x4x64xf32>, tensor<4x16xf32>, tensor<4x16xf32>
  return
}

// -----

func.func @fused_matmul_k(%x: tensor<2x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{contraction dims differ: lhs has K=8, rhs 4x6 has K=6}}
  %0 = rlx_mir.fused_matmul %x, %w transpose_b : tensor<2x8xf32>, tensor<4x6xf32>
  return
}

// -----

func.func @fused_matmul_rank(%x: tensor<2x8xf32>, %w: tensor<2x8x4xf32>) {
  // expected-error @+1 {{fused_matmul needs lhs [..., K] and a rank-2 rhs, got 2x8 and 2x8x4}}
  %0 = rlx_mir.fused_matmul %x, %w : tensor<2x8xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @fused_matmul_norm_eps(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{norm needs eps}}
  %0 = rlx_mir.fused_matmul %x, %w norm rms_norm : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_norm_weight(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{norm_weight must be 8, got 4}}
  %0 = rlx_mir.fused_matmul %x, %w norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<4xf32>) : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_norm_bias(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{norm_bias is only valid with layer_norm}}
  %0 = rlx_mir.fused_matmul %x, %w norm rms_norm eps = 1.0e-05 norm_bias(%g : tensor<8xf32>) : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_norm_kind(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{norm_weight, norm_bias and eps need a norm kind}}
  %0 = rlx_mir.fused_matmul %x, %w eps = 1.0e-05 : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_bias(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias must be 4, got 8}}
  %0 = rlx_mir.fused_matmul %x, %w bias(%b : tensor<8xf32>) : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_dtype(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{element type mismatch: lhs is f32 but bias is bf16}}
  %0 = rlx_mir.fused_matmul %x, %w bias(%b : tensor<4xbf16>) : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_glu_activation(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{glu needs a gating activation (silu, gelu, gelu_tanh, relu or sigmoid)}}
  %0 = rlx_mir.fused_matmul %x, %w glu : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @fused_matmul_glu_odd(%x: tensor<2x8xf32>, %w: tensor<8x5xf32>) {
  // expected-error @+1 {{glu needs an even N, got 5}}
  %0 = rlx_mir.fused_matmul %x, %w activation silu glu : tensor<2x8xf32>, tensor<8x5xf32>
  return
}

// -----

func.func @fused_matmul_head_dim(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{head_norm and rope epilogues need head_dim > 0}}
  %0 = rlx_mir.fused_matmul %x, %w head_norm(%g : tensor<2x8xf32>) head_norm_eps = 1.0e-06 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_head_norm_fit(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %g: tensor<3x8xf32>) {
  // expected-error @+1 {{3 normalized heads of 8 do not fit in 16 output columns}}
  %0 = rlx_mir.fused_matmul %x, %w head_norm(%g : tensor<3x8xf32>) head_norm_eps = 1.0e-06 head_dim = 8 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_head_norm_eps(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{head_norm needs head_norm_eps}}
  %0 = rlx_mir.fused_matmul %x, %w head_norm(%g : tensor<2x8xf32>) head_dim = 8 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_head_norm_rank(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{head_norm_weight must be [heads, head_dim], got 8}}
  %0 = rlx_mir.fused_matmul %x, %w head_norm(%g : tensor<8xf32>) head_norm_eps = 1.0e-06 head_dim = 8 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_head_norm_eps_alone(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{head_norm_eps needs head_norm weights}}
  %0 = rlx_mir.fused_matmul %x, %w head_norm_eps = 1.0e-06 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_rope_heads(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %c: tensor<2x4xf32>) {
  // expected-error @+1 {{rope needs cos, sin and rope_heads}}
  %0 = rlx_mir.fused_matmul %x, %w rope(%c, %c : tensor<2x4xf32>, tensor<2x4xf32>) head_dim = 8 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_rope_fit(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>, %c: tensor<2x4xf32>) {
  // expected-error @+1 {{rope_heads = 3 of 8 do not fit in 16 output columns}}
  %0 = rlx_mir.fused_matmul %x, %w rope(%c, %c : tensor<2x4xf32>, tensor<2x4xf32>) rope_heads = 3 head_dim = 8 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_rope_rank(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>, %c: tensor<2x4xf32>) {
  // expected-error @+1 {{a rope epilogue needs lhs [batch, seq, K]}}
  %0 = rlx_mir.fused_matmul %x, %w rope(%c, %c : tensor<2x4xf32>, tensor<2x4xf32>) rope_heads = 2 head_dim = 8 : tensor<2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_rope_attrs(%x: tensor<1x2x8xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{rope_heads and rotary_dim need rope tables}}
  %0 = rlx_mir.fused_matmul %x, %w rope_heads = 2 : tensor<1x2x8xf32>, tensor<8x16xf32>
  return
}

// -----

func.func @fused_matmul_residual(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<2x8xf32>) {
  // expected-error @+1 {{residual must be 2x4, got 2x8}}
  %0 = rlx_mir.fused_matmul %x, %w residual(%r : tensor<2x8xf32>) : tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @elementwise_no_inputs() {
  // expected-error @+1 {{'rlx_mir.elementwise' op needs at least one input}}
  %0 = "rlx_mir.elementwise"() ({
    %c = arith.constant 1.0 : f32
    rlx_mir.yield %c : f32
  }) : () -> tensor<4xf32>
  return
}

// -----

func.func @elementwise_arg_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op body argument 0 must be 'f32', got 'f16'}}
  %0 = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    rlx_mir.yield %e : f32
  }
  return
}

// -----

func.func @elementwise_arg_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op body has 2 arguments for 1 inputs}}
  %0 = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    rlx_mir.yield %a : f32
  }
  return
}

// -----

func.func @elementwise_yield_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op yielded value 0 must be 'bf16', got 'f32'}}
  %0 = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<4xbf16> {
  ^bb0(%a: f32):
    rlx_mir.yield %a : f32
  }
  return
}

// -----

func.func @elementwise_yield_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op body must yield one scalar per result}}
  %0 = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx_mir.yield %a, %a : f32, f32
  }
  return
}

// -----

func.func @elementwise_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op result 0 must have the broadcast input shape 4, got 'tensor<2x4xf32>'}}
  %0 = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: f32):
    rlx_mir.yield %a : f32
  }
  return
}

// -----

func.func @elementwise_inputs_broadcast(%x: tensor<4xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{shapes 4 and 3 are not broadcast-compatible}}
  %0 = rlx_mir.elementwise ins(%x, %y : tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    rlx_mir.yield %a : f32
  }
  return
}

// -----

func.func @elementwise_no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rlx_mir.elementwise' op needs at least one result}}
  "rlx_mir.elementwise"(%x) ({
  ^bb0(%a: f32):
    rlx_mir.yield
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{expects parent op to be one of 'rlx_mir.elementwise, rlx_mir.custom_fn, rlx_mir.if, rlx_mir.while, rlx_mir.scan'}}
  rlx_mir.yield %x : f32
}

// -----

func.func @attention_partial_splits(%q: tensor<1x1x64xf32>, %k: tensor<1x9x64xf32>) {
  // expected-error @+1 {{kv_splits must be at least 1, got 0}}
  %o, %l = rlx_mir.attention_partial %q, %k, %k heads = 1, kv_heads = 1, head_dim = 64 kv_splits = 0 : tensor<1x1x64xf32>, tensor<1x9x64xf32>, tensor<1x9x64xf32>
  return
}

// -----

func.func @attention_combine_dtype(%o: tensor<2x1x4x1x8xbf16>, %l: tensor<2x1x4x1xf32>) {
  // expected-error @+1 {{partial_output and lse must be f32}}
  %y = rlx_mir.attention_combine %o, %l : tensor<2x1x4x1x8xbf16>, tensor<2x1x4x1xf32> -> tensor<1x1x32xbf16>
  return
}

// -----

func.func @attention_combine_lse(%o: tensor<2x1x4x1x8xf32>, %l: tensor<2x1x4x3xf32>) {
  // expected-error @+1 {{lse must be partial_output's shape without its last dim (tensor<2x1x4x1xf32>), got tensor<2x1x4x3xf32>}}
  %y = rlx_mir.attention_combine %o, %l : tensor<2x1x4x1x8xf32>, tensor<2x1x4x3xf32> -> tensor<1x1x32xbf16>
  return
}

// -----

func.func @attention_combine_result(%o: tensor<2x1x4x1x8xf32>, %l: tensor<2x1x4x1xf32>) {
  // expected-error @+1 {{result shape must be tensor<1x1x4x8xbf16> (partial_output in layout bshd), got tensor<1x1x32xbf16>}}
  %y = rlx_mir.attention_combine %o, %l layout bshd : tensor<2x1x4x1x8xf32>, tensor<2x1x4x1xf32> -> tensor<1x1x32xbf16>
  return
}

// -----

func.func @attention_partial_chunk(%q: tensor<1x1x64xf32>, %k: tensor<1x9x64xf32>) {
  // expected-error @+1 {{kv_splits (2) · kv_chunk (4) must cover the 9 keys}}
  %o, %l = rlx_mir.attention_partial %q, %k, %k heads = 1, kv_heads = 1, head_dim = 64 kv_splits = 2 kv_chunk = 4 : tensor<1x1x64xf32>, tensor<1x9x64xf32>, tensor<1x9x64xf32>
  return
}

// -----

func.func @custom_fn_body_types(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'rlx_mir.custom_fn' op expects its body region to yield (tensor<8xf32>), got (tensor<4xf32>)}}
  %y = rlx_mir.custom_fn "f" ins(%x : tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %s = rlx_mir.constant dense<1.0> : tensor<4xf32>
    rlx_mir.yield %s : tensor<4xf32>
  }
  return %y : tensor<8xf32>
}

// -----

func.func @custom_fn_vjp_arguments(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'rlx_mir.custom_fn' op expects its vjp region to take (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>), got (tensor<8xf32>, tensor<8xf32>)}}
  %y = rlx_mir.custom_fn "f" ins(%x : tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    rlx_mir.yield %a : tensor<8xf32>
  } vjp {
  ^bb0(%a: tensor<8xf32>, %d: tensor<8xf32>):
    rlx_mir.yield %d : tensor<8xf32>
  }
  return %y : tensor<8xf32>
}

// -----

func.func @custom_fn_body_without_yield(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = rlx_mir.custom_fn "f" ins(%x : tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    // expected-error @+1 {{block with no terminator}}
    %n = rlx_mir.neg %a : tensor<8xf32>
  }
  return %y : tensor<8xf32>
}

// -----

func.func @custom_fn_without_results(%x: tensor<8xf32>) {
  // expected-error @+1 {{'rlx_mir.custom_fn' op expects at least one result}}
  "rlx_mir.custom_fn"(%x) <{name = "f"}> ({
  ^bb0(%a: tensor<8xf32>):
    "rlx_mir.yield"() : () -> ()
  }, {}, {}) : (tensor<8xf32>) -> ()
  return
}

// -----

func.func @attention_combine_sinks(%o: tensor<2x1x4x1x8xf32>, %l: tensor<2x1x4x1xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{sinks must be f32 [H] with partial_output's H, got tensor<3xf32>}}
  %y = rlx_mir.attention_combine %o, %l sinks(%s : tensor<3xf32>) : tensor<2x1x4x1x8xf32>, tensor<2x1x4x1xf32> -> tensor<1x1x32xf32>
  return
}
