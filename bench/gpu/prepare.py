"""Builds the device check's bundle here (needs the RLX build: rlx-compile,
ptxas; for the model cases torch and transformers): one artifact per case
(cubin + PTX + emulator library + manifest, and a model case's data),
the runner (rlx-gpu-run + libRLXGPURuntime.so, no LLVM), and the scripts.

    python bench/gpu/prepare.py --build build --out build/device-check [--chip sm_90a]
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="build/device-check")
    ap.add_argument("--chip", default="sm_90a")
    a = ap.parse_args()
    build, out = pathlib.Path(a.build).resolve(), pathlib.Path(a.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    (out / "bin").mkdir(parents=True)
    (out / "artifacts").mkdir()
    for c in CASES:
        src = out / "artifacts" / f"{c['name']}.mlir"
        if c.get("route"):
            # A model case: its module and data from transformers, here.
            import model_cases
            model_cases.make(c["route"], c["name"], out / "artifacts", build)
        else:
            src.write_text(c["text"])
        cmd = [str(build / "bin" / "rlx-compile"), str(src), "-o", str(out / "artifacts" / c["name"]),
               "--chip", a.chip, "--spills", "error", *c.get("flags", [])]
        subprocess.run(cmd, check=True)
        if "--tp" in c.get("flags", []):
            manifest = (out / "artifacts" / c["name"] / "manifest.json").read_text()
            if '"collective"' not in manifest:
                sys.exit(f"{c['name']}: a --tp artifact without collective steps")
    shutil.copy2(build / "bin" / "rlx-gpu-run", out / "bin")
    shutil.copy2(build / "lib" / "libRLXGPURuntime.so", out / "bin")
    for f in ("cases.py", "device_check.py", "device-check.sh"):
        shutil.copy2(HERE / f, out / f)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"bundle {out}: {len(CASES)} artifacts, {size / 2**20:.1f} MiB")
    if size > 64 * 2**20:
        sys.exit("bundle larger than 64 MiB")


if __name__ == "__main__":
    main()
