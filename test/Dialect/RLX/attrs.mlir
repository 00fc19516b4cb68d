// Round trip of the shared `rlx` attributes in generic (dialect) form.
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s -emit-bytecode | rlx-opt | FileCheck %s

// CHECK-LABEL: func @attrs
// CHECK-SAME: rlx.dim_names = ["", "seq", ""]
func.func @attrs(%x: tensor<1x?x8xf32> {rlx.dim_names = ["", "seq", ""]}) attributes {
    // CHECK: a = #rlx<activation gelu_tanh>
    a = #rlx<activation gelu_tanh>,
    // CHECK-SAME: m = #rlx<mask sliding_window>
    m = #rlx<mask sliding_window>,
    // CHECK-SAME: q = #rlx<quant nvfp4>
    q = #rlx<quant nvfp4>,
    // CHECK-SAME: r = #rlx<reduce prod>
    r = #rlx<reduce prod>,
    // CHECK-SAME: s = #rlx.rope_scaling<rope_type = linear, factor = 2.000000e+00>
    s = #rlx.rope_scaling<rope_type = linear, factor = 2.0>,
    // CHECK-SAME: st = #rlx<rope_style gptj>
    st = #rlx<rope_style gptj>,
    // CHECK-SAME: w = #rlx<weight_layout in_out>
    w = #rlx<weight_layout in_out>,
    // CHECK-SAME: y = #rlx<attn_layout bhsd>
    y = #rlx<attn_layout bhsd>} {
  return
}
