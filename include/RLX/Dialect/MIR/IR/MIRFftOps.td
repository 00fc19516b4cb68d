//===- MIRFftOps.td - rlx_mir discrete Fourier transforms ----*- tablegen -*-===//
//
// fft, rfft, irfft, stft and istft on RLX's complex block layout, defined by
// their chain of MIR ops (DecomposableOpInterface, lib/Dialect/MIR/IR/FftOps.cpp
// and StftOps.cpp): mixed-radix
// stages as small dense DFT matmuls with twiddles between them, Bluestein's
// chirp-z convolution for large prime lengths. Their derivative rules are
// transforms themselves (the adjoint of a DFT is the conjugate DFT).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRFFTOPS_TD
#define RLX_DIALECT_MIR_IR_MIRFFTOPS_TD

// vmap batches the chain (rlx-mir-vmap unfuses composite ops first).
defvar MIR_FftTraits = [DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>,
                        DeclareOpInterfaceMethods<MIR_DifferentiableOpInterface, ["vjp", "jvp"]>];

defvar MIR_ComplexLayoutDoc = [{
    **Complex block layout.** RLX has no complex element type: a complex
    tensor of logical shape `[d0, ..., dk]` is the real tensor
    `[d0, ..., 2·dk]` whose last axis holds the `dk` real parts, then the `dk`
    imaginary parts (the original RLX's "2N real block" layout:
    `fft([1, 2, 3, 4])` is `[10, −2, −2, −2, 0, 2, 0, −2]`). From numpy:
    `np.concatenate([z.real, z.imag], -1)`. Axes are the logical axes.

    `norm` is numpy's: `"backward"` (the default: the forward transform is
    unscaled, the inverse divides by `n`), `"forward"` (the other way round)
    or `"ortho"` (both scale by `1/√n`), where `n` is the product of the
    transformed lengths.

    Computed in f32 (f64 for f64 input), results in the input's type.
    Algorithm (the decomposition): a length is split `n = r·m` with the
    largest `r ≤ 32` that divides it; the `m`-point transforms of the `r`
    strided subsequences, a twiddle `e^{∓2πi·j·k/n}`, then the `r`-point
    transforms across them (Cooley–Tukey, four-step order). Lengths up to 32
    (primes up to 64) are one dense DFT matmul of the realified `[2n, 2n]`
    matrix. Larger primes use Bluestein's algorithm: the chirp
    `e^{∓πi·j²/n}` turns the DFT into a circular convolution of a power-of-two
    length `≥ 2n − 1`, done with the same stages. Constants are computed in
    f64 with exact integer phase reduction. Error grows like `log n`.

    On the GPU path a transform along the last axis alone, of a length whose
    prime factors are at most 13 and whose two complex ping-pong planes fit
    32 KiB (n ≤ 2048 in f32, 1024 in f64; `mir::fftRows`), is not
    decomposed: one block per row runs its Stockham radix passes in shared
    memory (`fft_rows` kernel, lib/Conversion/LIRToGPU/FftKernels.cpp).
}];

def MIR_FftOp : MIR_InferOp<"fft", MIR_FftTraits> {
  let summary = "discrete Fourier transform over one or more axes (numpy.fft.fftn / ifftn)";
  let description = !strconcat([{
    `numpy.fft.fftn(x, axes = axes, norm = norm)` (or `ifftn` with
    `inverse`; `torch.fft.fftn` / `ifftn` are the same): complex in, complex
    out of the same shape, in the complex block layout below. The transforms
    along the axes commute; each is
    `X[k] = Σ_{j<n} x[j]·e^{∓2πi·j·k/n}` (`−` forward, `+` inverse), scaled
    as `norm` says.
  }], MIR_ComplexLayoutDoc, [{

    The verifier rejects an input whose last axis is odd (not a complex
    block), empty or repeated axes, axes out of `[−rank, rank)`, transformed
    axes that are dynamic or of length 0, and a `norm` other than the three.

    Example (numpy's `ifft2` of a `[4, 8]` complex array, orthonormal):
    ```mlir
    %y = rlx_mir.fft %x axes = [0, 1] inverse norm = "ortho" : tensor<4x16xf32>
    ```
  }]);
  let arguments = (ins RLX_FloatTensor:$input, DenseI64ArrayAttr:$axes, UnitAttr:$inverse,
                   OptionalAttr<StrAttr>:$norm);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`inverse` $inverse^)? (`norm` `=` $norm^)? attr-dict `:` type($input)
  }];
}

