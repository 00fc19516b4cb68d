"""Compile a module with rlx-compile and run it on the GPU emulator (or a
GPU) with rlx-gpu-run: the GPU counterpart of harness.run_mlir."""
from __future__ import annotations

import json
import pathlib
import subprocess
import tempfile

import numpy as np

from harness import BUILD

RLX_COMPILE = BUILD / "bin" / "rlx-compile"
RLX_GPU_RUN = BUILD / "bin" / "rlx-gpu-run"


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """f32 → bf16 (round to nearest even) as the raw uint16 the runtime reads."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(a: np.ndarray) -> np.ndarray:
    return (a.astype(np.uint32) << 16).view(np.float32)


def compile_artifact(text: str, out: pathlib.Path, *, dims: dict | None = None,
                     chip: str = "sm_90a", cubin: bool = False,
                     flags: list[str] | None = None) -> dict:
    (out.parent / "m.mlir").write_text(text)
    cmd = [str(RLX_COMPILE), str(out.parent / "m.mlir"), "-o", str(out), "--chip", chip]
    if not cubin:
        cmd.append("--no-cubin")
    if dims:
        cmd += ["--dims", ",".join(f"{k}={v}" for k, v in dims.items())]
    cmd += flags or []
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"rlx-compile failed ({proc.returncode}):\n{proc.stderr}")
    return json.loads((out / "manifest.json").read_text())


def run_artifact(art: pathlib.Path, function: str, inputs: dict[str, np.ndarray],
                 device: str = "emu", repeat: int = 1) -> dict[str, np.ndarray]:
    """Runs `function`; with repeat > 1, rlx-gpu-run runs it that many times
    and fails unless every run's outputs are the first run's bits."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cmd = [str(RLX_GPU_RUN), str(art), "--device", device, "--function", function,
               "--output-dir", str(tmp / "out"), "--repeat", str(repeat)]
        for i, (name, value) in enumerate(inputs.items()):
            np.save(tmp / f"in{i}.npy", np.ascontiguousarray(value))
            cmd += ["--input", f"{name}={tmp / f'in{i}.npy'}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"rlx-gpu-run failed ({proc.returncode}):\n{proc.stderr}")
        return {p.stem: np.load(p) for p in (tmp / "out").glob("*.npy")}


def run_gpu(text: str, inputs: dict[str, np.ndarray], *, dims: dict | None = None,
            device: str = "emu", flags: list[str] | None = None) -> dict[str, np.ndarray]:
    """Runs the module's entry on the emulator; packed parameters are made by
    running their packing functions first (as a deployment would, once).
    bf16 buffers take and give float32 arrays here."""
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(text, art, dims=dims, flags=flags)
        fns = {f["name"]: f for f in manifest["functions"]}

        def feed(fn, values):
            out = {}
            for b in fn["buffers"]:
                if b["role"] == "output" or b["name"] not in values:
                    continue
                v = values[b["name"]]
                bits = b["dtype"] == "bf16" and v.dtype != np.uint16
                out[b["name"]] = to_bf16_bits(v) if bits else v
            return out

        entry = fns[manifest["entry"]]
        values = dict(inputs)
        for b in entry["buffers"]:
            if "packed_by" in b and b["name"] not in values:
                packer = fns[b["packed_by"]["function"]]
                res = run_artifact(art, packer["name"], feed(packer, inputs), device)
                values[b["name"]] = res[b["packed_by"]["output"]]
        out = run_artifact(art, entry["name"], feed(entry, values), device)
        dtypes = {b["name"]: b["dtype"] for b in entry["buffers"]}
        return {k: from_bf16_bits(v) if dtypes.get(k) == "bf16" else v for k, v in out.items()}
