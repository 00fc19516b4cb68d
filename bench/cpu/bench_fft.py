#!/usr/bin/env python3
"""CPU time of RLX's Fourier transforms against numpy.fft (pocketfft) and
torch.fft on the same inputs, interleaved.

    python bench/cpu/bench_fft.py [--reps 20]

Cases (f32 in, as RLX computes; numpy computes in f64, torch in f32):
  rfft400     Whisper's frames: 3000 rows of 400 points (rlx_mir.rfft axis 1)
  rfft65536   one signal of 2^16 points
  fft1000     64 complex rows of 1000 points
  fft4099     8 complex rows of a prime length (Bluestein)
  stft30s     30 s of 16 kHz audio, Whisper's STFT (n_fft 400, hop 160,
              periodic Hann, center): rlx_mir.stft against torch.stft and
              numpy (reflect pad, strided frames, np.fft.rfft)
  istft30s    the 30 s STFT back to its samples: rlx_mir.istft (constant Hann
              window, center, length) against torch.istft and numpy (irfft,
              window, overlap-add, divided by the window's envelope)
  logmel30s   Whisper's log-mel features of 30 s: rlx_hir.log_mel_spectrogram
              against WhisperFeatureExtractor's torch and numpy paths
              (its _torch_/_np_extract_fbank_features, without __call__'s
              padding)
RLX compiles each with rlx.compile_cpu (LLVM -O3, this CPU) and checks its
result against a reference (numpy in f64; torch.stft in f64; the extractor)
before timing. Each repetition runs every implementation once in turn after
a warm-up; the report gives medians and the ratio RLX / the faster of the
numpy and torch columns. Threads: 2 everywhere.
Prints the CPU, the BLAS and the settings; writes bench/out/fft.json.
"""
import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, interleaved, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

from bench_cpu import rlx_blas_text  # noqa: E402
from bench_moe import BUILD, ROOT  # noqa: E402
import rlx  # noqa: E402


