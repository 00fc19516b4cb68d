// The shared `rlx` attributes: rlx.dim_names on function arguments.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{rlx.dim_names on argument 0 has 2 names for rank 3}}
func.func @count(%x: tensor<1x?x8xf32> {rlx.dim_names = ["", "seq"]}) {
  return
}

// -----

// expected-error @+1 {{dynamic dim 1 of argument 0 needs a name in rlx.dim_names}}
func.func @unnamed(%x: tensor<1x?x8xf32> {rlx.dim_names = ["", "", ""]}) {
  return
}

// -----

// expected-error @+1 {{static dim 0 of argument 0 must not be named ('batch')}}
func.func @static_named(%x: tensor<1x?x8xf32> {rlx.dim_names = ["batch", "seq", ""]}) {
  return
}

// -----

// expected-error @+1 {{rlx.dim_names must be an array of strings}}
func.func @not_array(%x: tensor<1x?x8xf32> {rlx.dim_names = "seq"}) {
  return
}

// -----

// expected-error @+1 {{rlx.dim_names must be an array of strings}}
func.func @not_strings(%x: tensor<1x?x8xf32> {rlx.dim_names = [0, 1, 2]}) {
  return
}

// -----

// expected-error @+1 {{rlx.dim_names on argument 0 needs a ranked tensor or memref argument}}
func.func @not_tensor(%x: f32 {rlx.dim_names = []}) {
  return
}
