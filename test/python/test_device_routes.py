"""rlx-run's routes on every device: what a user gives on the command line
(unnamed arguments, NVFP4 block scales as .npy, constants in the module,
zero-size dims) gives the same numbers with `--device=cpu` and
`--device=emu` (the GPU path: the code `--device=cuda` runs, on the
emulator), from one test body, against numpy written here."""
from __future__ import annotations

import base64

import ml_dtypes
import numpy as np
import pytest

from harness import run_mlir

DEVICES = ["cpu", "emu"]


def run(text, inputs, device, **kw):
    return run_mlir(text, inputs, extra=("--device", device), **kw)


@pytest.mark.parametrize("device", DEVICES)
def test_unnamed_arguments_are_arg0_and_result0(device):
    text = """
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c = rlx_mir.sub %a, %b : tensor<4xf32>, tensor<4xf32>
  return %c : tensor<4xf32>
}"""
    a = np.arange(4, dtype=np.float32)
    b = np.array([10, 20, 30, 40], np.float32)
    out = run(text, {"arg0": a, "arg1": b}, device)
    np.testing.assert_array_equal(out["result0"], a - b)


def nvfp4_matmul(m, n, k):
    return f"""
func.func @f(%x: tensor<{m}x{k}xf32> {{rlx.input = "x"}},
             %w: tensor<{n}x{k // 2}xi8> {{rlx.param = "w"}},
             %s: tensor<{n}x{k // 16}xf8E4M3FN> {{rlx.param = "s"}},
             %g: tensor<f32> {{rlx.param = "g"}}) -> (tensor<{m}x{n}xf32> {{rlx.output = "y"}}) {{
  %y = rlx_hir.dequant_linear %x, %w, %s, %g
      : tensor<{m}x{k}xf32>, tensor<{n}x{k // 2}xi8>, tensor<{n}x{k // 16}xf8E4M3FN>, tensor<f32>
  return %y : tensor<{m}x{n}xf32>
}}"""


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)


