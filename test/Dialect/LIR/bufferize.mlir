// MIR → LIR through One-Shot Bufferize (convert-rlx-mir-to-lir,
// rlx-lir-bufferize), then the arena plan and its check: the cases B1-B3 of
// ../shared/cases.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize -split-input-file | FileCheck %s --check-prefix=BUF
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --rlx-lir-verify-plan -split-input-file | FileCheck %s --check-prefix=PLAN

// B2: the new K rows of a cache update are computed straight into their
// slice of the present-K output: no buffer of their own, no copy.
// BUF-LABEL: func @b2_kv_update
// BUF-SAME:    %[[PAST:[a-z0-9_]+]]: memref<1x4x32xf32> {rlx.input = "past_key"}
// BUF-SAME:    %[[OUT:[a-z0-9_]+]]: memref<1x6x32xf32> {rlx.output = "present_key"}
// BUF-SAME:    rlx_lir.io = {inputs = ["past_key", "x"], outputs = ["present_key"], params = ["k_proj"]}
// BUF-NOT:   memref.alloc
// BUF:       %[[OLD:.*]] = memref.subview %[[OUT]][0, 0, 0] [1, 4, 32]
// BUF:       memref.copy %[[PAST]], %[[OLD]]
// BUF:       %[[NEW:.*]] = memref.subview %[[OUT]][0, 4, 0] [1, 2, 32]
// BUF:       rlx_lir.kernel "matmul" ins({{.*}}) outs(%[[NEW]] : memref<1x2x32xf32, strided<[192, 32, 1], offset: 128>>)
// BUF-NOT:   memref.copy
// BUF:       return
func.func @b2_kv_update(%past: tensor<1x4x32xf32> {rlx.input = "past_key"}, %x: tensor<1x2x64xf32> {rlx.input = "x"},
                        %wk: tensor<32x64xf32> {rlx.param = "k_proj"}) -> (tensor<1x6x32xf32> {rlx.output = "present_key"}) {
  %k = rlx_mir.matmul %x, %wk transpose_b : tensor<1x2x64xf32>, tensor<32x64xf32>
  %cat = rlx_mir.concat %past, %k axis = 1 : tensor<1x4x32xf32>, tensor<1x2x32xf32>
  return %cat : tensor<1x6x32xf32>
}

// -----

// B3: three chained matmuls, then a reshape and a slice of the result. The
// reshape and slice are views of the third result (no new bytes); the third
// result reuses the first's bytes; the arena is the lower bound (two 512-byte
// buffers live at once).
// BUF-LABEL: func @b3_chain
// BUF-COUNT-3: memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
// BUF-NOT:   memref.alloc
// BUF:       memref.collapse_shape
// BUF:       memref.expand_shape
// BUF:       memref.subview
// PLAN-LABEL: func @b3_chain
// PLAN-SAME:   %[[ARENA:[a-z0-9_]+]]: memref<1024xi8> {rlx_lir.arena}
// PLAN-SAME:   rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 1024 : i64, lower_bound_bytes = 1024 : i64, sum_bytes = 1536 : i64}
// PLAN-DAG:  %[[T3:.*]] = rlx_lir.view %[[ARENA]][0] : memref<1024xi8> to memref<8x16xf32>
// PLAN-DAG:  %[[T2:.*]] = rlx_lir.view %[[ARENA]][512] : memref<1024xi8> to memref<8x16xf32>
// PLAN-DAG:  %[[T1:.*]] = rlx_lir.view %[[ARENA]][0] : memref<1024xi8> to memref<8x16xf32>
// PLAN:      rlx_lir.kernel "matmul" ins(%{{.*}}, %{{.*}} : memref<8x16xf32>, memref<16x16xf32>) outs(%[[T1]] :
// PLAN:      rlx_lir.kernel "matmul" ins(%[[T1]], %{{.*}} : memref<8x16xf32>, memref<16x16xf32>) outs(%[[T2]] :
// PLAN:      rlx_lir.kernel "matmul" ins(%[[T2]], %{{.*}} : memref<8x16xf32>, memref<16x16xf32>) outs(%[[T3]] :
// PLAN:      memref.collapse_shape %[[T3]]
func.func @b3_chain(%x: tensor<8x16xf32> {rlx.input = "x"}, %w1: tensor<16x16xf32> {rlx.param = "w1"},
                    %w2: tensor<16x16xf32> {rlx.param = "w2"}, %w3: tensor<16x16xf32> {rlx.param = "w3"})
    -> (tensor<2x16xf32> {rlx.output = "y"}) {
  %a = rlx_mir.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>
  %b = rlx_mir.matmul %a, %w2 : tensor<8x16xf32>, tensor<16x16xf32>
  %c = rlx_mir.matmul %b, %w3 : tensor<8x16xf32>, tensor<16x16xf32>
  %r = rlx_mir.reshape %c [4, 32] : tensor<8x16xf32>
  %s = rlx_mir.slice %r offsets [0, 0] sizes [2, 16] strides [1, 1] : tensor<4x32xf32>
  return %s : tensor<2x16xf32>
}

