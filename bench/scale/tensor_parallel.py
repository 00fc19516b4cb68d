"""Tensor parallelism on the CPU path: time per step, communication and weight
bytes per rank at tp = 1, 2, 4 (processes on this machine, Open MPI).

    .venv/bin/python bench/scale/tensor_parallel.py [--seq 32] [--repeat 5] [--rounds 3]

Models (from ../shared/models, seeded weights): one Llama-3.1-8B decoder
layer (`rlx-gen --layer-only`), a 2-layer Llama-3.2-1B (embeddings, 2
layers, norm, tied LM head) and a GPT-2 block (packed q|k|v), a prefill of
`--seq` tokens. tp = 1 is the plain
`rlx-run` (the baseline); tp = N is `mpirun -np N rlx-run --tp N`. The runs
of one model are interleaved, rotating the order every round; each reports
the median of `--repeat` timed steps after a warm-up, and the table shows the
median over rounds. BLAS threads: `--threads` in total (each of the N ranks
gets max(1, threads / N)).

Communication: the all-reduces rlx-run counts in the compiled per-rank
program and the bytes they reduce; a ring all-reduce of P bytes sends
2·(tp−1)/tp·P bytes per rank. Megatron's minimum: two all-reduces of the
layer's activations (batch·seq·hidden·4 bytes) per layer, and for a whole
model one more for the vocab-parallel embedding and an all-gather of the
logits ((tp−1)/tp·batch·seq·vocab·4 bytes per rank; RLX all-reduces the
zero-padded logits instead, LLVM 22's MPI dialect having no all-gather).
Weight bytes are the parameters each rank holds, against the whole model's.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from machine import cpu_model  # noqa: E402
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
SHARED = next((p for p in (os.environ.get("RLX_SHARED_DIR"), ROOT.parent / "shared")
               if p and (pathlib.Path(p) / "models").is_dir()), None)


def run(model: pathlib.Path, tp: int, seq: int, repeat: int, threads: int) -> dict:
    per_rank = max(1, threads // tp)
    cmd = [str(BUILD / "bin" / "rlx-run"), str(model), "--dims", f"seq={seq}",
           "--repeat", str(repeat), "--warmup", "1", "--blas-threads", str(per_rank)]
    if tp > 1:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(tp), *cmd,
               "--tp", str(tp)]
    env = dict(os.environ, OMP_NUM_THREADS=str(per_rank), OMP_WAIT_POLICY="PASSIVE")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    text = out.stdout
    ms = float(re.search(r"^run: ([\d.]+) ms median", text, re.M).group(1))
    weights = int(re.search(r"^weights: (\d+) bytes", text, re.M).group(1))
    coll = re.search(r"^collectives per step: (\d+) all-reduce\(s\), (\d+) bytes", text, re.M)
    blas = re.search(r"^blas: (.*)$", text, re.M)
    return {"ms": ms, "weights": weights, "all_reduces": int(coll.group(1)) if coll else 0,
            "reduced": int(coll.group(2)) if coll else 0, "blas": blas.group(1) if blas else "?",
            "threads": per_rank}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tp", type=int, nargs="+", default=[1, 2, 4])
    args = ap.parse_args()
    if SHARED is None or shutil.which("mpirun") is None:
        sys.exit("needs ../shared/models and Open MPI's mpirun (scripts/setup.sh installs it)")
    models = {
        "Llama-3.1-8B layer": (pathlib.Path(SHARED) / "models" / "llama-3.1-8b.json",
                               ["--layer-only"], 1, False),
        "Llama-3.2-1B, 2 layers": (pathlib.Path(SHARED) / "models" / "llama-3.2-1b.json",
                                   ["--layers=2"], 2, True),
        # Packed c_attn (q|k|v split part by part), Conv1D weights, biases.
        "GPT-2 block": (pathlib.Path(SHARED) / "models" / "gpt2.json", ["--layer-only"], 1,
                        False),
    }
    print(f"CPU: {cpu_model()} ({os.cpu_count()} hardware threads); BLAS threads "
          f"{args.threads} in total, max(1, {args.threads}/tp) per rank; seq {args.seq}, "
          f"batch 1, f32; {args.repeat} timed steps after 1 warm-up per run, median of "
          f"{args.rounds} interleaved rounds; Open MPI "
          f"{subprocess.run(['mpirun', '--version'], capture_output=True, text=True).stdout.split()[3]}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (config, gen_args, layers, whole_model) in models.items():
            path = pathlib.Path(tmp) / "model.mlir"
            subprocess.run([str(BUILD / "bin" / "rlx-gen"), str(config), *gen_args,
                            "-o", str(path)], check=True)
            cfg = json.loads(config.read_text())
            hidden = cfg.get("hidden_size", cfg.get("n_embd"))
            vocab = cfg["vocab_size"]
            results = {tp: [] for tp in args.tp}
            for r in range(args.rounds):
                order = args.tp[r % len(args.tp):] + args.tp[:r % len(args.tp)]
                for tp in order:
                    results[tp].append(run(path, tp, args.seq, args.repeat, args.threads))
            base = statistics.median(x["ms"] for x in results[args.tp[0]])
            whole = results[args.tp[0]][0]["weights"]
            activation = args.seq * hidden * 4
            for tp in args.tp:
                last = results[tp][-1]
                ms = statistics.median(x["ms"] for x in results[tp])
                ring = 2 * (tp - 1) / tp * last["reduced"]
                ring_activation = 2 * (tp - 1) / tp * activation
                minimum = 2 * layers * ring_activation
                if whole_model:
                    minimum += ring_activation + (tp - 1) / tp * args.seq * vocab * 4
                rows.append((name, tp, ms, ms / base, last["all_reduces"], last["reduced"],
                             ring, minimum, last["weights"], whole, last["blas"]))
    print(f"BLAS: {rows[0][-1]}")
    print()
    print("| model | tp | ms / step | vs tp = 1 | all-reduces / step | bytes reduced / step "
          "| ring bytes sent / rank | Megatron minimum | weight bytes / rank | of the whole |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, tp, ms, ratio, n, reduced, ring, minimum, w, whole, _ in rows:
        print(f"| {name} | {tp} | {ms:.1f} | {ratio:.2f} | {n} | {reduced} | {ring:.0f} | "
              f"{minimum:.0f} | {w} | {w / whole:.3f} |")


if __name__ == "__main__":
    main()
