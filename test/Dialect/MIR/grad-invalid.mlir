// What MIR autodiff rejects, each as a diagnostic at the function or op.
// RUN: rlx-opt %s --rlx-mir-prepare-for-ad --rlx-mir-grad -split-input-file -verify-diagnostics

// expected-error @+1 {{rlx-mir-prepare-for-ad: @lir is LIR (memref arguments); LIR is never differentiated, run autodiff on the MIR before convert-rlx-mir-to-lir}}
func.func @lir(%arena: memref<64xi8> {rlx_lir.arena}, %x: memref<4xf32>) {
  return
}

// -----

func.func @hir(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{rlx-mir-prepare-for-ad: HIR is not differentiated directly; lower it first with convert-rlx-hir-to-mir{fusion-policy=fusable}}}
  %y = rlx_hir.rms_norm %x, %w eps = 1.0e-05 : tensor<2x4xf32>, tensor<4xf32>
  %l = rlx_mir.reduce sum %y axes = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{rlx-mir-grad: @not_scalar must return one floating-point scalar (the loss), e.g. tensor<f32> or tensor<1xf32>}}
func.func @not_scalar(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = rlx_mir.exp %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @prod_reduce(%x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{no reverse-mode rule for 'rlx_mir.reduce': prod reductions are not differentiated}}
  %y = rlx_mir.reduce prod %x axes = [0, 1] : tensor<2x4xf32>
  return %y : tensor<f32>
}

// -----

func.func @strided(%x: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{no reverse-mode rule for 'rlx_mir.slice': strided slices are not differentiated}}
  %s = rlx_mir.slice %x offsets [0] sizes [4] strides [2] : tensor<8xf32>
  %l = rlx_mir.reduce sum %s axes = [0] : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

func.func @rope_tables(%x: tensor<1x2x8xf32>, %c: tensor<2x4xf32>, %s: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{no reverse-mode rule for 'rlx_mir.rope': the cos/sin tables are not differentiated}}
  %y = rlx_mir.rope %x, %c, %s head_dim = 8 : tensor<1x2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  %l = rlx_mir.reduce sum %y axes = [0, 1, 2] : tensor<1x2x8xf32>
  return %l : tensor<f32>
}

// -----

func.func @rope_stage(%x: tensor<1x2x8xf32>, %w: tensor<8x8xf32>, %c: tensor<2x4xf32>, %s: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{rlx-mir-prepare-for-ad: fused_matmul head-norm and RoPE stages are not unfused; differentiate the unfused graph (fusion-policy=fusable, no rlx-mir-fuse)}}
  %y = rlx_mir.fused_matmul %x, %w rope(%c, %s : tensor<2x4xf32>, tensor<2x4xf32>) rope_heads = 1 head_dim = 8 : tensor<1x2x8xf32>, tensor<8x8xf32>
  %l = rlx_mir.reduce sum %y axes = [0, 1, 2] : tensor<1x2x8xf32>
  return %l : tensor<f32>
}

// -----

func.func @body_op(%x: tensor<4xf32>) -> tensor<f32> {
  %y = rlx_mir.elementwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{rlx-mir-prepare-for-ad: 'math.floor' in an elementwise body has no MIR counterpart}}
    %f = math.floor %a : f32
    rlx_mir.yield %f : f32
  }
  %l = rlx_mir.reduce sum %y axes = [0] : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// Unfusing builds primitives whose shape rules reject these operands (k/v
// batch dynamic, q batch static): a located error, not an abort.
func.func @dynamic_kv_batch(%q: tensor<1x4x64xf32>, %k: tensor<?x4x32xf32>, %v: tensor<?x4x32xf32>) -> tensor<f32> {
  // expected-error @+2 {{reshape of ?x4x2x32 to static dims 1x4x64 cannot be checked}}
  // expected-error @+1 {{rlx-mir-prepare-for-ad: cannot expand 'rlx_mir.attention' into primitive ops for these operand types}}
  %0 = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 32 causal : tensor<1x4x64xf32>, tensor<?x4x32xf32>, tensor<?x4x32xf32>
  %l = rlx_mir.reduce sum %0 axes = [0, 1, 2] : tensor<1x4x64xf32>
  return %l : tensor<f32>
}
