// rlx_mir.fft, rfft and irfft: the ops round-trip; rlx-mir-decompose
// expands them into their chain (dense DFT matmuls on the realified planes,
// twiddles between radix stages), leaving dynamic shapes to the linalg
// lowering; rlx-mir-grad differentiates them as transforms. Values:
// test/python/test_fft.py.
// RUN: rlx-opt %s -split-input-file | rlx-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: rlx-opt %s -split-input-file --rlx-mir-decompose | FileCheck %s --check-prefix=DEC
// RUN: rlx-opt %s -split-input-file --rlx-mir-decompose="ops=rlx_mir.rfft" | FileCheck %s --check-prefix=ONLY

// ROUND-LABEL: func.func @fft2
// ROUND: rlx_mir.fft %{{.*}} axes = [0, 1] inverse norm = "ortho" : tensor<4x16xf32>
// DEC-LABEL: func.func @fft2
// DEC-NOT: rlx_mir.fft
// DEC: rlx_mir.matmul
// DEC: return
// ONLY-LABEL: func.func @fft2
// ONLY: rlx_mir.fft
func.func @fft2(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = rlx_mir.fft %x axes = [0, 1] inverse norm = "ortho" : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A 96-point transform: one radix-32 stage over 3-point transforms, with
// the twiddles between them.
// ROUND-LABEL: func.func @rfft96
// ROUND: rlx_mir.rfft %{{.*}} axis = 1 : tensor<2x96xf32> -> tensor<2x98xf32>
// DEC-LABEL: func.func @rfft96
// DEC-COUNT-2: rlx_mir.matmul
// DEC-NOT: rlx_mir.rfft
// DEC: return
// ONLY-LABEL: func.func @rfft96
// ONLY-NOT: rlx_mir.rfft
// ONLY: return
func.func @rfft96(%x: tensor<2x96xf32>) -> tensor<2x98xf32> {
  %y = rlx_mir.rfft %x axis = 1 : tensor<2x96xf32> -> tensor<2x98xf32>
  return %y : tensor<2x98xf32>
}

// -----

// Dynamic shapes stay for the linalg lowering (after specialization).
// DEC-LABEL: func.func @dynamic
// DEC: rlx_mir.irfft %{{.*}} axis = 1 n = 5 : tensor<?x6xf32> -> tensor<?x5xf32>
func.func @dynamic(%x: tensor<?x6xf32>) -> tensor<?x5xf32> {
  %y = rlx_mir.irfft %x axis = 1 n = 5 : tensor<?x6xf32> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// stft: the frames gathered with the reflect padding in the indices, the
// window, then an rfft, which the next round of the pass expands too.
// ROUND-LABEL: func.func @stft
// ROUND: rlx_mir.stft %{{.*}}, %{{.*}} n_fft = 8 hop_length = 4 center normalized : tensor<2x21xf32>, tensor<6xf32> -> tensor<2x5x12xf32>
// DEC-LABEL: func.func @stft
// DEC: rlx_mir.gather
// DEC-NOT: rlx_mir.rfft
// DEC: rlx_mir.matmul
// DEC-NOT: rlx_mir.rfft
// DEC: return
func.func @stft(%x: tensor<2x21xf32>, %w: tensor<6xf32>) -> tensor<2x5x12xf32> {
  %y = rlx_mir.stft %x, %w n_fft = 8 hop_length = 4 center normalized : tensor<2x21xf32>, tensor<6xf32> -> tensor<2x5x12xf32>
  return %y : tensor<2x5x12xf32>
}

// -----

// istft: an irfft of the frames, the window, the overlap-add as a gather
// and a sum, divided by the envelope (a window operand: computed, its
// vanishing samples poisoned through a sqrt).
// ROUND-LABEL: func.func @istft
// ROUND: rlx_mir.istft %{{.*}}, %{{.*}} n_fft = 8 hop_length = 4 center length = 20 : tensor<2x5x12xf32>, tensor<6xf32> -> tensor<2x20xf32>
// DEC-LABEL: func.func @istft
// DEC-NOT: rlx_mir.irfft
// DEC: rlx_mir.matmul
// DEC: rlx_mir.gather
// DEC: rlx_mir.sqrt
// DEC-NOT: rlx_mir.irfft
// DEC: return
func.func @istft(%s: tensor<2x5x12xf32>, %w: tensor<6xf32>) -> tensor<2x20xf32> {
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 4 center length = 20 : tensor<2x5x12xf32>, tensor<6xf32> -> tensor<2x20xf32>
  return %y : tensor<2x20xf32>
}

// -----

// istft with a constant window: its envelope checked and inverted at
// compile time, no sqrt.
// DEC-LABEL: func.func @istft_constant_window
// DEC: rlx_mir.gather
// DEC-NOT: rlx_mir.sqrt
// DEC: return
func.func @istft_constant_window(%s: tensor<5x8xf32>) -> tensor<6xf32> {
  %w = rlx_mir.constant dense<[0.5, 1.0, 1.0, 0.5]> : tensor<4xf32>
  %y = rlx_mir.istft %s, %w n_fft = 8 hop_length = 2 center : tensor<5x8xf32>, tensor<4xf32> -> tensor<6xf32>
  return %y : tensor<6xf32>
}
