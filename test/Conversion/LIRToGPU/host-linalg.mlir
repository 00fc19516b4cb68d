// convert-rlx-lir-to-gpu: upstream linalg an import leaves on the host (an
// embedding's i64 -> i32 index cast from tosa-to-linalg) is a kernel of its
// own, launched before the gather that reads it (it was dropped from the
// plan), as are a fill and a reduction; a kernel that writes nothing
// launches nothing; a body the kernel cannot clone is a located error.
// RUN: rlx-opt %s --split-input-file --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu --verify-diagnostics | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @embed(
// CHECK:   gpu.launch_func @embed_kernels::@embed_0_linalg {{.*}} args(%arg1 : memref<1x4xi64>, %[[IDS:.*]] : memref<1x4xi32>)
// CHECK:   gpu.launch_func @embed_kernels::@embed_1_gather {{.*}} args(%arg2 : memref<16x8xf32>, %[[IDS]] : memref<1x4xi32>
// CHECK: gpu.func @embed_0_linalg
// CHECK:   arith.trunci %{{.*}} : i64 to i32
func.func @embed(%ids: tensor<1x4xi64>, %table: tensor<16x8xf32>) -> tensor<1x4x8xf32> {
  %e = tensor.empty() : tensor<1x4xi32>
  %i = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4xi32>) {
  ^bb0(%in: i64, %out: i32):
    %t = arith.trunci %in : i64 to i32
    linalg.yield %t : i32
  } -> tensor<1x4xi32>
  %y = rlx_mir.gather %table[%i] : tensor<16x8xf32>, tensor<1x4xi32>
  return %y : tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @empty(
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @empty(%a: tensor<0x4xf32>, %b: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %y = rlx_mir.add %a, %b : tensor<0x4xf32>, tensor<0x4xf32>
  return %y : tensor<0x4xf32>
}

// -----

// A reduction: one thread per row, the row summed in order; the fill's
// value is a constant of the kernel, not an argument.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum(
// CHECK:   gpu.launch_func @row_sum_kernels::@row_sum_0_linalg {{.*}} args(%{{.*}} : memref<4xf32>)
// CHECK:   gpu.launch_func @row_sum_kernels::@row_sum_1_linalg {{.*}} args(%arg1 : memref<4x8xf32>, %{{.*}} : memref<4xf32>)
// CHECK: gpu.func @row_sum_0_linalg
// CHECK:   arith.constant 0.000000e+00 : f32
// CHECK: gpu.func @row_sum_1_linalg
// CHECK:   scf.for {{.*}} iter_args
// CHECK:     arith.addf
func.func @row_sum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// An indexing map with arithmetic (a sliding window x[i + j]) is read per
// point.
// CHECK-LABEL: func.func @window(
// CHECK:   gpu.launch_func @window_kernels::@window_0_linalg
#sum = affine_map<(d0, d1) -> (d0 + d1)>
#out = affine_map<(d0, d1) -> (d0, d1)>
func.func @window(%x: tensor<8xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %s = linalg.generic {indexing_maps = [#sum, #out], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x5xf32>
  return %s : tensor<4x5xf32>
}

// -----

// A body with a loop is a located error.
#id = affine_map<(d0) -> (d0)>
func.func @loop(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{no GPU kernel for this 'linalg.generic' (the GPU path runs linalg ops with static shapes}}
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.fptosi %in : f32 to i32
    %ni = arith.index_cast %n : i32 to index
    %r = scf.for %i = %c0 to %ni step %c1 iter_args(%acc = %o) -> f32 {
      %a = arith.addf %acc, %in : f32
      scf.yield %a : f32
    }
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// An input map that can leave its operand inside the domain (x[(3i mod 5) +
// 5j] reaches 8 at i = 1, j = 1; linalg's verifier checks only the corners)
// is a located error.
#wrap = affine_map<(d0, d1) -> ((d0 * 3) mod 5 + d1 * 5)>
#out2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @outside(%x: tensor<8xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  // expected-error @+1 {{no GPU kernel for this 'linalg.generic'}}
  %s = linalg.generic {indexing_maps = [#wrap, #out2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}
