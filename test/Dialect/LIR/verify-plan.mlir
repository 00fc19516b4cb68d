// rlx-lir-verify-plan catches corrupted plans: each case below is a planned
// function with one thing broken.
// RUN: rlx-opt %s --rlx-lir-verify-plan -split-input-file -verify-diagnostics

// Two buffers live at the same time share bytes.
func.func @overlap(%arena: memref<1024xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %w: memref<16x16xf32>, %y: memref<8x16xf32>)
    attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 1024 : i64}} {
  // expected-note @+1 {{the other buffer}}
  %t1 = rlx_lir.view %arena[0] : memref<1024xi8> to memref<8x16xf32>
  // expected-error @+1 {{rlx-lir-verify-plan: bytes [256, 768) live at ops 3..4 overlap bytes [0, 512) live at ops 2..3}}
  %t2 = rlx_lir.view %arena[256] : memref<1024xi8> to memref<8x16xf32>
  rlx_lir.kernel ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%t1 : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>):
    %r = rlx_mir.matmul %a, %b : tensor<8x16xf32>, tensor<16x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  rlx_lir.kernel ins(%t1, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%t2 : memref<8x16xf32>) {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>):
    %r = rlx_mir.matmul %a, %b : tensor<8x16xf32>, tensor<16x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  memref.copy %t2, %y : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// The same bytes for the input and output of a matmul: not elementwise, so
// in_place does not make it legal.
func.func @in_place_matmul(%arena: memref<512xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %w: memref<16x16xf32>, %y: memref<8x16xf32>) {
  // expected-note @+1 {{the other buffer}}
  %t1 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  // expected-error @+1 {{rlx-lir-verify-plan: bytes [0, 512) live at ops 3..4 overlap bytes [0, 512) live at ops 2..3}}
  %t2 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  memref.copy %x, %t1 : memref<8x16xf32> to memref<8x16xf32>
  rlx_lir.kernel ins(%t1, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%t2 : memref<8x16xf32>) attributes {in_place = array<i64: 0>} {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>):
    %r = rlx_mir.matmul %a, %b : tensor<8x16xf32>, tensor<16x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  memref.copy %t2, %y : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// An elementwise kernel recorded in place is fine.
func.func @in_place_ok(%arena: memref<512xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  %t1 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  %t2 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  memref.copy %x, %t1 : memref<8x16xf32> to memref<8x16xf32>
  rlx_lir.kernel ins(%t1 : memref<8x16xf32>) outs(%t2 : memref<8x16xf32>) attributes {in_place = array<i64: 0>} {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  memref.copy %t2, %y : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// ... but not when the input is read again afterwards.
func.func @in_place_read_later(%arena: memref<512xi8> {rlx_lir.arena}, %x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  // expected-note @+1 {{the other buffer}}
  %t1 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  // expected-error @+1 {{overlap}}
  %t2 = rlx_lir.view %arena[0] : memref<512xi8> to memref<8x16xf32>
  memref.copy %x, %t1 : memref<8x16xf32> to memref<8x16xf32>
  rlx_lir.kernel ins(%t1 : memref<8x16xf32>) outs(%t2 : memref<8x16xf32>) attributes {in_place = array<i64: 0>} {
  ^bb0(%a: tensor<8x16xf32>):
    %r = rlx_mir.silu %a : tensor<8x16xf32>
    rlx_lir.yield %r : tensor<8x16xf32>
  }
  memref.copy %t1, %y : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

func.func @misaligned(%arena: memref<1024xi8> {rlx_lir.arena}, %y: memref<8x16xf32>)
    attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 1024 : i64}} {
  // expected-error @+1 {{rlx-lir-verify-plan: offset 32 is not aligned to 64 bytes}}
  %t = rlx_lir.view %arena[32] : memref<1024xi8> to memref<8x16xf32>
  memref.copy %t, %y : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// expected-error @+1 {{rlx-lir-verify-plan: rlx_lir.plan says the arena has 2048 bytes, the argument has 1024}}
func.func @plan_size(%arena: memref<1024xi8> {rlx_lir.arena})
    attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 2048 : i64}} {
  return
}

// -----

// A subview that reaches past its buffer.
func.func @subview_past_end(%arena: memref<1024xi8> {rlx_lir.arena}, %y: memref<4x16xf32>) {
  %t = rlx_lir.view %arena[0] : memref<1024xi8> to memref<4x16xf32>
  %e = memref.expand_shape %t [[0], [1, 2]] output_shape [4, 2, 8] : memref<4x16xf32> into memref<4x2x8xf32>
  // expected-error @+1 {{rlx-lir-verify-plan: this view of a 64-element buffer reaches element 71}}
  %s = memref.reinterpret_cast %t to offset: [8], sizes: [4, 16], strides: [16, 1] : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 8>>
  memref.copy %s, %y : memref<4x16xf32, strided<[16, 1], offset: 8>> to memref<4x16xf32>
  return
}

// -----

// The arena is only ever read through rlx_lir.view.
func.func @raw_arena_use(%arena: memref<64xi8> {rlx_lir.arena}, %y: memref<64xi8>) {
  // expected-error @+1 {{rlx-lir-verify-plan: the arena may only be used through rlx_lir.view}}
  memref.copy %arena, %y : memref<64xi8> to memref<64xi8>
  return
}
