// Round trips of every rlx_mir op: custom form, generic form, and bytecode.
// RUN: rlx-opt %s | rlx-opt | FileCheck %s
// RUN: rlx-opt %s --mlir-print-op-generic | rlx-opt | FileCheck %s
// RUN: rlx-opt %s -emit-bytecode | rlx-opt | FileCheck %s

// CHECK-LABEL: func @constant
func.func @constant() -> (tensor<4xf32>, tensor<2x2xi32>) {
  // CHECK: rlx_mir.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = rlx_mir.constant dense<1.0> : tensor<4xf32>
  // CHECK: rlx_mir.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  %1 = rlx_mir.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  return %0, %1 : tensor<4xf32>, tensor<2x2xi32>
}

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<2x?x8xf32>, %b: tensor<8xf32>, %i: tensor<4xi64>) -> tensor<2x?x8xf32> {
  // CHECK: rlx_mir.add %{{.*}}, %{{.*}} : tensor<2x?x8xf32>, tensor<8xf32>
  %0 = rlx_mir.add %a, %b : tensor<2x?x8xf32>, tensor<8xf32>
  // CHECK: rlx_mir.sub
  %1 = rlx_mir.sub %0, %b : tensor<2x?x8xf32>, tensor<8xf32>
  // CHECK: rlx_mir.mul
  %2 = rlx_mir.mul %b, %1 : tensor<8xf32>, tensor<2x?x8xf32>
  // CHECK: rlx_mir.div
  %3 = rlx_mir.div %2, %a : tensor<2x?x8xf32>, tensor<2x?x8xf32>
  // CHECK: rlx_mir.max
  %4 = rlx_mir.max %3, %a : tensor<2x?x8xf32>, tensor<2x?x8xf32>
  // CHECK: rlx_mir.min
  %5 = rlx_mir.min %4, %a : tensor<2x?x8xf32>, tensor<2x?x8xf32>
  // CHECK: rlx_mir.pow
  %6 = rlx_mir.pow %5, %b : tensor<2x?x8xf32>, tensor<8xf32>
  // Integer arithmetic (positions).
  // CHECK: rlx_mir.add %{{.*}}, %{{.*}} : tensor<4xi64>, tensor<4xi64>
  %7 = rlx_mir.add %i, %i : tensor<4xi64>, tensor<4xi64>
  return %6 : tensor<2x?x8xf32>
}

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // CHECK: rlx_mir.neg
  %0 = rlx_mir.neg %x : tensor<4x?xf32>
  // CHECK: rlx_mir.exp
  %1 = rlx_mir.exp %0 : tensor<4x?xf32>
  // CHECK: rlx_mir.log
  %2 = rlx_mir.log %1 : tensor<4x?xf32>
  // CHECK: rlx_mir.sqrt
  %3 = rlx_mir.sqrt %2 : tensor<4x?xf32>
  // CHECK: rlx_mir.rsqrt
  %4 = rlx_mir.rsqrt %3 : tensor<4x?xf32>
  // CHECK: rlx_mir.reciprocal
  %5 = rlx_mir.reciprocal %4 : tensor<4x?xf32>
  // CHECK: rlx_mir.abs
  %6 = rlx_mir.abs %5 : tensor<4x?xf32>
  // CHECK: rlx_mir.tanh
  %7 = rlx_mir.tanh %6 : tensor<4x?xf32>
  // CHECK: rlx_mir.sigmoid
  %8 = rlx_mir.sigmoid %7 : tensor<4x?xf32>
  // CHECK: rlx_mir.silu
  %9 = rlx_mir.silu %8 : tensor<4x?xf32>
  // CHECK: rlx_mir.gelu %
  %10 = rlx_mir.gelu %9 : tensor<4x?xf32>
  // CHECK: rlx_mir.gelu_tanh
  %11 = rlx_mir.gelu_tanh %10 : tensor<4x?xf32>
  // CHECK: rlx_mir.relu
  %12 = rlx_mir.relu %11 : tensor<4x?xf32>
  // CHECK: rlx_mir.erf
  %13 = rlx_mir.erf %12 : tensor<4x?xf32>
  // CHECK: rlx_mir.sin
  %14 = rlx_mir.sin %13 : tensor<4x?xf32>
  // CHECK: rlx_mir.cos
  %15 = rlx_mir.cos %14 : tensor<4x?xf32>
  return %15 : tensor<4x?xf32>
}

