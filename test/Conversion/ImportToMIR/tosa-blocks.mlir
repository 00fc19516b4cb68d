// Each block kind written as torch-mlir's TorchToTosa writes it, raised to
// rlx_mir and recognized (rlx-import-to-mir), then fused (rlx-mir-fuse):
// rms_norm (pow/reduce_sum/mul 1/H/add/rsqrt/mul), softmax, attention with
// GQA, SwiGLU, RoPE; embedding is in import-embedding.mlir.
// RUN: rlx-opt %s --rlx-import-to-mir --rlx-mir-fuse -split-input-file | FileCheck %s
// RUN: rlx-opt %s --rlx-import-to-mir -split-input-file | FileCheck %s --check-prefix=RAISED
// RAISED-NOT: tosa.

// CHECK-LABEL: func.func @rms_norm(
// CHECK:         %[[N:.*]] = rlx_mir.rms_norm %arg0, %{{.*}} eps = 9.99{{[0-9]*}}E-7 : tensor<1x4x8xf32>, tensor<8xf32>
// CHECK-NEXT:    return %[[N]]
func.func @rms_norm(%x: tensor<1x4x8xf32>, %w: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %t1 = "tosa.const"() <{values = dense<2.000000000e+00> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %t2 = tosa.pow %x, %t1 : (tensor<1x4x8xf32>, tensor<1x1x1xf32>) -> tensor<1x4x8xf32>
  %t3 = tosa.reduce_sum %t2 {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %t4 = "tosa.const"() <{values = dense<1.250000000e-01> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t5 = tosa.mul %t3, %t4, %shift : (tensor<1x4x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x1xf32>
  %t6 = "tosa.const"() <{values = dense<1.000000000e-06> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %t7 = tosa.add %t5, %t6 : (tensor<1x4x1xf32>, tensor<1x1x1xf32>) -> tensor<1x4x1xf32>
  %t8 = tosa.rsqrt %t7 : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %t9 = tosa.mul %x, %t8, %shift : (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %s10 = tosa.const_shape {values = dense<[1, 1, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t11 = tosa.reshape %w, %s10 : (tensor<8xf32>, !tosa.shape<3>) -> tensor<1x1x8xf32>
  %t12 = tosa.mul %t9, %t11, %shift : (tensor<1x4x8xf32>, tensor<1x1x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  return %t12 : tensor<1x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[S:.*]] = rlx_mir.softmax %arg0 axis = 3 : tensor<1x2x4x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @softmax(%s: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %t1 = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x1xf32>
  %t2 = tosa.sub %s, %t1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) -> tensor<1x2x4x4xf32>
  %t3 = tosa.exp %t2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t4 = tosa.reduce_sum %t3 {axis = 3 : i32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x1xf32>
  %t5 = tosa.reciprocal %t4 : (tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t6 = tosa.mul %t3, %t5, %shift : (tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>, tensor<1xi8>) -> tensor<1x2x4x4xf32>
  return %t6 : tensor<1x2x4x4xf32>
}

// -----

// GQA: K/V heads repeated by reshape → tile/broadcast → reshape, an additive
// causal mask constant (torch.finfo(float32).min above the diagonal).
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %[[O:.*]] = rlx_mir.attention %arg0, %arg1, %arg2 heads = 4, kv_heads = 2, head_dim = 4 causal
// CHECK-NEXT:    return %[[O]]
func.func @attention(%q: tensor<1x5x16xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> tensor<1x5x16xf32> {
  %s1 = tosa.const_shape {values = dense<[1, 5, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t2 = tosa.reshape %q, %s1 : (tensor<1x5x16xf32>, !tosa.shape<4>) -> tensor<1x5x4x4xf32>
  %t3 = tosa.transpose %t2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x5x4x4xf32>) -> tensor<1x4x5x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 5, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t5 = tosa.reshape %k, %s4 : (tensor<1x5x8xf32>, !tosa.shape<4>) -> tensor<1x5x2x4xf32>
  %t6 = tosa.transpose %t5 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %s7 = tosa.const_shape {values = dense<[1, 2, 1, 5, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t8 = tosa.reshape %t6, %s7 : (tensor<1x2x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x1x5x4xf32>
  %s9 = tosa.const_shape {values = dense<[1, 1, 2, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t10 = tosa.tile %t8, %s9 : (tensor<1x2x1x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x2x5x4xf32>
  %s11 = tosa.const_shape {values = dense<[1, 4, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t12 = tosa.reshape %t10, %s11 : (tensor<1x2x2x5x4xf32>, !tosa.shape<4>) -> tensor<1x4x5x4xf32>
  %s13 = tosa.const_shape {values = dense<[1, 5, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t14 = tosa.reshape %v, %s13 : (tensor<1x5x8xf32>, !tosa.shape<4>) -> tensor<1x5x2x4xf32>
  %t15 = tosa.transpose %t14 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %s16 = tosa.const_shape {values = dense<[1, 2, 1, 5, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t17 = tosa.reshape %t15, %s16 : (tensor<1x2x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x1x5x4xf32>
  %s18 = tosa.const_shape {values = dense<[1, 1, 2, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t19 = tosa.tile %t17, %s18 : (tensor<1x2x1x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x2x5x4xf32>
  %s20 = tosa.const_shape {values = dense<[1, 4, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t21 = tosa.reshape %t19, %s20 : (tensor<1x2x2x5x4xf32>, !tosa.shape<4>) -> tensor<1x4x5x4xf32>
  %t22 = tosa.transpose %t12 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x5x4xf32>) -> tensor<1x4x4x5xf32>
  %s23 = tosa.const_shape {values = dense<[4, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t24 = tosa.reshape %t3, %s23 : (tensor<1x4x5x4xf32>, !tosa.shape<3>) -> tensor<4x5x4xf32>
  %s25 = tosa.const_shape {values = dense<[4, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t26 = tosa.reshape %t22, %s25 : (tensor<1x4x4x5xf32>, !tosa.shape<3>) -> tensor<4x4x5xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t27 = tosa.matmul %t24, %t26, %zp, %zp : (tensor<4x5x4xf32>, tensor<4x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x5x5xf32>
  %s28 = tosa.const_shape {values = dense<[1, 4, 5, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t29 = tosa.reshape %t27, %s28 : (tensor<4x5x5xf32>, !tosa.shape<4>) -> tensor<1x4x5x5xf32>
  %t30 = "tosa.const"() <{values = dense<5.000000000e-01> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t31 = tosa.mul %t29, %t30, %shift : (tensor<1x4x5x5xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x5x5xf32>
  %t32 = "tosa.const"() <{values = dense<[[[[0.000000000e+00, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, -3.402823466e+38, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, -3.402823466e+38, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, -3.402823466e+38], [0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00, 0.000000000e+00]]]]> : tensor<1x1x5x5xf32>}> : () -> tensor<1x1x5x5xf32>
  %t33 = tosa.add %t31, %t32 : (tensor<1x4x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x4x5x5xf32>
  %t34 = tosa.reduce_max %t33 {axis = 3 : i32} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x1xf32>
  %t35 = tosa.sub %t33, %t34 : (tensor<1x4x5x5xf32>, tensor<1x4x5x1xf32>) -> tensor<1x4x5x5xf32>
  %t36 = tosa.exp %t35 : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %t37 = tosa.reduce_sum %t36 {axis = 3 : i32} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x1xf32>
  %t38 = tosa.reciprocal %t37 : (tensor<1x4x5x1xf32>) -> tensor<1x4x5x1xf32>
  %t39 = tosa.mul %t36, %t38, %shift : (tensor<1x4x5x5xf32>, tensor<1x4x5x1xf32>, tensor<1xi8>) -> tensor<1x4x5x5xf32>
  %s40 = tosa.const_shape {values = dense<[4, 5, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t41 = tosa.reshape %t39, %s40 : (tensor<1x4x5x5xf32>, !tosa.shape<3>) -> tensor<4x5x5xf32>
  %s42 = tosa.const_shape {values = dense<[4, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t43 = tosa.reshape %t21, %s42 : (tensor<1x4x5x4xf32>, !tosa.shape<3>) -> tensor<4x5x4xf32>
  %t44 = tosa.matmul %t41, %t43, %zp, %zp : (tensor<4x5x5xf32>, tensor<4x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x5x4xf32>
  %s45 = tosa.const_shape {values = dense<[1, 4, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t46 = tosa.reshape %t44, %s45 : (tensor<4x5x4xf32>, !tosa.shape<4>) -> tensor<1x4x5x4xf32>
  %t47 = tosa.transpose %t46 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x4x5x4xf32>) -> tensor<1x5x4x4xf32>
  %s48 = tosa.const_shape {values = dense<[1, 5, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t49 = tosa.reshape %t47, %s48 : (tensor<1x5x4x4xf32>, !tosa.shape<3>) -> tensor<1x5x16xf32>
  return %t49 : tensor<1x5x16xf32>
}

// -----

// CHECK-LABEL: func.func @swiglu(
// CHECK:         %[[GU:.*]] = rlx_mir.concat %arg1, %arg2 axis = 0
// CHECK:         %[[H:.*]] = rlx_mir.fused_matmul %arg0, %[[GU]] transpose_b activation {{ *}}silu glu
// CHECK:         rlx_mir.matmul %[[H]], %arg3 transpose_b
func.func @swiglu(%x: tensor<1x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>) -> tensor<1x4x8xf32> {
  %t1 = tosa.transpose %wg {perms = array<i32: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %s2 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t3 = tosa.reshape %t1, %s2 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t4 = tosa.matmul %x, %t3, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>
  %t5 = tosa.sigmoid %t4 : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t6 = tosa.mul %t4, %t5, %shift : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1xi8>) -> tensor<1x4x16xf32>
  %t7 = tosa.transpose %wu {perms = array<i32: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %s8 = tosa.const_shape {values = dense<[1, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t9 = tosa.reshape %t7, %s8 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %t10 = tosa.matmul %x, %t9, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>
  %t11 = tosa.mul %t6, %t10, %shift : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1xi8>) -> tensor<1x4x16xf32>
  %t12 = tosa.transpose %wd {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %s13 = tosa.const_shape {values = dense<[1, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t14 = tosa.reshape %t12, %s13 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %t15 = tosa.matmul %t11, %t14, %zp, %zp : (tensor<1x4x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  return %t15 : tensor<1x4x8xf32>
}

// -----

// rotate_half RoPE on heads split from a packed projection, tables from
// cos/sin(cat(freqs, freqs)) computed in the graph.
// CHECK-LABEL: func.func @rope(
// CHECK:         %[[R:.*]] = rlx_mir.rope %arg0, %{{.*}}, %{{.*}} head_dim = 8 : tensor<1x4x16xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @rope(%x: tensor<1x4x16xf32>, %pos: tensor<1x4xi64>) -> tensor<1x4x16xf32> {
  %t1 = tosa.cast %pos : (tensor<1x4xi64>) -> tensor<1x4xf32>
  %s2 = tosa.const_shape {values = dense<[1, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t3 = tosa.reshape %t1, %s2 : (tensor<1x4xf32>, !tosa.shape<3>) -> tensor<1x4x1xf32>
  %t4 = "tosa.const"() <{values = dense<[[[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]]]> : tensor<1x1x4xf32>}> : () -> tensor<1x1x4xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t5 = tosa.mul %t3, %t4, %shift : (tensor<1x4x1xf32>, tensor<1x1x4xf32>, tensor<1xi8>) -> tensor<1x4x4xf32>
  %t6 = tosa.concat %t5, %t5 {axis = 2 : i32} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %t7 = tosa.cos %t6 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %s8 = tosa.const_shape {values = dense<[1, 1, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t9 = tosa.reshape %t7, %s8 : (tensor<1x4x8xf32>, !tosa.shape<4>) -> tensor<1x1x4x8xf32>
  %t10 = tosa.sin %t6 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %s11 = tosa.const_shape {values = dense<[1, 1, 4, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t12 = tosa.reshape %t10, %s11 : (tensor<1x4x8xf32>, !tosa.shape<4>) -> tensor<1x1x4x8xf32>
  %s13 = tosa.const_shape {values = dense<[1, 4, 2, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t14 = tosa.reshape %x, %s13 : (tensor<1x4x16xf32>, !tosa.shape<4>) -> tensor<1x4x2x8xf32>
  %t15 = tosa.transpose %t14 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x4x2x8xf32>) -> tensor<1x2x4x8xf32>
  %t16 = tosa.mul %t15, %t9, %shift : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1xi8>) -> tensor<1x2x4x8xf32>
  %s17 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s18 = tosa.const_shape {values = dense<[1, 2, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t19 = tosa.slice %t15, %s17, %s18 : (tensor<1x2x4x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x4x4xf32>
  %s20 = tosa.const_shape {values = dense<[0, 0, 0, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s21 = tosa.const_shape {values = dense<[1, 2, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t22 = tosa.slice %t15, %s20, %s21 : (tensor<1x2x4x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x4x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t23 = tosa.negate %t22, %zp, %zp : (tensor<1x2x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4x4xf32>
  %t24 = tosa.concat %t23, %t19 {axis = 3 : i32} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %t25 = tosa.mul %t24, %t12, %shift : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1xi8>) -> tensor<1x2x4x8xf32>
  %t26 = tosa.add %t16, %t25 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %t27 = tosa.transpose %t26 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x2x4x8xf32>) -> tensor<1x4x2x8xf32>
  %s28 = tosa.const_shape {values = dense<[1, 4, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t29 = tosa.reshape %t27, %s28 : (tensor<1x4x2x8xf32>, !tosa.shape<3>) -> tensor<1x4x16xf32>
  return %t29 : tensor<1x4x16xf32>
}