@pytest.mark.parametrize("form", ["uint8", "ml_dtypes"])
@pytest.mark.parametrize("device", DEVICES)
def test_nvfp4_scales_from_npy_keep_their_bytes(device, form):
    """Q3 of ../shared/cases with 16 rows, and random codes and scales:
    the E4M3 scale bytes given by --input (raw bytes or ml_dtypes float8)
    are scales, not numbers to convert; the global scale is an f32 .npy."""
    rng = np.random.default_rng(3)
    m, n, k = 16, 32, 64
    codes = rng.integers(0, 16, (n, k), dtype=np.uint8)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).view(np.int8)
    scale_bytes = rng.choice(np.arange(0x28, 0x48, dtype=np.uint8), (n, k // 16))
    scales = scale_bytes if form == "uint8" else scale_bytes.view(ml_dtypes.float8_e4m3fn)
    g = np.array(0.25, np.float32)
    x = rng.standard_normal((m, k)).astype(np.float32)
    y = run(nvfp4_matmul(m, n, k), {"x": x, "w": packed, "s": scales, "g": g}, device)["y"]
    s = scale_bytes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    w = E2M1[codes] * np.repeat(s, 16, axis=1) * g
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("device", DEVICES)
def test_constants_of_any_size_and_dense_resource(device):
    """A 65-element non-splat constant and a dense_resource blob in the
    module: data the GPU artifact carries, as the CPU path's globals."""
    c = (np.arange(65, dtype=np.float32) - 32) / 8
    r = np.linspace(-1, 1, 65, dtype=np.float32)
    blob = "0x04000000" + r.tobytes().hex().upper()  # alignment 4, then the bytes
    values = ", ".join(repr(float(v)) for v in c)
    text = f"""
func.func @f(%x: tensor<65xf32> {{rlx.input = "x"}}) -> (tensor<65xf32> {{rlx.output = "y"}}) {{
  %c = arith.constant dense<[{values}]> : tensor<65xf32>
  %r = arith.constant dense_resource<blob> : tensor<65xf32>
  %a = rlx_mir.mul %x, %c : tensor<65xf32>, tensor<65xf32>
  %y = rlx_mir.add %a, %r : tensor<65xf32>, tensor<65xf32>
  return %y : tensor<65xf32>
}}
{{-#
  dialect_resources: {{ builtin: {{ blob: "{blob}" }} }}
#-}}"""
    x = np.random.default_rng(1).standard_normal(65).astype(np.float32)
    y = run(text, {"x": x}, device)["y"]
    np.testing.assert_allclose(y, x * c + r, rtol=1e-6, atol=1e-6)


ZERO_SIZE = {
    # name: (body, inputs {name: shape}, output shape, numpy reference)
    "matmul K=0": ("%y = rlx_mir.matmul %a, %b : tensor<3x0xf32>, tensor<0x5xf32>",
                   {"a": (3, 0), "b": (0, 5)}, (3, 5), lambda a, b: a @ b),
    "linear K=0 + bias": (
        "%m = rlx_mir.matmul %a, %b transpose_b : tensor<3x0xf32>, tensor<5x0xf32>\n"
        "  %y = rlx_mir.add %m, %c : tensor<3x5xf32>, tensor<5xf32>",
        {"a": (3, 0), "b": (5, 0), "c": (5,)}, (3, 5), lambda a, b, c: a @ b.T + c),
    "matmul M=0": ("%y = rlx_mir.matmul %a, %b : tensor<0x4xf32>, tensor<4x5xf32>",
                   {"a": (0, 4), "b": (4, 5)}, (0, 5), lambda a, b: a @ b),
    "sum over an empty axis": ("%y = rlx_mir.reduce sum %a axes = [1] : tensor<3x0xf32>",
                               {"a": (3, 0)}, (3,), lambda a: a.sum(1)),
    "mean over an empty axis": ("%y = rlx_mir.reduce mean %a axes = [1] : tensor<3x0xf32>",
                                {"a": (3, 0)}, (3,), lambda a: np.full(3, np.nan, np.float32)),
    "rms_norm of 0 rows": ("%y = rlx_mir.rms_norm %a, %g eps = 1.0e-05 : tensor<0x8xf32>, tensor<8xf32>",
                           {"a": (0, 8), "g": (8,)}, (0, 8), lambda a, g: a * g),
    "elementwise": ("%y = rlx_mir.add %a, %b : tensor<0x4xf32>, tensor<0x4xf32>",
                    {"a": (0, 4), "b": (0, 4)}, (0, 4), lambda a, b: a + b),
    "attention of 0 query rows": (
        "%y = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 8 causal"
        " : tensor<1x0x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>",
        {"q": (1, 0, 16), "k": (1, 4, 8), "v": (1, 4, 8)}, (1, 0, 16), lambda q, k, v: q),
}


@pytest.mark.parametrize("case", ZERO_SIZE)
@pytest.mark.parametrize("device", DEVICES)
def test_zero_size_dims(device, case):
    """Zero-size dims (valid per docs/design.md): an empty contraction is the
    empty sum, an empty output launches nothing; same as numpy."""
    body, shapes, out, ref = ZERO_SIZE[case]
    args = ", ".join(f'%{n}: tensor<{"x".join(map(str, s)) + "x" if s else ""}f32> {{rlx.input = "{n}"}}'
                     for n, s in shapes.items())
    ty = f'tensor<{"x".join(map(str, out))}xf32>'
    text = f"""
func.func @f({args}) -> ({ty} {{rlx.output = "y"}}) {{
  {body}
  return %y : {ty}
}}"""
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    y = run(text, inputs, device)["y"]
    want = ref(*inputs.values()).astype(np.float32)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


# Every rlx-run flag, with a value to try it with ({tmp}: a scratch
# directory; {x}: an input file), and the devices it is for. A flag not for
# a device must be an error naming the device; one for it must run and give
# the same output as without it where it does not change the numbers.
FLAGS = {
    "-O": ("-O2", "all"), "--blas-min-flops": ("--blas-min-flops=0", "cpu"),
    "--blas-threads": ("--blas-threads=1", "cpu"), "--chip": ("--chip=sm_80", "gpu"),
    "--cpu": ("--cpu=host", "cpu"), "--device": (None, "all"),
    "--dims": ("--dims=seq=4", "all"), "--dump-ir": ("--dump-ir={tmp}/ir", "cpu"),
    "--emit-artifact": ("--emit-artifact={tmp}/art", "gpu"), "--entry": ("--entry=f", "all"),
    "--features": ("--features=+ptx80", "gpu"), "--fusion-policy": ("--fusion-policy=fusable", "all"),
    "--gpu-report": ("--gpu-report", "gpu"), "--input": ("--input=x={x}", "all"),
    "--mattr": ("--mattr=-avx512bf16", "cpu"), "--no-blas": ("--no-blas", "cpu"),
    "--no-fuse": ("--no-fuse", "all"), "--no-lir": ("--no-lir", "cpu"),
    "--output-dir": (None, "all"), "--plan-dir": ("--plan-dir={tmp}/plan", "all"),
    "--repeat": ("--repeat=2", "all"), "--row-tile": ("--row-tile=2", "cpu"),
    "--runtime-dir": ("--runtime-dir={runtime}", "cpu"), "--seed": ("--seed=3", "all"),
    "--serve": ("--serve", "cpu"), "--tp": ("--tp=1", "all"), "-v": ("-v", "all"),
    "--ep": ("--ep=0", "all"),
    "--warmup": ("--warmup=1", "all"), "--weights": ("--weights={ckpt}", "all"),
    "--matmul-kernel": ("--matmul-kernel=simt", "gpu"), "--split-k": ("--split-k=2", "gpu"),
    "--attention-kernel": ("--attention-kernel=simt", "gpu"),
    "--kv-splits": ("--kv-splits=1", "gpu"), "--no-tensor-cores": ("--no-tensor-cores", "gpu"),
    "--strict-kernels": ("--strict-kernels", "gpu"),
    "--weight-args": ("--weight-args=none", "all"),
    "--trace": ("--trace={tmp}/trace.json", "all"),
    # The compile options (CompileOptions.def), as both paths take them.
    "--fuse": ("--fuse", "all"), "--import": ("--import", "all"),
    "--no-import": ("--no-import", "all"), "--blas": ("--blas", "cpu"), "--lir": ("--lir", "cpu"),
    "--alignment": ("--alignment=128", "cpu"),
    "--approximate-math": ("--approximate-math", "cpu"),
    "--no-approximate-math": ("--no-approximate-math", "cpu"),
    "--tensor-cores": ("--tensor-cores", "gpu"), "--spills": ("--spills=error", "gpu"),
    "--generic-kernels": ("--generic-kernels=rlx_mir.matmul", "gpu"),
    # Needs a plugin built out of tree: test_custom_op.py runs it on cpu and emu.
    "--load-dialect-plugin": (None, "all"),
}


def help_flags():
    import re
    import subprocess

    from harness import RLX_RUN
    text = subprocess.run([str(RLX_RUN), "--help"], capture_output=True, text=True).stdout
    section = text.split("rlx-run options:")[1]
    return sorted(set(re.findall(r"^\s+(-{1,2}[\w-]+)", section, re.M)))


def test_every_flag_is_classified():
    assert sorted(FLAGS) == help_flags()


@pytest.mark.parametrize("flag", [f for f, (v, _) in FLAGS.items() if v])
@pytest.mark.parametrize("device", DEVICES)
def test_each_flag_works_or_names_the_device(device, flag, tmp_path):
    import subprocess

    from harness import BUILD, RLX_RUN
    value, where = FLAGS[flag]
    text = """
func.func @f(%x: tensor<?x8xf32> {rlx.input = "x", rlx.dim_names = ["seq", ""]},
             %w: tensor<8x8xf32> {rlx.param = "w"}) -> (tensor<?x8xf32> {rlx.output = "y"}) {
  %y = rlx_mir.matmul %x, %w : tensor<?x8xf32>, tensor<8x8xf32>
  return %y : tensor<?x8xf32>
}"""
    (tmp_path / "m.mlir").write_text(text)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    from test_checkpoints import write_safetensors
    write_safetensors(tmp_path / "ckpt.safetensors", {"w": w})
    arg = value.format(tmp=tmp_path, x=tmp_path / "x.npy", ckpt=tmp_path / "ckpt.safetensors",
                       runtime=BUILD / "lib")
    base = [str(RLX_RUN), str(tmp_path / "m.mlir"), "--device", device, "--dims=seq=4",
            "--output-dir", str(tmp_path / "out")]
    base += [] if flag in ("--input", "--dims") else ["--input", f"x={tmp_path / 'x.npy'}"]
    base += [] if flag == "--weights" else ["--input", f"w={tmp_path / 'w.npy'}"]
    if flag == "--dims":
        base.remove("--dims=seq=4")
        base += ["--input", f"x={tmp_path / 'x.npy'}"]
    proc = subprocess.run(base + [arg], capture_output=True, text=True, timeout=300,
                          input="run\nquit\n")
    applies = where == "all" or (where == "cpu") == (device == "cpu")
    if not applies:
        assert proc.returncode == 1, (flag, proc.stdout)
        assert flag in proc.stderr and "--device=" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, (flag, proc.stderr)
    if flag == "--serve":
        assert "ms " in proc.stdout
        return
    y = np.load(tmp_path / "out" / "y.npy")
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", ["float32", "ml_dtypes", "uint16 bits"])
@pytest.mark.parametrize("device", DEVICES)
def test_bf16_inputs_in_every_npy_form(device, form):
    """A bf16 argument from float32 (rounded to nearest even), ml_dtypes
    bfloat16, or uint16 bit patterns (what rlx-gpu-run writes): one value."""
    text = """
func.func @f(%x: tensor<2x8xbf16> {rlx.input = "x"}) -> (tensor<2x8xbf16> {rlx.output = "y"}) {
  %y = rlx_mir.add %x, %x : tensor<2x8xbf16>, tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}"""
    x = np.random.default_rng(2).standard_normal((2, 8)).astype(ml_dtypes.bfloat16)
    given = {"float32": x.astype(np.float32), "ml_dtypes": x,
             "uint16 bits": x.view(np.uint16)}[form]
    y = run(text, {"x": given}, device)["y"]
    np.testing.assert_array_equal(np.asarray(y, np.float32), 2 * x.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_ops_an_import_leaves_to_upstream_linalg(device):
    """What torch-mlir's TOSA leaves as linalg after import (an embedding's
    i64 -> i32 index cast, a causal mask's compare and select) runs on every
    device: on the GPU path each is a kernel of its own (it was silently
    dropped from the plan, and the gather read stale memory)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    import rlx

    class Embed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.e = torch.nn.Embedding(16, 8)

        def forward(self, ids):
            return self.e(ids)

    class CausalWhere(torch.nn.Module):
        def forward(self, x):
            n = x.shape[-1]
            keep = torch.arange(n)[None, :] <= torch.arange(n)[:, None]
            return torch.where(keep, x, torch.zeros_like(x))

    torch.manual_seed(0)
    ids = np.array([[3, 0, 15, 7, 7]], np.int64)
    x = np.random.default_rng(1).standard_normal((5, 5)).astype(np.float32)
    for module, a in ((Embed(), ids), (CausalWhere(), x)):
        with torch.no_grad():
            want = module(torch.from_numpy(a)).numpy()
        got = rlx.from_torch(module, torch.from_numpy(a), device=device)(a)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_rope_epilogue_past_48k_of_shared_memory(device):
    """A Llama layer of head_dim 8 and 32 rows: the q/k/v fused_matmul with
    its RoPE epilogue takes 51,712 bytes of shared memory on the GPU path,
    past the 48 KiB of static shared memory: dynamic shared memory there
    (rlx-gpu-dynamic-shared), the CPU path's numbers."""
    from harness import gen_model, shared_dir
    if shared_dir() is None:
        pytest.skip("the shared model configs are not here")
    text = gen_model(shared_dir() / "models" / "llama-3.2-1b.json", "--layer-only", "--seq=32",
                     "--set=num_attention_heads=4", "--set=num_key_value_heads=2",
                     "--set=hidden_size=32", "--set=head_dim=8", "--set=intermediate_size=64")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 32, 32)).astype(np.float32)
    inputs = {"hidden_states": x, "position_ids": np.arange(32, dtype=np.int64)}
    want = run(text, inputs, "cpu")["hidden_states"]
    got = run(text, inputs, device)["hidden_states"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("strict", [False, True])
def test_a_kernel_preference_falls_back_with_a_remark(strict, tmp_path):
    """--matmul-kernel=wgmma on an f32 matmul (wgmma takes bf16/f16): the
    heuristic's kernel there, a remark naming the op and why; with
    --strict-kernels an error naming the same, and no IR dump."""
    import subprocess

    from harness import RLX_RUN
    text = """
func.func @f(%x: tensor<40x32xf32> {rlx.input = "x"}, %w: tensor<32x32xf32> {rlx.input = "w"})
    -> (tensor<40x32xf32> {rlx.output = "y"}) {
  %y = rlx_mir.matmul %x, %w : tensor<40x32xf32>, tensor<32x32xf32>
  return %y : tensor<40x32xf32>
}"""
    (tmp_path / "m.mlir").write_text(text)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((40, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    proc = subprocess.run([str(RLX_RUN), str(tmp_path / "m.mlir"), "--device=emu",
                           "--matmul-kernel=wgmma", *(["--strict-kernels"] if strict else []),
                           f"--input=x={tmp_path / 'x.npy'}", f"--input=w={tmp_path / 'w.npy'}",
                           "--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    why = "matmul-kernel=wgmma: its operands are not both bf16 or both f16" if strict else \
        "'rlx_mir.matmul': matmul-kernel=wgmma does not apply: its operands are not both bf16 or both f16"
    assert why in proc.stderr, proc.stderr
    assert "see current operation" not in proc.stderr and len(proc.stderr.splitlines()) < 8
    assert proc.returncode == (1 if strict else 0), proc.stderr
    if not strict:
        np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), x @ w, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("device", DEVICES)
def test_rope_at_head_dim_256(device, chip):
    """rlx_hir.rope at head_dim 256 (Gemma's): its 128-entry inv_freq table
    is a constant the GPU artifact carries (it did not compile there);
    against HF's rotate_half formula in numpy."""
    text = """
func.func @f(%x: tensor<1x3x512xf32> {rlx.input = "x"}, %p: tensor<3xi64> {rlx.input = "p"})
    -> (tensor<1x3x512xf32> {rlx.output = "y"}) {
  %y = rlx_hir.rope %x positions(%p : tensor<3xi64>) head_dim = 256 theta = 1.0e+04 : tensor<1x3x512xf32>
  return %y : tensor<1x3x512xf32>
}"""
    x = np.random.default_rng(8).standard_normal((1, 3, 512)).astype(np.float32)
    p = np.array([0, 5, 1000], np.int64)
    extra = () if device == "cpu" else ("--chip", chip)
    y = run_mlir(text, {"x": x, "p": p}, extra=("--device", device, *extra))["y"]
    inv = 1e4 ** (-np.arange(0, 256, 2, dtype=np.float64) / 256)
    ang = p[:, None] * inv[None]                           # [S, 128]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    h = x.reshape(3, 2, 256).astype(np.float64)
    rot = np.concatenate([-h[..., 128:], h[..., :128]], -1)
    want = (h * cos[:, None] + rot * sin[:, None]).reshape(1, 3, 512)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def test_host_calls_are_an_error_on_the_gpu_path_not_dropped():
    """A host op with effects that the GPU plan cannot run (a call to an
    external @rtclock and a vector.print, as buddy-mlir's kernels time
    themselves) was dropped without a word on --device=emu; it is a located
    error there."""
    text = """
func.func private @clock() -> f64
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t = call @clock() : () -> f64
  %c = rlx_mir.add %a, %a : tensor<4xf32>, tensor<4xf32>
  vector.print %t : f64
  return %c : tensor<4xf32>
}"""
    with pytest.raises(RuntimeError) as e:
        run(text, {"arg0": np.ones(4, np.float32)}, "emu")
    assert "host op 'func.call' would not run there" in str(e.value)
    assert ":4:8: error" in str(e.value)
