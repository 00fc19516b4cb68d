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
    # No kernel with a ptxas performance note (e.g. serialized wgmma, C7519).
    assert "ptxas_warnings" not in r.stdout and "warning:" not in r.stderr, r.stderr[-3000:]
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


def fused(M, K, N, dtype="bf16", *, glu=False, norm=False, head_dim=0):
    """One fused_matmul [M, K] x [N, K]^T with the stages that steer the tile
    heuristic: GLU (two accumulator sets), a norm prologue, head stages (TN =
    head_dim, here a per-head RMSNorm on every head)."""
    t = lambda *s: "tensor<" + "x".join(map(str, s)) + f"x{dtype}>"
    out = N // 2 if glu else N
    args = [f'%x: {t(M, K)}', f'%w: {t(N, K)}']
    stages = []
    if norm:
        args.append(f'%g: {t(K)}')
        stages.append(f"norm rms_norm eps = 1.0e-05 norm_weight(%g : {t(K)})")
    if glu:
        stages.append("activation silu glu")
    if head_dim:
        args.append(f'%hw: {t(out // head_dim, head_dim)}')
        stages.append(f"head_norm(%hw : {t(out // head_dim, head_dim)}) head_norm_eps = 1.0e-06 "
                      f"head_dim = {head_dim}")
    return f"""func.func @f({", ".join(args)}) -> {t(M, out)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b {" ".join(stages)} : {t(M, K)}, {t(N, K)}
  return %y : {t(M, out)}
}}"""


