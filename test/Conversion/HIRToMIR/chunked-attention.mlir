// Chunked attention (Llama-4) keeps its chunk through the primitive chain
// (causal_mask ... chunked) and attention recognition folds the chain back
// into one rlx_mir.attention with the same mask.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir=fusion-policy=fusable | FileCheck %s --check-prefix=CHAIN
// RUN: rlx-opt %s --convert-rlx-hir-to-mir=fusion-policy=fusable --rlx-mir-fuse | FileCheck %s --check-prefix=FUSED
// RUN: rlx-opt %s --convert-rlx-hir-to-mir=fusion-policy=direct | FileCheck %s --check-prefix=FUSED

// CHAIN: rlx_mir.causal_mask %{{.*}} window = 4 chunked : tensor<1x4x6x6xf32>
// FUSED: rlx_mir.attention {{.*}} heads = 4, kv_heads = 2, head_dim = 8 chunked window = 4
func.func @chunked(%q: tensor<1x6x32xf32>, %k: tensor<1x6x16xf32>) -> tensor<1x6x32xf32> {
  %0 = rlx_hir.attention %q, %k, %k heads = 4, kv_heads = 2, head_dim = 8 chunked window = 4 : tensor<1x6x32xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32>
  return %0 : tensor<1x6x32xf32>
}
