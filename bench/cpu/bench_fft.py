#!/usr/bin/env python3
"""CPU time of RLX's Fourier transforms against numpy.fft (pocketfft) and
torch.fft on the same inputs, interleaved.

    python bench/cpu/bench_fft.py [--reps 20]

Cases (f32 in, as RLX computes; numpy computes in f64, torch in f32):
  rfft400     Whisper's frames: 3000 rows of 400 points (rlx_mir.rfft axis 1)
  rfft65536   one signal of 2^16 points
  fft1000     64 complex rows of 1000 points
  fft4099     8 complex rows of a prime length (Bluestein)
RLX compiles each with rlx.compile_cpu (LLVM -O3, this CPU) and checks its
result against numpy in f64 before timing. Each repetition runs every
implementation once in turn after a warm-up; the report gives medians and
the ratio RLX / the faster of numpy and torch. Threads: 2 everywhere.
Prints the CPU, the BLAS and the settings; writes bench/out/fft.json.
"""
import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

from bench_cpu import rlx_blas_text  # noqa: E402
from bench_moe import BUILD, ROOT  # noqa: E402
import rlx  # noqa: E402


def tensor(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def case(name, rows, n, real):
    """(MLIR text, input, numpy f64 reference, numpy fn, torch fn)."""
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
    text = (f'func.func @f(%x: {tensor(x.shape)} {{rlx.input = "x"}}) -> '
            f'({tensor(out)} {{rlx.output = "y"}}) {{\n  %y = {op}\n  return %y : {tensor(out)}\n}}')
    return text, x, z, ref, real


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    cases = {"rfft400": (3000, 400, True), "rfft65536": (1, 65536, True),
             "fft1000": (64, 1000, False), "fft4099": (8, 4099, False)}
    print(f"CPU: {cpu_model()}")
    print(f"threads: {THREADS}; numpy {np.__version__} (pocketfft), torch {torch.__version__}; "
          f"RLX: rlx.compile_cpu (LLVM -O3, host CPU), {rlx_blas_text(BUILD)}")
    print(f"{'case':12}{'RLX ms':>10}{'numpy ms':>10}{'torch ms':>10}{'RLX/best':>10}"
          f"{'rel err':>10}{'compile s':>11}")
    results = {}
    for name, (rows, n, real) in cases.items():
        text, x, z, ref, real = case(name, rows, n, real)
        t0 = time.perf_counter()
        compiled = rlx.compile_cpu(rlx.parse(text))
        compile_s = time.perf_counter() - t0
        got = compiled.run(x=x)["y"]
        h = got.shape[-1] // 2
        err = float(np.abs(got[:, :h] + 1j * got[:, h:] - ref).max() / np.abs(ref).max())
        assert err < 1e-5 * np.log2(n), f"{name}: RLX differs from numpy.fft: {err}"
        zt = torch.from_numpy(z)
        fns = {"rlx": lambda: compiled.run(x=x),
               "numpy": (lambda: np.fft.rfft(z, axis=1)) if real else (lambda: np.fft.fft(z, axis=1)),
               "torch": (lambda: torch.fft.rfft(zt, dim=1)) if real else (lambda: torch.fft.fft(zt, dim=1))}
        for fn in fns.values():
            fn()
        times = {k: [] for k in fns}
        for _ in range(a.reps):
            for k, fn in fns.items():
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
        med = {k: float(np.median(v)) for k, v in times.items()}
        ratio = med["rlx"] / min(med["numpy"], med["torch"])
        print(f"{name:12}{med['rlx'] * 1e3:10.3f}{med['numpy'] * 1e3:10.3f}{med['torch'] * 1e3:10.3f}"
              f"{ratio:10.2f}{err:10.1e}{compile_s:11.2f}")
        results[name] = {"rows": rows, "n": n, "median_s": med, "ratio": ratio, "error": err,
                         "compile_s": compile_s}
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "fft.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                              "cases": results}, indent=1))


if __name__ == "__main__":
    main()
