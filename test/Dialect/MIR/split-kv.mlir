// rlx-mir-split-kv: a decode step (one query row, 32 query / 8 kv heads,
// 8192 cached keys) fills 8 of sm_90a's 264 block slots (132 SMs, two
// blocks each), so the heuristic splits it in 28 (224 of 264 slots: the
// smallest count within 85% of the best wave efficiency, 32 splits'
// 256/264), as whole 64-key tiles: 26 splits of 320 keys; a prefill of 4096
// rows fills the GPU and stays whole, and f64 is never split; kv-splits=5
// forces 5 splits of ceil(Sk / 5) keys; kv-splits must be >= 0. Under a
// sliding window or chunked mask the heuristic counts the keys a row can
// see.
// RUN: rlx-opt %s --rlx-mir-split-kv | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-split-kv=kv-splits=5 | FileCheck %s --check-prefix=FORCED
// RUN: not rlx-opt %s --rlx-mir-split-kv=kv-splits=-1 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @decode
// CHECK: %[[O:.*]], %[[L:.*]] = rlx_mir.attention_partial %arg0, %arg1, %arg2 heads = 32, kv_heads = 8, head_dim = 128 causal kv_splits = 26 kv_chunk = 320 : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
// CHECK: rlx_mir.attention_combine %[[O]], %[[L]] : tensor<26x1x32x1x128xf32>, tensor<26x1x32x1xf32> -> tensor<1x1x4096xbf16>
// FORCED-LABEL: func.func @decode
// FORCED: kv_splits = 5 kv_chunk = 1639
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

// CHECK-LABEL: func.func @decode_f64
// CHECK-NOT: attention_partial
func.func @decode_f64(%q: tensor<1x1x256xf64>, %k: tensor<1x8192x64xf64>) -> tensor<1x1x256xf64> {
  %o = rlx_mir.attention %q, %k, %k heads = 4, kv_heads = 1, head_dim = 64 : tensor<1x1x256xf64>, tensor<1x8192x64xf64>, tensor<1x8192x64xf64>
  return %o : tensor<1x1x256xf64>
}

// Attention with sinks (gpt-oss) is one attention_partial into a combine
// that holds the sinks: its keys are split in place, the combine kept.
// CHECK-LABEL: func.func @decode_sinks
// CHECK: rlx_mir.attention_partial {{.*}} kv_splits = 26 kv_chunk = 320 : tensor<1x1x4096xbf16>
// CHECK: rlx_mir.attention_combine %{{.*}}, %{{.*}} sinks(%arg2 : tensor<32xf32>) : tensor<26x1x32x1x128xf32>, tensor<26x1x32x1xf32> -> tensor<1x1x4096xbf16>
// FORCED-LABEL: func.func @decode_sinks
// FORCED: kv_splits = 5
func.func @decode_sinks(%q: tensor<1x1x4096xbf16>, %k: tensor<1x8192x1024xbf16>, %s: tensor<32xf32>) -> tensor<1x1x4096xbf16> {
  %o, %l = rlx_mir.attention_partial %q, %k, %k heads = 32, kv_heads = 8, head_dim = 128 causal kv_splits = 1 : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
  %y = rlx_mir.attention_combine %o, %l sinks(%s : tensor<32xf32>) : tensor<1x1x32x1x128xf32>, tensor<1x1x32x1xf32> -> tensor<1x1x4096xbf16>
  return %y : tensor<1x1x4096xbf16>
}

// BAD: error: rlx-mir-split-kv: kv-splits must be 0 (the heuristic) or 1..65535, got -1


// A sliding window of 128 keys: a decode row sees 128 of the 8192, too few
// for a split (the heuristic counts the visible keys, not Sk).
// CHECK-LABEL: func.func @decode_window
// CHECK-NOT: attention_partial
// FORCED-LABEL: func.func @decode_window
// FORCED: kv_splits = 5 kv_chunk = 1639
func.func @decode_window(%q: tensor<1x1x4096xbf16>, %k: tensor<1x8192x1024xbf16>) -> tensor<1x1x4096xbf16> {
  %o = rlx_mir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 128 sliding_window window = 128 : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
  return %o : tensor<1x1x4096xbf16>
}


// Chunks of 1024 keys at 8192 cached: the row's chunk spread over 4 splits
// of 256 keys (min(128, 1024 / 256)); the 32 splits cover every key.
// CHECK-LABEL: func.func @decode_chunked
// CHECK: rlx_mir.attention_partial {{.*}} chunked window = 1024 kv_splits = 32 kv_chunk = 256
func.func @decode_chunked(%q: tensor<1x1x4096xbf16>, %k: tensor<1x8192x1024xbf16>) -> tensor<1x1x4096xbf16> {
  %o = rlx_mir.attention %q, %k, %k heads = 32, kv_heads = 8, head_dim = 128 chunked window = 1024 : tensor<1x1x4096xbf16>, tensor<1x8192x1024xbf16>, tensor<1x8192x1024xbf16>
  return %o : tensor<1x1x4096xbf16>
}
