// rlx-lir-plan-buffers on buffer-form IR: lifetimes from the schedule, views
// of a buffer extend its lifetime, arguments stay outside the arena, the
// report (remark, JSON, SVG).
// RUN: rm -rf %t && rlx-opt %s --rlx-lir-plan-buffers="report report-dir=%t" --rlx-lir-verify-plan 2>&1 | FileCheck %s
// RUN: FileCheck %s --input-file=%t/diamond.plan.json --check-prefix=JSON
// RUN: FileCheck %s --input-file=%t/diamond.plan.svg --check-prefix=SVG
// RUN: rlx-opt %s --rlx-lir-plan-buffers="alignment=256" | FileCheck %s --check-prefix=ALIGN

// Four 128-byte buffers. The elementwise mul writes b over a (a dies there),
// add writes d over c; neg reads b through views (expand/collapse), which keep
// b alive until add, so c needs other bytes. Lower bound 256.
// CHECK: remark: @diamond: arena 256 bytes, lower bound 256 (1.000x), sum of buffers 512, 4 buffers, alignment 64
// CHECK-LABEL: func.func @diamond(%arg0
// CHECK-SAME:  : memref<256xi8> {rlx_lir.arena}, %arg1: memref<32xf32> {rlx.input = "x"}, %arg2: memref<32xf32> {rlx.output = "y"})
// CHECK-SAME:  rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 256 : i64, lower_bound_bytes = 256 : i64, sum_bytes = 512 : i64}
// CHECK-NOT: memref.alloc
// CHECK:     rlx_lir.kernel "mul" {{.*}} attributes {in_place = array<i64: 0>}
// CHECK:     rlx_lir.kernel "neg"
// CHECK-NOT: in_place
// CHECK:     rlx_lir.kernel "add" {{.*}} attributes {in_place = array<i64: 0>}
// CHECK-NOT: memref.dealloc
// CHECK:     return
func.func @diamond(%x: memref<32xf32> {rlx.input = "x"}, %y: memref<32xf32> {rlx.output = "y"})
    attributes {rlx_lir.io = {inputs = ["x"], params = [], outputs = ["y"]}} {
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<32xf32>
  %c = memref.alloc() : memref<32xf32>
  %d = memref.alloc() : memref<32xf32>
  rlx_lir.kernel "exp" ins(%x : memref<32xf32>) outs(%a : memref<32xf32>) {
  ^bb0(%t: tensor<32xf32>):
    %r = rlx_mir.exp %t : tensor<32xf32>
    rlx_lir.yield %r : tensor<32xf32>
  }
  rlx_lir.kernel "mul" ins(%a, %x : memref<32xf32>, memref<32xf32>) outs(%b : memref<32xf32>) {
  ^bb0(%t: tensor<32xf32>, %u: tensor<32xf32>):
    %r = rlx_mir.mul %t, %u : tensor<32xf32>, tensor<32xf32>
    rlx_lir.yield %r : tensor<32xf32>
  }
  %bv = memref.expand_shape %b [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
  %bf = memref.collapse_shape %bv [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  rlx_lir.kernel "neg" ins(%bf : memref<32xf32>) outs(%c : memref<32xf32>) {
  ^bb0(%t: tensor<32xf32>):
    %r = rlx_mir.neg %t : tensor<32xf32>
    rlx_lir.yield %r : tensor<32xf32>
  }
  rlx_lir.kernel "add" ins(%c, %bf : memref<32xf32>, memref<32xf32>) outs(%d : memref<32xf32>) {
  ^bb0(%t: tensor<32xf32>, %u: tensor<32xf32>):
    %r = rlx_mir.add %t, %u : tensor<32xf32>, tensor<32xf32>
    rlx_lir.yield %r : tensor<32xf32>
  }
  memref.copy %d, %y : memref<32xf32> to memref<32xf32>
  memref.dealloc %a : memref<32xf32>
  return
}

// JSON:      "arena_bytes": 256
// JSON:      "buffers": [
// JSON:        "end": 5,
// JSON-NEXT:   "id": 0,
// JSON:        "start": 4,
// JSON-NEXT:   "type": "memref<32xf32>",
// JSON:        "id": 1,
// JSON:        "views": [
// JSON-NEXT:     "memref.expand_shape",
// JSON-NEXT:     "memref.collapse_shape"
// JSON:      "function": "diamond",
// JSON:      "io": {
// JSON-NEXT:   "inputs": [
// JSON-NEXT:     "x"
// JSON:        "outputs": [
// JSON-NEXT:     "y"
// JSON:      "lower_bound_bytes": 256,
// JSON:      "schedule": [
// JSON:        "rlx_lir.kernel \"exp\"",
// SVG:       <svg xmlns="http://www.w3.org/2000/svg"
// SVG:       @diamond: arena 256 bytes
// SVG-COUNT-4: <rect x={{.*}}<title>buffer
// SVG:       </svg>

// With 256-byte alignment every 128-byte buffer takes 256 bytes.
// ALIGN: rlx_lir.plan = {alignment = 256 : i64, arena_bytes = 512 : i64, lower_bound_bytes = 512 : i64, sum_bytes = 1024 : i64}

// Without in-place reuse a, b, c, d all need bytes of their own while they overlap.
// RUN: rlx-opt %s --rlx-lir-plan-buffers="in-place=false" | FileCheck %s --check-prefix=NOINPLACE
// NOINPLACE: rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 384 : i64, lower_bound_bytes = 384 : i64, sum_bytes = 512 : i64}
// NOINPLACE-NOT: in_place
