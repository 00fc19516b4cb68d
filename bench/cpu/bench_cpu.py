#!/usr/bin/env python3
"""CPU latency of one Llama-3.2-1B decoder layer: RLX against NumPy, PyTorch and IREE.

    python bench/cpu/bench_cpu.py [--build build] [--reps 15]
                                  [--cases decode128,decode2048,prefill128,prefill512]

Cases (f32, batch 1): ``decode128`` / ``decode2048`` one new token against a
128 / 2048-token KV history; ``prefill128`` and ``prefill512`` a prompt of
128 / 512 tokens.
All implementations compute the same layer on the same weights (RLX's
seeded values, rebuilt in NumPy by ``rlx.random``): RLX runs the layer that
``rlx-gen --layer-only`` generates from ``../shared/models/llama-3.2-1b.json``,
compiled by ``rlx-run`` (HIR → fusion → CPU, served in a child process);
NumPy and PyTorch eager run the straightforward formulas (separate q/k/v and
gate/up matmuls, GQA by grouping heads, PyTorch's SDPA); IREE runs the torch
module of ``torch_layer.py`` exported by torch-mlir and compiled for
``llvm-cpu`` on the host CPU (``--no-iree`` leaves it out; it needs
``pip install iree-base-compiler iree-base-runtime torch-mlir``). Each repetition times
one call of each implementation in turn (interleaved), and the report gives
medians and the ratio RLX / baseline. Threads: 2 everywhere
(``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``torch.set_num_threads``),
``OMP_WAIT_POLICY=PASSIVE`` and ``OPENBLAS_THREAD_TIMEOUT=4`` so the thread
pools of the implementations do not spin against each other. Decode cases
also time a copy of a buffer the size of the layer's weights on the same
threads (interleaved like the rest) and print the rate RLX reads the weights
at against that copy's bandwidth (bytes read plus written per second).
Writes ``bench/out/cpu.json`` and ``bench/out/cpu.md``.
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
from machine import quiet_threads  # noqa: E402

THREADS = quiet_threads("2")


import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The rlx package as the CMake build assembles it (with its extension).
BUILD = pathlib.Path(os.environ.get("RLX_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python_packages"))
from rlx.random import argument_values  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "bench" / "cpu"))
from harness import shared_dir  # noqa: E402  ($RLX_SHARED_DIR, ../shared, /work/shared)

SHARED = shared_dir() or ROOT.parent / "shared"

CFG = json.loads((SHARED / "models" / "llama-3.2-1b.json").read_text())
H, HKV, D = CFG["num_attention_heads"], CFG["num_key_value_heads"], CFG["head_dim"]
HID, INTER, EPS = CFG["hidden_size"], CFG["intermediate_size"], CFG["rms_norm_eps"]
P = "model.layers.0."
CASES = {"decode128": (1, 128), "decode2048": (1, 2048), "prefill128": (128, 0),
         "prefill512": (512, 0)}


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


class CopyBandwidth:
    """A STREAM-style copy of a buffer the size of the layer's weights, split
    over THREADS threads (NumPy releases the GIL while it copies): bytes
    read plus bytes written per second, the memory bandwidth decode is held
    against."""

    def __init__(self, nbytes):
        n = nbytes // 4
        self.src = np.ones(n, np.float32)
        self.dst = np.zeros(n, np.float32)
        k = int(THREADS)
        self.parts = [slice(i * n // k, (i + 1) * n // k) for i in range(k)]
        self.nbytes = 2 * n * 4

    def once(self):
        import threading
        threads = [threading.Thread(target=np.copyto, args=(self.dst[p], self.src[p]))
                   for p in self.parts]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.perf_counter() - t0


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


def rlx_blas_text(build):
    """The BLAS RLX's CPU runtime opened (it chooses at load time) and the core
    type OpenBLAS picked for this CPU, as `rlx-run -v` prints them."""
    with tempfile.TemporaryDirectory() as d:
        model = pathlib.Path(d) / "mm.mlir"
        model.write_text("func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> "
                         "tensor<64x64xf32> {\n  %y = rlx_mir.matmul %a, %b : tensor<64x64xf32>, "
                         "tensor<64x64xf32>\n  return %y : tensor<64x64xf32>\n}\n")
        out = subprocess.run([str(build / "bin" / "rlx-run"), str(model), "-v"],
                             capture_output=True, text=True).stdout
    blas = [l[len("blas: "):] for l in out.splitlines() if l.startswith("blas: ")]
    return "BLAS " + (blas[0] if blas else "?")


def settings_text(build, iree):
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
    if iree:
        import torch_layer
        lines.append(f"IREE: {torch_layer.iree_versions()}: the layer exported by torch-mlir "
                     f"(linalg-on-tensors, weights frozen), llvm-cpu, target-cpu=host, local-task "
                     f"with {THREADS} workers")
    lines.append("RLX: rlx-run JIT (LLVM -O3, host CPU), " + rlx_blas_text(build))
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    lines.append(f"CPU: {cpu[0] if cpu else '?'} x {os.cpu_count()}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-iree", action="store_true", help="leave out the IREE column")
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(int(THREADS))
        import torch_layer
    except ImportError:
        torch = None
    iree = False
    if torch is not None and not args.no_iree:
        try:
            import iree.compiler  # noqa: F401
            import torch_mlir  # noqa: F401
            torch_layer.set_iree_threads(THREADS)
            iree = True
        except ImportError:
            print("IREE column left out: pip install iree-base-compiler iree-base-runtime torch-mlir")
    settings = settings_text(args.build, iree)
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
        errs = {}
        if torch is not None:
            layer = torch_layer.LlamaLayer(w, freqs, H, HKV, D, EPS)
            targs = [x, pos, *([kv["key"], kv["value"]] if kv else [])]
            impls["torch"] = torch_layer.torch_fn(layer, targs)
            if iree:
                impls["iree"] = torch_layer.iree_fn(layer, targs, THREADS, tmp)
        for name, f in impls.items():
            if name != "numpy":
                errs[name] = float(np.abs(np.asarray(f()) - ref).max() / np.abs(ref).max())
        server = RlxServer(args.build, model, seq, past)
        weight_bytes = sum(a.nbytes for a in w.values())
        copy = CopyBandwidth(weight_bytes) if past else None
        times = {"rlx": [], **{k: [] for k in impls}, **({"copy": []} if copy else {})}
        order = list(times)
        for rep in range(args.reps):
            for name in order[rep % len(order):] + order[:rep % len(order)]:
                if name == "rlx":
                    times[name].append(server.once())
                elif name == "copy":
                    times[name].append(copy.once())
                else:
                    t0 = time.perf_counter()
                    impls[name]()
                    times[name].append(time.perf_counter() - t0)
        server.close()
        copy_ms = float(np.median(times.pop("copy"))) * 1000 if copy else None
        med = {k: float(np.median(v)) * 1000 for k, v in times.items()}
        results[case] = {"median_ms": med, "max_rel_err_vs_numpy": err,
                         "baseline_max_rel_err_vs_numpy": errs, "reps": args.reps}
        if copy:
            # Decode reads every weight once: its rate against the copy's.
            copy_gbs = copy.nbytes / copy_ms / 1e6
            rlx_gbs = weight_bytes / med["rlx"] / 1e6
            results[case]["bandwidth"] = {"copy_gb_s": copy_gbs, "rlx_weights_gb_s": rlx_gbs,
                                          "fraction": rlx_gbs / copy_gbs}
            print(f"{case}: weights {weight_bytes / 2**20:.0f} MiB read at {rlx_gbs:.1f} GB/s "
                  f"by RLX; copy {copy_gbs:.1f} GB/s (read + write, {THREADS} threads); "
                  f"{rlx_gbs / copy_gbs:.0%} of the copy")
        ratios = ", ".join(f"rlx/{k} {med['rlx'] / med[k]:.2f}x" for k in impls)
        print(f"{case}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in med.items()) +
              f"; {ratios}; max rel err vs numpy {err:.1e}")
    outdir = ROOT / "bench" / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "cpu.json").write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    names = {"numpy": "NumPy", "torch": "PyTorch", "iree": "IREE"}
    baselines = [k for k in names if any(k in r["median_ms"] for r in results.values())]
    rows = ["| case | RLX ms | " + " | ".join(f"{names[k]} ms" for k in baselines) + " | " +
            " | ".join(f"RLX / {names[k]}" for k in baselines) +
            " | RLX / fastest of PyTorch and IREE | max rel. error vs NumPy | RLX weights GB/s "
            "(of the copy's) |",
            "|---" * (3 + 2 * len(baselines)) + "|---|---|"]
    for case, r in results.items():
        m = r["median_ms"]
        fast = min([m[k] for k in ("torch", "iree") if k in m] or [m["numpy"]])
        rows.append(f"| {case} | {m['rlx']:.1f} | " +
                    " | ".join(f"{m[k]:.1f}" if k in m else "-" for k in baselines) + " | " +
                    " | ".join(f"{m['rlx'] / m[k]:.2f}" if k in m else "-" for k in baselines) +
                    f" | **{m['rlx'] / fast:.2f}** | {r['max_rel_err_vs_numpy']:.1e} | " +
                    (f"{r['bandwidth']['rlx_weights_gb_s']:.1f} of {r['bandwidth']['copy_gb_s']:.1f}"
                     f" ({r['bandwidth']['fraction']:.0%})" if "bandwidth" in r else "-") + " |")
    table = "\n".join(["Settings: " + "; ".join(settings), "", *rows])
    (outdir / "cpu.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
