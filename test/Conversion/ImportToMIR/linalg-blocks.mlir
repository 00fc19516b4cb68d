// Each block kind written as torch-mlir's TorchToLinalg writes it (one
// linalg.generic per aten op, reductions on filled inits, named matmuls,
// tensor reshapes), raised and recognized (rlx-import-to-mir), then fused.
// RUN: rlx-opt %s --rlx-import-to-mir --rlx-mir-fuse -split-input-file | FileCheck %s
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s --check-prefix=RAISED
// RAISED-NOT: linalg.

// CHECK-LABEL: func.func @rms_norm(
// CHECK:         %[[N:.*]] = rlx_mir.rms_norm %arg0, %{{.*}} eps = 9.99{{[0-9]*}}E-7 : tensor<1x4x8xf32>, tensor<8xf32>
// CHECK-NEXT:    return %[[N]]
func.func @rms_norm(%x: tensor<1x4x8xf32>, %w: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %v1 = tensor.empty() : tensor<1x4x8xf32>
  %v2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x8xf32>) outs(%v1 : tensor<1x4x8xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %two = arith.constant 2.000000e+00 : f32
    %r = math.powf %in0, %two : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %v3 = tensor.empty() : tensor<1x4x1xf32>
  %c5 = arith.constant 0.000000000e+00 : f32
  %v4 = linalg.fill ins(%c5 : f32) outs(%v3 : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v2 : tensor<1x4x8xf32>) outs(%v4 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %c7 = arith.constant 8.000000000e+00 : f32
  %v8 = tensor.empty() : tensor<1x4x1xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v6 : tensor<1x4x1xf32>) outs(%v8 : tensor<1x4x1xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = arith.divf %in0, %c7 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %c10 = arith.constant 1.000000000e-06 : f32
  %v11 = tensor.empty() : tensor<1x4x1xf32>
  %v12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v9 : tensor<1x4x1xf32>) outs(%v11 : tensor<1x4x1xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = arith.addf %in0, %c10 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %v13 = tensor.empty() : tensor<1x4x1xf32>
  %v14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v12 : tensor<1x4x1xf32>) outs(%v13 : tensor<1x4x1xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = math.rsqrt %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %v15 = tensor.empty() : tensor<1x4x8xf32>
  %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %v14 : tensor<1x4x8xf32>, tensor<1x4x1xf32>) outs(%v15 : tensor<1x4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.mulf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %v17 = tensor.empty() : tensor<1x4x8xf32>
  %v18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v16, %w : tensor<1x4x8xf32>, tensor<8xf32>) outs(%v17 : tensor<1x4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.mulf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  return %v18 : tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[S:.*]] = rlx_mir.softmax %arg0 axis = 3 : tensor<1x2x4x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @softmax(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %v1 = tensor.empty() : tensor<1x2x4x1xf32>
  %c3 = arith.constant 0xFF800000 : f32
  %v2 = linalg.fill ins(%c3 : f32) outs(%v1 : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %v4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<1x2x4x4xf32>) outs(%v2 : tensor<1x2x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x1xf32>
  %v5 = tensor.empty() : tensor<1x2x4x4xf32>
  %v6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %v4 : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) outs(%v5 : tensor<1x2x4x4xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.subf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %v7 = tensor.empty() : tensor<1x2x4x4xf32>
  %v8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v6 : tensor<1x2x4x4xf32>) outs(%v7 : tensor<1x2x4x4xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = math.exp %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %v9 = tensor.empty() : tensor<1x2x4x1xf32>
  %c11 = arith.constant 0.000000000e+00 : f32
  %v10 = linalg.fill ins(%c11 : f32) outs(%v9 : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %v12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v8 : tensor<1x2x4x4xf32>) outs(%v10 : tensor<1x2x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x1xf32>
  %v13 = tensor.empty() : tensor<1x2x4x4xf32>
  %v14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v8, %v12 : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) outs(%v13 : tensor<1x2x4x4xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.divf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  return %v14 : tensor<1x2x4x4xf32>
}

// -----

// GQA: K/V heads repeated by reshape → tile/broadcast → reshape, an additive
// causal mask constant (torch.finfo(float32).min above the diagonal).
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %[[O:.*]] = rlx_mir.attention %arg0, %arg1, %arg2 heads = 4, kv_heads = 2, head_dim = 4 causal
// CHECK-NEXT:    return %[[O]]
func.func @attention(%q: tensor<1x5x16xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> tensor<1x5x16xf32> {
  %v1 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 5, 4, 4] : tensor<1x5x16xf32> into tensor<1x5x4x4xf32>
  %v2 = tensor.empty() : tensor<1x4x5x4xf32>
  %v3 = linalg.transpose ins(%v1 : tensor<1x5x4x4xf32>) outs(%v2 : tensor<1x4x5x4xf32>) permutation = [0, 2, 1, 3]
  %v4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, 5, 2, 4] : tensor<1x5x8xf32> into tensor<1x5x2x4xf32>
  %v5 = tensor.empty() : tensor<1x2x5x4xf32>
  %v6 = linalg.transpose ins(%v4 : tensor<1x5x2x4xf32>) outs(%v5 : tensor<1x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %v7 = tensor.expand_shape %v6 [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, 5, 4] : tensor<1x2x5x4xf32> into tensor<1x2x1x5x4xf32>
  %v8 = tensor.empty() : tensor<1x2x2x5x4xf32>
  %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v7 : tensor<1x2x1x5x4xf32>) outs(%v8 : tensor<1x2x2x5x4xf32>) {
  ^bb0(%in0: f32, %out: f32):
    linalg.yield %in0 : f32
  } -> tensor<1x2x2x5x4xf32>
  %v10 = tensor.collapse_shape %v9 [[0], [1, 2], [3], [4]] : tensor<1x2x2x5x4xf32> into tensor<1x4x5x4xf32>
  %v11 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, 5, 2, 4] : tensor<1x5x8xf32> into tensor<1x5x2x4xf32>
  %v12 = tensor.empty() : tensor<1x2x5x4xf32>
  %v13 = linalg.transpose ins(%v11 : tensor<1x5x2x4xf32>) outs(%v12 : tensor<1x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %v14 = tensor.expand_shape %v13 [[0], [1], [2, 3], [4]] output_shape [1, 2, 1, 5, 4] : tensor<1x2x5x4xf32> into tensor<1x2x1x5x4xf32>
  %v15 = tensor.empty() : tensor<1x2x2x5x4xf32>
  %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v14 : tensor<1x2x1x5x4xf32>) outs(%v15 : tensor<1x2x2x5x4xf32>) {
  ^bb0(%in0: f32, %out: f32):
    linalg.yield %in0 : f32
  } -> tensor<1x2x2x5x4xf32>
  %v17 = tensor.collapse_shape %v16 [[0], [1, 2], [3], [4]] : tensor<1x2x2x5x4xf32> into tensor<1x4x5x4xf32>
  %v18 = tensor.empty() : tensor<1x4x4x5xf32>
  %v19 = linalg.transpose ins(%v10 : tensor<1x4x5x4xf32>) outs(%v18 : tensor<1x4x4x5xf32>) permutation = [0, 1, 3, 2]
  %v20 = tensor.collapse_shape %v3 [[0, 1], [2], [3]] : tensor<1x4x5x4xf32> into tensor<4x5x4xf32>
  %v21 = tensor.collapse_shape %v19 [[0, 1], [2], [3]] : tensor<1x4x4x5xf32> into tensor<4x4x5xf32>
  %v22 = tensor.empty() : tensor<4x5x5xf32>
  %c24 = arith.constant 0.000000000e+00 : f32
  %v23 = linalg.fill ins(%c24 : f32) outs(%v22 : tensor<4x5x5xf32>) -> tensor<4x5x5xf32>
  %v25 = linalg.batch_matmul ins(%v20, %v21 : tensor<4x5x4xf32>, tensor<4x4x5xf32>) outs(%v23 : tensor<4x5x5xf32>) -> tensor<4x5x5xf32>
  %v26 = tensor.expand_shape %v25 [[0, 1], [2], [3]] output_shape [1, 4, 5, 5] : tensor<4x5x5xf32> into tensor<1x4x5x5xf32>
  %c27 = arith.constant 5.000000000e-01 : f32
  %v28 = tensor.empty() : tensor<1x4x5x5xf32>
  %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v26 : tensor<1x4x5x5xf32>) outs(%v28 : tensor<1x4x5x5xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = arith.mulf %in0, %c27 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %v30 = arith.constant dense<[[[[0.000000000e+00, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00]]]]> : tensor<1x1x5x5xf32>
  %v31 = tensor.empty() : tensor<1x4x5x5xf32>
  %v32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v29, %v30 : tensor<1x4x5x5xf32>, tensor<1x1x5x5xf32>) outs(%v31 : tensor<1x4x5x5xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.addf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %v33 = tensor.empty() : tensor<1x4x5x1xf32>
  %c35 = arith.constant 0xFF800000 : f32
  %v34 = linalg.fill ins(%c35 : f32) outs(%v33 : tensor<1x4x5x1xf32>) -> tensor<1x4x5x1xf32>
  %v36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v32 : tensor<1x4x5x5xf32>) outs(%v34 : tensor<1x4x5x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x1xf32>
  %v37 = tensor.empty() : tensor<1x4x5x5xf32>
  %v38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v32, %v36 : tensor<1x4x5x5xf32>, tensor<1x4x5x1xf32>) outs(%v37 : tensor<1x4x5x5xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.subf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %v39 = tensor.empty() : tensor<1x4x5x5xf32>
  %v40 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v38 : tensor<1x4x5x5xf32>) outs(%v39 : tensor<1x4x5x5xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = math.exp %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %v41 = tensor.empty() : tensor<1x4x5x1xf32>
  %v42 = linalg.fill ins(%c24 : f32) outs(%v41 : tensor<1x4x5x1xf32>) -> tensor<1x4x5x1xf32>
  %v43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v40 : tensor<1x4x5x5xf32>) outs(%v42 : tensor<1x4x5x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x1xf32>
  %v44 = tensor.empty() : tensor<1x4x5x5xf32>
  %v45 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v40, %v43 : tensor<1x4x5x5xf32>, tensor<1x4x5x1xf32>) outs(%v44 : tensor<1x4x5x5xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.divf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %v46 = tensor.collapse_shape %v45 [[0, 1], [2], [3]] : tensor<1x4x5x5xf32> into tensor<4x5x5xf32>
  %v47 = tensor.collapse_shape %v17 [[0, 1], [2], [3]] : tensor<1x4x5x4xf32> into tensor<4x5x4xf32>
  %v48 = tensor.empty() : tensor<4x5x4xf32>
  %v49 = linalg.fill ins(%c24 : f32) outs(%v48 : tensor<4x5x4xf32>) -> tensor<4x5x4xf32>
  %v50 = linalg.batch_matmul ins(%v46, %v47 : tensor<4x5x5xf32>, tensor<4x5x4xf32>) outs(%v49 : tensor<4x5x4xf32>) -> tensor<4x5x4xf32>
  %v51 = tensor.expand_shape %v50 [[0, 1], [2], [3]] output_shape [1, 4, 5, 4] : tensor<4x5x4xf32> into tensor<1x4x5x4xf32>
  %v52 = tensor.empty() : tensor<1x5x4x4xf32>
  %v53 = linalg.transpose ins(%v51 : tensor<1x4x5x4xf32>) outs(%v52 : tensor<1x5x4x4xf32>) permutation = [0, 2, 1, 3]
  %v54 = tensor.collapse_shape %v53 [[0], [1], [2, 3]] : tensor<1x5x4x4xf32> into tensor<1x5x16xf32>
  return %v54 : tensor<1x5x16xf32>
}

// -----

// CHECK-LABEL: func.func @swiglu(
// CHECK:         %[[GU:.*]] = rlx_mir.concat %arg1, %arg2 axis = 0
// CHECK:         %[[H:.*]] = rlx_mir.fused_matmul %arg0, %[[GU]] transpose_b activation {{ *}}silu glu
// CHECK:         rlx_mir.matmul %[[H]], %arg3 transpose_b
func.func @swiglu(%x: tensor<1x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>) -> tensor<1x4x8xf32> {
  %v1 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %v2 = tensor.empty() : tensor<8x16xf32>
  %v3 = linalg.transpose ins(%wg : tensor<16x8xf32>) outs(%v2 : tensor<8x16xf32>) permutation = [1, 0]
  %v4 = tensor.empty() : tensor<4x16xf32>
  %c6 = arith.constant 0.000000000e+00 : f32
  %v5 = linalg.fill ins(%c6 : f32) outs(%v4 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v7 = linalg.matmul ins(%v1, %v3 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%v5 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v8 = tensor.expand_shape %v7 [[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
  %c9 = arith.constant 1.000000000e+00 : f32
  %v10 = tensor.empty() : tensor<1x4x16xf32>
  %v11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v8 : tensor<1x4x16xf32>) outs(%v10 : tensor<1x4x16xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %n = arith.negf %in0 : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %c9 : f32
    %s = arith.divf %c9, %d : f32
    %r = arith.mulf %in0, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %v12 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %v13 = tensor.empty() : tensor<8x16xf32>
  %v14 = linalg.transpose ins(%wu : tensor<16x8xf32>) outs(%v13 : tensor<8x16xf32>) permutation = [1, 0]
  %v15 = tensor.empty() : tensor<4x16xf32>
  %v16 = linalg.fill ins(%c6 : f32) outs(%v15 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v17 = linalg.matmul ins(%v12, %v14 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%v16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
  %v19 = tensor.empty() : tensor<1x4x16xf32>
  %v20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v11, %v18 : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%v19 : tensor<1x4x16xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.mulf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %v21 = tensor.collapse_shape %v20 [[0, 1], [2]] : tensor<1x4x16xf32> into tensor<4x16xf32>
  %v22 = tensor.empty() : tensor<16x8xf32>
  %v23 = linalg.transpose ins(%wd : tensor<8x16xf32>) outs(%v22 : tensor<16x8xf32>) permutation = [1, 0]
  %v24 = tensor.empty() : tensor<4x8xf32>
  %v25 = linalg.fill ins(%c6 : f32) outs(%v24 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v26 = linalg.matmul ins(%v21, %v23 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%v25 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v27 = tensor.expand_shape %v26 [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
  return %v27 : tensor<1x4x8xf32>
}

// -----

// rotate_half RoPE on heads split from a packed projection, tables from
// cos/sin(cat(freqs, freqs)) computed in the graph.
// CHECK-LABEL: func.func @rope(
// CHECK:         %[[R:.*]] = rlx_mir.rope %arg0, %{{.*}}, %{{.*}} head_dim = 8 : tensor<1x4x16xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @rope(%x: tensor<1x4x16xf32>, %pos: tensor<1x4xi64>) -> tensor<1x4x16xf32> {
  %v1 = tensor.expand_shape %pos [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xi64> into tensor<1x4x1xi64>
  %v2 = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %v3 = tensor.empty() : tensor<1x4x4xf32>
  %v4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v1, %v2 : tensor<1x4x1xi64>, tensor<4xf32>) outs(%v3 : tensor<1x4x4xf32>) {
  ^bb0(%in0: i64, %in1: f32, %out: f32):
    %p = arith.sitofp %in0 : i64 to f32
    %r = arith.mulf %p, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4xf32>
  %v5 = tensor.concat dim(2) %v4, %v4 : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %v6 = tensor.empty() : tensor<1x4x8xf32>
  %v7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v5 : tensor<1x4x8xf32>) outs(%v6 : tensor<1x4x8xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = math.cos %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %v8 = tensor.expand_shape %v7 [[0], [1, 2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  %v9 = tensor.empty() : tensor<1x4x8xf32>
  %v10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v5 : tensor<1x4x8xf32>) outs(%v9 : tensor<1x4x8xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = math.sin %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8xf32>
  %v11 = tensor.expand_shape %v10 [[0], [1, 2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  %v12 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  %v13 = tensor.empty() : tensor<1x2x4x8xf32>
  %v14 = linalg.transpose ins(%v12 : tensor<1x4x2x8xf32>) outs(%v13 : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  %v15 = tensor.extract_slice %v14[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %v16 = tensor.empty() : tensor<1x2x4x4xf32>
  %v17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v15 : tensor<1x2x4x4xf32>) outs(%v16 : tensor<1x2x4x4xf32>) {
  ^bb0(%in0: f32, %out: f32):
    %r = arith.negf %in0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %v18 = tensor.extract_slice %v14[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %v19 = tensor.concat dim(3) %v17, %v18 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %v20 = tensor.empty() : tensor<1x2x4x8xf32>
  %v21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v14, %v8 : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%v20 : tensor<1x2x4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.mulf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x8xf32>
  %v22 = tensor.empty() : tensor<1x2x4x8xf32>
  %v23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v19, %v11 : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%v22 : tensor<1x2x4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.mulf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x8xf32>
  %v24 = tensor.empty() : tensor<1x2x4x8xf32>
  %v25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v21, %v23 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%v24 : tensor<1x2x4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %r = arith.addf %in0, %in1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x8xf32>
  %v26 = tensor.empty() : tensor<1x4x2x8xf32>
  %v27 = linalg.transpose ins(%v25 : tensor<1x2x4x8xf32>) outs(%v26 : tensor<1x4x2x8xf32>) permutation = [0, 2, 1, 3]
  %v28 = tensor.collapse_shape %v27 [[0], [1], [2, 3]] : tensor<1x4x2x8xf32> into tensor<1x4x16xf32>
  return %v28 : tensor<1x4x16xf32>
}