def tensor(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def module(x_type, op, out):
    return (f'func.func @f(%x: {x_type} {{rlx.input = "x"}}) -> '
            f'({tensor(out)} {{rlx.output = "y"}}) {{\n  %y = {op}\n  return %y : {tensor(out)}\n}}')


def rel_error(got, ref):
    return float(np.abs(got - ref).max() / np.abs(ref).max())


def transform_case(rows, n, real, torch):
    """(MLIR text, input, error of RLX's output, numpy fn, torch fn, bound)."""
    rng = np.random.default_rng(0)
    if real:
        x = rng.standard_normal((rows, n)).astype(np.float32)
        out = (rows, 2 * (n // 2 + 1))
        op = f"rlx_mir.rfft %x axis = 1 : {tensor((rows, n))} -> {tensor(out)}"
        ref = np.fft.rfft(x.astype(np.float64), axis=1)
        z = x
    else:
        z = (rng.standard_normal((rows, n)) + 1j * rng.standard_normal((rows, n))).astype(np.complex64)
        x = np.concatenate([z.real, z.imag], -1).astype(np.float32)
        out = (rows, 2 * n)
        op = f"rlx_mir.fft %x axes = [1] : {tensor(out)}"
        ref = np.fft.fft(z.astype(np.complex128), axis=1)
    zt = torch.from_numpy(z)
    return (module(tensor(x.shape), op, out), x,
            lambda got: rel_error(got[:, :got.shape[-1] // 2] + 1j * got[:, got.shape[-1] // 2:], ref),
            (lambda: np.fft.rfft(z, axis=1)) if real else (lambda: np.fft.fft(z, axis=1)),
            (lambda: torch.fft.rfft(zt, dim=1)) if real else (lambda: torch.fft.fft(zt, dim=1)),
            1e-5 * np.log2(n))


def audio(seconds=30, sr=16000):
    """Tones plus noise, f32."""
    rng = np.random.default_rng(0)
    t = np.arange(seconds * sr) / sr
    x = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 3000 * t)
    return (x + 0.02 * rng.standard_normal(t.size)).astype(np.float32)


def stft_case(torch):
    x, nfft, hop = audio(), 400, 160
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(nfft) / nfft)).astype(np.float32)
    frames = 1 + x.size // hop
    out = (nfft // 2 + 1, 2 * frames)
    w = "dense<[" + ", ".join(f"{v:.9e}" for v in window) + "]> : " + tensor((nfft,))
    text = (f'func.func @f(%x: {tensor(x.shape)} {{rlx.input = "x"}}) -> ({tensor(out)} '
            f'{{rlx.output = "y"}}) {{\n  %w = rlx_mir.constant {w}\n'
            f'  %y = rlx_mir.stft %x, %w n_fft = {nfft} hop_length = {hop} center : '
            f'{tensor(x.shape)}, {tensor((nfft,))} -> {tensor(out)}\n  return %y : {tensor(out)}\n}}')
    xt, wt = torch.from_numpy(x), torch.from_numpy(window)
    ref = torch.stft(xt.double(), nfft, hop, window=wt.double(), center=True, pad_mode="reflect",
                     return_complex=True).numpy()

    def numpy_stft():
        padded = np.pad(x, nfft // 2, mode="reflect")
        framed = np.lib.stride_tricks.sliding_window_view(padded, nfft)[::hop]
        return np.fft.rfft(framed * window, axis=1)

    return (text, x, lambda got: rel_error(got[:, :frames] + 1j * got[:, frames:], ref), numpy_stft,
            lambda: torch.stft(xt, nfft, hop, window=wt, center=True, pad_mode="reflect",
                               return_complex=True),
            1e-5 * np.log2(nfft))


def istft_case(torch):
    """Back from the 30 s STFT to the samples: rlx_mir.istft (constant Hann
    window, center, length) against torch.istft and numpy (irfft per frame,
    window, overlap-add by frame, divided by the window's envelope)."""
    x, nfft, hop = audio(), 400, 160
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(nfft) / nfft)).astype(np.float32)
    wt = torch.from_numpy(window)
    spec = torch.stft(torch.from_numpy(x), nfft, hop, window=wt, center=True, pad_mode="reflect",
                      return_complex=True)
    frames = spec.shape[1]
    s = np.concatenate([spec.real.numpy(), spec.imag.numpy()], 1).astype(np.float32)
    w = "dense<[" + ", ".join(f"{v:.9e}" for v in window) + "]> : " + tensor((nfft,))
    text = (f'func.func @f(%x: {tensor(s.shape)} {{rlx.input = "x"}}) -> ({tensor(x.shape)} '
            f'{{rlx.output = "y"}}) {{\n  %w = rlx_mir.constant {w}\n'
            f'  %y = rlx_mir.istft %x, %w n_fft = {nfft} hop_length = {hop} center '
            f'length = {x.size} : {tensor(s.shape)}, {tensor((nfft,))} -> {tensor(x.shape)}\n'
            f'  return %y : {tensor(x.shape)}\n}}')
    ref = torch.istft(spec.to(torch.complex128), nfft, hop, window=wt.double(), center=True,
                      length=x.size).numpy()
    z = s[:, :frames] + 1j * s[:, frames:]
    envelope = np.zeros(nfft + hop * (frames - 1))
    for t in range(frames):
        envelope[t * hop:t * hop + nfft] += window.astype(np.float64) ** 2

    def numpy_istft():
        framed = np.fft.irfft(z.T, n=nfft, axis=1) * window
        y = np.zeros(hop * (frames + -(-nfft // hop)))  # room for the last chunk's row
        for k in range(0, nfft, hop):  # frames' chunks of hop samples, added by offset
            width = min(hop, nfft - k)
            y[k:k + hop * frames].reshape(frames, hop)[:, :width] += framed[:, k:k + width]
        kept = slice(nfft // 2, nfft // 2 + x.size)
        return y[kept] / envelope[kept]

    assert rel_error(numpy_istft(), ref) < 1e-6
    return (text, s, lambda got: rel_error(got, ref), numpy_istft,
            lambda: torch.istft(spec, nfft, hop, window=wt, center=True, length=x.size),
            1e-5 * np.log2(nfft))


def logmel_case(torch):
    from transformers import WhisperFeatureExtractor
    fe = WhisperFeatureExtractor()
    x = audio()[None]
    text = module(tensor(x.shape), "rlx_hir.log_mel_spectrogram %x n_fft = 400 hop_length = 160 "
                  f"n_mels = 80 sampling_rate = 16000 : {tensor(x.shape)}", (1, 80, 3000))
    ref = fe._torch_extract_fbank_features(x)
    return (text, x, lambda got: rel_error(got, ref),
            lambda: fe._np_extract_fbank_features(x, "cpu"),
            lambda: fe._torch_extract_fbank_features(x), 1e-4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--cases",
                    default="rfft400,rfft65536,fft1000,fft4099,stft30s,istft30s,logmel30s")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    cases = {"rfft400": lambda: transform_case(3000, 400, True, torch),
             "rfft65536": lambda: transform_case(1, 65536, True, torch),
             "fft1000": lambda: transform_case(64, 1000, False, torch),
             "fft4099": lambda: transform_case(8, 4099, False, torch),
             "stft30s": lambda: stft_case(torch), "istft30s": lambda: istft_case(torch),
             "logmel30s": lambda: logmel_case(torch)}
    print(f"CPU: {cpu_model()}")
    print(f"threads: {THREADS}; numpy {np.__version__} (pocketfft), torch {torch.__version__}; "
          f"RLX: rlx.compile_cpu (LLVM -O3, host CPU), {rlx_blas_text(BUILD)}")
    print(f"{'case':12}{'RLX ms':>10}{'numpy ms':>10}{'torch ms':>10}{'RLX/best':>10}"
          f"{'rel err':>10}{'compile s':>11}")
    results = {}
    for name in a.cases.split(","):
        text, x, error, numpy_fn, torch_fn, bound = cases[name]()
        t0 = time.perf_counter()
        compiled = rlx.compile_cpu(rlx.parse(text))
        compile_s = time.perf_counter() - t0
        err = error(compiled.run(x=x)["y"])
        assert err < bound, f"{name}: RLX differs from the reference: {err}"
        fns = {"rlx": lambda: compiled.run(x=x), "numpy": numpy_fn, "torch": torch_fn}
        times = interleaved(fns, a.reps)
        med = {k: float(np.median(v)) for k, v in times.items()}
        ratio = med["rlx"] / min(med["numpy"], med["torch"])
        print(f"{name:12}{med['rlx'] * 1e3:10.3f}{med['numpy'] * 1e3:10.3f}{med['torch'] * 1e3:10.3f}"
              f"{ratio:10.2f}{err:10.1e}{compile_s:11.2f}")
        results[name] = {"median_s": med, "ratio": ratio, "error": err, "compile_s": compile_s}
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "fft.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                              "cases": results}, indent=1))


if __name__ == "__main__":
    main()
