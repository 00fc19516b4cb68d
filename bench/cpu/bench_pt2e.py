#!/usr/bin/env python3
"""A PT2E-quantized MLP (int8 activations and weights, XNNPACK quantizer)
compiled by RLX from torch-mlir's export, against the same converted module
run by PyTorch, interleaved.

    python bench/cpu/bench_pt2e.py [--reps 7] [--rows 1,128] [--dims 1024,4096]

Three rows per batch size:
- ``rlx int8``: the linalg export; its QDQ linears become rlx_mir.qmatmul
  (int8 × int8 in i32 on the runtime's integer GEMM, scales applied once).
- ``rlx f32``: the TOSA export of the same module, whose quantize/dequantize
  RLX does not recognize: the linears run in f32 on the BLAS (the path the
  int8 one replaced for linalg exports).
- ``torch``: the converted PT2E module itself (PyTorch's QDQ reference:
  dequantize, then f32 linear).
Threads: 2 everywhere. Prints the CPU, the BLAS, medians in ms and the
ratios against torch (< 1: faster than torch); writes bench/out/pt2e.json.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python_packages"))
import rlx  # noqa: E402


def quantized_mlp(d: int, f: int, rows: int):
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import (XNNPACKQuantizer,
                                                         get_symmetric_quantization_config)

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(d, f)
            self.down = torch.nn.Linear(f, d)

        def forward(self, x):
            return self.down(torch.relu(self.up(x)))

    torch.manual_seed(0)
    x = torch.randn(rows, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.export.export(Mlp().eval(), (x,)).module()
        prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(
            get_symmetric_quantization_config(is_per_channel=False)))
        prepared(x)
        return convert_pt2e(prepared), x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rows", default="1,128")
    ap.add_argument("--dims", default="1024,4096", help="hidden,intermediate")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    d, f = (int(v) for v in args.dims.split(","))
    print(f"cpu: {cpu_model()}; threads: {THREADS}; torch {torch.__version__}; "
          f"MLP {d}->{f}->{d}, int8 per-tensor weights (TOSA has no per-channel dequantize), reps {args.reps}")
    results = []
    for rows in (int(r) for r in args.rows.split(",")):
        model, x = quantized_mlp(d, f, rows)
        runners = {"rlx int8": rlx.from_torch(model, x, output="linalg"),
                   "rlx f32": rlx.from_torch(model, x, output="tosa"),
                   "torch": model}
        if rows == 1 or not results:
            stats = getattr(runners["rlx int8"].compiled, "stats", {}) or {}
            print(f"rlx blas: {stats.get('blas', '?')}")
        # PyTorch's reference sums K products in f32; RLX's int8 path sums
        # them exactly in i32: for large K a few outputs land one
        # quantization step apart (RLX's own f32 path differs too).
        want = model(x).detach().numpy()
        for name in ("rlx int8", "rlx f32"):
            got = np.asarray(runners[name](x))
            step = np.abs(got - want).max()
            print(f"rows {rows:4}  {name}: {np.count_nonzero(got != want)} of {got.size} outputs "
                  f"differ from torch's (largest difference {step:.3g})")
        times = {k: [] for k in runners}
        with torch.no_grad():
            for run in runners.values():
                run(x)
            for _ in range(args.reps):
                for name, run in runners.items():
                    t = time.perf_counter()
                    run(x)
                    times[name].append((time.perf_counter() - t) * 1e3)
        med = {k: statistics.median(v) for k, v in times.items()}
        for k, v in med.items():
            print(f"rows {rows:4}  {k:9} {v:9.3f} ms  ratio vs torch {v / med['torch']:5.2f}")
        results.append({"rows": rows, "median_ms": med})
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "pt2e.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                               "dims": [d, f], "results": results}, indent=1))


if __name__ == "__main__":
    main()
