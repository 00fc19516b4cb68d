// convert-rlx-mir-to-linalg keeps a fused MIR op one loop nest: a
// fused_matmul becomes one scf.forall over (batch, row tile) whose body holds
// the prologue, the matmul and the whole epilogue (plus one forall for the
// tail rows when the tile does not divide them); attention one forall over
// (batch, head) with GQA head sharing; elementwise ops one linalg.generic.
// RUN: rlx-opt %s --convert-rlx-mir-to-linalg="row-tile=4" | FileCheck %s

// CHECK-LABEL: func @fused_matmul
func.func @fused_matmul(%x: tensor<2x7x32xf32>, %w: tensor<40x32xf32>, %g: tensor<32xf32>,
                        %b: tensor<40xf32>, %r: tensor<2x7x40xf32>) -> tensor<2x7x40xf32> {
  // Rows 0..3 of each batch: norm statistics, normalized rows, matmul,
  // bias + SiLU, residual, all inside the forall.
  // CHECK:      scf.forall (%[[B:.*]], %[[T:.*]]) in (2, 1)
  // CHECK:        tensor.extract_slice %arg0[%[[B]], %{{.*}}, 0] [1, 4, 32]
  // CHECK:        linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
  // CHECK:          arith.mulf
  // CHECK:        math.rsqrt
  // CHECK:        linalg.matmul {{.*}}ins(%{{.*}}, %arg1 : tensor<4x32xf32>, tensor<40x32xf32>)
  // CHECK:        linalg.generic
  // CHECK:          math.exp
  // CHECK:        linalg.generic
  // CHECK:        tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %{{.*}}, 0] [1, 4, 40]
  // The 3 tail rows.
  // CHECK:      scf.forall
  // CHECK:        tensor.extract_slice %arg0[{{.*}}] [1, 3, 32]
  // CHECK:        linalg.matmul {{.*}}tensor<3x32xf32>, tensor<40x32xf32>
  // CHECK:        tensor.parallel_insert_slice {{.*}} [1, 3, 40]
  // Nothing of the op is left outside the two loop nests.
  // CHECK-NOT:  linalg.
  // CHECK:      return
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<32xf32>)
      bias(%b : tensor<40xf32>) activation silu residual(%r : tensor<2x7x40xf32>)
      : tensor<2x7x32xf32>, tensor<40x32xf32>
  return %y : tensor<2x7x40xf32>
}

// CHECK-LABEL: func @attention_gqa
func.func @attention_gqa(%q: tensor<1x5x32xf32>, %k: tensor<1x5x16xf32>, %v: tensor<1x5x16xf32>) -> tensor<1x5x32xf32> {
  // Four query heads share two kv heads: kv head = head / 2.
  // CHECK:      scf.forall (%[[B:.*]], %[[H:.*]]) in (1, 4)
  // CHECK:        %[[KV:.*]] = arith.divui %[[H]], %c2
  // CHECK:        linalg.matmul
  // Scale and the bottom-right aligned causal mask in one generic.
  // CHECK:        linalg.generic
  // CHECK:          arith.constant 0.353553385 : f32
  // CHECK:          arith.cmpi sle
  // CHECK:          arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
  // Safe softmax: a row whose max is -inf gives 0, not NaN.
  // CHECK:        arith.maximumf
  // CHECK:        math.exp
  // CHECK:        arith.cmpf oeq
  // CHECK:        linalg.matmul
  // CHECK:        tensor.parallel_insert_slice
  // CHECK-NOT:  linalg.
  // CHECK:      return
  %0 = rlx_mir.attention %q, %k, %v heads = 4, kv_heads = 2, head_dim = 8 causal
      : tensor<1x5x32xf32>, tensor<1x5x16xf32>, tensor<1x5x16xf32>
  return %0 : tensor<1x5x32xf32>
}

// CHECK-LABEL: func @elementwise_region
func.func @elementwise_region(%p: tensor<6x1xf32>, %f: tensor<32xf32>) -> tensor<6x32xf32> {
  // CHECK:      linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME:   ins(%arg0, %arg1 : tensor<6x1xf32>, tensor<32xf32>)
  // CHECK:        arith.mulf
  // CHECK:        math.exp
  // CHECK:        linalg.yield
  // CHECK-NOT:  linalg.generic
  %0 = rlx_mir.elementwise ins(%p, %f : tensor<6x1xf32>, tensor<32xf32>) -> tensor<6x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %e = math.exp %m : f32
    rlx_mir.yield %e : f32
  }
  return %0 : tensor<6x32xf32>
}

// CHECK-LABEL: func @attention_decode_gqa
func.func @attention_decode_gqa(%q: tensor<2x1x32xf32>, %k: tensor<2x9x16xf32>, %v: tensor<2x9x16xf32>) -> tensor<2x1x32xf32> {
  // A decode step: the query heads of each kv head are one [group, head_dim]
  // block read in place, so each product is one GEMM with `group` rows.
  // CHECK:      scf.forall (%[[B:.*]], %[[G:.*]]) in (2, 2)
  // CHECK:        tensor.extract_slice %arg0[%[[B]], 0, %{{.*}}] [1, 1, 16] [1, 1, 1] : tensor<2x1x32xf32> to tensor<1x16xf32>
  // CHECK:        tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
  // CHECK:        linalg.matmul {{.*}}ins(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<9x8xf32>)
  // Every row is the query at position 0: it sees keys j <= 9 - 1.
  // CHECK:        linalg.generic
  // CHECK-NOT:      linalg.index 0
  // CHECK:          arith.cmpi sle
  // CHECK:        linalg.matmul {{.*}}-> tensor<2x8xf32>
  // CHECK:        tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], 0, %{{.*}}] [1, 1, 16]
  %0 = rlx_mir.attention %q, %k, %v heads = 4, kv_heads = 2, head_dim = 8 causal
      : tensor<2x1x32xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>
  return %0 : tensor<2x1x32xf32>
}
