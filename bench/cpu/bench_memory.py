#!/usr/bin/env python3
"""Peak memory of `rlx-run --weights` against the checkpoint it loads, with
PyTorch (transformers' own modules on the same safetensors file) as the
baseline, each in its own process under `/usr/bin/time -v`.

    python bench/cpu/bench_memory.py [--seq 128] [--layers 2]

Cases: the bundled Llama-3.2-1B decoder layer (examples/llama-3.2-1b-layer.mlir,
232 MiB of f32 weights) and a Llama-3.2-1B-shaped model of --layers layers
(`rlx-gen`, vocabulary cut to 8192 so that the layers dominate), both with
seeded f32 weights written to a safetensors file. For each: the process's
start-up footprint, its peak RSS, the checkpoint's bytes and RLX's arena
(the plan and the kernels' scratch past it), and

    excess = (peak - start-up - arena) / checkpoint

which issue 42 asks to be at most 1.05 (weights held once, at their peak
too). rlx-run's start-up footprint is its own peak RSS once the model is
compiled (`rlx-run -v`'s `peak RSS:` line: the JIT's code and libraries,
before any weight is read); `load` is what reading the checkpoint added to
it, over the checkpoint's bytes. PyTorch's is Python with torch and
transformers imported. rlx-run's `weights held:` line is the steady state
after packing. `--kn` also runs rlx-run with the [K, N] weight forms of
oneDNN's GEMM (what CPUs with AVX-512 get; needs the oneDNN library) to
check that path's load. Prints the CPU and the settings; writes
bench/out/memory.json.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
RLX_RUN, RLX_GEN = BUILD / "bin" / "rlx-run", BUILD / "bin" / "rlx-gen"
PYTHON = sys.executable
LLAMA_1B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
            "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8,
            "head_dim": 64, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
            "max_position_embeddings": 2048, "vocab_size": 8192, "tie_word_embeddings": False,
            "hidden_act": "silu", "torch_dtype": "float32"}
EMPTY = """func.func @f(%x: tensor<4x4xf32> {rlx.input = "x"}) -> tensor<4x4xf32> {
  %y = rlx_mir.add %x, %x : tensor<4x4xf32>, tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
"""
TORCH_LAYER = """
import sys, torch, transformers
from safetensors.torch import load_file
torch.set_num_threads(2)
if sys.argv[1] != "none":
    cfg = transformers.LlamaConfig(**__import__("json").loads(sys.argv[2]))
    with torch.device("meta"):
        layer = (transformers.models.llama.modeling_llama.LlamaDecoderLayer(cfg, 0)
                 if sys.argv[1] == "layer" else transformers.LlamaForCausalLM(cfg))
    layer.load_state_dict(load_file(sys.argv[3]), assign=True)
    if sys.argv[1] != "layer":  # (its non-persistent inv_freq stayed on "meta")
        layer.model.rotary_emb = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(cfg)
    seq = int(sys.argv[4])
    with torch.no_grad():
        if sys.argv[1] == "layer":
            rope = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(cfg)
            x = torch.randn(1, seq, cfg.hidden_size)
            pos = torch.arange(seq)[None]
            layer(x, position_embeddings=rope(x, pos), position_ids=pos)
        else:
            layer(input_ids=torch.randint(0, cfg.vocab_size, (1, seq)))
"""


def peak_kib(cmd, env=None):
    """Runs `cmd` under /usr/bin/time -v: (peak RSS in bytes, stdout)."""
    proc = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{proc.stdout}\n{proc.stderr}")
    kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    return kib * 1024, proc.stdout


def params_of(text):
    """(name, shape) of every rlx.param argument of the module's functions."""
    return [(name, tuple(int(d) for d in dims.split("x")[:-1]))
            for dims, name in re.findall(r"tensor<([0-9x]+f32)> \{[^}]*rlx\.param = \"([^\"]+)\"",
                                         text)]


def write_checkpoint(params, path):
    from safetensors.numpy import save_file
    rng = np.random.default_rng(0)
    tensors = {}
    for name, shape in params:
        if name in tensors:
            continue
        t = rng.standard_normal(shape, np.float32) * np.float32(0.02)
        tensors[name] = t + np.float32(1) if name.endswith("norm.weight") else t
    save_file(tensors, str(path))
    return sum(t.nbytes for t in tensors.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--kn", action="store_true",
                    help="also load with [K, N] weight forms (RLX_DNNL=<oneDNN library>)")
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="rlx-mem-"))
    (tmp / "empty.mlir").write_text(EMPTY)
    rlx_start, _ = peak_kib([RLX_RUN, tmp / "empty.mlir"])
    torch_start, _ = peak_kib([PYTHON, "-c", TORCH_LAYER, "none"])
    cfg = dict(LLAMA_1B, num_hidden_layers=args.layers)
    (tmp / "config.json").write_text(json.dumps(cfg))
    model_text = subprocess.run([RLX_GEN, tmp / "config.json"], capture_output=True, text=True,
                                check=True).stdout
    (tmp / "model.mlir").write_text(model_text)
    layer = ROOT / "examples" / "llama-3.2-1b-layer.mlir"
    cases = [("layer", layer, layer.read_text(), "layer"),
             (f"{args.layers}-layer model", tmp / "model.mlir", model_text, "model")]
    print(f"cpu: {cpu_model()}; threads: {THREADS}; seq {args.seq}; f32 weights")
    print(f"start-up footprint: rlx-run {rlx_start / 2**20:.0f} MiB on a module without weights "
          "(each case's own, once compiled, is its 'rlx start'), "
          f"python + torch + transformers {torch_start / 2**20:.0f} MiB")
    print(f"{'case':<22} {'checkpoint':>11} {'rlx start':>9} {'rlx peak':>9} {'arena':>8} "
          f"{'load':>6} {'rlx excess':>10} {'held':>6} {'torch peak':>10} {'torch excess':>12}")
    rows = []
    dnnl = os.environ.get("RLX_DNNL") or str(ROOT / ".venv" / "lib" / "libdnnl.so.3")
    forms = [("", {})] + ([(" [K, N]", {"RLX_DNNL": dnnl})] if args.kn else [])
    for label, path, text, kind in cases:
        ckpt = tmp / f"{kind}.safetensors"
        ckpt_bytes = write_checkpoint(params_of(text), ckpt)
        tpeak, _ = peak_kib([PYTHON, "-c", TORCH_LAYER, kind, json.dumps(cfg), ckpt, args.seq])
        for form, env in forms:
            peak, out = peak_kib([RLX_RUN, path, "--weights", ckpt, "--dims", f"seq={args.seq}",
                                  "-v"], env)
            arena = int(re.search(r"arena: (\d+) bytes", out).group(1))
            scratch = re.search(r"kernel scratch: (\d+) bytes", out)
            arena += int(scratch.group(1)) if scratch else 0
            start, loaded = map(int, re.search(
                r"peak RSS: (\d+) bytes after compiling, (\d+) after loading", out).groups())
            bound = int(re.search(r"weights: (\d+) bytes", out).group(1))
            held = re.search(r"weights held: (\d+) bytes", out)
            held = int(held.group(1)) if held else bound
            row = {"case": label + form, "checkpoint_bytes": ckpt_bytes, "rlx_peak_bytes": peak,
                   "rlx_startup_bytes": start, "rlx_empty_module_bytes": rlx_start,
                   "arena_bytes": arena, "held_bytes": held,
                   "load": (loaded - start) / ckpt_bytes,
                   "rlx_excess": (peak - start - arena) / ckpt_bytes,
                   "torch_peak_bytes": tpeak, "torch_startup_bytes": torch_start,
                   "torch_excess": (tpeak - torch_start) / ckpt_bytes}
            rows.append(row)
            print(f"{label + form:<22} {ckpt_bytes / 2**20:>7.0f} MiB {start / 2**20:>5.0f} MiB "
                  f"{peak / 2**20:>5.0f} MiB {arena / 2**20:>4.0f} MiB {row['load']:>5.2f}x "
                  f"{row['rlx_excess']:>9.2f}x {held / ckpt_bytes:>5.2f}x "
                  f"{tpeak / 2**20:>6.0f} MiB {row['torch_excess']:>11.2f}x")
    out_dir = ROOT / "bench" / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "memory.json").write_text(json.dumps({"cpu": cpu_model(), "threads": THREADS,
                                                      "seq": args.seq, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
