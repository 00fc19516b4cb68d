#!/usr/bin/env python3
"""The same GGUF file run by RLX and by llama.cpp: prompt and decode tokens/s.

    python bench/cpu/bench_gguf.py [--build build] [--types q8_0,q4_k] [--reps 5]
                                   [--prompt 128] [--decode 8] [--layers 4]

A small random Llama (hidden 2048, intermediate 5632, 16 heads of 128, 4 KV
heads, ``--layers`` layers, vocabulary 32000, tied LM head) is written as one
GGUF file per type by gguf-py (Q8_0 by its own quantizer from N(0, 0.02)
weights; Q4_K as random valid blocks, gguf-py having no K-quant quantizer;
norms in F32; a dummy 32000-token vocabulary so llama.cpp loads it). Both
read that one file: RLX through ``rlx-gen --gguf`` and
``CompiledModel.load_weights`` (which dequantizes to f32 at load: RLX has no
kernels on the blocks yet), llama.cpp through llama-cpp-python
(``pip install llama-cpp-python``: it builds llama.cpp from source, native
CPU flags). Each repetition, interleaved: RLX's prefill of ``--prompt``
tokens, llama.cpp's (context reset first), then ``--decode`` single-token
steps of each (RLX at a fixed past of ``--prompt`` positions with a static
KV cache; llama.cpp continuing after its prompt). Threads: 2 in both.
Prints the CPU, the BLAS RLX uses, medians and the ratio RLX / llama.cpp
of tokens/s (> 1: RLX faster); writes ``bench/out/gguf.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
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

CFG = dict(hidden=2048, inter=5632, heads=16, kv_heads=4, head_dim=128, vocab=32000)


def write_gguf(path: pathlib.Path, qtype_name: str, layers: int, seed: int = 0) -> None:
    import gguf
    from gguf import GGMLQuantizationType as Q
    from gguf.quants import quantize
    qtype = {"q8_0": Q.Q8_0, "q4_k": Q.Q4_K}[qtype_name]
    rng = np.random.default_rng(seed)
    h, inter, nh, nkv, hd, v = (CFG[k] for k in ("hidden", "inter", "heads", "kv_heads",
                                                  "head_dim", "vocab"))
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(4096)
    w.add_embedding_length(h)
    w.add_feed_forward_length(inter)
    w.add_head_count(nh)
    w.add_head_count_kv(nkv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_tokenizer_model("llama")
    w.add_token_list([f"<t{i}>".encode() for i in range(v)])
    w.add_token_scores([0.0] * v)
    w.add_token_types([1] * v)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def weight(name, rows, cols):
        if qtype == Q.Q8_0:
            a = (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)
            w.add_tensor(name, quantize(a, Q.Q8_0), raw_dtype=Q.Q8_0)
            return
        n = rows * cols // 256
        raw = rng.integers(0, 256, (n, 144), dtype=np.uint8)
        d = np.array([2.0 ** -12], np.float16).view(np.uint8)
        raw[:, 0:2] = d
        raw[:, 2:4] = d
        w.add_tensor(name, raw.reshape(rows, -1), raw_dtype=Q.Q4_K)

    weight("token_embd.weight", v, h)
    w.add_tensor("output_norm.weight", np.ones(h, np.float32))
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(h, np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(h, np.float32))
        weight(p + "attn_q.weight", nh * hd, h)
        weight(p + "attn_k.weight", nkv * hd, h)
        weight(p + "attn_v.weight", nkv * hd, h)
        weight(p + "attn_output.weight", h, nh * hd)
        weight(p + "ffn_gate.weight", inter, h)
        weight(p + "ffn_up.weight", inter, h)
        weight(p + "ffn_down.weight", h, inter)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def rlx_models(path: pathlib.Path, prompt: int):
    gen = str(BUILD / "bin" / "rlx-gen")

    def compiled(*flags):
        text = subprocess.run([gen, "--gguf", str(path), *flags], check=True, capture_output=True,
                              text=True).stdout
        m = rlx.compile_cpu(rlx.parse(text))
        m.load_weights(path)
        return m

    return compiled("--seq", str(prompt)), compiled("--kv-cache", "--seq", "1", "--past",
                                                    str(prompt))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--types", default="q8_0,q4_k")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--decode", type=int, default=8)
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    try:
        import llama_cpp
    except ImportError:
        print("needs llama-cpp-python (pip install llama-cpp-python)", file=sys.stderr)
        return 2
    rng = np.random.default_rng(1)
    ids = rng.integers(3, CFG["vocab"], args.prompt).tolist()
    results = {}
    print(f"cpu: {cpu_model()}; threads: {THREADS}; llama-cpp-python {llama_cpp.__version__}; "
          f"{args.layers} layers, hidden {CFG['hidden']}, prompt {args.prompt}, "
          f"decode {args.decode} steps, {args.reps} interleaved repetitions")
    with tempfile.TemporaryDirectory() as tmp:
        for t in args.types.split(","):
            path = pathlib.Path(tmp) / f"llama-{t}.gguf"
            write_gguf(path, t, args.layers)
            prefill, decode = rlx_models(path, args.prompt)
            if t == args.types.split(",")[0]:
                print(f"rlx blas: {prefill.stats.get('blas', '?')}")
            llm = llama_cpp.Llama(model_path=str(path), n_ctx=args.prompt + args.decode + 8,
                                  n_threads=2, n_threads_batch=2, n_batch=args.prompt,
                                  verbose=False)
            kv = CFG["kv_heads"] * CFG["head_dim"]
            past = {f"past_key_values.{i}.{k}": np.zeros((1, args.prompt, kv), np.float32)
                    for i in range(args.layers) for k in ("key", "value")}
            feeds_p = {"input_ids": np.array([ids], np.int64),
                       "position_ids": np.arange(args.prompt, dtype=np.int64)}
            feeds_d = dict(past, input_ids=np.array([[ids[0]]], np.int64),
                           position_ids=np.array([args.prompt], np.int64))
            prefill.run(feeds_p)  # warm-up (weights packed)
            decode.run(feeds_d)
            times = {k: [] for k in ("rlx_prompt", "llama_prompt", "rlx_decode", "llama_decode")}
            for _ in range(args.reps):
                t0 = time.perf_counter()
                prefill.run(feeds_p)
                times["rlx_prompt"].append(time.perf_counter() - t0)
                llm.reset()
                t0 = time.perf_counter()
                llm.eval(ids)
                times["llama_prompt"].append(time.perf_counter() - t0)
                for s in range(args.decode):
                    t0 = time.perf_counter()
                    decode.run(feeds_d)
                    times["rlx_decode"].append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    llm.eval([ids[s]])
                    times["llama_decode"].append(time.perf_counter() - t0)
            med = {k: statistics.median(v) for k, v in times.items()}
            r = {"prompt_tok_s": {"rlx": args.prompt / med["rlx_prompt"],
                                  "llama.cpp": args.prompt / med["llama_prompt"]},
                 "decode_tok_s": {"rlx": 1 / med["rlx_decode"], "llama.cpp": 1 / med["llama_decode"]},
                 "file_bytes": path.stat().st_size}
            results[t] = r
            for k in ("prompt_tok_s", "decode_tok_s"):
                a, b = r[k]["rlx"], r[k]["llama.cpp"]
                print(f"{t:6} {k:13} rlx {a:9.1f}  llama.cpp {b:9.1f}  ratio {a / b:5.2f}")
            del llm, prefill, decode
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "gguf.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                               "args": vars(args), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
