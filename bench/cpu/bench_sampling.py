#!/usr/bin/env python3
"""CPU latency of one sampled token from a real vocabulary: RLX's compiled
`rlx_mir.sample` against PyTorch running what `generate(do_sample=True)`
runs per step (transformers' temperature / top-k / top-p / min-p warpers,
softmax, `torch.multinomial`).

    python bench/cpu/bench_sampling.py [--reps 15] [--vocab 128256] [--rows 1]

Llama-3's vocabulary by default, f32 logits (std 4, seeded), the settings
below. RLX compiles the sampler once (`rlx-run --serve`: the logits and the
uniform number loaded once, one timed run per request); PyTorch runs in this
process. Each repetition times one of each in turn (interleaved); the report
gives medians and RLX / PyTorch. Before timing, RLX's token must be the one
transformers' warped distribution gives for the same uniform (the inverse
CDF in descending-logit order). Threads: 2 everywhere. Prints the CPU and
the settings; writes bench/out/sampling.json.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

from bench_moe import BUILD, ROOT, Server  # noqa: E402
from rlx import hir, mir  # noqa: E402

# The reference the tests check against: transformers' warped distribution
# and its inverse CDF in descending-logit order.
sys.path.insert(0, str(ROOT / "test" / "python"))
from test_sampling import inverse_cdf, warped_probs  # noqa: E402

SETTINGS = [dict(temperature=0.7, top_k=50, top_p=1.0, min_p=0.0),
            dict(temperature=1.0, top_k=0, top_p=0.9, min_p=0.0),
            dict(temperature=0.8, top_k=0, top_p=1.0, min_p=0.05),
            dict(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0)]


def torch_step(torch, logits, s):
    """What generate(do_sample=True) runs per step on these logits."""
    from transformers.generation.logits_process import (MinPLogitsWarper, TemperatureLogitsWarper,
                                                        TopKLogitsWarper, TopPLogitsWarper)
    warpers = [TemperatureLogitsWarper(s["temperature"])]
    warpers += [TopKLogitsWarper(s["top_k"])] if s["top_k"] else []
    warpers += [TopPLogitsWarper(s["top_p"])] if s["top_p"] < 1 else []
    warpers += [MinPLogitsWarper(s["min_p"])] if s["min_p"] > 0 else []

    def step():
        x = logits
        for w in warpers:
            x = w(None, x)
        return torch.multinomial(torch.softmax(x, -1), 1)
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--vocab", type=int, default=128_256)
    ap.add_argument("--rows", type=int, default=1)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((args.rows, args.vocab)) * 4).astype(np.float32)
    u = rng.random(args.rows).astype(np.float32)
    print(f"cpu: {cpu_model()}; threads: {THREADS}; torch {torch.__version__}; "
          f"vocab {args.vocab}, rows {args.rows}, f32 logits")
    rows = []
    for s in SETTINGS:
        with tempfile.TemporaryDirectory() as d:
            tmp = pathlib.Path(d)
            f = hir.Function("sample")
            x, uu = f.input("logits", logits.shape), f.input("u", u.shape)
            f.output("ids", mir.sample(x, uu, **s))
            (tmp / "s.mlir").write_text(f.text())
            np.save(tmp / "logits.npy", logits)
            np.save(tmp / "u.npy", u)
            argv = [str(BUILD / "bin" / "rlx-run"), str(tmp / "s.mlir"),
                    "--input", f"logits={tmp / 'logits.npy'}", "--input", f"u={tmp / 'u.npy'}"]
            subprocess.run(argv + ["--output-dir", str(tmp / "out")], check=True,
                           capture_output=True)
            step = torch_step(torch, torch.from_numpy(logits), s)
            got = np.load(tmp / "out" / "ids.npy")
            want = inverse_cdf(logits, warped_probs(logits, s["temperature"], s["top_k"],
                                                    s["top_p"], s["min_p"]), u)
            assert (got == want).all(), (s, got, want)
            server = Server(argv)
            times = {"rlx": [], "torch": []}
            for _ in range(args.reps):
                times["rlx"].append(server.once())
                t0 = time.perf_counter()
                step()
                times["torch"].append(time.perf_counter() - t0)
            server.close()
        med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
        name = "T={temperature} top_k={top_k} top_p={top_p} min_p={min_p}".format(**s)
        rows.append(dict(s, rlx_ms=med["rlx"], torch_ms=med["torch"],
                         ratio=med["rlx"] / med["torch"]))
        print(f"{name:40s}: RLX {med['rlx']:7.2f} ms, PyTorch {med['torch']:7.2f} ms, "
              f"RLX / PyTorch {med['rlx'] / med['torch']:.2f}")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "sampling.json").write_text(json.dumps(
        {"cpu": cpu_model(), "threads": THREADS, "vocab": args.vocab, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
