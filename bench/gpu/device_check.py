"""The device check, run from the bundle that prepare.py made: every GPU
numerics case against its PyTorch float64 reference computed here on the GPU
(and numpy's, which must agree), then the
benchmarks, each against a baseline measured in the same run, interleaved:
bandwidth-bound kernels against torch's device-to-device copy_, matmuls
against torch.matmul (cuBLAS), attention against SDPA (its default choice
and its flash backend) and FlashAttention-3/-2 where their wheels are
installed (named as unavailable where not), the fused norm + SwiGLU matmul
against the PyTorch sequence it replaces; all into one JSON file. Every
timed run, ours and the baselines', starts with the L2 flushed (a buffer
twice its size written outside the timed interval), so decode and GEMV
bandwidths are memory's, not the L2's. Each case
runs in its own process with a timeout, so a failing or hanging kernel does
not stop the others.

    python device_check.py [--dry-run] [--out results.json] [--timeout 60]

--dry-run (here, in CI): the numerics cases run under the CPU GPU emulator,
the benchmark artifacts are only loaded (rlx-gpu-run --info): everything is
present, loadable and launchable without a GPU; one small artifact is timed
with --flush-l2 on the emulator (the timed path's flags).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402

RUN = HERE / "bin" / "rlx-gpu-run"
ENV = dict(os.environ, LD_LIBRARY_PATH=str(HERE / "bin") + ":" + os.environ.get("LD_LIBRARY_PATH", ""))


def gpu_run(art, device, inputs, extra=(), timeout=60, prefix=()):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cmd = [*prefix, str(RUN), str(art), "--device", device, "--output-dir", str(tmp / "out"),
               *extra]
        for name, v in inputs.items():
            np.save(tmp / f"{name}.npy", v)
            cmd += ["--input", f"{name}={tmp / f'{name}.npy'}"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip()[-2000:])
        return {q.stem: np.load(q) for q in (tmp / "out").glob("*.npy")}, p.stdout


def check(case, device, timeout, art=None):
    """Runs the case's artifact (`art`, else the bundle's) against its
    references: {"status": "pass" | "fail", ...}; a failed run raises."""
    t0 = time.time()
    inputs = case["inputs"]()
    extra = case.get("cuda_run_flags", []) if device == "cuda" else []
    out, _ = gpu_run(art or HERE / "artifacts" / case["name"], device, inputs, extra,
                     timeout=timeout)
    if case.get("bf16_outputs"):
        out = {k: (v.astype(np.uint32) << 16).view(np.float32) for k, v in out.items()}
    ref = case["reference"](inputs)
    if device == "cuda" and "torch_reference" in case:
        # PyTorch on the same GPU (float64) is the reference there; numpy too.
        import torch
        tref = case["torch_reference"](inputs, torch)
        for k in ref:
            if not np.allclose(tref[k], ref[k], rtol=1e-9, atol=1e-9):
                return {"status": "fail", "error": "the torch and numpy references disagree"}
        ref = tref
    worst = 0.0
    tol = case.get("tolerance", 1e-5)
    for k, r in ref.items():
        got = out[k].astype(np.float64)
        ok = np.allclose(got, r, rtol=tol, atol=tol)
        worst = max(worst, float(np.max(np.abs(got - r) / (tol + tol * np.abs(r)))))
        if not ok:
            return {"status": "fail", "error_over_tolerance": worst, "seconds": time.time() - t0}
    return {"status": "pass", "error_over_tolerance": worst, "seconds": time.time() - t0}


_FLUSH = {}


def flush_l2():
    """Writes a buffer twice the GPU's L2 size (as rlx-gpu-run --flush-l2
    does before each of its timed runs), so the baseline's inputs come from
    memory too."""
    import torch
    if "buf" not in _FLUSH:
        l2 = torch.cuda.get_device_properties(0).L2_cache_size or 2 ** 20
        _FLUSH["buf"] = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        _FLUSH["n"] = 0
    _FLUSH["n"] = (_FLUSH["n"] + 1) % 256
    _FLUSH["buf"].fill_(_FLUSH["n"])


# rlx-gpu-run's timed runs: medians over 20 after 3 warm-ups, L2 flushed
# before each.
TIMED = ("--time", "20", "--warmup", "3", "--json", "--flush-l2")


def timed_event(step):
    import torch
    flush_l2()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    step()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def torch_copy_ms(nbytes, iters=50):
    import torch
    n = nbytes // 8  # copy moves 2 × 4-byte floats per element (read + write)
    a = torch.empty(n, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    for _ in range(5):
        b.copy_(a)
    return float(np.median([timed_event(lambda: b.copy_(a)) for _ in range(iters)]))


def torch_matmul_ms(M, N, K, iters=20):
    import torch
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(x, w.t())
    return float(np.median([timed_event(lambda: torch.matmul(x, w.t())) for _ in range(iters)]))


def torch_callable_ms(step, iters=20):
    for _ in range(3):
        step()
    return float(np.median([timed_event(step) for _ in range(iters)]))


def bench(case, timeout, rounds=3):
    inputs = case["inputs"]()
    if case.get("kind") == "torch_baseline":
        import torch
        step = case["torch_baseline"](torch)
        rlx, base = [], []
        for _ in range(rounds):  # interleaved with the PyTorch sequence
            _, stdout = gpu_run(HERE / "artifacts" / case["name"], "cuda", inputs,
                                TIMED, timeout)
            rlx.append(json.loads(stdout.strip().splitlines()[-1])["median_ms"])
            base.append(torch_callable_ms(step))
        ms, bms = float(np.median(rlx)), float(np.median(base))
        return {"status": "ok", "median_ms": ms, "torch_sequence_ms": bms, "speedup": bms / ms,
                "TFLOPs": case["flops"] / ms / 1e9, "shape_MNK": list(case["shape"])}
    if case.get("kind") == "attention":
        import torch
        step = case["torch_baseline"](torch)
        flash = case["flash_baselines"](torch)
        runnable = {k: f for k, f in flash.items() if callable(f)}
        rlx, base, copy = [], [], []
        flash_ms = {k: [] for k in runnable}
        for _ in range(rounds):  # interleaved with SDPA, FlashAttention (and the copy for decode)
            _, stdout = gpu_run(HERE / "artifacts" / case["name"], "cuda", inputs,
                                (*TIMED, "--zero-missing"),
                                timeout)
            rlx.append(json.loads(stdout.strip().splitlines()[-1])["median_ms"])
            base.append(torch_callable_ms(step))
            for k, f in runnable.items():
                flash_ms[k].append(torch_callable_ms(f))
            if case["decode"]:
                copy.append(torch_copy_ms(case["kv_bytes"]))
        ms, bms = float(np.median(rlx)), float(np.median(base))
        res = {"status": "ok", "median_ms": ms, "sdpa_ms": bms, "speedup_vs_sdpa": bms / ms,
               "shape": case["shape"], "l2_flushed": True,
               "flash_baselines": {k: (f if not callable(f) else
                                       {"ms": float(np.median(flash_ms[k])),
                                        "speedup": float(np.median(flash_ms[k])) / ms})
                                   for k, f in flash.items()}}
        if case["decode"]:
            gbps, sgbps = case["kv_bytes"] / ms / 1e6, case["kv_bytes"] / bms / 1e6
            cgbps = case["kv_bytes"] / float(np.median(copy)) / 1e6
            res.update(kv_GBps=gbps, sdpa_kv_GBps=sgbps, copy_GBps=cgbps,
                       fraction_of_copy=gbps / cgbps)
        else:
            res.update(TFLOPs=case["flops"] / ms / 1e9, sdpa_TFLOPs=case["flops"] / bms / 1e9)
        return res
    if case.get("kind") == "nvfp4_matmul":
        rlx, base = [], []
        for _ in range(rounds):  # interleaved with bf16 cuBLAS through torch.matmul
            _, stdout = gpu_run(HERE / "artifacts" / case["name"], "cuda", inputs,
                                (*TIMED, "--zero-missing"),
                                timeout)
            rlx.append(json.loads(stdout.strip().splitlines()[-1])["median_ms"])
            base.append(torch_matmul_ms(*case["shape"]))
        ms, bms = float(np.median(rlx)), float(np.median(base))
        return {"status": "ok", "median_ms": ms, "torch_bf16_ms": bms, "speedup_vs_bf16": bms / ms,
                "weight_GBps": case["weight_bytes"] / ms / 1e6, "TFLOPs": case["flops"] / ms / 1e9,
                "shape_MNK": list(case["shape"])}
    if case.get("kind") == "matmul":
        rlx, base = [], []
        for _ in range(rounds):  # interleaved with cuBLAS through torch.matmul
            _, stdout = gpu_run(HERE / "artifacts" / case["name"], "cuda", inputs,
                                TIMED, timeout)
            rlx.append(json.loads(stdout.strip().splitlines()[-1])["median_ms"])
            base.append(torch_matmul_ms(*case["shape"]))
        ms, bms = float(np.median(rlx)), float(np.median(base))
        return {"status": "ok", "median_ms": ms, "TFLOPs": case["flops"] / ms / 1e9,
                "torch_matmul_TFLOPs": case["flops"] / bms / 1e9, "fraction_of_torch": bms / ms,
                "shape_MNK": list(case["shape"])}
    rlx, copy = [], []
    for _ in range(rounds):  # interleaved with the baseline
        _, stdout = gpu_run(HERE / "artifacts" / case["name"], "cuda", inputs,
                            ("--time", "50", "--warmup", "5", "--json", "--flush-l2"), timeout)
        rlx.append(json.loads(stdout.strip().splitlines()[-1])["median_ms"])
        copy.append(torch_copy_ms(case["bytes"]))
    ms, cms = float(np.median(rlx)), float(np.median(copy))
    gbps, cgbps = case["bytes"] / ms / 1e6, case["bytes"] / cms / 1e6
    return {"status": "ok", "median_ms": ms, "GBps": gbps, "torch_copy_GBps": cgbps,
            "fraction_of_copy": gbps / cgbps, "bytes": case["bytes"]}


SANITIZER_TOOLS = ("racecheck", "synccheck", "memcheck")


def sanitize(cases, budget_s, timeout):
    """Every numerics case's kernels under compute-sanitizer's racecheck,
    synccheck and memcheck (what the emulator does not model: docs/gpu.md),
    within `budget_s` seconds in all: {case: {tool: {status, ...}}}."""
    import shutil
    tool = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(tool):
        return {"status": "unavailable"}
    out, t0 = {}, time.time()
    for case in cases:
        if case["bench"] or case.get("route") or "--tp" in case.get("flags", []):
            continue
        for t in SANITIZER_TOOLS:
            if time.time() - t0 > budget_s:
                out.setdefault(case["name"], {})[t] = {"status": "skipped (budget)"}
                continue
            try:
                gpu_run(HERE / "artifacts" / case["name"], "cuda", case["inputs"](),
                        timeout=timeout, prefix=(tool, "--tool", t, "--error-exitcode", "7"))
                r = {"status": "clean"}
            except subprocess.TimeoutExpired:
                r = {"status": "timeout"}
            except RuntimeError as e:
                r = {"status": "errors", "report": str(e)[-1200:]}
            out.setdefault(case["name"], {})[t] = r
            print("sanitizer", case["name"], t, r["status"], flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "device-check.json"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--sanitizer-budget", type=float, default=150,
                    help="seconds for compute-sanitizer runs after the checks (0: none)")
    a = ap.parse_args()
    device = "emu" if a.dry_run else "cuda"
    result = {"mode": "dry-run (emulator)" if a.dry_run else "gpu", "host": platform.node(),
              "cpu": platform.processor() or platform.machine(), "tests": {}, "bench": {}}
    if not a.dry_run:
        try:
            import torch
            result["gpu"] = torch.cuda.get_device_name(0)
            result["torch"] = torch.__version__
        except Exception as e:  # noqa: BLE001
            result["gpu"] = f"unavailable: {e}"
    if a.dry_run:
        # The timed path with the L2 flush, on the emulator (the benchmark
        # artifacts are too large to run there): a small numerics artifact.
        try:
            small = next(c for c in CASES if c["name"] == "add_37x769")
            _, stdout = gpu_run(HERE / "artifacts" / small["name"], "emu", small["inputs"](),
                                ("--time", "2", "--warmup", "0", "--json", "--flush-l2"),
                                a.timeout)
            line = json.loads(stdout.strip().splitlines()[-1])
            ok = line.get("flush_l2") is True and line["median_ms"] > 0
            result["bench"]["timed_flush_l2_emu"] = {"status": "ok" if ok else "fail",
                                                     "line": line}
        except Exception as e:  # noqa: BLE001
            result["bench"]["timed_flush_l2_emu"] = {"status": "fail", "error": str(e)[-1500:]}
    for case in CASES:
        name = case["name"]
        try:
            if case["bench"]:
                if a.dry_run:
                    p = subprocess.run([str(RUN), "--info", str(HERE / "artifacts" / name)],
                                       capture_output=True, text=True, timeout=a.timeout, env=ENV)
                    result["bench"][name] = {"status": "loaded" if p.returncode == 0 else "fail",
                                             "info": (p.stdout + p.stderr)[-500:]}
                else:
                    result["bench"][name] = bench(case, a.timeout)
            else:
                result["tests"][name] = check(case, device, a.timeout)
        except subprocess.TimeoutExpired:
            (result["bench"] if case["bench"] else result["tests"])[name] = {"status": "timeout"}
        except Exception as e:  # noqa: BLE001
            (result["bench"] if case["bench"] else result["tests"])[name] = {
                "status": "fail", "error": str(e)[-1500:]}
        print(name, json.dumps((result["bench"] if case["bench"] else result["tests"])[name])[:300],
              flush=True)
    if not a.dry_run and a.sanitizer_budget > 0:
        result["sanitizer"] = sanitize(CASES, a.sanitizer_budget, a.timeout)
    pathlib.Path(a.out).write_text(json.dumps(result, indent=2))
    bad = [n for n, r in {**result["tests"], **result["bench"]}.items()
           if r["status"] not in ("pass", "ok", "loaded")]
    bad += [f"{n}:{t}" for n, tools in result.get("sanitizer", {}).items()
            if isinstance(tools, dict) for t, r in tools.items() if r["status"] == "errors"]
    print(f"wrote {a.out}: {len(result['tests'])} tests, {len(result['bench'])} benchmarks, "
          f"{len(bad)} failed {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
