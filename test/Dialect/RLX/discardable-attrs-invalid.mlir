// Every rlx.* and rlx_lir.* attribute is verified: a malformed rlx.packed_by
// segfaulted rlx-run, a misspelled name was silently ignored.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{rlx.packed_by must be {fn = @<packing function>, result = <index>}, got "f_pack"}}
func.func @packed_by_string(%w: tensor<4xf32> {rlx.packed_by = "f_pack"}) {
  return
}

// -----

// expected-error @+1 {{rlx.packed_by names @missing, which is not a function here}}
func.func @packed_by_missing(%w: tensor<4xf32> {rlx.packed_by = {fn = @missing, result = 0 : i64}}) {
  return
}

// -----

func.func @pack(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
// expected-error @+1 {{rlx.packed_by result 3 is not a result of @pack (it has 1)}}
func.func @packed_by_index(%w: tensor<4xf32> {rlx.packed_by = {fn = @pack, result = 3 : i64}}) {
  return
}

// -----

// expected-error @+1 {{rlx.packed_from must be an array of parameter names, got [1, 2]}}
func.func @packed_from(%w: tensor<4xf32> {rlx.packed_from = [1, 2]}) {
  return
}

// -----

// expected-error @+1 {{rlx.param on argument 0 must be a non-empty string, got ""}}
func.func @empty_name(%w: tensor<4xf32> {rlx.param = ""}) {
  return
}

// -----

// expected-error @+1 {{argument 0 has both rlx.input and rlx.param}}
func.func @two_roles(%w: tensor<4xf32> {rlx.param = "w", rlx.input = "w"}) {
  return
}

// -----

// expected-error @+1 {{unknown attribute 'rlx.parm' on argument 0}}
func.func @misspelled(%w: tensor<4xf32> {rlx.parm = "w"}) {
  return
}

// -----

// expected-error @+1 {{rlx.output on result 0 must be a non-empty string, got 3 : i64}}
func.func @output_name() -> (tensor<4xf32> {rlx.output = 3 : i64}) {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{rlx.fusion_policy must be "direct" or "fusable", got "bogus"}}
module attributes {rlx.fusion_policy = "bogus"} {
}

// -----

// expected-error @+1 {{rlx_lir.plan 'alignment' must be a positive integer, got 0 : i64}}
func.func @plan(%arena: memref<64xi8> {rlx_lir.arena}) attributes {rlx_lir.plan = {arena_bytes = 64 : i64, alignment = 0 : i64}} {
  return
}

// -----

// expected-error @+1 {{rlx_lir.io has inputs, params and outputs (arrays of names), got 'input' = ["x"]}}
func.func @io(%x: memref<4xf32>) attributes {rlx_lir.io = {input = ["x"]}} {
  return
}

// -----

// expected-error @+1 {{rlx_lir.arena argument 0 must be a static memref<Nxi8>, got 'memref<16xf32>'}}
func.func @arena_type(%arena: memref<16xf32> {rlx_lir.arena}) {
  return
}

// -----

// The CPU's integer GEMM reads rlx.qmatmul instead of the body: a zero point
// outside its byte's range would be a wrong answer.
func.func @qmatmul_zero_point(%a: tensor<4x8xi8>, %b: tensor<8x6xi8>, %c: tensor<4x6xi32>) -> tensor<4x6xi32> {
  // expected-error @+1 {{rlx.qmatmul must be [lhs_zero_point, rhs_zero_point, lhs_unsigned, rhs_unsigned] (flags 0 or 1, zero points in their byte's range) on a linalg.generic}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xi8>, tensor<8x6xi8>) outs(%c : tensor<4x6xi32>) attrs = {rlx.qmatmul = array<i64: 200, 0, 0, 0>} {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    linalg.yield %acc : i32
  } -> tensor<4x6xi32>
  return %y : tensor<4x6xi32>
}
