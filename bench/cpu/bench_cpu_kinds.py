#!/usr/bin/env python3
"""The CPU path's code compiled for less capable CPUs than this one
(`rlx-run --cpu`), next to code for this CPU, on the same machine: what
compiling for the least capable CPU of a fleet costs, and how fast the
bf16/f16 conversions RLX writes itself run.

    python bench/cpu/bench_cpu_kinds.py [--build build] [--reps 7] [--rounds 3]

Cases, each one rlx-run invocation with seeded inputs and 2 BLAS threads:
  - `cast` f32 -> bf16 -> f32 and f32 -> f16 -> f32 over 2^24 elements;
  - one Llama-3.2-1B decoder layer (rlx-gen --layer-only, seq 128) in f32
    and in bf16.
Each case runs for --cpu=host (the baseline), x86-64-v4, x86-64-v3 and x86-64,
alternating, `--rounds` rounds; the time of a target is the median over
rounds of rlx-run's median over `--reps` runs; `ratio` = host time / time
(below 1: slower than code for this CPU). A target this CPU cannot run is
left out with rlx-run's reason. The conversions also get numpy/ml_dtypes'
`astype` on the same array in this process as a named reference (GB/s of f32
read). Prints the CPU (model and LLVM's name), the BLAS line and each
target's `code for:` line.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import tempfile
import time

import ml_dtypes
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ["host", "x86-64-v4", "x86-64-v3", "x86-64"]
N = 1 << 24


def cast_model(narrow):
    t = f"tensor<{N}x"
    return (f'func.func @main(%x: {t}f32> {{rlx.input = "x"}}) -> {t}f32> {{\n'
            f"  %n = rlx_mir.cast %x : {t}f32> to {t}{narrow}>\n"
            f"  %w = rlx_mir.cast %n : {t}{narrow}> to {t}f32>\n"
            f"  return %w : {t}f32>\n}}\n")


def run(build, path, target, reps, extra):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    proc = subprocess.run([str(build / "bin" / "rlx-run"), str(path), f"--cpu={target}",
                           "--repeat", str(reps), "--warmup", "1", "-v", *extra],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1]
    out = proc.stdout
    line = lambda p: next(l for l in out.splitlines() if l.startswith(p))  # noqa: E731
    return float(re.search(r"run: ([0-9.]+) ms median", out).group(1)), out, line


def astype_ms(narrow, reps):
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    t = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[narrow]
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        x.astype(t).astype(np.float32)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    config = ROOT.parent / "shared" / "models" / "llama-3.2-1b.json"
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        cases = {}
        for narrow in ("bf16", "f16"):
            (d / f"cast_{narrow}.mlir").write_text(cast_model(narrow))
            cases[f"cast f32->{narrow}->f32, 2^24"] = (d / f"cast_{narrow}.mlir", [])
        for dtype in ("f32", "bf16"):
            text = subprocess.run([str(a.build / "bin" / "rlx-gen"), str(config), "--layer-only",
                                   "--seq", "128", "--dtype", dtype], capture_output=True,
                                  text=True, check=True).stdout
            (d / f"layer_{dtype}.mlir").write_text(text)
            cases[f"Llama-3.2-1B layer {dtype}, seq 128"] = (d / f"layer_{dtype}.mlir", [])
        times = {c: {t: [] for t in TARGETS} for c in cases}
        refused, code_for, header = {}, {}, []
        for _ in range(a.rounds):
            for case, (path, extra) in cases.items():
                for target in TARGETS:  # interleaved: every target once per round
                    if target in refused:
                        continue
                    ms, out, line = run(a.build, path, target, a.reps, extra)
                    if ms is None:
                        refused[target] = out
                        continue
                    times[case][target].append(ms)
                    code_for[target] = line("code for: ")
                    if not header:
                        header = [line("cpu: "), line("blas: ")]
        print("\n".join(header) + "; threads: 2")
        for target in TARGETS:
            print(f"--cpu={target}: " + (refused[target] if target in refused else code_for[target]))
        live = [t for t in TARGETS if t not in refused]
        print("\n| case | " + " | ".join(f"{t} ms (ratio)" for t in live) + " | astype ms |")
        print("|---|" + "---|" * (len(live) + 1))
        for case in cases:
            med = {t: statistics.median(times[case][t]) for t in live}
            cells = [f"{med[t]:.2f} ({med['host'] / med[t]:.2f})" for t in live]
            ref = ""
            if case.startswith("cast"):
                narrow = case.split("->")[1]
                ms = astype_ms(narrow, a.reps)
                ref = f"{ms:.2f} ({'ml_dtypes' if narrow == 'bf16' else 'numpy'})"
            print(f"| {case} | " + " | ".join(cells) + f" | {ref} |")


if __name__ == "__main__":
    main()
