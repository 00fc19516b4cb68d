//===- HIRAudioOps.td - rlx_hir audio front ends -------------*- tablegen -*-===//
//
// Whisper's log-mel front end as one block that lowers to rlx_mir ops
// (concat/slice, stft, products, a mel matmul, log, a reduction), so the
// graph stays composable: it fuses, differentiates and runs on every device
// as its primitives do.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIRAUDIOOPS_TD
#define RLX_DIALECT_HIR_IR_HIRAUDIOOPS_TD

def HIR_LogMelSpectrogramOp : HIR_Op<"log_mel_spectrogram"> {
  let summary = "Whisper's log-mel features of raw audio samples";
  let description = [{
    transformers' `WhisperFeatureExtractor` (openai-whisper's
    `log_mel_spectrogram`) on `input` `[L]` or `[B, L]` raw samples:

    ```
    x     = pad with zeros or trim x to n_samples     (when n_samples is given)
    S     = |stft(x, n_fft, hop_length, periodic Hann window, center, reflect)|²
    S     = S without its last frame
    mel   = max(melᵀ·S, 1e-10)                          (mel [n_fft/2+1, n_mels])
    log   = log10(mel)
    log   = max(log, max(log over one item's mels and frames) − 8)
    y     = (log + 4) / 4
    ```

    `mel` is the Slaney-normalized filter bank on the Slaney mel scale
    (librosa's `filters.mel(htk=False, norm="slaney")`, transformers'
    `mel_filter_bank(norm="slaney", mel_scale="slaney")`) with `n_mels`
    triangles between `f_min` and `f_max` over `n_fft/2 + 1` frequencies
    spaced evenly from 0 to `⌊sampling_rate/2⌋` (transformers' spacing: the
    bins' `k·sampling_rate/n_fft` for an even `n_fft`); it is a constant
    built when the op is lowered.
    The maximum in the dynamic-range clamp is taken per batch item, as
    transformers does for a batch. Whisper: n_fft = 400, hop_length = 160,
    sampling_rate = 16000, n_mels = 80 (128 for large-v3), n_samples =
    480000 (30 s), f_min = 0, f_max = 8000 (the defaults of `f_min` and
    `f_max`).

    Computed in f32 (f64 for f64 input) and returned in the input's element
    type. Result: `[B?, n_mels, n_frames]` with
    `n_frames = (n_samples + 2·(n_fft/2) − n_fft) / hop_length` (3000 for
    Whisper), `n_samples` defaulting to `L`. Dithering
    (`WhisperFeatureExtractor(dither > 0)`) is random and is not part of the op.

    Lowers to `rlx_mir` concat/slice, `stft`, `mul`/`add`, `matmul`, `max`,
    `log`, `reduce`.

    The verifier rejects an input that is not `[L]` or `[B, L]` with a static
    `L` (and a static batch when `n_samples` differs from `L`); `n_fft`
    outside [2, 2^16], `hop_length` outside [1, 2^30], `n_mels` outside
    [1, 2^12], `sampling_rate` outside [1, 2^30]; a filter bank of more than
    2^24 entries (`n_mels · (n_fft/2 + 1)`); `n_samples` outside [1, 2^32];
    a signal no longer than `n_fft/2` (reflect padding's rule); fewer than
    two frames (one is dropped); more than 2^28 frame samples
    (`frames · n_fft`, the stft's index table); and a band that is not
    `0 ≤ f_min`, `f_min + 1 ≤ f_max ≤ 10^9` Hz.

    Example (30 s of 16 kHz audio → Whisper's `[1, 80, 3000]`):
    ```mlir
    %f = rlx_hir.log_mel_spectrogram %audio n_fft = 400 hop_length = 160 n_mels = 80
        sampling_rate = 16000 n_samples = 480000 : tensor<1x80000xf32>
    ```
  }];
  let arguments = (ins RLX_FloatTensor:$input, RLX_I64Attr:$n_fft, RLX_I64Attr:$hop_length,
                   RLX_I64Attr:$n_mels, RLX_I64Attr:$sampling_rate,
                   OptionalAttr<RLX_I64Attr>:$n_samples,
                   OptionalAttr<F64Attr>:$f_min, OptionalAttr<F64Attr>:$f_max);
  let results = (outs RLX_FloatTensor:$output);
  let assemblyFormat = [{
    $input `n_fft` `=` $n_fft `hop_length` `=` $hop_length `n_mels` `=` $n_mels
    `sampling_rate` `=` $sampling_rate (`n_samples` `=` $n_samples^)? (`f_min` `=` $f_min^)?
    (`f_max` `=` $f_max^)? attr-dict `:` type($input)
  }];
  let extraClassDeclaration = [{
    /// Whisper's band (transformers' mel_filter_bank arguments).
    static constexpr double kFMin = 0.0, kFMax = 8000.0;
  }];
}

#endif // RLX_DIALECT_HIR_IR_HIRAUDIOOPS_TD
