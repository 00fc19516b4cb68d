// The GPU path's shared-memory FFT kernel: rlx-mir-decompose with
// kernel-ffts leaves whole the transforms with a row form (the last axis, a
// length of prime factors up to 13, 32 KiB of planes), here an rfft of
// Whisper's 400-point frames, an inverse fft of 2048 points and an irfft;
// the others (an fft across axis 0, a prime length 997, a length over the
// shared-memory budget) still decompose. Each kept transform becomes one
// kernel of Stockham passes (mir::fftRows) between two workgroup buffers. Values:
// test/python/test_fft.py on the emulator.
// RUN: rlx-opt %s --rlx-mir-decompose="kernel-ffts=true" | FileCheck %s --check-prefix=KEEP
// RUN: rlx-opt %s --rlx-mir-decompose="kernel-ffts=true" --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu | FileCheck %s --check-prefix=GPU

// KEEP-LABEL: func.func @f(
// KEEP:         rlx_mir.rfft %{{.*}} axis = 1 : tensor<3x400xf32> -> tensor<3x402xf32>
// KEEP:         rlx_mir.fft %{{.*}} axes = [1] inverse norm = "ortho" : tensor<2x4096xf32>
// KEEP:         rlx_mir.irfft %{{.*}} axis = 1 n = 10 : tensor<4x12xf32> -> tensor<4x10xf32>
// KEEP-NOT:     rlx_mir.fft
// KEEP-NOT:     rlx_mir.rfft
// KEEP:         return
// GPU:       gpu.launch_func @f_kernels::@f_0_rfft blocks in (%c3,
// GPU:       gpu.launch_func @f_kernels::@f_1_fft blocks in (%c2,
// GPU:       gpu.launch_func @f_kernels::@f_2_irfft blocks in (%c4,
// GPU-LABEL: gpu.func @f_0_rfft(
// GPU-SAME:    workgroup(%{{.*}} : memref<2x400xf32, #gpu.address_space<workgroup>> {{.*}}, %{{.*}} : memref<2x400xf32, #gpu.address_space<workgroup>>
// GPU:         gpu.barrier
// GPU:         memref.get_global @__rlx_constant : memref<2x400xf32>
// GPU-LABEL: gpu.func @f_1_fft(
// GPU-LABEL: gpu.func @f_2_irfft(
func.func @f(%a: tensor<3x400xf32> {rlx.input = "a"}, %b: tensor<2x4096xf32> {rlx.input = "b"},
             %c: tensor<4x12xf32> {rlx.input = "c"}, %d: tensor<6x4xf32> {rlx.input = "d"},
             %e: tensor<2x997xf32> {rlx.input = "e"}, %g: tensor<2x4096xf32> {rlx.input = "g"})
    -> (tensor<3x402xf32>, tensor<2x4096xf32>, tensor<4x10xf32>, tensor<6x4xf32>,
        tensor<2x998xf32>, tensor<2x4098xf32>) {
  %0 = rlx_mir.rfft %a axis = 1 : tensor<3x400xf32> -> tensor<3x402xf32>
  %1 = rlx_mir.fft %b axes = [1] inverse norm = "ortho" : tensor<2x4096xf32>
  %2 = rlx_mir.irfft %c axis = 1 n = 10 : tensor<4x12xf32> -> tensor<4x10xf32>
  %3 = rlx_mir.fft %d axes = [0] : tensor<6x4xf32>
  %4 = rlx_mir.rfft %e axis = 1 : tensor<2x997xf32> -> tensor<2x998xf32>
  %5 = rlx_mir.rfft %g axis = 1 : tensor<2x4096xf32> -> tensor<2x4098xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3x402xf32>, tensor<2x4096xf32>, tensor<4x10xf32>,
      tensor<6x4xf32>, tensor<2x998xf32>, tensor<2x4098xf32>
}
