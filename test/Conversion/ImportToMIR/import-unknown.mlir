// Ops the importer does not know stay where they are, between raised ones,
// and the CPU pipeline lowers them with upstream's passes (tosa.floor here).
// RUN: rlx-opt %s --rlx-import-to-mir | FileCheck %s
// RUN: rlx-opt %s --rlx-lower-to-cpu -o /dev/null

// CHECK-LABEL: func.func @partly_known(
// CHECK:         %[[E:.*]] = rlx_mir.exp %arg0
// CHECK-NEXT:    %[[F:.*]] = tosa.floor %[[E]]
// CHECK-NEXT:    %[[T:.*]] = rlx_mir.tanh %[[F]]
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:           math.floor
// CHECK:         %[[M:.*]] = rlx_mir.mul %[[T]], %[[S]]
func.func @partly_known(%x: tensor<2x4xf32> {rlx.input = "x"}) -> (tensor<2x4xf32> {rlx.output = "y"}) {
  %e = tosa.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %f = tosa.floor %e : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = tosa.tanh %f : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // A body op without a MIR counterpart: the generic stays.
  %init = tensor.empty() : tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %fl = math.floor %in : f32
    linalg.yield %fl : f32
  } -> tensor<2x4xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = tosa.mul %t, %s, %shift : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<1xi8>) -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}
