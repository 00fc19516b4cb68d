// One Llama-3.2-1B decoder layer in rlx_hir (dims from the model's config.json:
// hidden_size 2048, 32 attention heads sharing 8 kv heads of head_dim 64,
// intermediate_size 8192, rms_norm_eps 1e-5, rope_theta 500000 with llama3
// frequency scaling). Batch 1, the sequence length is the dynamic dim `seq`.
// Linear weights use the HF layout [out_features, in_features]; arguments name
// their role (rlx.input / rlx.param, with HF's parameter names).
//
//   rlx-opt examples/llama-3.2-1b-layer.mlir

func.func @llama_decoder_layer(
    %x: tensor<1x?x2048xf32> {rlx.input = "hidden_states", rlx.dim_names = ["", "seq", ""]},
    %positions: tensor<?xi64> {rlx.input = "position_ids", rlx.dim_names = ["seq"]},
    %input_norm: tensor<2048xf32> {rlx.param = "input_layernorm.weight"},
    %q_proj: tensor<2048x2048xf32> {rlx.param = "self_attn.q_proj.weight"},
    %k_proj: tensor<512x2048xf32> {rlx.param = "self_attn.k_proj.weight"},
    %v_proj: tensor<512x2048xf32> {rlx.param = "self_attn.v_proj.weight"},
    %o_proj: tensor<2048x2048xf32> {rlx.param = "self_attn.o_proj.weight"},
    %post_norm: tensor<2048xf32> {rlx.param = "post_attention_layernorm.weight"},
    %gate_proj: tensor<8192x2048xf32> {rlx.param = "mlp.gate_proj.weight"},
    %up_proj: tensor<8192x2048xf32> {rlx.param = "mlp.up_proj.weight"},
    %down_proj: tensor<2048x8192xf32> {rlx.param = "mlp.down_proj.weight"})
    -> tensor<1x?x2048xf32> {
  // Self-attention block (pre-norm).
  %h = rlx_hir.rms_norm %x, %input_norm eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>
  %q = rlx_hir.linear %h, %q_proj : tensor<1x?x2048xf32>, tensor<2048x2048xf32>
  %k = rlx_hir.linear %h, %k_proj : tensor<1x?x2048xf32>, tensor<512x2048xf32>
  %v = rlx_hir.linear %h, %v_proj : tensor<1x?x2048xf32>, tensor<512x2048xf32>
  %qr = rlx_hir.rope %q positions(%positions : tensor<?xi64>) head_dim = 64 theta = 500000.0
      scaling <rope_type = llama3, factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0,
               original_max_position_embeddings = 8192> : tensor<1x?x2048xf32>
  %kr = rlx_hir.rope %k positions(%positions : tensor<?xi64>) head_dim = 64 theta = 500000.0
      scaling <rope_type = llama3, factor = 32.0, low_freq_factor = 1.0, high_freq_factor = 4.0,
               original_max_position_embeddings = 8192> : tensor<1x?x512xf32>
  %attn = rlx_hir.attention %qr, %kr, %v heads = 32, kv_heads = 8, head_dim = 64 causal
      : tensor<1x?x2048xf32>, tensor<1x?x512xf32>, tensor<1x?x512xf32>
  %o = rlx_hir.linear %attn, %o_proj : tensor<1x?x2048xf32>, tensor<2048x2048xf32>
  // MLP block: the residual sum feeds the next residual, the norm feeds the MLP.
  %n, %resid = rlx_hir.residual_rms_norm %o, %x, %post_norm eps = 1.0e-05
      : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>, tensor<2048xf32>
  %mlp = rlx_hir.swiglu %n, gate %gate_proj, up %up_proj, down %down_proj
      : tensor<1x?x2048xf32>, tensor<8192x2048xf32>, tensor<8192x2048xf32>, tensor<2048x8192xf32>
  // HIR may hold MIR ops directly: the final residual add.
  %y = rlx_mir.add %mlp, %resid : tensor<1x?x2048xf32>, tensor<1x?x2048xf32>
  return %y : tensor<1x?x2048xf32>
}
