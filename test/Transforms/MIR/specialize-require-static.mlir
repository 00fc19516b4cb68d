// rlx-mir-specialize{require-static}: dims left unbound are an error that
// names them and says how to bind them.
// RUN: rlx-opt %s --rlx-mir-specialize="dims=seq=4 require-static" -verify-diagnostics

// expected-error @+1 {{dynamic dims remain after specialization: past_seq (argument 1, dim 1); bind them with rlx-mir-specialize{dims=<name>=<size>,...}}}
func.func @decode(%q: tensor<1x?x64xf32> {rlx.dim_names = ["", "seq", ""]},
                  %past: tensor<1x?x32xf32> {rlx.dim_names = ["", "past_seq", ""]}) -> tensor<1x?x32xf32> {
  %k = rlx_mir.slice %q offsets [0, 0, 0] sizes [-1, -1, 32] strides [1, 1, 1] : tensor<1x?x64xf32>
  %kv = rlx_mir.concat %past, %k axis = 1 : tensor<1x?x32xf32>, tensor<1x?x32xf32>
  return %kv : tensor<1x?x32xf32>
}
