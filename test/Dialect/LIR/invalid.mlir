// Every rlx_lir verifier error, each with a located diagnostic.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @view_dynamic_arena(%arena: memref<?xi8>) {
  // expected-error @+1 {{arena must be a static, contiguous memref<Nxi8>, got 'memref<?xi8>'}}
  %0 = rlx_lir.view %arena[0] : memref<?xi8> to memref<4xf32>
  return
}

// -----

func.func @view_arena_type(%arena: memref<64xf32>) {
  // expected-error @+1 {{operand #0 must be 1D memref of 8-bit signless integer values}}
  %0 = "rlx_lir.view"(%arena) <{byte_offset = 0 : i64}> : (memref<64xf32>) -> memref<4xf32>
  return
}

// -----

func.func @view_negative(%arena: memref<64xi8>) {
  // expected-error @+1 {{byte_offset must be >= 0, got -4}}
  %0 = rlx_lir.view %arena[-4] : memref<64xi8> to memref<4xf32>
  return
}

// -----

func.func @view_misaligned(%arena: memref<64xi8>) {
  // expected-error @+1 {{byte_offset 2 is not a multiple of the element size (4 bytes)}}
  %0 = rlx_lir.view %arena[2] : memref<64xi8> to memref<4xf32>
  return
}

// -----

func.func @view_past_end(%arena: memref<64xi8>) {
  // expected-error @+1 {{view [48, 80) runs past the end of the 64-byte arena}}
  %0 = rlx_lir.view %arena[48] : memref<64xi8> to memref<8xf32>
  return
}

// -----

func.func @view_layout(%arena: memref<64xi8>) {
  // expected-error @+1 {{view must have the identity layout, got 'memref<2x2xf32, strided<[4, 1]>>'}}
  %0 = rlx_lir.view %arena[0] : memref<64xi8> to memref<2x2xf32, strided<[4, 1]>>
  return
}

// -----

func.func @view_dynamic_result(%arena: memref<64xi8>) {
  // expected-error @+1 {{result #0 must be statically shaped memref of any type values}}
  %0 = "rlx_lir.view"(%arena) <{byte_offset = 0 : i64}> : (memref<64xi8>) -> memref<?xf32>
  return
}

// -----

func.func @kernel_args(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body has 0 arguments for 1 inputs}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_arg_type(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body argument 0 must be 'tensor<4xf32>' to match input 0 of type 'memref<4xf32>', got 'tensor<4xf16>'}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf16>):
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yield_count(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body yields 2 values for 1 outputs}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    rlx_lir.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yield_type(%x: memref<4xf32>, %y: memref<2x2xf32>) {
  // expected-error @+1 {{yielded value 0 must be 'tensor<2x2xf32>' to match output 0 of type 'memref<2x2xf32>', got 'tensor<4xf32>'}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<2x2xf32>) {
  ^bb0(%a: tensor<4xf32>):
    rlx_lir.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yield_count_outputs(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body yields 0 values for 1 outputs}}
  "rlx_lir.kernel"(%x, %y) <{operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<4xf32>):
    rlx_lir.yield
  }) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @kernel_empty_outputs(%x: memref<4xf32>) {
  // expected-error @+1 {{needs at least one output}}
  "rlx_lir.kernel"(%x) <{operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%a: tensor<4xf32>):
    rlx_lir.yield
  }) : (memref<4xf32>) -> ()
  return
}

// -----

func.func @kernel_isolated(%x: memref<4xf32>, %y: memref<4xf32>, %t: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  rlx_lir.kernel outs(%y : memref<4xf32>) {
    // expected-error @+1 {{using value defined outside the region}}
    rlx_lir.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_outside(%t: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op 'rlx_lir.kernel'}}
  rlx_lir.yield %t : tensor<4xf32>
}

// -----

func.func @kernel_mixed_outs(%x: tensor<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{outputs must be all ranked tensors or all memrefs}}
  %r = rlx_lir.kernel outs(%x, %y : tensor<4xf32>, memref<4xf32>) -> tensor<4xf32> {
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c, %c : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_buffer_results(%x: memref<4xf32>) {
  // expected-error @+1 {{on buffers has no results}}
  %r = rlx_lir.kernel outs(%x : memref<4xf32>) -> tensor<4xf32> {
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_buffer_tensor_input(%x: tensor<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{on buffers takes memref inputs, got 'tensor<4xf32>'}}
  rlx_lir.kernel ins(%x : tensor<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    rlx_lir.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_tensor_result_count(%y: tensor<4xf32>) {
  // expected-error @+1 {{on tensors returns one result per output, got 0 results for 1 outputs}}
  rlx_lir.kernel outs(%y : tensor<4xf32>) {
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_tensor_result_type(%y: tensor<4xf32>) {
  // expected-error @+1 {{result 0 must have the type of output 0, 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %r = "rlx_lir.kernel"(%y) <{operandSegmentSizes = array<i32: 0, 1>}> ({
    %c = rlx_mir.constant dense<0.0> : tensor<4xf32>
    rlx_lir.yield %c : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @kernel_in_place_length(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{in_place needs one entry per output (1), got 2}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) attributes {in_place = array<i64: 0, 0>} {
  ^bb0(%a: tensor<4xf32>):
    %r = rlx_mir.neg %a : tensor<4xf32>
    rlx_lir.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_in_place_index(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{in_place entry 1 is not an input index (or -1); the kernel has 1 inputs}}
  rlx_lir.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) attributes {in_place = array<i64: 1>} {
  ^bb0(%a: tensor<4xf32>):
    %r = rlx_mir.neg %a : tensor<4xf32>
    rlx_lir.yield %r : tensor<4xf32>
  }
  return
}
