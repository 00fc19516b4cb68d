// The backward of a whole Llama-3.2-1B decoder layer (seq 128, f32; dims
// from ../shared/models/llama-3.2-1b.json): HIR with fusion-policy=fusable,
// rlx-mir-grad for every parameter, then the ordinary pipeline: fusion, LIR
// kernels, One-Shot Bufferize, the arena plan, and the independent checker.
// The arena equals the lower bound (max live bytes): 32.0 MiB (33587712 B)
// against 84.3 MiB for all buffers (docs/autodiff.md).
// RUN: rlx-opt %s --convert-rlx-hir-to-mir="fusion-policy=fusable" --rlx-mir-grad="wrt=n1,wq,wk,wv,wo,n2,wg,wu,wd" \
// RUN:   --rlx-mir-fuse --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --rlx-lir-verify-plan \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @layer_grad(
// CHECK-SAME:    {rlx.output = "d_n1"}
// CHECK-SAME:    {rlx.output = "d_wd"}
// CHECK-SAME:    rlx_lir.plan = {alignment = 64 : i64, arena_bytes = [[A:[0-9]+]] : i64, lower_bound_bytes = [[A]] : i64
func.func @layer(%x: tensor<1x128x2048xf32> {rlx.input = "x"}, %pos: tensor<128xi64> {rlx.input = "positions"}, %n1: tensor<2048xf32> {rlx.param = "n1"}, %wq: tensor<2048x2048xf32> {rlx.param = "wq"}, %wk: tensor<512x2048xf32> {rlx.param = "wk"}, %wv: tensor<512x2048xf32> {rlx.param = "wv"}, %wo: tensor<2048x2048xf32> {rlx.param = "wo"}, %n2: tensor<2048xf32> {rlx.param = "n2"}, %wg: tensor<8192x2048xf32> {rlx.param = "wg"}, %wu: tensor<8192x2048xf32> {rlx.param = "wu"}, %wd: tensor<2048x8192xf32> {rlx.param = "wd"}, %r: tensor<1x128x2048xf32> {rlx.input = "r"}) -> (tensor<f32> {rlx.output = "loss"}) {
  %y:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<128xi64>)
      weights(%n1, %wq, %wk, %wv, %wo, %n2, %wg, %wu, %wd : tensor<2048xf32>, tensor<2048x2048xf32>, tensor<512x2048xf32>, tensor<512x2048xf32>, tensor<2048x2048xf32>, tensor<2048xf32>, tensor<8192x2048xf32>, tensor<8192x2048xf32>, tensor<2048x8192xf32>)
      heads = 32, kv_heads = 8, head_dim = 64 eps = 1.0e-05 theta = 500000.0 : tensor<1x128x2048xf32>
  %l = rlx_mir.mul %y#0, %r : tensor<1x128x2048xf32>, tensor<1x128x2048xf32>
  %s = rlx_mir.reduce sum %l axes = [0, 1, 2] : tensor<1x128x2048xf32>
  return %s : tensor<f32>
}
