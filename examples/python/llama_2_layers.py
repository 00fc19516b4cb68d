#!/usr/bin/env python3
"""Build a 2-layer Llama-3.2-1B from its config.json, compile it for the CPU,
run it and check it against NumPy.

    python examples/python/llama_2_layers.py [path/to/llama-3.2-1b.json] [--seq 8]

Needs the rlx package (``pip install ./python``, or ``PYTHONPATH=build/python_packages``
after a CMake build). Weights are seeded random values in the usual scales;
the NumPy reference below follows HF's LlamaForCausalLM (llama3 RoPE scaling,
GQA by repeating K/V heads, tied LM head) and shares no code with RLX.
"""
import argparse
import json
import pathlib
import time

import numpy as np

import rlx
from rlx.models import from_hf_config

HERE = pathlib.Path(__file__).resolve()


def llama3_inv_freq(cfg, head_dim):
    inv = 1.0 / cfg["rope_theta"] ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv
    old, lo, hi, fac = (rs["original_max_position_embeddings"], rs["low_freq_factor"],
                        rs["high_freq_factor"], rs["factor"])
    wavelen = 2 * np.pi / inv
    smooth = np.clip((old / wavelen - lo) / (hi - lo), 0, 1)
    scaled = (1 - smooth) * inv / fac + smooth * inv
    return np.where(wavelen < old / hi, inv, np.where(wavelen > old / lo, inv / fac, scaled))


def reference_logits(w, ids, cfg, layers):
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg.get("head_dim", cfg["hidden_size"] // H)
    eps = cfg["rms_norm_eps"]
    norm = lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g
    S = ids.shape[1]
    ang = np.arange(S)[:, None] * llama3_inv_freq(cfg, D).astype(np.float32)[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    rot = lambda x: np.concatenate([-x[..., D // 2:], x[..., :D // 2]], -1)
    x = w["model.embed_tokens.weight"][ids[0]].astype(np.float64)        # [S, hidden]
    for i in range(layers):
        p = f"model.layers.{i}."
        h = norm(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(S, H, D).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(S, KV, D).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(S, KV, D).transpose(1, 0, 2)
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k, v = np.repeat(k, H // KV, 0), np.repeat(v, H // KV, 0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(D) + np.triu(np.full((S, S), -np.inf), 1)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        x = x + (probs @ v).transpose(1, 0, 2).reshape(S, H * D) @ w[p + "self_attn.o_proj.weight"].T
        h = norm(x, w[p + "post_attention_layernorm.weight"])
        gate, up = h @ w[p + "mlp.gate_proj.weight"].T, h @ w[p + "mlp.up_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ w[p + "mlp.down_proj.weight"].T
    return (norm(x, w["model.norm.weight"]) @ w["model.embed_tokens.weight"].T)[None]


def main():
    default = HERE.parents[2].parent / "shared" / "models" / "llama-3.2-1b.json"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", default=str(default))
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--layers", type=int, default=2)
    args = ap.parse_args()
    cfg = json.loads(pathlib.Path(args.config).read_text())

    module = from_hf_config(args.config, num_layers=args.layers)
    t0 = time.perf_counter()
    model = rlx.compile_cpu(module, dims={"seq": args.seq})
    print(f"compiled in {(time.perf_counter() - t0) * 1e3:.0f} ms: {model.stats}")

    rng = np.random.default_rng(0)
    inputs = {}
    for a in model.arguments:
        name, shape = a["name"], a["shape"]
        if name == "input_ids":
            inputs[name] = rng.integers(0, cfg["vocab_size"], shape)
        elif name == "position_ids":
            inputs[name] = np.arange(shape[-1], dtype=np.int64).reshape(shape)
        elif len(shape) == 1:
            inputs[name] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            inputs[name] = (rng.standard_normal(shape, np.float32) / np.sqrt(shape[-1])).astype(np.float32)
    t0 = time.perf_counter()
    logits = model.run(inputs)["logits"]
    print(f"ran in {(time.perf_counter() - t0) * 1e3:.0f} ms (includes packing weights once)")
    ref = reference_logits(inputs, inputs["input_ids"], cfg, args.layers)
    err = float(np.abs(logits - ref).max() / np.abs(ref).max())
    print(f"logits {logits.shape}, max error {err:.2e} relative ({'OK' if err < 1e-4 else 'FAIL'})")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
