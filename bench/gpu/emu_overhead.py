"""The GPU emulator's run time with its checks against an older build's
(issue 33: the stricter emulator may cost at most 2x). Both builds compile
the same cases of cases.py (--no-cubin); each artifact then runs under
`rlx-gpu-run --device emu` in turn, rotating the order, for every
repetition; medians and their ratio per case and overall.

    python bench/gpu/emu_overhead.py --base /tmp/old/build --new build [--reps 5]

The base build is any earlier checkout built the usual way (for example
`git worktree add /tmp/old <commit>` and its own cmake/ninja build).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import cases as C  # noqa: E402
from machine import cpu_model  # noqa: E402

CASES = [
    C.wgmma_matmul_case(130, 520, 136, "wgmma_matmul"),
    C.norm_swiglu_case(130, 264, 72, "wgmma_norm_swiglu"),
    C.flash_attention_case(1, 300, 300, 2, 1, 128, "fa3_wgmma"),
    C.flash_attention_case(1, 100, 100, 4, 2, 128, "fa2_mma_sync", "flash"),
    C.nvfp4_numerics_case(200, 256, 512, "nvfp4_wgmma"),
    C.rms_norm_case(7, 769, "simt_rms_norm"),
    C.attention_case(37, "simt_attention"),
]


def compile_case(build, case, out):
    src = out.parent / f"{case['name']}.mlir"
    src.write_text(case["text"])
    subprocess.run([str(build / "bin" / "rlx-compile"), str(src), "-o", str(out), "--no-cubin",
                    *case.get("flags", [])], check=True, capture_output=True)


def run_once(build, art, inputs, tmp):
    cmd = [str(build / "bin" / "rlx-gpu-run"), str(art), "--device", "emu", "--output-dir",
           str(tmp / "out")]
    for name, v in inputs.items():
        np.save(tmp / f"{name}.npy", v)
        cmd += ["--input", f"{name}={tmp / f'{name}.npy'}"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    return dt, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the older build directory")
    ap.add_argument("--new", default=str(HERE.parent.parent / "build"))
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    builds = {"base": pathlib.Path(a.base).resolve(), "new": pathlib.Path(a.new).resolve()}
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); emulator runs are single-threaded; "
          f"reps {a.reps}, medians; base {builds['base']}, new {builds['new']}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for case in CASES:
            arts = {}
            for k, b in builds.items():
                (tmp / k).mkdir(exist_ok=True)
                arts[k] = tmp / k / case["name"]
                compile_case(b, case, arts[k])
            inputs = case["inputs"]()
            times = {k: [] for k in builds}
            rcs = {}
            for r in range(a.reps):
                order = list(builds) if r % 2 == 0 else list(reversed(builds))
                for k in order:
                    dt, rc = run_once(builds[k], arts[k], inputs, tmp)
                    times[k].append(dt)
                    rcs[k] = rc
            med = {k: statistics.median(v) for k, v in times.items()}
            ratio = med["new"] / med["base"]
            ratios.append(ratio)
            print(f"{case['name']:20} base {med['base']:7.2f} s  new {med['new']:7.2f} s  "
                  f"new/base {ratio:5.2f}x  (exit codes base {rcs['base']}, new {rcs['new']})",
                  flush=True)
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geometric mean new/base: {geo:.2f}x (issue 33's bound: 2x)")


if __name__ == "__main__":
    main()
