// MIR → LIR needs static shapes and names the symbolic dims to bind.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir -split-input-file -verify-diagnostics

func.func @dynamic(%x: tensor<1x?x64xf32> {rlx.dim_names = ["", "seq", ""]}, %g: tensor<64xf32>) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{MIR → LIR needs static shapes, got 'tensor<1x?x64xf32>'; bind the symbolic dims (seq) first with rlx-mir-specialize{dims=<name>=<size>,...}}}
  %0 = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<1x?x64xf32>, tensor<64xf32>
  return %0 : tensor<1x?x64xf32>
}

// -----

// Every dim is named, also one whose name is inside another's ("seq" in
// "past_seq" was left out: two copies of the rule, with a substring test).
func.func @two_dims(%k: tensor<1x?x64xf32> {rlx.dim_names = ["", "past_seq", ""]}, %x: tensor<1x?x64xf32> {rlx.dim_names = ["", "seq", ""]}) -> tensor<1x?x64xf32> {
  // expected-error @+1 {{bind the symbolic dims (past_seq, seq) first}}
  %0 = rlx_mir.add %x, %x : tensor<1x?x64xf32>, tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}
