// What rlx-mir-specialize rejects, as located errors.
// RUN: rlx-opt %s --rlx-mir-specialize="dims=seq=4" -split-input-file -verify-diagnostics
// RUN: not rlx-opt %s --rlx-mir-specialize="dims=sequence=4" -split-input-file 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not rlx-opt %s --rlx-mir-specialize="dims=seq=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE

// A binding no dim is named by is a typo, not a no-op (it was ignored).
// NAME: error: rlx-mir-specialize: no dim is named 'sequence' (named dims: seq)
// SIZE: error: rlx-mir-specialize: bad binding 'seq=-1', expected name=size with size >= 0

// Binding a size the graph cannot take is a located error from the op.
func.func @bad_size(%x: tensor<?xf32> {rlx.dim_names = ["seq"]}) -> tensor<?x8xf32> {
  // expected-error @+1 {{reshape of 4 to ?x8: 4 elements do not divide into 8}}
  %0 = rlx_mir.reshape %x [-1, 8] : tensor<?xf32>
  return %0 : tensor<?x8xf32>
}


// -----

// Unstructured control flow is not followed (the cf.br was cast to a
// func.return: an abort with assertions, a wrong message without).
// expected-error @+1 {{rlx-mir-specialize: @branches has 2 blocks; only single-block functions are specialized}}
func.func @branches(%x: tensor<?xf32> {rlx.dim_names = ["seq"]}) -> tensor<?xf32> {
  cf.br ^bb1(%x : tensor<?xf32>)
^bb1(%y: tensor<?xf32>):
  return %y : tensor<?xf32>
}