// -----

// B1: %f (filled from a constant) is read again by the last add, so no
// elementwise kernel may write over it; the exp → neg → tanh chain on a value
// that dies at each step runs in place.
// PLAN-LABEL: func @b1_read_again
// PLAN-SAME:   %[[ARENA:[a-z0-9_]+]]: memref<256xi8> {rlx_lir.arena}
// PLAN-DAG:  %[[F:.*]] = rlx_lir.view %[[ARENA]][0] : memref<256xi8> to memref<4x8xf32>
// PLAN-NOT:  rlx_lir.view %[[ARENA]][0]
// PLAN:      rlx_lir.kernel "exp" outs(%[[F]] : memref<4x8xf32>)
// PLAN:      rlx_lir.kernel "mul" ins(%[[F]], %{{.*}} : memref<4x8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) {
// PLAN:      rlx_lir.kernel "exp" ins(%{{.*}} : memref<4x8xf32>) outs(%[[E:.*]] : memref<4x8xf32>) {
// PLAN:      rlx_lir.kernel "neg" ins(%[[E]] : memref<4x8xf32>) outs(%[[N:.*]] : memref<4x8xf32>) attributes {in_place = array<i64: 0>}
// PLAN:      rlx_lir.kernel "tanh" ins(%[[N]] : memref<4x8xf32>) outs(%[[T:.*]] : memref<4x8xf32>) attributes {in_place = array<i64: 0>}
// PLAN:      rlx_lir.kernel "add" ins(%[[T]], %[[F]] : memref<4x8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) {
func.func @b1_read_again(%x: tensor<4x8xf32> {rlx.input = "x"})
    -> (tensor<4x8xf32> {rlx.output = "a"}, tensor<4x8xf32> {rlx.output = "b"}) {
  %c = rlx_mir.constant dense<2.0> : tensor<4x8xf32>
  %f = rlx_mir.exp %c : tensor<4x8xf32>
  %a = rlx_mir.mul %f, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %e = rlx_mir.exp %x : tensor<4x8xf32>
  %n = rlx_mir.neg %e : tensor<4x8xf32>
  %t = rlx_mir.tanh %n : tensor<4x8xf32>
  %b = rlx_mir.add %t, %f : tensor<4x8xf32>, tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A broadcasting input is never overwritten: the output is larger.
// PLAN-LABEL: func @no_in_place_with_broadcast
// PLAN:      rlx_lir.kernel "add"
// PLAN-NOT:  in_place
// PLAN:      return
func.func @no_in_place_with_broadcast(%x: tensor<4x8xf32> {rlx.input = "x"}, %y: tensor<8xf32> {rlx.input = "y"})
    -> (tensor<4x8xf32> {rlx.output = "z"}) {
  %e = rlx_mir.exp %y : tensor<8xf32>
  %s = rlx_mir.add %x, %e : tensor<4x8xf32>, tensor<8xf32>
  %t = rlx_mir.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// rlx.dim_names stay on the bufferized (memref) argument and still verify.
// BUF-LABEL: func @dim_names_on_memref
// BUF-SAME:    memref<1x?x8xf32> {rlx.dim_names = ["", "seq", ""], rlx.input = "x"}
// PLAN-LABEL: func @dim_names_on_memref
// PLAN-SAME:    memref<1x?x8xf32> {rlx.dim_names = ["", "seq", ""], rlx.input = "x"}
func.func @dim_names_on_memref(%x: tensor<1x?x8xf32> {rlx.dim_names = ["", "seq", ""], rlx.input = "x"}) {
  return
}