def MIR_RfftOp : MIR_InferOp<"rfft", MIR_FftTraits> {
  let summary = "real-input discrete Fourier transform (numpy.fft.rfft)";
  let description = !strconcat([{
    `numpy.fft.rfft(x, n = n, axis = axis, norm = norm)` (`torch.fft.rfft`):
    the input, real, is cut or zero-padded to `n` along `axis` (`n` defaults
    to its length there), transformed, and the `n // 2 + 1` non-negative
    frequencies are kept. The result is complex in the block layout below:
    the input's shape with `n // 2 + 1` at `axis`, then its last axis doubled.
  }], MIR_ComplexLayoutDoc, [{

    The verifier rejects an axis out of `[−rank, rank)`, a rank-0 input, an
    input empty along `axis` or its last axis, a dynamic length at `axis`
    without `n`, `n < 1` and an unknown `norm`.

    Example (Whisper's 400-point frames, 201 bins):
    ```mlir
    %s = rlx_mir.rfft %frames axis = 1 : tensor<3000x400xf32> -> tensor<3000x402xf32>
    ```
  }]);
  let arguments = (ins RLX_FloatTensor:$input, I64Attr:$axis, OptionalAttr<I64Attr>:$n,
                   OptionalAttr<StrAttr>:$norm);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`n` `=` $n^)? (`norm` `=` $norm^)? attr-dict `:` type($input)
    `->` type($output)
  }];
}

def MIR_IrfftOp : MIR_InferOp<"irfft", MIR_FftTraits> {
  let summary = "inverse of rfft: Hermitian spectrum in, real signal out (numpy.fft.irfft)";
  let description = !strconcat([{
    `numpy.fft.irfft(X, n = n, axis = axis, norm = norm)` (`torch.fft.irfft`):
    the input, complex in the block layout below, holds the non-negative
    frequencies of a real signal of length `n` along `axis` (`n` defaults to
    `2·(m − 1)` for `m` bins). Its first `n // 2 + 1` bins are taken (cut,
    or zero-padded), the negative frequencies are their conjugates, and the
    inverse transform's real part is the result: the input's logical shape
    with `n` at `axis`. As numpy, the imaginary parts of the DC bin and (for
    even `n`) the Nyquist bin do not contribute.
  }], MIR_ComplexLayoutDoc, [{

    The verifier rejects an odd last axis, an axis out of `[−rank, rank)`, no
    bins along `axis`, a dynamic bin count at `axis` without `n`, `n < 1` (so
    one bin needs `n`) and an unknown `norm`.

    Example (back from 3 bins to 5 samples):
    ```mlir
    %x = rlx_mir.irfft %s axis = 0 n = 5 : tensor<6xf32> -> tensor<5xf32>
    ```
  }]);
  let arguments = (ins RLX_FloatTensor:$input, I64Attr:$axis, OptionalAttr<I64Attr>:$n,
                   OptionalAttr<StrAttr>:$norm);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`n` `=` $n^)? (`norm` `=` $norm^)? attr-dict `:` type($input)
    `->` type($output)
  }];
}

