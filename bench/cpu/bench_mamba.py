#!/usr/bin/env python3
"""CPU latency of a Mamba-1 block (RMSNorm + MambaMixer + residual) at a
long prefill: RLX against PyTorch eager running transformers' own
MambaForCausalLM, whose mixer takes its PyTorch path on a CPU (no
mamba-ssm kernels: the step-by-step scan over time, "the slow path").

    python bench/cpu/bench_mamba.py [--seq 2048] [--hidden 768] [--state 16] [--reps 5]
                                    [--chunk N]

Both sides run one MambaForCausalLM layer (mamba-130m's hidden 768, state
16, expand 2, conv 4 by default) with a 256-token vocabulary, so the
embedding and LM head are negligible beside the block; the same seeded f32
weights. RLX builds the model from the config (rlx.models.from_hf_config,
seq static) and runs it compiled for this CPU (rlx.compile_cpu, weights
bound once); its selective scan is the chunked decomposition
(rlx_mir.selective_scan; `--chunk` sets chunk_size, default: the op's).
Each repetition times one forward of each in turn (interleaved) after a
warm-up; the report gives medians and the ratio RLX / PyTorch after
checking that the logits agree. Threads: 2 everywhere. Prints the CPU, the
BLAS and the settings; writes bench/out/mamba.json.
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
from rlx.models import from_hf_config  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--state", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--chunk", type=int, help="selective_scan chunk_size (default: the op's)")
    a = ap.parse_args()
    import torch
    import transformers
    torch.set_num_threads(int(THREADS))
    cfg = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": a.hidden,
           "state_size": a.state, "num_hidden_layers": 1, "vocab_size": 256, "expand": 2,
           "conv_kernel": 4}
    torch.manual_seed(0)
    model = transformers.MambaForCausalLM(transformers.MambaConfig(**cfg)).eval()
    weights = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    ids = np.random.default_rng(0).integers(0, 256, (1, a.seq), dtype=np.int64)

    module = from_hf_config(cfg, seq=a.seq)
    if a.chunk:
        module = rlx.parse(module.text().replace("delta_softplus",
                                                 f"delta_softplus chunk_size = {a.chunk}"))
    t0 = time.perf_counter()
    compiled = rlx.compile_cpu(module)
    compile_s = time.perf_counter() - t0
    compiled.hold_weights(weights)  # held once, as a deployed model's

    def run_rlx():
        return compiled.run(input_ids=ids)["logits"]

    def run_torch():
        with torch.no_grad():
            return model(input_ids=torch.from_numpy(ids), use_cache=False).logits.numpy()

    got, want = run_rlx(), run_torch()
    err = float(np.abs(got - want).max() / np.abs(want).max())
    assert err < 1e-3, f"logits differ: max |RLX - PyTorch| / max |PyTorch| = {err}"
    times = {"rlx": [], "torch": []}
    for _ in range(a.reps):
        for name, fn in (("rlx", run_rlx), ("torch", run_torch)):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"CPU: {cpu_model()}")
    print(f"threads: {THREADS}; torch {torch.__version__}, transformers {transformers.__version__}; "
          f"RLX: rlx.compile_cpu (LLVM -O3, host CPU), {rlx_blas_text(BUILD)}")
    print(f"Mamba-1 block: hidden {a.hidden}, intermediate {2 * a.hidden}, state {a.state}, "
          f"conv 4, seq {a.seq}, chunk {a.chunk or 'default'}; RLX compile {compile_s:.1f} s; "
          f"logits agree to {err:.1e} (relative to the largest)")
    print(f"{'':12}{'median ms':>12}")
    for k in ("rlx", "torch"):
        print(f"{k:12}{med[k] * 1e3:12.1f}")
    print(f"RLX / PyTorch (transformers' slow path): {med['rlx'] / med['torch']:.2f}x")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "mamba.json").write_text(json.dumps({
        "cpu": cpu_model(), "threads": THREADS, "seq": a.seq, "hidden": a.hidden,
        "state": a.state, "chunk": a.chunk, "median_s": med, "ratio": med["rlx"] / med["torch"],
        "compile_s": compile_s}, indent=1))


if __name__ == "__main__":
    main()
