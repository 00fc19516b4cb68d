#!/usr/bin/env python3
"""CPU latency of one Llama-3.2-1B decoder layer: RLX against NumPy and PyTorch.

    python bench/cpu/bench_cpu.py [--build build] [--reps 15] [--cases decode128,prefill128,prefill512]

Cases (f32, batch 1): ``decode128`` one new token against a 128-token KV
history; ``prefill128`` and ``prefill512`` a prompt of 128 / 512 tokens.
All three implementations compute the same layer on the same weights (RLX's
seeded values, rebuilt in NumPy by ``rlx.random``): RLX runs the layer that
``rlx-gen --layer-only`` generates from ``../shared/models/llama-3.2-1b.json``,
compiled by ``rlx-run`` (HIR → fusion → CPU, served in a child process);
NumPy and PyTorch eager run the straightforward formulas (separate q/k/v and
gate/up matmuls, GQA by grouping heads, PyTorch's SDPA). Each repetition times
one call of each implementation in turn (interleaved), and the report gives
medians and the ratio RLX / baseline. Threads: 2 everywhere
(``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``torch.set_num_threads``),
``OMP_WAIT_POLICY=PASSIVE`` and ``OPENBLAS_THREAD_TIMEOUT=4`` so the thread
pools of the three implementations do not spin against each other. Writes ``bench/out/cpu.json`` and ``bench/out/cpu.md``.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

THREADS = "2"
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = THREADS
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
# OpenBLAS's pthreads spin after each call (2^28 cycles by default) before they
# sleep: numpy's and rlx-run's pools would steal the two cores from each other
# in an interleaved run. 2^4 makes both sleep at once, as PASSIVE does for OpenMP.
os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The rlx package as the CMake build assembles it (with its extension).
sys.path.insert(0, str(pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
                       / "python_packages"))
from rlx.random import argument_values  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "python"))
from harness import shared_dir  # noqa: E402  ($RLX_SHARED_DIR, ../shared, /work/shared)

SHARED = shared_dir() or ROOT.parent / "shared"

CFG = json.loads((SHARED / "models" / "llama-3.2-1b.json").read_text())
H, HKV, D = CFG["num_attention_heads"], CFG["num_key_value_heads"], CFG["head_dim"]
HID, INTER, EPS = CFG["hidden_size"], CFG["intermediate_size"], CFG["rms_norm_eps"]
P = "model.layers.0."
CASES = {"decode128": (1, 128), "prefill128": (128, 0), "prefill512": (512, 0)}


def inv_freq():
    """llama3-scaled RoPE frequencies (HF _compute_llama3_parameters)."""
    rs = CFG["rope_scaling"]
    f = 1.0 / (CFG["rope_theta"] ** (np.arange(0, D, 2) / D))
    wl = 2 * np.pi / f
    lo_wl = rs["original_max_position_embeddings"] / rs["low_freq_factor"]
    hi_wl = rs["original_max_position_embeddings"] / rs["high_freq_factor"]
    scaled = np.where(wl > lo_wl, f / rs["factor"], f)
    smooth = (rs["original_max_position_embeddings"] / wl - rs["low_freq_factor"]) / (
        rs["high_freq_factor"] - rs["low_freq_factor"])
    mid = (1 - smooth) * scaled / rs["factor"] + smooth * scaled
    return np.where(~(wl < hi_wl) & ~(wl > lo_wl), mid, scaled).astype(np.float32)


def make_inputs(seq, past):
    names = {"input_layernorm.weight": (HID,), "self_attn.q_proj.weight": (H * D, HID),
             "self_attn.k_proj.weight": (HKV * D, HID), "self_attn.v_proj.weight": (HKV * D, HID),
             "self_attn.o_proj.weight": (HID, H * D), "post_attention_layernorm.weight": (HID,),
             "mlp.gate_proj.weight": (INTER, HID), "mlp.up_proj.weight": (INTER, HID),
             "mlp.down_proj.weight": (HID, INTER)}
    w = {k: argument_values(P + k, s, is_param=True) for k, s in names.items()}
    x = argument_values("hidden_states", (1, seq, HID))
    pos = argument_values("position_ids", (seq,), np.int64, position_offset=past)
    kv = {}
    if past:
        for n in ("key", "value"):
            kv[n] = argument_values(f"past_key_values.0.{n}", (1, past, HKV * D))
    return w, x, pos, kv


def numpy_layer(w, x, pos, kv, freqs):
    def rms(t, g):
        return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + EPS) * g

    def rope(t, heads):
        s = t.shape[1]
        ang = pos[:, None].astype(np.float32) * freqs[None, :]
        c, sn = np.cos(ang)[None, :, None, :], np.sin(ang)[None, :, None, :]
        t = t.reshape(1, s, heads, D)
        a, b = t[..., : D // 2], t[..., D // 2:]
        return np.concatenate([a * c - b * sn, b * c + a * sn], -1).reshape(1, s, heads * D)

    s = x.shape[1]
    h = rms(x, w["input_layernorm.weight"])
    q = rope(h @ w["self_attn.q_proj.weight"].T, H)
    k = rope(h @ w["self_attn.k_proj.weight"].T, HKV)
    v = h @ w["self_attn.v_proj.weight"].T
    if kv:
        k = np.concatenate([kv["key"], k], 1)
        v = np.concatenate([kv["value"], v], 1)
    t = k.shape[1]
    g = H // HKV
    qg = q.reshape(s, HKV, g, D).transpose(1, 2, 0, 3).reshape(HKV, g * s, D)
    kg = k.reshape(t, HKV, D).transpose(1, 0, 2)
    vg = v.reshape(t, HKV, D).transpose(1, 0, 2)
    sc = qg @ kg.transpose(0, 2, 1) / np.float32(np.sqrt(D))
    qi = np.arange(g * s) % s + (t - s)
    sc = np.where(np.arange(t)[None, :] <= qi[:, None], sc, -np.inf)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    a = (sc / sc.sum(-1, keepdims=True)) @ vg
    a = a.reshape(HKV, g, s, D).transpose(2, 0, 1, 3).reshape(1, s, H * D)
    r = x + a @ w["self_attn.o_proj.weight"].T
    n = rms(r, w["post_attention_layernorm.weight"])
    gt = n @ w["mlp.gate_proj.weight"].T
    return r + (gt / (1 + np.exp(-gt)) * (n @ w["mlp.up_proj.weight"].T)) @ w["mlp.down_proj.weight"].T


def torch_layer_fn(w, x, pos, kv, freqs):
    import torch
    import torch.nn.functional as F
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    tx, tpos = torch.from_numpy(x), torch.from_numpy(pos)
    tkv = {k: torch.from_numpy(v) for k, v in kv.items()}
    tf = torch.from_numpy(freqs)

    def rms(t, g):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + EPS) * g

    def rope(t, heads, c, sn):
        b, s, _ = t.shape
        t = t.view(b, s, heads, D).transpose(1, 2)
        a, bb = t[..., : D // 2], t[..., D // 2:]
        return torch.cat([a * c - bb * sn, bb * c + a * sn], -1)

    @torch.inference_mode()
    def run():
        s = tx.shape[1]
        ang = tpos[:, None].float() * tf[None, :]
        c, sn = ang.cos(), ang.sin()
        h = rms(tx, tw["input_layernorm.weight"])
        q = rope(F.linear(h, tw["self_attn.q_proj.weight"]), H, c, sn)
        k = rope(F.linear(h, tw["self_attn.k_proj.weight"]), HKV, c, sn)
        v = F.linear(h, tw["self_attn.v_proj.weight"]).view(1, s, HKV, D).transpose(1, 2)
        if tkv:
            k = torch.cat([tkv["key"].view(1, -1, HKV, D).transpose(1, 2), k], 2)
            v = torch.cat([tkv["value"].view(1, -1, HKV, D).transpose(1, 2), v], 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=not tkv and s > 1, enable_gqa=True)
        r = tx + F.linear(a.transpose(1, 2).reshape(1, s, H * D), tw["self_attn.o_proj.weight"])
        n = rms(r, tw["post_attention_layernorm.weight"])
        mlp = F.silu(F.linear(n, tw["mlp.gate_proj.weight"])) * F.linear(n, tw["mlp.up_proj.weight"])
        return r + F.linear(mlp, tw["mlp.down_proj.weight"])

    return run


class RlxServer:
    """rlx-run --serve: compiled once, one timed run per request."""

    def __init__(self, build, model, seq, past):
        dims = f"seq={seq}" + (f",past_seq={past}" if past else "")
        self.proc = subprocess.Popen([str(build / "bin" / "rlx-run"), str(model), "--dims", dims,
                                      "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.once()  # packs the weights and touches every buffer

    def once(self):
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        return float(line[1]) / 1000.0

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait()


def settings_text():
    lines = [f"threads: {THREADS} (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, torch.set_num_threads), "
             f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, "
             f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}"]
    cfg = np.show_config(mode="dicts")
    blas = cfg.get("Build Dependencies", {}).get("blas", {})
    lines.append(f"numpy {np.__version__}: BLAS {blas.get('name')} {blas.get('version')}")
    try:
        import torch
        par = [l.strip() for l in torch.__config__.parallel_info().splitlines()
               if "ATen parallel" in l or "MKL" in l or "OpenMP" in l][:3]
        lines.append(f"torch {torch.__version__}: " + "; ".join(par))
    except ImportError:
        lines.append("torch: not installed (pip install torch)")
    rt = subprocess.run(["ldd", str(ROOT / "build" / "lib" / "librlx_cpu_runtime.so")],
                        capture_output=True, text=True).stdout
    blaslib = [l.split("=>")[1].split("(")[0].strip() for l in rt.splitlines() if "blas" in l]
    lines.append(f"RLX: rlx-run JIT (LLVM -O3, host CPU), BLAS {', '.join(blaslib) or '?'}")
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    lines.append(f"CPU: {cpu[0] if cpu else '?'} x {os.cpu_count()}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(int(THREADS))
    except ImportError:
        torch = None
    settings = settings_text()
    print("\n".join(settings))
    tmp = pathlib.Path(tempfile.mkdtemp())
    freqs = inv_freq()
    results = {}
    for case in args.cases.split(","):
        seq, past = CASES[case]
        model = tmp / f"{case}.mlir"
        gen = [str(args.build / "bin" / "rlx-gen"), str(SHARED / "models" /
               "llama-3.2-1b.json"), "--layer-only", "-o", str(model)]
        if past:
            gen.append("--kv-cache")
        subprocess.run(gen, check=True)
        w, x, pos, kv = make_inputs(seq, past)
        # Correctness first: RLX's output against the NumPy layer.
        out = tmp / case
        dims = f"seq={seq}" + (f",past_seq={past}" if past else "")
        subprocess.run([str(args.build / "bin" / "rlx-run"), str(model), "--dims", dims,
                        "--output-dir", str(out)], check=True, capture_output=True)
        ref = numpy_layer(w, x, pos, kv, freqs)
        got = np.load(out / "hidden_states.npy")
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        impls = {"numpy": lambda: numpy_layer(w, x, pos, kv, freqs)}
        if torch is not None:
            impls["torch"] = torch_layer_fn(w, x, pos, kv, freqs)
        for f in impls.values():
            f()
        server = RlxServer(args.build, model, seq, past)
        times = {"rlx": [], **{k: [] for k in impls}}
        order = ["rlx", *impls]
        for rep in range(args.reps):
            for name in order[rep % len(order):] + order[:rep % len(order)]:
                if name == "rlx":
                    times[name].append(server.once())
                else:
                    t0 = time.perf_counter()
                    impls[name]()
                    times[name].append(time.perf_counter() - t0)
        server.close()
        med = {k: float(np.median(v)) * 1000 for k, v in times.items()}
        results[case] = {"median_ms": med, "max_rel_err_vs_numpy": err, "reps": args.reps}
        ratios = ", ".join(f"rlx/{k} {med['rlx'] / med[k]:.2f}x" for k in impls)
        print(f"{case}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in med.items()) +
              f"; {ratios}; max rel err vs numpy {err:.1e}")
    outdir = ROOT / "bench" / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "cpu.json").write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    rows = ["| case | RLX ms | NumPy ms | PyTorch ms | RLX / NumPy | RLX / PyTorch | "
            "RLX / faster baseline | max rel. error vs NumPy |", "|---|---|---|---|---|---|---|---|"]
    for case, r in results.items():
        m = r["median_ms"]
        t = m.get("torch")
        fast = min(m["numpy"], t) if t else m["numpy"]
        rows.append(f"| {case} | {m['rlx']:.1f} | {m['numpy']:.1f} | {t:.1f} | "
                    f"{m['rlx'] / m['numpy']:.2f} | {m['rlx'] / t:.2f} | **{m['rlx'] / fast:.2f}** | "
                    f"{r['max_rel_err_vs_numpy']:.1e} |" if t else
                    f"| {case} | {m['rlx']:.1f} | {m['numpy']:.1f} | - | {m['rlx'] / m['numpy']:.2f}"
                    f" | - | **{m['rlx'] / fast:.2f}** | {r['max_rel_err_vs_numpy']:.1e} |")
    table = "\n".join(["Settings: " + "; ".join(settings), "", *rows])
    (outdir / "cpu.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