// CHECK-LABEL: func @cast
func.func @cast(%x: tensor<4x?xbf16>, %i: tensor<8xi64>) -> (tensor<4x?xf32>, tensor<4x?xf8E4M3FN>, tensor<8xf32>) {
  // CHECK: rlx_mir.cast %{{.*}} : tensor<4x?xbf16> to tensor<4x?xf32>
  %0 = rlx_mir.cast %x : tensor<4x?xbf16> to tensor<4x?xf32>
  // CHECK: rlx_mir.cast %{{.*}} : tensor<4x?xf32> to tensor<4x?xf8E4M3FN>
  %1 = rlx_mir.cast %0 : tensor<4x?xf32> to tensor<4x?xf8E4M3FN>
  // CHECK: rlx_mir.cast %{{.*}} : tensor<8xi64> to tensor<8xf32>
  %2 = rlx_mir.cast %i : tensor<8xi64> to tensor<8xf32>
  return %0, %1, %2 : tensor<4x?xf32>, tensor<4x?xf8E4M3FN>, tensor<8xf32>
}

// CHECK-LABEL: func @matmul
func.func @matmul(%x: tensor<1x?x2048xf32>, %w: tensor<512x2048xf32>, %a: tensor<2x1x8x4xf32>, %b: tensor<3x4x5xf32>)
    -> (tensor<1x?x512xf32>, tensor<2x3x8x5xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: rlx_mir.matmul %{{.*}}, %{{.*}} transpose_b : tensor<1x?x2048xf32>, tensor<512x2048xf32>
  %0 = rlx_mir.matmul %x, %w transpose_b : tensor<1x?x2048xf32>, tensor<512x2048xf32>
  // Batch dims broadcast: [2, 1] with [3] gives [2, 3].
  // CHECK: rlx_mir.matmul %{{.*}}, %{{.*}} : tensor<2x1x8x4xf32>, tensor<3x4x5xf32>
  %1 = rlx_mir.matmul %a, %b : tensor<2x1x8x4xf32>, tensor<3x4x5xf32>
  // CHECK: rlx_mir.matmul %{{.*}}, %{{.*}} transpose_a : tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>
  %2 = rlx_mir.matmul %a, %a transpose_a : tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>
  %3 = rlx_mir.broadcast %2 [2, 3, 4, 4] : tensor<2x1x4x4xf32>
  return %0, %1, %3 : tensor<1x?x512xf32>, tensor<2x3x8x5xf32>, tensor<2x3x4x4xf32>
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<2x?x8xf32>, %g: tensor<8xf32>) -> (tensor<2x?x1xf32>, tensor<?xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>) {
  // CHECK: rlx_mir.reduce mean %{{.*}} axes = [-1] keep_dims : tensor<2x?x8xf32>
  %0 = rlx_mir.reduce mean %x axes = [-1] keep_dims : tensor<2x?x8xf32>
  // CHECK: rlx_mir.reduce max %{{.*}} axes = [0, 2] : tensor<2x?x8xf32>
  %1 = rlx_mir.reduce max %x axes = [0, 2] : tensor<2x?x8xf32>
  // CHECK: rlx_mir.softmax %{{.*}} axis = -1 : tensor<2x?x8xf32>
  %2 = rlx_mir.softmax %x axis = -1 : tensor<2x?x8xf32>
  // CHECK: rlx_mir.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<2x?x8xf32>, tensor<8xf32>
  %3 = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<2x?x8xf32>, tensor<8xf32>
  // CHECK: rlx_mir.rms_norm %{{.*}} eps = 1.000000e-05 : tensor<2x?x8xf32>
  %4 = rlx_mir.rms_norm %x eps = 1.0e-05 : tensor<2x?x8xf32>
  return %0, %1, %2, %3, %4 : tensor<2x?x1xf32>, tensor<?xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<1x37x896xf32>, %k: tensor<1x37x128xf32>, %v: tensor<1x37x128xf32>, %m: tensor<1x37x37xf32>)
    -> (tensor<1x37x896xf32>, tensor<1x37x896xf32>) {
  // CHECK: rlx_mir.attention %{{.*}}, %{{.*}}, %{{.*}} heads = 14, kv_heads = 2, head_dim = 64 causal :
  %0 = rlx_mir.attention %q, %k, %v heads = 14, kv_heads = 2, head_dim = 64 causal : tensor<1x37x896xf32>, tensor<1x37x128xf32>, tensor<1x37x128xf32>
  // CHECK: rlx_mir.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x37x37xf32>) heads = 14, kv_heads = 2, head_dim = 64 :
  %1 = rlx_mir.attention %q, %k, %v mask(%m : tensor<1x37x37xf32>) heads = 14, kv_heads = 2, head_dim = 64 : tensor<1x37x896xf32>, tensor<1x37x128xf32>, tensor<1x37x128xf32>
  return %0, %1 : tensor<1x37x896xf32>, tensor<1x37x896xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<1x?x2048xf32>, %p: tensor<1x16x512xf32>, %n: tensor<1x1x512xf32>, %s: tensor<?xf32>)
    -> (tensor<1x32x?x64xf32>, tensor<1x?x512xf32>, tensor<1x17x512xf32>, tensor<2x?x2048xf32>, tensor<1x?x8xf32>) {
  // CHECK: rlx_mir.reshape %{{.*}} [1, -1, 32, 64] : tensor<1x?x2048xf32>
  %0 = rlx_mir.reshape %x [1, -1, 32, 64] : tensor<1x?x2048xf32>
  // CHECK: rlx_mir.transpose %{{.*}} [0, 2, 1, 3] : tensor<1x?x32x64xf32>
  %1 = rlx_mir.transpose %0 [0, 2, 1, 3] : tensor<1x?x32x64xf32>
  // CHECK: rlx_mir.slice %{{.*}} offsets [0, 0, 1536] sizes [-1, -1, 512] strides [1, 1, 1] : tensor<1x?x2048xf32>
  %2 = rlx_mir.slice %x offsets [0, 0, 1536] sizes [-1, -1, 512] strides [1, 1, 1] : tensor<1x?x2048xf32>
  // CHECK: rlx_mir.concat %{{.*}}, %{{.*}} axis = 1 : tensor<1x16x512xf32>, tensor<1x1x512xf32>
  %3 = rlx_mir.concat %p, %n axis = 1 : tensor<1x16x512xf32>, tensor<1x1x512xf32>
  // CHECK: rlx_mir.broadcast %{{.*}} [2, -1, 2048] : tensor<1x?x2048xf32>
  %4 = rlx_mir.broadcast %x [2, -1, 2048] : tensor<1x?x2048xf32>
  // L4: only the middle dim is dynamic.
  // CHECK: rlx_mir.reshape %{{.*}} [1, -1, 8] : tensor<?xf32>
  %5 = rlx_mir.reshape %s [1, -1, 8] : tensor<?xf32>
  return %1, %2, %3, %4, %5 : tensor<1x32x?x64xf32>, tensor<1x?x512xf32>, tensor<1x17x512xf32>, tensor<2x?x2048xf32>, tensor<1x?x8xf32>
}

