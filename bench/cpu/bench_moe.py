#!/usr/bin/env python3
"""CPU latency of a Mixtral-shaped sparse MoE layer: RLX against PyTorch eager
running transformers' own `MixtralSparseMoeBlock`.

    python bench/cpu/bench_moe.py [--reps 9] [--hidden 1024] [--intermediate 3584]
                                  [--tokens 1,32,128]

Mixtral-8x7B's block (8 experts, top-2, hidden 4096, intermediate 14336)
scaled down to fit a small machine by --hidden/--intermediate (default a
quarter each, the same 3.5 ratio). Both sides get the same seeded f32
weights: RLX builds the block from `rlx_hir.moe_router` + `moe_experts`
and `rlx-run --serve` runs it with the weights loaded once from a
safetensors file (as a deployed model holds them); transformers' module is
called under `torch.no_grad()` in this process. Each repetition times one
call of each in turn (interleaved); the report gives medians and the ratio
RLX / PyTorch, after checking that the two outputs agree (rtol 1e-4).
Threads: 2 everywhere. Prints the CPU, the BLAS and the settings; writes
bench/out/moe.json.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python_packages"))
import rlx  # noqa: E402
from rlx import hir  # noqa: E402

EXPERTS, TOP_K = 8, 2


def torch_block(hidden, inter):
    import torch
    import transformers
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
    torch.manual_seed(0)
    block = MixtralSparseMoeBlock(transformers.MixtralConfig(
        hidden_size=hidden, intermediate_size=inter, num_local_experts=EXPERTS,
        num_experts_per_tok=TOP_K)).eval()
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    return block


def rlx_block(block, tokens, hidden, tmp):
    """The block as a HIR module file, its weights as safetensors, the
    input as .npy; returns rlx-run's arguments."""
    from safetensors.numpy import save_file
    sd = {k: v.detach().numpy().copy() for k, v in block.state_dict().items()}
    f = hir.Function("moe")
    x = f.input("x", (1, tokens, hidden))
    gate = f.param("gate.weight", sd["gate.weight"].shape)
    gu = f.param("experts.gate_up_proj", sd["experts.gate_up_proj"].shape)
    down = f.param("experts.down_proj", sd["experts.down_proj"].shape)
    weights, ids = hir.moe_router(x, gate, top_k=TOP_K, norm_topk_prob=True)
    f.output("y", hir.moe_experts(x, weights, ids, gu, down))
    (tmp / "moe.mlir").write_text(f.text())
    save_file({k: sd[k] for k in ("gate.weight", "experts.gate_up_proj", "experts.down_proj")},
              str(tmp / "moe.safetensors"))
    return [str(BUILD / "bin" / "rlx-run"), str(tmp / "moe.mlir"), "--weights",
            str(tmp / "moe.safetensors"), "--input", f"x={tmp / 'x.npy'}"]


class Server:
    """rlx-run --serve: compiled once, one timed run per request."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv + ["--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.once()

    def once(self):
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline().split()[1]) / 1000.0

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--intermediate", type=int, default=3584)
    ap.add_argument("--tokens", default="1,32,128")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    block = torch_block(args.hidden, args.intermediate)
    print(f"cpu: {cpu_model()}; threads: {THREADS}; torch {torch.__version__}; "
          f"experts {EXPERTS}, top-{TOP_K}, hidden {args.hidden}, intermediate "
          f"{args.intermediate}, f32")
    rows = []
    blas = None
    for t in [int(v) for v in args.tokens.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            tmp = pathlib.Path(d)
            argv = rlx_block(block, t, args.hidden, tmp)
            x = np.random.default_rng(t).standard_normal((1, t, args.hidden)).astype(np.float32)
            np.save(tmp / "x.npy", x)
            xt = torch.from_numpy(x)
            with torch.no_grad():
                want = block(xt).numpy()
            check = subprocess.run(argv + ["--output-dir", str(tmp / "out"), "-v"],
                                   capture_output=True, text=True, check=True)
            blas = blas or next(l for l in check.stdout.splitlines() if l.startswith("blas: "))
            got = np.load(tmp / "out" / "y.npy")
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
            server = Server(argv)
            times = {"rlx": [], "torch": []}
            for _ in range(args.reps):
                times["rlx"].append(server.once())
                t0 = time.perf_counter()
                with torch.no_grad():
                    block(xt)
                times["torch"].append(time.perf_counter() - t0)
            server.close()
        med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
        rows.append({"tokens": t, "rlx_ms": med["rlx"], "torch_ms": med["torch"],
                     "ratio": med["rlx"] / med["torch"]})
        if len(rows) == 1:
            print(blas)
        print(f"tokens {t:4d}: RLX {med['rlx']:8.2f} ms, PyTorch eager {med['torch']:8.2f} ms, "
              f"RLX / PyTorch {med['rlx'] / med['torch']:.2f}")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "moe.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                              "hidden": args.hidden,
                                              "intermediate": args.intermediate,
                                              "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
