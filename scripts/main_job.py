#!/usr/bin/env python3
"""The main job: Llama-3.2-1B through RLX on the CPU, checked against NumPy.

Two programs, both from HIR through fusion to CPU code with rlx-run:
  1. the bundled example, one Llama-3.2-1B decoder layer
     (examples/llama-3.2-1b-layer.mlir);
  2. a 2-layer Llama-3.2-1B model (embedding, 2 decoder layers, final norm,
     tied LM head) that rlx-gen builds from ../shared/models/llama-3.2-1b.json.
Weights and inputs are seeded NumPy values (np.random.default_rng(seed)) in
the usual initialization scales, passed to rlx-run as .npy files. The
reference is the float64 NumPy decoder layer of test/python/reference.py.
Prints one summary row per program and exits non-zero when an error exceeds
the f32 bound (1e-4 relative to the largest reference value).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
import reference as ref  # noqa: E402
from harness import shared_dir, signature  # noqa: E402

TOLERANCE = 1e-4


def seeded_values(args: list[dict], dims: dict, rng: np.random.Generator, vocab: int) -> dict:
    """Values for every argument: norm weights 1 + 0.1 z, matrices z / sqrt(fan-in), float
    inputs z, positions counting from 0, token ids uniform in the vocabulary."""
    values = {}
    for a in args:
        shape = tuple(dims[d] if isinstance(d, str) else d for d in a["shape"])
        name = a["name"]
        if a["dtype"].startswith("i"):
            values[name] = (np.arange(shape[-1]).reshape(shape) if "position" in name
                            else rng.integers(0, vocab, shape)).astype(np.int64)
        elif len(shape) == 1 and a["param"]:
            values[name] = (1 + 0.1 * rng.standard_normal(shape, np.float32)).astype(np.float32)
        elif a["param"]:
            values[name] = rng.standard_normal(shape, np.float32) * np.float32(shape[-1] ** -0.5)
        else:
            values[name] = rng.standard_normal(shape, np.float32)
    return values


def run_rlx(build: pathlib.Path, module: pathlib.Path, values: dict, dims: dict, tmp: pathlib.Path,
            repeat: int) -> tuple[dict, dict]:
    """rlx-run on .npy inputs; returns (outputs, facts parsed from its report)."""
    tmp.mkdir(parents=True, exist_ok=True)
    cmd = [str(build / "bin" / "rlx-run"), str(module), "--output-dir", str(tmp / "out"),
           "--dims", ",".join(f"{k}={v}" for k, v in dims.items()),
           "--warmup", "1", "--repeat", str(repeat)]
    for i, (name, v) in enumerate(values.items()):
        np.save(tmp / f"in{i}.npy", v)
        cmd += ["--input", f"{name}={tmp / f'in{i}.npy'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"rlx-run failed:\n{proc.stderr}")
    report = proc.stdout
    facts = {}
    if m := re.search(r"MIR ops (\d+) -> (\d+), compute ops \(kernels\) (\d+) -> (\d+)", report):
        facts |= {"ops": f"{m[1]} -> {m[2]}", "kernels": f"{m[3]} -> {m[4]}"}
    if m := re.search(r"compile: ([\d.]+) ms", report):
        facts["compile_ms"] = float(m[1])
    if m := re.search(r"run: ([\d.]+) ms median", report):
        facts["run_ms"] = float(m[1])
    if m := re.search(r"arena: (\d+) bytes", report):
        facts["arena"] = int(m[1])
    outputs = {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}
    return outputs, facts


def layer_config(cfg: dict) -> dict:
    return {"heads": cfg["num_attention_heads"], "kv_heads": cfg["num_key_value_heads"],
            "head_dim": cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"]),
            "eps": cfg["rms_norm_eps"], "rope_theta": cfg["rope_theta"],
            "rope_scaling": cfg.get("rope_scaling")}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seq", type=int, default=8, help="tokens (default 8)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3, help="timed runs per program (median)")
    p.add_argument("--build", default=os.environ.get("RLX_BUILD_DIR", ROOT / "build"), type=pathlib.Path)
    # The project's shared inputs: $RLX_SHARED_DIR, ../shared next to the
    # checkout, or /work/shared (as the tests look for them).
    p.add_argument("--shared", default=shared_dir(), type=pathlib.Path)
    a = p.parse_args()
    if a.shared is None:
        print("main job: ../shared/models not found; set RLX_SHARED_DIR or pass --shared",
              file=sys.stderr)
        return 2
    config_path = a.shared / "models" / "llama-3.2-1b.json"
    cfg = json.loads(config_path.read_text())
    lc = layer_config(cfg)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "all cores")
    print(f"== RLX main job: Llama-3.2-1B, f32, batch 1, seq {a.seq}, seed {a.seed}, "
          f"OpenBLAS threads: {threads}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        rng = np.random.default_rng(a.seed)

        # 1. The bundled example layer (argument names without the layer prefix).
        module = ROOT / "examples" / "llama-3.2-1b-layer.mlir"
        dims = {"seq": a.seq}
        values = seeded_values(signature(module.read_text()), dims, rng, cfg["vocab_size"])
        t0 = time.perf_counter()
        out, facts = run_rlx(a.build, module, values, dims, tmp / "layer", a.repeat)
        want, _, _ = ref.llama_layer(values["hidden_states"], values["position_ids"], values, lc, prefix="")
        rows.append(("example decoder layer", facts, out["result0"], want, time.perf_counter() - t0))

        # 2. A 2-layer model from the config.
        module = tmp / "llama-2-layers.mlir"
        gen = subprocess.run([str(a.build / "bin" / "rlx-gen"), str(config_path), "--layers", "2",
                              "-o", str(module)], capture_output=True, text=True)
        if gen.returncode != 0:
            sys.exit(f"rlx-gen failed:\n{gen.stderr}")
        values = seeded_values(signature(module.read_text()), dims, rng, cfg["vocab_size"])
        t0 = time.perf_counter()
        out, facts = run_rlx(a.build, module, values, dims, tmp / "model", a.repeat)
        embed = values["model.embed_tokens.weight"]
        h = embed[values["input_ids"]].astype(np.float64)
        for layer in range(2):
            h, _, _ = ref.llama_layer(h, values["position_ids"], values, lc, prefix=f"model.layers.{layer}.")
        h = ref.rms_norm(h, values["model.norm.weight"], lc["eps"])
        logits = h @ embed.T
        rows.append(("2-layer model (rlx-gen)", facts, out["logits"], logits, time.perf_counter() - t0))

    print(f"{'program':<26}{'MIR ops':>12}{'kernels':>10}{'arena MiB':>11}{'compile ms':>12}"
          f"{'run ms':>9}{'max rel err':>13}")
    ok = True
    for name, facts, got, want, _ in rows:
        err = float(np.abs(got - want).max() / np.abs(want).max())
        ok &= err < TOLERANCE
        arena = f"{facts['arena'] / 2**20:.2f}" if "arena" in facts else "-"
        print(f"{name:<26}{facts.get('ops', '?'):>12}{facts.get('kernels', '?'):>10}{arena:>11}"
              f"{facts.get('compile_ms', 0):>12.0f}{facts.get('run_ms', 0):>9.1f}{err:>13.2e}")
    print(f"max error bound {TOLERANCE:g} relative: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