# Every tile configuration the heuristic of docs/gpu.md can pick, each with
# the kernel it must land on: wgmma with one (M <= 64) or two consumer
# warpgroups, 4 stages or 3 (GLU with two consumers), TN = 128 or head_dim
# (64, 96, 128, 256: the last with one consumer); mma.sync with TN 32..128,
# GLU, the norm prologue, 2 stages or 1; gemv (split-K, head stages);
# SIMT for f32.
TILES = [
    ("sm_90a", fused(40, 256, 256), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(130, 256, 256), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(40, 256, 512, glu=True), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(130, 2048, 512, glu=True), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(130, 2048, 256, head_dim=64), "wgmma.mma_async.sync.aligned.m64n64k16"),
    ("sm_90a", fused(130, 256, 288, head_dim=96), "wgmma.mma_async.sync.aligned.m64n96k16"),
    ("sm_90a", fused(130, 2048, 512, head_dim=128), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(130, 256, 512, head_dim=256), "wgmma.mma_async.sync.aligned.m64n256k16"),
    ("sm_90a", fused(130, 256, 512, norm=True, glu=True), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(40, 2048, 256, norm=True), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_90a", fused(130, 2048, 512, norm=True, head_dim=128), "wgmma.mma_async.sync.aligned.m64n128k16"),
    ("sm_80", fused(130, 2048, 256), "mma.sync.aligned.m16n8k16"),
    ("sm_80", fused(130, 256, 512, glu=True), "mma.sync.aligned.m16n8k16"),
    ("sm_80", fused(130, 256, 256, norm=True, glu=True, head_dim=64), "mma.sync.aligned.m16n8k16"),
    ("sm_80", fused(130, 256, 256, head_dim=128), "mma.sync.aligned.m16n8k16"),  # 1 stage
    ("sm_80", fused(130, 256, 512, glu=True, head_dim=128), "fma.rn.f32"),  # over 48 KiB: SIMT
    ("sm_80", fused(130, 256, 256, head_dim=32), "mma.sync.aligned.m16n8k16"),
    ("sm_80", fused(130, 256, 384, norm=True, head_dim=96), "mma.sync.aligned.m16n8k16"),
    ("sm_90a", fused(1, 4096, 512), "shfl.sync.bfly"),
    ("sm_90a", fused(16, 4096, 1024, glu=True, norm=True), "shfl.sync.bfly"),
    ("sm_90a", fused(16, 256, 512, head_dim=128), "shfl.sync.bfly"),
    ("sm_80", fused(130, 256, 256, "f32", glu=True, norm=True), "fma.rn.f32"),
    ("sm_80", fused(130, 256, 512, "f32", head_dim=256), "fma.rn.f32"),
]


def build_clean(rlx_opt, tmp_path, chip, text):
    """`text` through ptxas with spills=error and no performance note: each
    kernel's resources, and the PTX."""
    model = tmp_path / "m.mlir"
    model.write_text(text)
    r = subprocess.run([rlx_opt, str(model), f"--rlx-lower-to-nvvm=chip={chip} spills=error"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ptxas_warnings" not in r.stdout and "warning:" not in r.stderr, r.stderr[-3000:]
    ptx = subprocess.run([rlx_opt, str(model), f"--rlx-lower-to-nvvm=chip={chip} assemble=0"],
                         capture_output=True, text=True, check=True).stdout
    return kernel_resources(r.stdout), ptx


@needs_ptxas
@pytest.mark.parametrize("chip,text,expect", TILES, ids=[f"{i}-{c[0]}" for i, c in enumerate(TILES)])
def test_every_tile_configuration_builds_clean(rlx_opt, tmp_path, chip, text, expect):
    """0 spills, 0 stack and no ptxas performance note for each tile
    configuration the matmul heuristic can pick, on the kernel it names."""
    resources, ptx = build_clean(rlx_opt, tmp_path, chip, text)
    matmul = [n for n in resources if "matmul" in n]
    assert matmul, sorted(resources)
    for name in matmul:
        assert resources[name]["spill"] == 0 and resources[name]["stack"] == 0, resources[name]
    assert expect in ptx
    assert ("wgmma" in ptx) == expect.startswith("wgmma")


def attn(D, Dv=None, attrs="", mask=None, dtype="bf16", Sq=256, Sk=256, heads=8, kv=2,
         layout="bsd"):
    """One rlx_mir.attention module (BSD, or BSHD / BHSD with `layout`)."""
    Dv = Dv or D
    t = lambda *s, dt=dtype: "tensor<" + "x".join(map(str, s)) + f"x{dt}>"
    if layout == "bsd":
        qt, kt, vt, ot = t(1, Sq, heads * D), t(1, Sk, kv * D), t(1, Sk, kv * Dv), t(1, Sq, heads * Dv)
    elif layout == "bhsd":
        qt, kt, vt, ot = t(1, heads, Sq, D), t(1, kv, Sk, D), t(1, kv, Sk, Dv), t(1, heads, Sq, Dv)
    else:
        qt, kt, vt, ot = t(1, Sq, heads, D), t(1, Sk, kv, D), t(1, Sk, kv, Dv), t(1, Sq, heads, Dv)
    margs, mop = "", ""
    if mask:
        mt = t(Sq, Sk, dt=mask)
        margs, mop = f', %m: {mt} {{rlx.input = "m"}}', f" mask(%m : {mt})"
    lay = "" if layout == "bsd" else f" layout {layout}"
    return f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {vt} {{rlx.input = "v"}}{margs}) -> {ot} {{
  %o = rlx_mir.attention %q, %k, %v{mop} heads = {heads}, kv_heads = {kv}, head_dim = {D} {attrs}{lay} : {qt}, {kt}, {vt}
  return %o : {ot}
}}"""


# Every attention kernel configuration the heuristics pick: the sm_90a wgmma
# kernel (head dims 64..256, one or two consumers, 128- or 64-key tiles, 4/3/2
# stages, BSD/BSHD/BHSD, every mask kind, the softcap, both input types, a
# decode step's split partial + combine); the mma.sync kernel on sm_80 /
# sm_89 / sm_100a (head dims 16..128) and on sm_90a below head dim 64; the
# SIMT kernel for f32 and head dim 256 off sm_90a.
ATTENTION = [
    ("sm_80", attn(64, attrs="causal"), "flash", False),
    ("sm_80", attn(128), "flash", False),
    ("sm_80", attn(96, attrs="causal", dtype="f16"), "flash", False),
    ("sm_80", attn(128, attrs="sliding_window window = 100 softcap = 3.0e+01"), "flash", False),
    ("sm_89", attn(128, mask="bf16", attrs="causal scale = 5.0e-01"), "flash", False),
    ("sm_90a", attn(16, Dv=128, layout="bshd"), "flash", False),
    ("sm_90a", attn(32, attrs="causal"), "flash", False),
    ("sm_90a", attn(128, attrs="causal"), "wgmma", False),
    ("sm_90a", attn(64, mask="i1"), "wgmma", False),
    ("sm_90a", attn(128, mask="bf16", attrs="causal scale = 5.0e-01"), "wgmma", False),
    ("sm_90a", attn(96, attrs="causal", dtype="f16"), "wgmma", False),
    ("sm_90a", attn(80, Dv=64), "wgmma", False),
    ("sm_90a", attn(128, attrs="sliding_window window = 100 softcap = 3.0e+01"), "wgmma", False),
    ("sm_90a", attn(64, Dv=128, layout="bshd"), "wgmma", False),
    ("sm_90a", attn(128, layout="bhsd", attrs="causal"), "wgmma", False),
    ("sm_90a", attn(256, attrs="causal"), "wgmma", False),
    ("sm_90a", attn(128, Dv=256, dtype="f16"), "wgmma", False),
    ("sm_90a", attn(192, Sq=8, heads=8, kv=8), "wgmma", False),
    ("sm_90a", attn(64, Sq=1, Sk=4096, heads=16, kv=1, attrs="causal"), "wgmma", True),
    ("sm_90a", attn(128, Sq=1, Sk=4096, heads=32, kv=8, attrs="causal"), "wgmma", True),
    ("sm_90a", attn(128, Dv=32, Sq=1, Sk=4096, heads=32, kv=8, attrs="causal"), "flash", True),
    ("sm_100a", attn(128, attrs="causal"), "flash", False),
    ("sm_80", attn(256, attrs="causal"), "simt", False),
    ("sm_90a", attn(64, dtype="f32"), "simt", False),
    ("sm_90a", attn(64, dtype="f32", Sq=1, Sk=4096, heads=32, kv=8, attrs="causal"), "simt", True),
]

KERNEL_PTX = {
    "flash": ("mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
              "cp.async.cg.shared.global"),
    "wgmma": ("wgmma.mma_async.sync.aligned.m64n", "cp.async.bulk.tensor.4d",
              "mbarrier.try_wait.parity"),
}


@needs_ptxas
@pytest.mark.parametrize("chip,text,kernel,split", ATTENTION,
                         ids=[f"{i}-{c[0]}-{c[2]}" for i, c in enumerate(ATTENTION)])
def test_every_attention_configuration_builds_clean(rlx_opt, tmp_path, chip, text, kernel, split):
    """0 spills, 0 stack, no ptxas note for each attention kernel configuration,
    on the kernel it names (flash: mma.sync + ldmatrix.trans + cp.async;
    wgmma: wgmma + TMA + mbarriers; simt: none of them)."""
    resources, ptx = build_clean(rlx_opt, tmp_path, chip, text)
    # One attention kernel, or a decode step's split-KV pair (partial + combine).
    names = sorted(n for n in resources if "attention" in n)
    assert len(names) == (2 if split else 1), names
    assert sum("attention_combine" in n for n in names) == int(split), names
    for name in names:
        assert resources[name]["spill"] == 0 and resources[name]["stack"] == 0, resources[name]
        assert resources[name]["registers"] <= 255, resources[name]
    for k, needles in KERNEL_PTX.items():
        for needle in needles:
            assert (needle in ptx) == (k == kernel), (k, needle)
