// rlx_mir.lora_matmul: round trips (custom, generic), its chain at the HIR →
// MIR lowering (the base matmul in the nn.Linear layout, B scaled once, the
// adapters' rows through grouped_matmul), and the verifier.
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --convert-rlx-hir-to-mir | FileCheck %s --check-prefix=CHAIN

// CHECK-LABEL: func @one
// CHAIN-LABEL: func @one
func.func @one(%x: tensor<1x?x8xf32>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>,
               %b: tensor<6x2xf32>) -> tensor<1x?x6xf32> {
  // CHECK: rlx_mir.lora_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scales = [2.000000e+00] : tensor<1x?x8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  // CHAIN: %[[SB:.*]] = rlx_mir.mul %{{.*}}, %{{.*}} : tensor<6x2xf32>, tensor<f32>
  // CHAIN: %[[BASE:.*]] = rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<1x?x8xf32>, tensor<6x8xf32>
  // CHAIN: %[[XA:.*]] = rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<1x?x8xf32>, tensor<2x8xf32>
  // CHAIN: %[[D:.*]] = rlx_mir.matmul %[[XA]], %[[SB]] transpose_b : tensor<1x?x2xf32>, tensor<6x2xf32>
  // CHAIN: rlx_mir.add %[[BASE]], %[[D]]
  // CHAIN-NOT: lora_matmul
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0]
      : tensor<1x?x8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  return %y : tensor<1x?x6xf32>
}

// CHECK-LABEL: func @many
// CHAIN-LABEL: func @many
func.func @many(%x: tensor<2x?x8xf32>, %w: tensor<6x8xf32>, %a: tensor<3x2x8xf32>,
                %b: tensor<3x6x2xf32>, %ids: tensor<2x?xi64>) -> tensor<2x?x6xf32> {
  // CHECK: rlx_mir.lora_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} adapters(%{{.*}} : tensor<2x?xi64>) scales = [2.000000e+00, 5.000000e-01, 1.000000e+00]
  // CHAIN: rlx_mir.constant dense<{{\[}}[{{\[}}2.000000e+00]], {{\[}}[5.000000e-01]], {{\[}}[1.000000e+00]]]> : tensor<3x1x1xf32>
  // CHAIN: %[[IDS:.*]] = rlx_mir.reshape %{{.*}} [-1] : tensor<2x?xi64>
  // CHAIN: %[[XA:.*]] = rlx_mir.grouped_matmul %{{.*}}, %{{.*}}, %[[IDS]] zero_out_of_range : tensor<?x8xf32>, tensor<3x2x8xf32>, tensor<?xi64>
  // CHAIN: rlx_mir.grouped_matmul %[[XA]], %{{.*}}, %[[IDS]] zero_out_of_range : tensor<?x2xf32>, tensor<3x6x2xf32>, tensor<?xi64>
  // CHAIN: rlx_mir.reshape %{{.*}} [2, -1, 6] : tensor<?x6xf32>
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<2x?xi64>) scales = [2.0, 0.5, 1.0]
      : tensor<2x?x8xf32>, tensor<6x8xf32>, tensor<3x2x8xf32>, tensor<3x6x2xf32>
  return %y : tensor<2x?x6xf32>
}
