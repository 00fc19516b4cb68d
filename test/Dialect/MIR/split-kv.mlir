// rlx-mir-split-kv: a decode step (one query row, 32 query / 8 kv heads,
// 8192 cached keys) fills 8 of sm_90a's 132 SMs, so the heuristic splits it
// in 14 (112 of 132 SMs: the smallest count within 85% of the best wave
// efficiency, 16 splits' 128/132); a prefill of 4096 rows fills the GPU and
// stays whole; kv-splits=5 forces 5 splits; kv-splits must be >= 0.
// RUN: rlx-opt %s --rlx-mir-split-kv | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-split-kv=kv-splits=5 | FileCheck %s --check-prefix=FORCED
// RUN: not rlx-opt %s --rlx-mir-split-kv=kv-splits=-1 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @decode
// CHECK: %[[O:.*]], %[[L:.*]] = rlx_mir.attention_partial %arg0, %arg1, %arg2 heads = 32, kv_heads = 8, head_dim = 128 causal kv_splits = 14 : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
// CHECK: rlx_mir.attention_combine %[[O]], %[[L]] : tensor<14x1x32x1x128xf32>, tensor<14x1x32x1xf32> -> tensor<1x1x4096xbf16>
// FORCED-LABEL: func.func @decode
// FORCED: kv_splits = 5
func.func @decode(%q: tensor<1x1x4096xbf16>, %k: tensor<1x8192x1024xbf16>, %v: tensor<1x8192x1024xbf16>) -> tensor<1x1x4096xbf16> {
  %o = rlx_mir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 128 causal : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
  return %o : tensor<1x1x4096xbf16>
}

// CHECK-LABEL: func.func @prefill
// CHECK-NOT: attention_partial
// CHECK: rlx_mir.attention %arg0
// FORCED-LABEL: func.func @prefill
// FORCED: kv_splits = 5
func.func @prefill(%q: tensor<1x4096x4096xbf16>, %k: tensor<1x4096x1024xbf16>) -> tensor<1x4096x4096xbf16> {
  %o = rlx_mir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 128 causal : tensor<1x4096x4096xbf16>, tensor<1x4096x1024xbf16>, tensor<1x4096x1024xbf16>
  return %o : tensor<1x4096x4096xbf16>
}

// BAD: error: rlx-mir-split-kv: kv-splits must be 0 (the heuristic) or 1..65535, got -1
