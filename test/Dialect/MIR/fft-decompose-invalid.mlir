// What rlx-mir-decompose refuses with a located error instead of building:
// an stft whose frame index table would pass 2^28 entries, an istft whose
// constant window's overlap-add envelope vanishes inside the result.
// RUN: rlx-opt %s -split-input-file --rlx-mir-decompose -verify-diagnostics

func.func @stft_table(%x: tensor<300000000xf32>, %w: tensor<16xf32>) -> tensor<9x599999970xf32> {
  // expected-error @+1 {{stft: 299999985 frames of n_fft = 16 make a frame index table over 2^28 entries}}
  %y = rlx_mir.stft %x, %w n_fft = 16 hop_length = 1 : tensor<300000000xf32>, tensor<16xf32> -> tensor<9x599999970xf32>
  return %y : tensor<9x599999970xf32>
}

// -----

func.func @istft_envelope(%s: tensor<3x6xf32>) -> tensor<8xf32> {
  %w = rlx_mir.constant dense<[1.0, 1.0, 0.0, 0.0]> : tensor<4xf32>
  // expected-error @+1 {{istft: the window's overlap-add envelope is 0 at output sample 6 (torch requires at least 1e-11: the signal there cannot be recovered)}}
  %y = rlx_mir.istft %s, %w n_fft = 4 hop_length = 2 : tensor<3x6xf32>, tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
