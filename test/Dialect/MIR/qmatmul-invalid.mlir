// rlx_mir.qmatmul verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @k(%a: tensor<4x8xi8>, %b: tensor<7x6xi8>) {
  // expected-error @+1 {{qmatmul K is 8 in lhs but 7 in rhs}}
  %y = rlx_mir.qmatmul %a, %b : tensor<4x8xi8>, tensor<7x6xi8>
  return
}

// -----

func.func @zp(%a: tensor<4x8xi8>, %b: tensor<8x6xi8>) {
  // expected-error @+1 {{qmatmul lhs_zero_point 200 is outside its storage's range [-128, 127]}}
  %y = rlx_mir.qmatmul %a, %b lhs_zero_point = 200 : tensor<4x8xi8>, tensor<8x6xi8>
  return
}

// -----

func.func @overflow(%a: tensor<1x40000xi8>, %b: tensor<40000x2xi8>) {
  // expected-error @+1 {{qmatmul K = 40000 could overflow its i32 accumulator}}
  %y = rlx_mir.qmatmul %a, %b : tensor<1x40000xi8>, tensor<40000x2xi8>
  return
}

// -----

func.func @rank(%a: tensor<8xi8>, %b: tensor<8x6xi8>) {
  // expected-error @+1 {{qmatmul needs lhs [..., M, K] and rhs [K, N]}}
  %y = rlx_mir.qmatmul %a, %b : tensor<8xi8>, tensor<8x6xi8>
  return
}

// -----

func.func @float(%a: tensor<4x8xf32>, %b: tensor<8x6xi8>) {
  // expected-error @+1 {{must be ranked tensor of 8-bit signless integer values}}
  %y = rlx_mir.qmatmul %a, %b : tensor<4x8xf32>, tensor<8x6xi8>
  return
}
