// scf.while on tensors (torch.while_loop as torch-mlir writes it: the
// condition carried as an i1, the next one computed at the end of each trip)
// raised to rlx_mir.while: scalars carried as 0-d tensors, constants and
// filled tensors rebuilt in each region, a value from outside (%w) carried
// unchanged; the regions' linalg raised like the rest. A loop whose
// condition forwards values it computes stays.
// RUN: rlx-opt %s -split-input-file --rlx-import-to-mir | FileCheck %s

#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @torch_while
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %[[W:.*]]: tensor<2xf32>)
// CHECK: %[[C0:.*]] = arith.cmpf olt
// CHECK: %[[FLAG:.*]] = tensor.from_elements %[[C0]] : tensor<i1>
// CHECK: %[[R:.*]]:4 = rlx_mir.while ins(%[[FLAG]], %[[X]], %[[W]] : tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<i1>, tensor<2xf32>, tensor<2xf32>, tensor<i64> cond {
// CHECK: ^bb0(%[[F:.*]]: tensor<i1>, %{{.*}}: tensor<2xf32>, %{{.*}}: tensor<2xf32>):
// CHECK: %[[S:.*]] = tensor.extract %[[F]][] : tensor<i1>
// CHECK: %[[T:.*]] = tensor.from_elements %[[S]] : tensor<i1>
// CHECK: rlx_mir.yield %[[T]] : tensor<i1>
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: tensor<i1>, %[[XB:.*]]: tensor<2xf32>, %[[WB:.*]]: tensor<2xf32>):
// CHECK: %[[M:.*]] = rlx_mir.mul %[[XB]], %[[WB]]
// CHECK: rlx_mir.reduce sum %[[M]]
// CHECK: rlx_mir.yield %{{.*}}, %[[M]], %[[WB]] : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK: return %[[R]]#1
func.func @torch_while(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %cst = arith.constant 1.000000e+02 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum0 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%x : tensor<2xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %s0 = tensor.extract %sum0[] : tensor<f32>
  %c0 = arith.cmpf olt, %s0, %cst : f32
  %r:1 = scf.while (%go = %c0, %arg = %x) : (i1, tensor<2xf32>) -> (tensor<2xf32>) {
    scf.condition(%go) %arg : tensor<2xf32>
  } do {
  ^bb0(%v: tensor<2xf32>):
    %o = tensor.empty() : tensor<2xf32>
    %m = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%v, %w : tensor<2xf32>, tensor<2xf32>) outs(%o : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %a, %b : f32
      linalg.yield %p : f32
    } -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%m : tensor<2xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %s = tensor.extract %sum[] : tensor<f32>
    %c = arith.cmpf olt, %s, %cst : f32
    scf.yield %c, %m : i1, tensor<2xf32>
  }
  return %r#0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @computed_forward
// CHECK: scf.while
// CHECK-NOT: rlx_mir.while
func.func @computed_forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %t = arith.constant true
  %r = scf.while (%arg = %x) : (tensor<2xf32>) -> tensor<2xf32> {
    %e = tensor.empty() : tensor<2xf32>
    %f = arith.constant 1.0 : f32
    %n = linalg.fill ins(%f : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    scf.condition(%t) %n : tensor<2xf32>
  } do {
  ^bb0(%v: tensor<2xf32>):
    scf.yield %v : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
