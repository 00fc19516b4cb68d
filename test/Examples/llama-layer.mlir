// The bundled example parses, verifies and round-trips (text and bytecode).
// RUN: rlx-opt %rlx_src/examples/llama-3.2-1b-layer.mlir | FileCheck %s
// RUN: rlx-opt %rlx_src/examples/llama-3.2-1b-layer.mlir -emit-bytecode | rlx-opt | FileCheck %s

// CHECK-LABEL: func.func @llama_decoder_layer
// CHECK-SAME: tensor<1x?x2048xf32> {rlx.dim_names = ["", "seq", ""], rlx.input = "hidden_states"}
// CHECK: rlx_hir.rms_norm
// CHECK-COUNT-3: rlx_hir.linear
// CHECK-COUNT-2: rlx_hir.rope
// CHECK: rlx_hir.attention {{.*}} heads = 32, kv_heads = 8, head_dim = 64 {{ *}}causal
// CHECK: rlx_hir.linear
// CHECK: rlx_hir.residual_rms_norm
// CHECK: rlx_hir.swiglu
// CHECK: rlx_mir.add
