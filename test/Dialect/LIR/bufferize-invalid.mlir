// What rlx-lir-bufferize rejects: functions whose arguments or results are
// not ranked tensors (a scalar result segfaulted the pass).
// RUN: rlx-opt %s --rlx-lir-bufferize -split-input-file -verify-diagnostics

// expected-error @+1 {{rlx-lir-bufferize: result 0 of @scalar_result is 'f32'; RLX functions take and return ranked tensors (a scalar is tensor<f32>)}}
func.func @scalar_result() -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}

// -----

// expected-error @+1 {{rlx-lir-bufferize: argument 0 of @unranked is 'tensor<*xf32>'}}
func.func @unranked(%x: tensor<*xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{rlx-lir-bufferize: argument 1 of @index_arg is 'index'}}
func.func @index_arg(%x: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A tensor op that verifies but bufferizes into a memref op that does not
// (the output_shape contradicts the type): an error, not invalid IR.
// expected-error @+1 {{rlx-lir-bufferize: @expand_mismatch does not verify once bufferized (see the error above)}}
func.func @expand_mismatch(%v: tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32> {
  // expected-error @+1 {{'memref.expand_shape' op invalid output shape provided at pos 0}}
  %0 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 5, 2, 4] : tensor<1x5x8xf32> into tensor<1x5x2x4xf32>
  return %0 : tensor<1x5x2x4xf32>
}