def MIR_StftOp : MIR_InferOp<"stft", [DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "short-time Fourier transform (torch.stft, onesided, reflect padding)";
  let description = [{
    `torch.stft(input, n_fft, hop_length, window = window, center = center,
    pad_mode = "reflect", normalized = normalized, onesided = True,
    return_complex = True)`: `input` `[L]` or `[B, L]` (real), `window`
    `[win_length]` with `win_length ≤ n_fft` (zero-padded on both sides to
    `n_fft`, as torch does). With `center` the signal is reflect-padded by
    `n_fft // 2` on both sides. Frame `t` is
    `X[f, t] = Σ_{k<n_fft} window[k]·x[t·hop_length + k]·e^{−2πi·f·k/n_fft}`
    for the `n_fft // 2 + 1` frequencies `f`, times `1/√n_fft` with
    `normalized`.

    The result is torch's `[B?, n_fft // 2 + 1, n_frames]` complex, in the
    complex block layout (real parts, then imaginary parts, along the last
    axis: `[B?, n_fft // 2 + 1, 2·n_frames]`), where
    `n_frames = 1 + (L' − n_fft) // hop_length` for the padded length `L'`.

    Defined by its chain: the frames gathered with their reflect padding
    folded into the indices, times the window, `rlx_mir.rfft` along the frame
    (so its derivatives are the gather's and rfft's). Computed as rfft
    computes.

    The verifier rejects an input that is not `[L]` or `[B, L]` with a static
    `L`, a window that is not `[win_length]` with `1 ≤ win_length ≤ n_fft`,
    `n_fft < 1`, `hop_length < 1`, a signal shorter than `n_fft` (after
    padding), reflect padding of `n_fft // 2` that is not shorter than the
    signal (torch's rule), and mixed element types. Its decomposition
    refuses more than 2^28 frame samples (`n_frames · n_fft`, the size of
    its constant index table).

    Example (Whisper's front end on 30 s at 16 kHz: 201 bins, 3001 frames):
    ```mlir
    %s = rlx_mir.stft %audio, %hann n_fft = 400 hop_length = 160 center
        : tensor<480000xf32>, tensor<400xf32> -> tensor<201x6002xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$window, I64Attr:$n_fft,
                   I64Attr:$hop_length, UnitAttr:$center, UnitAttr:$normalized);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $window `n_fft` `=` $n_fft `hop_length` `=` $hop_length (`center` $center^)?
    (`normalized` $normalized^)? attr-dict `:` type($input) `,` type($window) `->` type($output)
  }];
}

def MIR_IstftOp : MIR_InferOp<"istft", [DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>]> {
  let summary = "inverse short-time Fourier transform (torch.istft, onesided)";
  let description = [{
    `torch.istft(input, n_fft, hop_length, window = window, center = center,
    normalized = normalized, onesided = True, length = length)`: the inverse
    of `rlx_mir.stft`. `input` is torch's `[B?, n_fft // 2 + 1, frames]`
    complex spectrogram in the complex block layout (real parts, then
    imaginary parts, along the last axis: `[B?, n_fft // 2 + 1, 2·frames]`);
    `window` `[win_length]` with `win_length ≤ n_fft`, centred in `n_fft`
    zeros as stft does.

    Each frame is `irfft(X[:, t], n = n_fft)` (`norm = "ortho"` with
    `normalized`: torch's `√n_fft` scaling), multiplied by the window and
    overlap-added at `t·hop_length` into `n_fft + hop_length·(frames − 1)`
    samples, which are divided by the window's squared overlap-add envelope
    `Σ_t window²[p − t·hop_length]`. The result is `[B?, L]`: with `length`,
    the `length` samples from `n_fft // 2` (`center`) or 0, zero-padded past
    the end; without it, all samples less `n_fft // 2` at both ends
    (`center`) or all of them.

    torch refuses an envelope below 1e-11 inside the result (a window whose
    overlaps vanish cannot be inverted): for a constant window the
    decomposition reports it as an error at the op; for another window those
    samples come out NaN.

    Defined by its chain: `rlx_mir.irfft`, the window, the overlap-add as a
    `rlx_mir.gather` of each sample's frames from a constant index table and
    a sum (so its derivatives are theirs), computed in f32 (f64 for f64).

    The verifier rejects an input that is not a static `[B?, n_fft // 2 + 1,
    2·frames]` with at least one frame, a window that is not `[win_length]`
    with `1 ≤ win_length ≤ n_fft`, `n_fft` outside `[1, 2^28]`,
    `hop_length` outside `[1, win_length]` (torch's rule: a longer hop
    leaves samples that no frame covers), `length` outside `[1, 2^40]`,
    over 2^40 overlap-added samples, an empty result (one centred frame
    without `length`) and mixed element types. Its decomposition refuses
    an index table over 2^26 entries (samples times the frames that overlap
    one sample).

    Example (back from Whisper's 30 s spectrogram to 480000 samples):
    ```mlir
    %a = rlx_mir.istft %s, %hann n_fft = 400 hop_length = 160 center length = 480000
        : tensor<201x6002xf32>, tensor<400xf32> -> tensor<480000xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_FloatTensor:$window, I64Attr:$n_fft,
                   I64Attr:$hop_length, UnitAttr:$center, UnitAttr:$normalized,
                   OptionalAttr<I64Attr>:$length);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $window `n_fft` `=` $n_fft `hop_length` `=` $hop_length (`center` $center^)?
    (`normalized` $normalized^)? (`length` `=` $length^)? attr-dict `:` type($input) `,`
    type($window) `->` type($output)
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRFFTOPS_TD
