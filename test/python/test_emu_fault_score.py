"""Planted faults in the generated GPU kernels, scored against the emulator
(issue 33): scripts/emu-fault-score.py edits each case's kernel IR the way a
generator bug would (a wait, fence or barrier dropped, a stage released
early, wrong parity or expect_tx bytes, swizzle, register-A operands, a
misaligned cp.async, ...) and runs it; at least 90 % must be reported as a
finding or a numerics failure, every edit must still apply, and every
unmodified case must pass."""
import json
import pathlib
import subprocess
import sys

from harness import BUILD

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_planted_faults_are_detected(tmp_path):
    out = tmp_path / "score.json"
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "emu-fault-score.py"), "--build",
                        str(BUILD), "--json", str(out), "--min-score", "0.9"],
                       capture_output=True, text=True, timeout=1200)
    print(p.stdout[-6000:])
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-3000:]
    verdicts = json.loads(out.read_text())
    assert len(verdicts) >= 25
    cases = {v["case"] for v in verdicts}
    # The kernels the issue names: wgmma matmul, both flash-attention
    # kernels, split-KV, both NVFP4 kernels and SIMT ones.
    for c in ("wgmma_matmul", "fa3_wgmma", "fa2_mma_sync", "split_kv", "nvfp4_gemv",
              "nvfp4_wgmma", "simt_rms_norm"):
        assert c in cases
    detected = sum(v["verdict"].startswith("detected") for v in verdicts)
    assert detected >= 0.9 * len(verdicts)
    assert "planted faults detected" in p.stdout
