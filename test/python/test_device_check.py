"""The GPU device check's dry run (issue 15): the bundle builds (artifacts
with cubins, runner without LLVM, scripts, under 64 MiB), every numerics case
passes under the CPU GPU emulator, every benchmark artifact loads and the
timed path runs with the L2 flush."""
import json
import os
import pathlib
import subprocess

from harness import BUILD

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_device_check_dry_run(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), RLX_BUILD_DIR=str(BUILD))
    p = subprocess.run(["bash", str(ROOT / "bench" / "gpu" / "device-check.sh"), "--prepare",
                        "--dry-run"], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    result = json.loads((tmp_path / "device-check.json").read_text())
    assert result["mode"].startswith("dry-run")
    assert len(result["tests"]) >= 8 and len(result["bench"]) >= 2
    assert all(r["status"] == "pass" for r in result["tests"].values()), result["tests"]
    timed = result["bench"].pop("timed_flush_l2_emu")
    # The timed path flushes the L2 before each run (issue 35).
    assert timed["status"] == "ok" and timed["line"]["flush_l2"] is True, timed
    assert all(r["status"] == "loaded" for r in result["bench"].values()), result["bench"]
    bundle = BUILD / "device-check"
    ldd = subprocess.run(["ldd", str(bundle / "bin" / "rlx-gpu-run")], capture_output=True, text=True)
    assert "libMLIR" not in ldd.stdout and "libLLVM" not in ldd.stdout, ldd.stdout
    size = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file())
    assert size < 64 * 2**20
