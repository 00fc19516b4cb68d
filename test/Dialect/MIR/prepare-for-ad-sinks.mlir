// rlx-mir-prepare-for-ad: attention with sinks (convert-rlx-hir-to-mir's
// one-split attention_partial + attention_combine with the sinks) becomes
// the primitive chain with the sinks in its softmax denominator, so that
// rlx-mir-grad differentiates it; the partial goes with its combine.
// RUN: rlx-opt %s --rlx-mir-prepare-for-ad | FileCheck %s
// RUN: rlx-opt %s --rlx-mir-prepare-for-ad --rlx-mir-grad=wrt=q,k,v | FileCheck %s --check-prefix=GRAD

// CHECK-LABEL: func.func @f
// CHECK-NOT: rlx_mir.attention_partial
// CHECK-NOT: rlx_mir.attention_combine
// CHECK: rlx_mir.reduce max
// CHECK: rlx_mir.max
// CHECK: rlx_mir.exp
// CHECK: rlx_mir.reduce sum
// CHECK: rlx_mir.div
// CHECK: rlx_mir.matmul
// GRAD: func.func @f_grad
// GRAD-NOT: attention_combine
func.func @f(%q: tensor<1x5x16xf32> {rlx.input = "q"}, %k: tensor<1x6x8xf32> {rlx.input = "k"},
             %v: tensor<1x6x8xf32> {rlx.input = "v"}, %s: tensor<4xf32> {rlx.input = "s"})
    -> (tensor<f32> {rlx.output = "loss"}) {
  %o, %l = rlx_mir.attention_partial %q, %k, %v heads = 4, kv_heads = 2, head_dim = 4 causal kv_splits = 1 : tensor<1x5x16xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>
  %y = rlx_mir.attention_combine %o, %l sinks(%s : tensor<4xf32>) : tensor<1x1x4x5x4xf32>, tensor<1x1x4x5xf32> -> tensor<1x5x16xf32>
  %loss = rlx_mir.reduce sum %y axes = [0, 1, 2] : tensor<1x5x16xf32>
  return %loss : tensor<f32>
}
