// Embedding lookups as the exporters write them: tosa.gather on a [1, V, D]
// view of the table with [1, S] indices (TorchToTosa), and a linalg.generic
// that casts each id to an index and extracts the table row (TorchToLinalg).
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @tosa_embedding(
// CHECK-SAME:    %[[T:.*]]: tensor<10x8xf32>, %[[IDS:.*]]: tensor<1x4xi32>
// CHECK:         %[[G:.*]] = rlx_mir.gather %[[T]][%[[IDS]]] : tensor<10x8xf32>, tensor<1x4xi32>
// CHECK-NEXT:    return %[[G]] : tensor<1x4x8xf32>
func.func @tosa_embedding(%table: tensor<10x8xf32>, %ids: tensor<1x4xi32>) -> tensor<1x4x8xf32> {
  %s = tosa.const_shape {values = dense<[1, 10, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t3 = tosa.reshape %table, %s : (tensor<10x8xf32>, !tosa.shape<3>) -> tensor<1x10x8xf32>
  %g = tosa.gather %t3, %ids : (tensor<1x10x8xf32>, tensor<1x4xi32>) -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @linalg_embedding(
// CHECK-SAME:    %[[T:.*]]: tensor<10x8xf32>, %[[IDS:.*]]: tensor<1x4xi64>
// CHECK:         %[[G:.*]] = rlx_mir.gather %[[T]][%[[IDS]]] : tensor<10x8xf32>, tensor<1x4xi64>
// CHECK-NEXT:    return %[[G]] : tensor<1x4x8xf32>
func.func @linalg_embedding(%table: tensor<10x8xf32>, %ids: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %e = tensor.empty() : tensor<1x4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x8xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}
