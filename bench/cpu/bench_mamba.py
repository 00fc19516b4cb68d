#!/usr/bin/env python3
"""CPU latency of one state-space layer at a long prefill: RLX against
PyTorch eager running transformers' own model, whose mixer takes its
PyTorch path on a CPU (no mamba-ssm / causal-conv1d / FLA kernels).

    python bench/cpu/bench_mamba.py [--family mamba|mamba2|qwen3_next] [--seq 2048]
                                    [--hidden 768] [--state 16] [--reps 5] [--chunk N]

--family picks the layer (default mamba):
  mamba       MambaForCausalLM: RMSNorm + MambaMixer + residual (mamba-130m's
              hidden 768, state 16, expand 2, conv 4); transformers scans
              step by step over time ("the slow path"); RLX's selective scan
              is the chunked decomposition (`--chunk` sets its chunk_size).
  mamba2      Mamba2ForCausalLM: Mamba2Mixer (24 heads of 64, one group,
              state 128 unless --state, chunk 256), transformers' chunked
              torch_forward against rlx_mir.ssd_scan's decomposition.
  qwen3_next  Qwen3NextForCausalLM with one Gated DeltaNet layer and a dense
              MLP (8 key heads of 64 serving 16 value heads of 64):
              transformers' torch_chunk_gated_delta_rule against
              rlx_mir.gated_delta_rule's WY decomposition.
Both sides run the same seeded f32 weights with a 256-token vocabulary, so
the embedding and LM head are negligible beside the layer. RLX builds the
model from the config (rlx.models.from_hf_config, seq static) and runs it
compiled for this CPU (rlx.compile_cpu, weights bound once). Each
repetition times one forward of each in turn (interleaved) after a
warm-up; the report gives medians and the ratio RLX / PyTorch after
checking that the logits agree. Threads: 2 everywhere. Prints the CPU, the
BLAS and the settings; writes bench/out/<family>.json.
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
    ap.add_argument("--family", choices=("mamba", "mamba2", "qwen3_next"), default="mamba")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--state", type=int, help="state size (default 16; Mamba-2 128)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--chunk", type=int, help="the scan's chunk_size (default: the op's)")
    a = ap.parse_args()
    import torch
    import transformers
    torch.set_num_threads(int(THREADS))
    common = {"hidden_size": a.hidden, "num_hidden_layers": 1, "vocab_size": 256}
    if a.family == "mamba":
        a.state = a.state or 16
        cfg = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", **common,
               "state_size": a.state, "expand": 2, "conv_kernel": 4}
        what = (f"Mamba-1 block: hidden {a.hidden}, intermediate {2 * a.hidden}, "
                f"state {a.state}, conv 4")
    elif a.family == "mamba2":
        a.state = a.state or 128
        cfg = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", **common,
               "state_size": a.state, "expand": 2, "conv_kernel": 4, "num_heads": 2 * a.hidden // 64,
               "head_dim": 64, "n_groups": 1, "chunk_size": a.chunk or 256}
        what = (f"Mamba-2 block: hidden {a.hidden}, {2 * a.hidden // 64} heads of 64, "
                f"state {a.state}, one group, conv 4")
    else:
        cfg = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", **common,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
               "intermediate_size": 2 * a.hidden, "num_experts": 0,
               "layer_types": ["linear_attention"], "linear_num_key_heads": 8,
               "linear_num_value_heads": 16, "linear_key_head_dim": 64,
               "linear_value_head_dim": 64, "linear_conv_kernel_dim": 4}
        what = (f"Qwen3-Next Gated DeltaNet layer + dense MLP: hidden {a.hidden}, 8 key heads "
                f"serving 16 value heads of 64, conv 4")
    config_class = transformers.AutoConfig.for_model(cfg["model_type"]).__class__
    model_class = getattr(transformers, cfg["architectures"][0])
    torch.manual_seed(0)
    model = model_class(config_class(**{k: v for k, v in cfg.items() if k != "model_type"})).eval()
    weights = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    ids = np.random.default_rng(0).integers(0, 256, (1, a.seq), dtype=np.int64)

    module = from_hf_config(cfg, seq=a.seq)
    if a.chunk and a.family == "mamba":
        module = rlx.parse(module.text().replace("delta_softplus",
                                                 f"delta_softplus chunk_size = {a.chunk}"))
    if a.chunk and a.family == "qwen3_next":
        module = rlx.parse(module.text().replace("use_qk_l2norm",
                                                 f"use_qk_l2norm chunk_size = {a.chunk}"))
    t0 = time.perf_counter()
    compiled = rlx.compile_cpu(module)
    compile_s = time.perf_counter() - t0
    compiled.hold_weights(weights)  # held once, as a deployed model's

    inputs = {"input_ids": ids}
    if any(arg["name"] == "position_ids" for arg in compiled.arguments):
        inputs["position_ids"] = np.arange(a.seq, dtype=np.int64)

    def run_rlx():
        return compiled.run(**inputs)["logits"]

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
    print(f"{what}, seq {a.seq}, chunk {a.chunk or 'default'}; RLX compile {compile_s:.1f} s; "
          f"logits agree to {err:.1e} (relative to the largest)")
    print(f"{'':12}{'median ms':>12}")
    for k in ("rlx", "torch"):
        print(f"{k:12}{med[k] * 1e3:12.1f}")
    print(f"RLX / PyTorch (transformers' slow path): {med['rlx'] / med['torch']:.2f}x")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / f"{a.family}.json").write_text(json.dumps({
        "cpu": cpu_model(), "threads": THREADS, "family": a.family, "seq": a.seq,
        "hidden": a.hidden,
        "state": a.state, "chunk": a.chunk, "median_s": med, "ratio": med["rlx"] / med["torch"],
        "compile_s": compile_s}, indent=1))


if __name__ == "__main__":
    main()
