// The Fourier transforms' verifier: located errors naming what is wrong
// (rfft and irfft spell their result type, which the parser then infers).
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @odd_block(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{fft input must be complex in the block layout (a static, even, non-zero last axis: real parts, then imaginary parts), got 3x5}}
  %y = rlx_mir.fft %x axes = [0] : tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

func.func @repeated(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{fft axes must not repeat, got axis -1 twice}}
  %y = rlx_mir.fft %x axes = [1, -1] : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @norm(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{fft norm must be "backward", "forward" or "ortho", got "half"}}
  %y = rlx_mir.fft %x axes = [0] norm = "half" : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @dynamic_axis(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{fft needs a static, non-zero length along axis 0, got ?x2 (logical shape)}}
  %y = rlx_mir.fft %x axes = [0] : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @rfft_n(%x: tensor<3x4xf32>) -> tensor<1x8xf32> {
  // expected-error @+2 {{rfft needs n >= 1 (n, or a static length along axis 0), got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.rfft %x axis = 0 n = 0 : tensor<3x4xf32> -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

func.func @irfft_one_bin(%x: tensor<3x2xf32>) -> tensor<3x0xf32> {
  // expected-error @+2 {{irfft needs n >= 1 (n, or at least 2 bins along axis 1 for the default 2·(bins − 1)), got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.irfft %x axis = 1 : tensor<3x2xf32> -> tensor<3x0xf32>
  return %y : tensor<3x0xf32>
}

// -----

func.func @rfft_axis(%x: tensor<3x4xf32>) -> tensor<3x6xf32> {
  // expected-error @+2 {{rfft axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.rfft %x axis = 2 : tensor<3x4xf32> -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

func.func @stft_reflect(%x: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<5x2xf32> {
  // expected-error @+2 {{stft's reflect padding (n_fft // 2 = 4) must be shorter than the signal, got L = 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.stft %x, %w n_fft = 8 hop_length = 2 center : tensor<4xf32>, tensor<8xf32> -> tensor<5x2xf32>
  return %y : tensor<5x2xf32>
}

// -----

func.func @stft_window(%x: tensor<40xf32>, %w: tensor<9xf32>) -> tensor<5x2xf32> {
  // expected-error @+2 {{stft needs a window [win_length] with 1 <= win_length <= n_fft = 8, got 9}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.stft %x, %w n_fft = 8 hop_length = 2 : tensor<40xf32>, tensor<9xf32> -> tensor<5x2xf32>
  return %y : tensor<5x2xf32>
}

// -----

func.func @istft_hop(%s: tensor<5x6xf32>, %w: tensor<8xf32>) -> tensor<30xf32> {
  // expected-error @+2 {{istft needs 1 <= hop_length <= win_length = 8 (torch's rule: a longer hop leaves samples no frame covers), got 9}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 9 : tensor<5x6xf32>, tensor<8xf32> -> tensor<30xf32>
  return %y : tensor<30xf32>
}

// -----

func.func @istft_bins(%s: tensor<4x6xf32>, %w: tensor<8xf32>) -> tensor<16xf32> {
  // expected-error @+2 {{istft needs a complex input [B?, n_fft // 2 + 1 = 5, 2·frames] (static, at least one frame), got 4x6}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 4 : tensor<4x6xf32>, tensor<8xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func @istft_empty(%s: tensor<5x2xf32>, %w: tensor<8xf32>) -> tensor<1xf32> {
  // expected-error @+2 {{istft of 1 frame(s) with n_fft = 8 and center leaves no samples; pass length}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 4 center : tensor<5x2xf32>, tensor<8xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @istft_length(%s: tensor<5x6xf32>, %w: tensor<8xf32>) -> tensor<1xf32> {
  // expected-error @+2 {{istft needs 1 <= length <= 2^40, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 4 length = 0 : tensor<5x6xf32>, tensor<8xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}

// -----

func.func @istft_hop_window(%s: tensor<5x6xf32>, %w: tensor<4xf32>) -> tensor<18xf32> {
  // expected-error @+2 {{istft needs 1 <= hop_length <= win_length = 4 (torch's rule: a longer hop leaves samples no frame covers), got 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 6 : tensor<5x6xf32>, tensor<4xf32> -> tensor<18xf32>
  return %y : tensor<18xf32>
}
