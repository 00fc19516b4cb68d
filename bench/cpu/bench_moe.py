#!/usr/bin/env python3
"""CPU latency of a sparse MoE layer: RLX against PyTorch eager running
transformers' own block (Mixtral's `MixtralSparseMoeBlock`, DeepSeek-V3's
`DeepseekV3MoE`, Llama-4's `Llama4TextMoe`).

    python bench/cpu/bench_moe.py [--family mixtral|deepseek_v3|llama4] [--reps 9]
                                  [--hidden 1024] [--intermediate N] [--tokens 1,32,128]

Each family's block scaled down to fit a small machine by --hidden (default
1024) with its own expert count, top-k and intermediate/hidden ratio:
Mixtral-8x7B 8 experts top-2, 14336 / 4096 (intermediate 3584 at hidden
1024); DeepSeek-V3 64 of its 256 experts, top-8 in 4 of 8 groups (sigmoid
scores, the correction bias, routed scaling 2.5) plus one shared expert,
2048 / 7168 (intermediate 288); Llama-4 Scout 16 experts top-1 (the
sigmoid score on the expert's input) plus the shared expert, 8192 / 5120
(intermediate 1632). Both sides get the same seeded f32 weights: RLX builds
the block from `rlx_hir.moe_router` + `moe_experts` (+ `swiglu` for a
shared expert) and `rlx-run --serve` runs it with the weights loaded once
from a safetensors file (as a deployed model holds them; Llama-4's
[E, H, 2I] experts are transposed once at load); transformers' module is
called under `torch.no_grad()` in this process. Each repetition times one
call of each in turn (interleaved); the report gives medians and the ratio
RLX / PyTorch, after checking that the two outputs agree (rtol 1e-4).
Threads: 2 everywhere. Prints the CPU, the BLAS and the settings; writes
bench/out/moe.json (moe-<family>.json for the others).
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
from rlx import hir, mir  # noqa: E402

# family: experts, top-k, intermediate / hidden
FAMILIES = {"mixtral": (8, 2, 14336 / 4096), "deepseek_v3": (64, 8, 2048 / 7168),
            "llama4": (16, 1, 8192 / 5120)}


def torch_block(family, hidden, inter):
    import torch
    import transformers as tf
    experts, top_k, _ = FAMILIES[family]
    torch.manual_seed(0)
    if family == "mixtral":
        from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
        block = MixtralSparseMoeBlock(tf.MixtralConfig(
            hidden_size=hidden, intermediate_size=inter, num_local_experts=experts,
            num_experts_per_tok=top_k))
    elif family == "deepseek_v3":
        from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE
        block = DeepseekV3MoE(tf.DeepseekV3Config(
            hidden_size=hidden, moe_intermediate_size=inter, n_routed_experts=experts,
            num_experts_per_tok=top_k, n_group=8, topk_group=4, n_shared_experts=1))
    else:
        from transformers.models.llama4.modeling_llama4 import Llama4TextMoe
        block = Llama4TextMoe(tf.Llama4TextConfig(
            hidden_size=hidden, intermediate_size=inter, num_local_experts=experts,
            num_experts_per_tok=top_k))
    block.eval()
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
        for name, b in block.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.1 * torch.randn_like(b))
    return block


def output_of(block, x):
    out = block(x)
    return (out[0] if isinstance(out, tuple) else out).reshape(x.shape)


def rlx_block(family, block, tokens, hidden, tmp):
    """The block as a HIR module file, its weights as safetensors, the
    input as .npy; returns rlx-run's arguments."""
    from safetensors.numpy import save_file
    sd = {k: v.detach().numpy().copy() for k, v in block.state_dict().items()}
    experts, top_k, _ = FAMILIES[family]
    f = hir.Function("moe")
    x = f.input("x", (1, tokens, hidden))
    p = {n: f.param(n, a.shape) for n, a in sd.items()}
    gu, down = p["experts.gate_up_proj"], p["experts.down_proj"]
    if family == "mixtral":
        weights, ids = hir.moe_router(x, p["gate.weight"], top_k=top_k, norm_topk_prob=True)
        y = hir.moe_experts(x, weights, ids, gu, down)
    elif family == "deepseek_v3":
        weights, ids = hir.moe_router(x, p["gate.weight"], None, p["gate.e_score_correction_bias"],
                                      top_k=top_k, scoring="sigmoid", norm_topk_prob=True,
                                      routed_scaling_factor=2.5, n_group=8, topk_group=4)
        s = "shared_experts."
        y = mir.add(hir.moe_experts(x, weights, ids, gu, down),
                    hir.swiglu(x, p[s + "gate_proj.weight"], p[s + "up_proj.weight"],
                               p[s + "down_proj.weight"]))
    else:
        weights, ids = hir.moe_router(x, p["router.weight"], top_k=top_k, scoring="sigmoid")
        s = "shared_expert."
        y = mir.add(hir.moe_experts(x, weights, ids, mir.transpose(gu, permutation=[0, 2, 1]),
                                    mir.transpose(down, permutation=[0, 2, 1]), weights_on_input=True),
                    hir.swiglu(x, p[s + "gate_proj.weight"], p[s + "up_proj.weight"],
                               p[s + "down_proj.weight"]))
    f.output("y", y)
    (tmp / "moe.mlir").write_text(f.text())
    save_file(sd, str(tmp / "moe.safetensors"))
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
    ap.add_argument("--family", choices=list(FAMILIES), default="mixtral")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--intermediate", type=int, default=None,
                    help="default: the family's ratio to --hidden, a multiple of 32")
    ap.add_argument("--tokens", default="1,32,128")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(int(THREADS))
    experts, top_k, ratio = FAMILIES[args.family]
    args.intermediate = args.intermediate or int(round(args.hidden * ratio / 32)) * 32
    block = torch_block(args.family, args.hidden, args.intermediate)
    print(f"cpu: {cpu_model()}; threads: {THREADS}; torch {torch.__version__}; "
          f"{args.family}: experts {experts}, top-{top_k}, hidden {args.hidden}, intermediate "
          f"{args.intermediate}, f32")
    rows = []
    blas = None
    for t in [int(v) for v in args.tokens.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            tmp = pathlib.Path(d)
            argv = rlx_block(args.family, block, t, args.hidden, tmp)
            x = np.random.default_rng(t).standard_normal((1, t, args.hidden)).astype(np.float32)
            np.save(tmp / "x.npy", x)
            xt = torch.from_numpy(x)
            with torch.no_grad():
                want = output_of(block, xt).numpy()
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
                    output_of(block, xt)
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
    name = "moe.json" if args.family == "mixtral" else f"moe-{args.family}.json"
    (out / name).write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                        "family": args.family, "hidden": args.hidden,
                                        "intermediate": args.intermediate, "rows": rows},
                                       indent=1))


if __name__ == "__main__":
    main()
