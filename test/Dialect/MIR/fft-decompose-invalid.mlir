// What rlx-mir-decompose refuses with a located error instead of building:
// an stft whose frame index table would pass 2^28 entries.
// RUN: rlx-opt %s --rlx-mir-decompose -verify-diagnostics

func.func @stft_table(%x: tensor<300000000xf32>, %w: tensor<16xf32>) -> tensor<9x599999970xf32> {
  // expected-error @+1 {{stft: 299999985 frames of n_fft = 16 make a frame index table over 2^28 entries}}
  %y = rlx_mir.stft %x, %w n_fft = 16 hop_length = 1 : tensor<300000000xf32>, tensor<16xf32> -> tensor<9x599999970xf32>
  return %y : tensor<9x599999970xf32>
}
