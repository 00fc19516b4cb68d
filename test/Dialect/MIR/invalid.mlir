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
  // expected-error @+1 {{reshape dims must be > 0 or -1 (dynamic), got 0}}
  %0 = rlx_mir.reshape %a [0, 8] : tensor<2x4xf32>
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
  // expected-error @+1 {{slice size at dim 1 must be > 0 or -1 (to the end)}}
  %0 = rlx_mir.slice %a offsets [0, 0] sizes [1, 0] strides [1, 1] : tensor<2x4xf32>
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
  // expected-error @+1 {{slice offset 4 is past the end of dim 1 (size 4)}}
  %0 = rlx_mir.slice %a offsets [0, 4] sizes [1, -1] strides [1, 1] : tensor<2x4xf32>
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
  // expected-error @+1 {{broadcast dims must be > 0 or -1, got 0}}
  %0 = rlx_mir.broadcast %a [0, 4] : tensor<4xf32>
  return
}

// -----

func.func @constant_unranked() {
  // expected-error @+1 {{constant value must have a ranked tensor type}}
  %0 = rlx_mir.constant dense<1.0> : vector<4xf32>
  return
}
