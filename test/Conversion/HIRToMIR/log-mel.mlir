// log_mel_spectrogram lowers to rlx_mir primitives: the zero padding to
// n_samples (or the trim), stft with the Hann window, the power spectrum
// without the last frame, the mel matmul, log10 and the per-item clamp.
// RUN: rlx-opt %s --convert-rlx-hir-to-mir --split-input-file | FileCheck %s

// CHECK-LABEL: func @pad
// CHECK: %[[Z:.*]] = rlx_mir.constant dense<0.000000e+00> : tensor<2x1200xf32>
// CHECK: %[[X:.*]] = rlx_mir.concat %{{.*}}, %[[Z]] axis = 1
// CHECK: %[[S:.*]] = rlx_mir.stft %[[X]], %{{.*}} n_fft = 400 hop_length = 160 center : tensor<2x2000xf32>, tensor<400xf32> -> tensor<2x201x26xf32>
// CHECK: %[[SQ:.*]] = rlx_mir.mul %[[S]], %[[S]]
// CHECK: %[[RE:.*]] = rlx_mir.slice %[[SQ]] offsets [0, 0, 0] sizes [-1, -1, 12]
// CHECK: %[[IM:.*]] = rlx_mir.slice %[[SQ]] offsets [0, 0, 13] sizes [-1, -1, 12]
// CHECK: %[[P:.*]] = rlx_mir.add %[[RE]], %[[IM]]
// CHECK: %[[M:.*]] = rlx_mir.matmul %{{.*}}, %[[P]] : tensor<80x201xf32>, tensor<2x201x12xf32>
// CHECK: rlx_mir.max %[[M]]
// CHECK: rlx_mir.log
// CHECK: rlx_mir.reduce max %{{.*}} axes = [1, 2] keep_dims : tensor<2x80x12xf32>
func.func @pad(%x: tensor<2x800xf32>) -> tensor<2x80x12xf32> {
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 n_samples = 2000 : tensor<2x800xf32>
  return %f : tensor<2x80x12xf32>
}

// -----

// A longer signal is trimmed; bf16 samples are computed in f32.
// CHECK-LABEL: func @trim_bf16
// CHECK: rlx_mir.cast %{{.*}} : tensor<1x3000xbf16> to tensor<1x3000xf32>
// CHECK: rlx_mir.slice %{{.*}} offsets [0, 0] sizes [-1, 1600]
// CHECK: rlx_mir.stft
// CHECK: rlx_mir.cast %{{.*}} : tensor<1x80x10xf32> to tensor<1x80x10xbf16>
// CHECK: rlx_mir.reshape %{{.*}} [80, 10] : tensor<1x80x10xbf16>
func.func @trim_bf16(%x: tensor<3000xbf16>) -> tensor<80x10xbf16> {
  %f = rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 n_mels = 80 sampling_rate = 16000 n_samples = 1600 : tensor<3000xbf16>
  return %f : tensor<80x10xbf16>
}