// CHECK-LABEL: func @more_primitives
func.func @more_primitives(%m: tensor<4x4xi1>, %s: tensor<1x2x4x4xf32>, %x: tensor<1x?x768xf32>, %g: tensor<768xf32>,
                           %table: tensor<50257x768xf32>, %ids: tensor<1x?xi64>, %q: tensor<1x?x2048xf32>, %c: tensor<?x32xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<1x?x2048xf32>, tensor<1x2x4x4xf32>) {
  %ninf = rlx_mir.constant dense<0xFF800000> : tensor<f32>
  // CHECK: rlx_mir.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>
  %0 = rlx_mir.select %m, %s, %ninf : tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>
  // CHECK: rlx_mir.layer_norm %{{.*}} weight(%{{.*}} : tensor<768xf32>) bias(%{{.*}} : tensor<768xf32>) eps = 1.000000e-05 : tensor<1x?x768xf32>
  %1 = rlx_mir.layer_norm %x weight(%g : tensor<768xf32>) bias(%g : tensor<768xf32>) eps = 1.0e-05 : tensor<1x?x768xf32>
  // CHECK: rlx_mir.residual_rms_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<768xf32>
  %2:2 = rlx_mir.residual_rms_norm %x, %1, %g eps = 1.0e-05 : tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<768xf32>
  // CHECK: rlx_mir.gather %{{.*}}[%{{.*}}] : tensor<50257x768xf32>, tensor<1x?xi64>
  %3 = rlx_mir.gather %table[%ids] : tensor<50257x768xf32>, tensor<1x?xi64>
  // CHECK: rlx_mir.rope %{{.*}}, %{{.*}}, %{{.*}} head_dim = 64 style gptj : tensor<1x?x2048xf32>, tensor<?x32xf32>, tensor<?x32xf32>
  %4 = rlx_mir.rope %q, %c, %c head_dim = 64 style gptj : tensor<1x?x2048xf32>, tensor<?x32xf32>, tensor<?x32xf32>
  // CHECK: rlx_mir.causal_mask %{{.*}} window = 2 : tensor<1x2x4x4xf32>
  %5 = rlx_mir.causal_mask %s window = 2 : tensor<1x2x4x4xf32>
  return %0, %2#0, %2#1, %3, %4, %5 : tensor<1x2x4x4xf32>, tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<1x?x2048xf32>, tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func @fused_matmul
func.func @fused_matmul(%x: tensor<1x?x2048xf32>, %w: tensor<3072x2048xf32>, %g: tensor<2048xf32>, %hn: tensor<40x64xf32>,
                        %c: tensor<?x32xf32>, %wi: tensor<2048x16384xf32>, %b: tensor<16384xf32>, %r: tensor<1x?x8192xf32>)
    -> (tensor<1x?x3072xf32>, tensor<1x?x8192xf32>) {
  // CHECK: rlx_mir.fused_matmul %{{.*}}, %{{.*}} transpose_b norm rms_norm eps = 1.000000e-05 norm_weight(%{{.*}} : tensor<2048xf32>) head_norm(%{{.*}} : tensor<40x64xf32>) head_norm_eps = 9.9999999999999995E-7 rope(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x32xf32>) rope_heads = 40 head_dim = 64 : tensor<1x?x2048xf32>, tensor<3072x2048xf32>
  %0 = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : tensor<2048xf32>)
      head_norm(%hn : tensor<40x64xf32>) head_norm_eps = 1.0e-06
      rope(%c, %c : tensor<?x32xf32>, tensor<?x32xf32>) rope_heads = 40 head_dim = 64 : tensor<1x?x2048xf32>, tensor<3072x2048xf32>
  // CHECK: rlx_mir.fused_matmul %{{.*}}, %{{.*}} norm layer_norm eps = 1.000000e-05 norm_weight(%{{.*}} : tensor<2048xf32>) norm_bias(%{{.*}} : tensor<2048xf32>) bias(%{{.*}} : tensor<16384xf32>) activation gelu glu residual(%{{.*}} : tensor<1x?x8192xf32>) : tensor<1x?x2048xf32>, tensor<2048x16384xf32>
  %1 = rlx_mir.fused_matmul %x, %wi norm layer_norm eps = 1.0e-05 norm_weight(%g : tensor<2048xf32>) norm_bias(%g : tensor<2048xf32>)
      bias(%b : tensor<16384xf32>) activation gelu glu residual(%r : tensor<1x?x8192xf32>) : tensor<1x?x2048xf32>, tensor<2048x16384xf32>
  return %0, %1 : tensor<1x?x3072xf32>, tensor<1x?x8192xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%p: tensor<?x1xf32>, %f: tensor<32xf32>) -> (tensor<?x32xf32>, tensor<?x32xbf16>) {
  // CHECK: rlx_mir.elementwise ins(%{{.*}}, %{{.*}} : tensor<?x1xf32>, tensor<32xf32>) -> tensor<?x32xf32>, tensor<?x32xbf16> {
  // CHECK: rlx_mir.yield %{{.*}}, %{{.*}} : f32, bf16
  %0:2 = rlx_mir.elementwise ins(%p, %f : tensor<?x1xf32>, tensor<32xf32>) -> tensor<?x32xf32>, tensor<?x32xbf16> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.truncf %m : f32 to bf16
    rlx_mir.yield %m, %t : f32, bf16
  }
  return %0#0, %0#1 : tensor<?x32xf32>, tensor<?x32xbf16>
}
