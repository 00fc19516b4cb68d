// rlx-cpu-kernel-scratch: a kernel's static allocations become views of a
// trailing scratch argument (64-byte aligned offsets, deallocs gone); the
// caller's arena grows by its kernels' largest scratch past the planned
// bytes (aligned up), passed to each call as a view there, and the plan
// records scratch_bytes. A kernel with a caller without an arena, and an
// allocation inside a loop or of dynamic shape, keep their allocs.
// RUN: rlx-opt %s --rlx-cpu-kernel-scratch | FileCheck %s

// CHECK-LABEL: func.func private @k1(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>, %[[S:.*]]: memref<320xi8>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[S]][%[[C0]]][] : memref<320xi8> to memref<3xf32>
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: memref.view %[[S]][%[[C64]]][] : memref<320xi8> to memref<8x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: scf.for
// CHECK-NEXT: memref.alloc() : memref<2xf32>
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func private @k1(%x: memref<4xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  %b = memref.alloc() : memref<8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %l = memref.alloc() : memref<2xf32>
    memref.dealloc %l : memref<2xf32>
  }
  memref.dealloc %a : memref<3xf32>
  memref.dealloc %b : memref<8x8xf32>
  return
}

// A returned allocation outlives the call: it stays.
// CHECK-LABEL: func.func private @k2(
// CHECK-SAME: %{{.*}}: index, %[[S:.*]]: memref<128xi8>) -> memref<4xf32>
// CHECK: memref.view %[[S]]
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: return %[[R]]
func.func private @k2(%n: index) -> memref<4xf32> {
  %a = memref.alloc() : memref<32xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  %r = memref.alloc() : memref<4xf32>
  return %r : memref<4xf32>
}

// Called from a function without an arena too: left alone.
// CHECK-LABEL: func.func private @k3(
// CHECK-SAME: %{{.*}}: memref<4xf32>)
// CHECK: memref.alloc() : memref<16xf32>
func.func private @k3(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<16xf32>
  return
}

// 100 planned bytes: the scratch starts at 128 and takes the larger
// kernel's 320.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: %[[A:.*]]: memref<448xi8> {rlx_lir.arena}
// CHECK-SAME: rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 100 : i64, scratch_bytes = 320 : i64}
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[V1:.*]] = memref.view %[[A]][%[[C128]]][] : memref<448xi8> to memref<320xi8>
// CHECK: call @k1(%{{.*}}, %[[V1]])
// CHECK: %[[V2:.*]] = memref.view %[[A]][%{{.*}}][] : memref<448xi8> to memref<128xi8>
// CHECK: call @k2(%{{.*}}, %[[V2]]) : (index, memref<128xi8>) -> memref<4xf32>
// CHECK: call @k3(%{{.*}}) : (memref<4xf32>) -> ()
func.func @entry(%arena: memref<100xi8> {rlx_lir.arena}, %x: memref<4xf32>, %n: index)
    attributes {rlx_lir.plan = {alignment = 64 : i64, arena_bytes = 100 : i64}} {
  call @k1(%x) : (memref<4xf32>) -> ()
  %r = call @k2(%n) : (index) -> memref<4xf32>
  call @k3(%x) : (memref<4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @no_arena(
// CHECK: call @k3(%{{.*}}) : (memref<4xf32>) -> ()
func.func @no_arena(%x: memref<4xf32>) {
  call @k3(%x) : (memref<4xf32>) -> ()
  return
}
