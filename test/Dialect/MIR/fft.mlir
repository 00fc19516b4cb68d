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
