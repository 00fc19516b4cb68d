#!/usr/bin/env python3
"""Greedy generation end to end on the CPU (examples/python/generate.py):
RLX's decode step compiled once per history capacity, against the same
generator compiling every history length (what it did before the padding
mask), and against transformers' generate (PyTorch eager, its KV cache).

    python bench/cpu/bench_generate.py [--hidden 512] [--layers 4] [--vocab 4096]
                                       [--prompt 16] [--new-tokens 32] [--reps 2]

A random-init LlamaForCausalLM (seeded; hidden 512, 4 layers, 8 heads
sharing 2 KV heads by default) is written by save_pretrained; each
repetition runs, in turn (interleaved), a fresh Generator (compilations
included, as a user's first call sees them), the same with the capacity
forced to the exact history length (one compilation per token), and
transformers' generate(do_sample=False). All three must give the same
tokens. The report gives the median wall time of each, the compilations
and compile seconds of the RLX runs and the ratios. Threads: 2. Prints
the CPU, the BLAS and the settings; writes bench/out/generate.json.
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

from bench_cpu import rlx_blas_text  # noqa: E402
from bench_moe import BUILD, ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "examples" / "python"))
import generate  # noqa: E402


class ExactGenerator(generate.Generator):
    """The history never padded: a compilation per history length."""

    @staticmethod
    def capacity(history: int) -> int:
        return history


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    import torch
    import transformers
    torch.set_num_threads(int(THREADS))
    cfg = transformers.LlamaConfig(hidden_size=a.hidden, intermediate_size=a.hidden * 11 // 4,
                                   num_hidden_layers=a.layers, num_attention_heads=8,
                                   num_key_value_heads=2, vocab_size=a.vocab,
                                   architectures=["LlamaForCausalLM"])
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    ckpt = pathlib.Path(tempfile.mkdtemp()) / "ckpt"
    model.save_pretrained(ckpt)
    prompt = np.random.default_rng(0).integers(3, a.vocab, a.prompt).tolist()

    def run_torch():
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt]), max_new_tokens=a.new_tokens,
                                 min_new_tokens=a.new_tokens, do_sample=False, pad_token_id=0,
                                 eos_token_id=None)
        return out[0, len(prompt):].tolist(), None

    def runner(cls):
        def run():
            gen = cls(ckpt, "cpu")
            return gen.generate(prompt, a.new_tokens), gen
        return run

    runs = {"rlx": runner(generate.Generator), "rlx_exact": runner(ExactGenerator),
            "torch": run_torch}
    times = {k: [] for k in runs}
    stats = {}
    tokens = {}
    for _ in range(a.reps):
        for name, fn in runs.items():
            t = time.perf_counter()
            toks, gen = fn()
            times[name].append(time.perf_counter() - t)
            tokens[name] = toks
            if gen is not None:
                stats[name] = (gen.compiled, gen.compile_s)
    assert tokens["rlx"] == tokens["rlx_exact"] == tokens["torch"], tokens
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"CPU: {cpu_model()}")
    print(f"threads: {THREADS}; torch {torch.__version__}, transformers {transformers.__version__}; "
          f"RLX: rlx.compile_cpu (LLVM -O3, host CPU), {rlx_blas_text(BUILD)}")
    print(f"LlamaForCausalLM: hidden {a.hidden}, {a.layers} layers, 8 heads / 2 KV heads, vocab "
          f"{a.vocab}; prompt {a.prompt}, {a.new_tokens} new tokens, greedy; tokens agree")
    print(f"{'':12}{'median s':>10}{'compiles':>10}{'compile s':>11}")
    for k in runs:
        c, s = stats.get(k, ("-", None))
        print(f"{k:12}{med[k]:10.2f}{c:>10}{'' if s is None else f'{s:11.2f}'}")
    print(f"RLX / RLX compiling every length: {med['rlx'] / med['rlx_exact']:.2f}x; "
          f"RLX / transformers: {med['rlx'] / med['torch']:.2f}x "
          f"(compilations included; without them {(med['rlx'] - stats['rlx'][1]) / med['torch']:.2f}x)")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "generate.json").write_text(json.dumps({
        "cpu": cpu_model(), "threads": THREADS, "hidden": a.hidden, "layers": a.layers,
        "vocab": a.vocab, "prompt": a.prompt, "new_tokens": a.new_tokens, "median_s": med,
        "compiles": {k: v[0] for k, v in stats.items()},
        "compile_s": {k: v[1] for k, v in stats.items()}}, indent=1))


if __name__ == "__main__":
    main()
