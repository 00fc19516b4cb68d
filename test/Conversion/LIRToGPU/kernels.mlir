// convert-rlx-lir-to-gpu: every planned kernel becomes a gpu.func in one
// gpu.module per function, launched in plan order on arena views and IO
// buffers; f32 rows move as 128-bit vectors; reductions are warp shuffles.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu | FileCheck %s

// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @f(
// CHECK-SAME: {rlx_lir.arena}
// CHECK:   %[[V:.*]] = rlx_lir.view %arg0[0]
// CHECK:   gpu.launch_func @f_kernels::@f_0_rms_norm blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%arg1 : memref<4x64xf32>, %arg2 : memref<64xf32>, %[[V]] : memref<4x64xf32>)
// CHECK:   gpu.launch_func @f_kernels::@f_1_mul {{.*}} args(%[[V]] : memref<4x64xf32>, %arg3 : memref<4x64xf32>)
// CHECK: gpu.module @f_kernels
// CHECK: gpu.func @f_0_rms_norm({{.*}}) {{.*}}kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// CHECK:   vector.load %{{.*}} {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:   math.rsqrt
// CHECK:   vector.store %{{.*}} {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK: gpu.func @f_1_mul({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>
func.func @f(%x: tensor<4x64xf32>, %g: tensor<64xf32>) -> tensor<4x64xf32> {
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<4x64xf32>, tensor<64xf32>
  %s = rlx_mir.mul %n, %n : tensor<4x64xf32>, tensor<4x64xf32>
  return %s : tensor<4x64xf32>
}
