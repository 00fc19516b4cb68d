"""The GPU path's compile checks (issue 15): every kernel of every model in
../shared/models, f32 and bf16, prefill and decode, builds to a cubin with
ptxas for sm_90a, sm_80 and sm_100a with 0 spills and 0 stack; and any
chip/feature combination gives a diagnostic or a cubin, never an LLVM fatal
error or a crash."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from harness import shared_dir

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = (shared_dir() or ROOT) / "models"

needs_ptxas = pytest.mark.skipif(
    not (shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas")
         or os.environ.get("RLX_PTXAS")),
    reason="no CUDA toolkit (ptxas) on this machine")

CONFIGS = sorted(p.name for p in MODELS.glob("*.json"))
# The configs are ../shared/models (RLX_SHARED_DIR): a sweep over nothing
# would pass silently, so their absence is a failure.
assert CONFIGS, f"no model configs in {MODELS} (set RLX_SHARED_DIR)"
KERNELS = re.compile(r"rlx\.kernels = \{(.*?)\}\s*,\s*rlx\.ptx", re.S)
ONE = re.compile(r"(\w+) = \{barriers = (\d+) : i64, registers = (\d+) : i64, "
                 r"shared_bytes = (\d+) : i64, spill_bytes = (\d+) : i64, "
                 r"stack_bytes = (\d+) : i64\}")


def gen(build_dir, tmp_path, config, dtype, mode):
    out = tmp_path / "model.mlir"
    extra = ["--seq", "37"] if mode == "prefill" else ["--kv-cache", "--seq", "1", "--past", "16"]
    subprocess.run([str(build_dir / "bin" / "rlx-gen"), str(MODELS / config), "--layers", "2",
                    "--dtype", dtype, *extra, "-o", str(out)], check=True)
    return out


def kernel_resources(text):
    """Every kernel's ptxas resources from the gpu.binary ops."""
    found = {}
    for block in KERNELS.findall(text):
        for name, bar, regs, shared, spill, stack in ONE.findall(block):
            found[name] = dict(registers=int(regs), spill=int(spill), stack=int(stack))
    return found


@needs_ptxas
@pytest.mark.parametrize("chip", ["sm_90a", "sm_80", "sm_100a"])
@pytest.mark.parametrize("mode", ["prefill", "decode"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("config", CONFIGS)
def test_model_builds_to_cubin(rlx_opt, build_dir, tmp_path, config, dtype, mode, chip):
    model = gen(build_dir, tmp_path, config, dtype, mode)
    r = subprocess.run([rlx_opt, str(model), f"--rlx-lower-to-nvvm=chip={chip} spills=error"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    resources = kernel_resources(r.stdout)
    launches = set(re.findall(r"gpu\.launch_func\s+@\w+::@(\w+)", r.stdout))
    assert launches, "no kernel launched"
    # Every launched kernel was assembled and reported by ptxas.
    assert launches <= set(resources), sorted(launches - set(resources))
    for name, res in resources.items():
        assert res["spill"] == 0 and res["stack"] == 0, (name, res)
        assert 0 < res["registers"] <= 255, (name, res)
    assert f'chip = "{chip}"' in r.stdout and "bin = " in r.stdout


CHIPS = ["sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a",
         "sm_100f", "sm_101a", "sm_103a", "sm_120", "sm_120a", "sm_75", "sm_90b", "gfx90a", ""]
FEATURES = ["", "+ptx60", "+ptx70", "+ptx78", "+ptx80", "+ptx81", "+ptx86", "+ptx87", "+ptx88",
            "+ptx90", "+ptx95", "+ptx", "+sm_90", "-ptx80"]

KERNEL_MIX = """
func.func @f(%x: tensor<3x37xbf16>, %g: tensor<37xbf16>, %w: tensor<8x37xbf16>) -> tensor<3x8xf32> {
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<3x37xbf16>, tensor<37xbf16>
  %m = rlx_mir.matmul %n, %w transpose_b : tensor<3x37xbf16>, tensor<8x37xbf16>
  %s = rlx_mir.softmax %m axis = 1 : tensor<3x8xbf16>
  %c = rlx_mir.cast %s : tensor<3x8xbf16> to tensor<3x8xf8E4M3FN>
  %e = rlx_mir.cast %c : tensor<3x8xf8E4M3FN> to tensor<3x8xf32>
  return %e : tensor<3x8xf32>
}
"""


@needs_ptxas
@pytest.mark.parametrize("chip", CHIPS)
def test_any_chip_and_features_diagnose_or_compile(rlx_opt, tmp_path, chip):
    src = tmp_path / "k.mlir"
    src.write_text(KERNEL_MIX)
    outcomes = {}
    for features in FEATURES:
        opts = f"chip={chip} features={features}" if features else f"chip={chip}"
        r = subprocess.run([rlx_opt, str(src), f"--rlx-lower-to-nvvm={opts}", "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
        # Never a crash or an LLVM fatal error: a located diagnostic or a cubin.
        assert r.returncode in (0, 1), (opts, r.returncode, r.stderr[-2000:])
        assert "LLVM ERROR" not in r.stderr and "Cannot select" not in r.stderr, (opts, r.stderr)
        assert "Stack dump" not in r.stderr, (opts, r.stderr[-2000:])
        if r.returncode:
            assert re.search(r"k\.mlir:\d+:\d+: error: ", r.stderr), (opts, r.stderr)
        outcomes[features] = r.returncode
    if chip in ("sm_80", "sm_90a", "sm_100a"):
        assert outcomes[""] == 0, f"{chip} with its default PTX ISA must compile"
