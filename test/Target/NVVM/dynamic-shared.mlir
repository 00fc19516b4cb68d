// rlx-gpu-dynamic-shared: a kernel whose workgroup buffers need 51,712
// bytes (past the 48 KiB of static shared memory) takes them as views of
// dynamic shared memory at 128-byte aligned offsets, and its launch asks for
// the sum; a kernel within 48 KiB keeps its workgroup buffers; a launch
// with a size that is not a constant is an error.
// RUN: rlx-opt %s --split-input-file --rlx-gpu-dynamic-shared --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK: %[[S:.*]] = arith.constant 51712 : i32
// CHECK: gpu.launch_func @k::@big {{.*}} dynamic_shared_memory_size %[[S]]
// CHECK: gpu.launch_func @k::@small
// CHECK-NOT: dynamic_shared_memory_size
// CHECK: gpu.func @big(%{{.*}}: memref<4xf32>) kernel
// CHECK:   %[[D:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:   memref.view %[[D]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<512x8xf32, #gpu.address_space<workgroup>>
// CHECK:   memref.view %[[D]][%c16384{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<512xf32, #gpu.address_space<workgroup>>
// CHECK:   memref.view %[[D]][%c18432{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x512xf32, #gpu.address_space<workgroup>>
// CHECK:   memref.view %[[D]][%c51200{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.func @small(%{{.*}}: memref<4xf32>) workgroup(%{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) kernel
module attributes {gpu.container_module} {
  func.func @f(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @k::@small blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @big(%x: memref<4xf32>)
        workgroup(%a : memref<512x8xf32, #gpu.address_space<workgroup>>,
                  %b : memref<512xf32, #gpu.address_space<workgroup>>,
                  %c : memref<16x512xf32, #gpu.address_space<workgroup>>,
                  %d : memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %a[%c0, %c0] : memref<512x8xf32, #gpu.address_space<workgroup>>
      memref.store %v, %b[%c0] : memref<512xf32, #gpu.address_space<workgroup>>
      memref.store %v, %c[%c0, %c0] : memref<16x512xf32, #gpu.address_space<workgroup>>
      memref.store %v, %d[%c0, %c0] : memref<16x8xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
    gpu.func @small(%x: memref<4xf32>)
        workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @g(%x: memref<4xf32>, %n: i32) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{has a dynamic shared memory size that is not a constant}}
    gpu.launch_func @k::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %n args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @big(%x: memref<4xf32>)
        workgroup(%a : memref<13000xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// A small workgroup buffer of a kernel that also uses dynamic shared memory
// moves into it, after the kernel's own bytes: NVPTX demotes the dynamic
// symbol to an ordinary .shared variable, which ptxas placed over the static
// buffer on an H200 (the wgmma norm prologue's row statistics raced with
// its A tile; compute-sanitizer racecheck).
// CHECK-LABEL: func.func @mixed
// CHECK: %[[S:.*]] = arith.constant 1280 : i32
// CHECK: gpu.launch_func @k::@mixed {{.*}} dynamic_shared_memory_size %[[S]]
// CHECK: gpu.func @mixed(%{{.*}}: memref<4xf32>) kernel
// CHECK:   memref.view %{{.*}}[%c1024{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  func.func @mixed(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %n = arith.constant 1000 : i32
    gpu.launch_func @k::@mixed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %n args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @mixed(%x: memref<4xf32>)
        workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.load %x[%c0] : memref<4xf32>
      memref.store %v, %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %i = arith.constant 0 : i8
      memref.store %i, %d[%c0] : memref<?xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
