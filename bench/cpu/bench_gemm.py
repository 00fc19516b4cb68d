#!/usr/bin/env python3
"""GEMM throughput of RLX's CPU runtime on the Llama-3.2-1B layer's shapes, with
and without oneDNN (the libraries lib/Runtime/CPU/Blas.h chooses at load time).

    python bench/cpu/bench_gemm.py [--build build] [--reps 7]

Each case is one `rlx_mir.matmul %x, %w transpose_b` (an nn.Linear) compiled
by rlx-run: with the runtime's default choice (oneDNN's sgemm on weights
packed [K, N] where oneDNN has AVX-512 kernels) and with RLX_DNNL=0
(OpenBLAS on [N, K]). The two runs of a case alternate, medians of
`rlx-run --repeat`; 2 threads. Prints the CPU and each run's `blas:` line.
"""
import argparse
import os
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHAPES = [(128, 3072, 2048), (128, 16384, 2048), (128, 2048, 8192), (512, 16384, 2048),
          (512, 2048, 8192)]  # (M, N, K): merged QKV, merged gate|up, down; prefill 128 / 512


def model(m, n, k):
    return (f"func.func @main(%x: tensor<{m}x{k}xf32> {{rlx.input = \"x\"}}, "
            f"%w: tensor<{n}x{k}xf32> {{rlx.param = \"w\"}}) -> tensor<{m}x{n}xf32> {{\n"
            f"  %y = rlx_mir.matmul %x, %w transpose_b : tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>\n"
            f"  return %y : tensor<{m}x{n}xf32>\n}}\n")


def run(build, path, reps, env):
    out = subprocess.run([str(build / "bin" / "rlx-run"), str(path), "--repeat", str(reps),
                          "--warmup", "2", "-v"], capture_output=True, text=True, check=True,
                         env={**os.environ, **env}).stdout
    ms = float(re.search(r"run: ([0-9.]+) ms median", out).group(1))
    blas = next(l for l in out.splitlines() if l.startswith("blas: "))
    cpu = next(l for l in out.splitlines() if l.startswith("cpu: "))
    return ms, blas, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    threads = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    variants = {"default": threads, "RLX_DNNL=0": {**threads, "RLX_DNNL": "0"}}
    seen = {}
    with tempfile.TemporaryDirectory() as d:
        rows = []
        for m, n, k in SHAPES:
            path = pathlib.Path(d) / f"mm{m}_{n}_{k}.mlir"
            path.write_text(model(m, n, k))
            times = {v: [] for v in variants}
            for _ in range(3):  # alternate the two variants
                for v, env in variants.items():
                    ms, blas, cpu = run(a.build, path, a.reps, env)
                    times[v].append(ms)
                    seen[v], seen["cpu"] = blas, cpu
            gf = {v: 2 * m * n * k / (sorted(t)[1] * 1e6) for v, t in times.items()}
            rows.append(f"| {m}x{n}x{k} | {gf['default']:.0f} | {gf['RLX_DNNL=0']:.0f} | "
                        f"{gf['default'] / gf['RLX_DNNL=0']:.2f} |")
    print(seen["cpu"] + "; threads: 2")
    for v in variants:
        print(f"{v}: {seen[v]}")
    print("\n| M x N x K | default GFLOP/s | RLX_DNNL=0 GFLOP/s | ratio |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
