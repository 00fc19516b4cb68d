"""The CPU runtime's GEMM libraries, chosen at load time (lib/Runtime/CPU/Blas.h).

rlx-run names what the runtime opened: OpenBLAS with the core type it picked
for this CPU and, where oneDNN is found and has AVX-512 kernels here, oneDNN
for GEMMs on row-major [K, N] weights (the CPU runner then packs nn.Linear
weights [K, N]: rlx-mir-pack-weights{kn-weights}). RLX_BLAS / RLX_DNNL pick
other libraries; one that does not load is an error naming it. Whatever the
libraries, a layer's numbers match numpy written here, element-wise.
"""
import os
import pathlib
import subprocess

import numpy as np
import pytest

from harness import RLX_RUN, assert_close

MATMUL = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = rlx_mir.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
"""

# A SwiGLU MLP with a residual, nn.Linear weights ([N, K]): rows > 1 go to the
# GEMM library, the weights are parameters the pack function may transpose.
MLP = """
func.func @mlp(%x: tensor<1x?x256xf32> {rlx.input = "x", rlx.dim_names = ["", "seq", ""]},
               %g: tensor<512x256xf32> {rlx.param = "gate"}, %u: tensor<512x256xf32> {rlx.param = "up"},
               %d: tensor<256x512xf32> {rlx.param = "down"}) -> (tensor<1x?x256xf32> {rlx.output = "y"}) {
  %a = rlx_mir.matmul %x, %g transpose_b : tensor<1x?x256xf32>, tensor<512x256xf32>
  %b = rlx_mir.matmul %x, %u transpose_b : tensor<1x?x256xf32>, tensor<512x256xf32>
  %s = rlx_mir.silu %a : tensor<1x?x512xf32>
  %h = rlx_mir.mul %s, %b : tensor<1x?x512xf32>, tensor<1x?x512xf32>
  %o = rlx_mir.matmul %h, %d transpose_b : tensor<1x?x512xf32>, tensor<256x512xf32>
  %y = rlx_mir.add %x, %o : tensor<1x?x256xf32>, tensor<1x?x256xf32>
  return %y : tensor<1x?x256xf32>
}
"""


def run(tmp_path, model, *args, env=None):
    (tmp_path / "m.mlir").write_text(model)
    return subprocess.run([str(RLX_RUN), str(tmp_path / "m.mlir"), *map(str, args)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def blas_line(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("blas: ")]
    assert len(lines) == 1, stdout
    return lines[0]


def test_blas_is_named(tmp_path):
    proc = run(tmp_path, MATMUL, "-v")
    assert proc.returncode == 0, proc.stderr
    line = blas_line(proc.stdout)
    assert "OpenBLAS" in line and ", core " in line, line
    assert "GEMM with a [K, N] B: " in line, line
    assert any(l.startswith("cpu: ") for l in proc.stdout.splitlines()), proc.stdout


def test_rlx_blas_picks_the_library(tmp_path):
    system = run(tmp_path, MATMUL, env={"RLX_BLAS": "libopenblas.so.0"})
    assert system.returncode == 0, system.stderr
    assert "libopenblas.so" in blas_line(system.stdout), system.stdout


@pytest.mark.parametrize("var", ["RLX_BLAS", "RLX_DNNL"])
def test_a_named_library_that_does_not_load_is_an_error(tmp_path, var):
    bogus = str(tmp_path / "no-such-library.so")
    proc = run(tmp_path, MATMUL, env={var: bogus})
    if var == "RLX_BLAS":
        assert proc.returncode == 1, proc.stdout
        assert "RLX_BLAS=" in proc.stderr and "no-such-library.so" in proc.stderr, proc.stderr
        # Generated loops need no BLAS.
        assert run(tmp_path, MATMUL, "--no-blas", env={var: bogus}).returncode == 0
    else:
        # oneDNN is optional: the run goes on with OpenBLAS and says why.
        assert proc.returncode == 0, proc.stderr
        assert "RLX_DNNL=" + bogus + " does not load" in blas_line(proc.stdout), proc.stdout


@pytest.mark.parametrize("seq", [1, 7, 64])
@pytest.mark.parametrize("dnnl", ["default", "off"])
def test_mlp_matches_numpy_with_either_gemm_library(tmp_path, seq, dnnl):
    rng = np.random.default_rng(seq)
    x = rng.standard_normal((1, seq, 256)).astype(np.float32)
    w = {n: (rng.standard_normal(s) / np.sqrt(s[1])).astype(np.float32)
         for n, s in {"gate": (512, 256), "up": (512, 256), "down": (256, 512)}.items()}
    args = []
    for name, value in {"x": x, **w}.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / (name + '.npy')}"]
    env = {"RLX_DNNL": "0"} if dnnl == "off" else {}
    proc = run(tmp_path, MLP, *args, "--output-dir", tmp_path / "out", "--dump-ir", tmp_path / "ir",
               env=env)
    assert proc.returncode == 0, proc.stderr
    a = x.astype(np.float64) @ w["gate"].T.astype(np.float64)
    h = a / (1 + np.exp(-a)) * (x.astype(np.float64) @ w["up"].T.astype(np.float64))
    ref = x + h @ w["down"].T.astype(np.float64)
    assert_close(np.load(tmp_path / "out" / "y.npy"), ref, rtol=1e-5, atol=1e-5)
    # The weights are packed [K, N] exactly when oneDNN serves the GEMMs.
    line = blas_line(proc.stdout)
    uses_dnnl = "GEMM with a [K, N] B: oneDNN" in line
    assert uses_dnnl == (dnnl == "default" and "not used" not in line and
                         "not found" not in line), line
    fused = (tmp_path / "ir" / "fused-mir.mlir").read_text()
    assert ("rlx_mir.transpose" in fused) == uses_dnnl, fused


@pytest.mark.parametrize("dnnl", ["default", "forced"])
def test_checkpoint_read_into_the_packed_layout(tmp_path, dnnl):
    """--weights reads gate and up straight into their merged tensor (rows;
    with oneDNN, whose [K, N] forms RLX_DNNL forces here on any CPU, columns
    of the transposed tensor, and down transposed too): the bytes read into
    place are every packed weight's, and the numbers are numpy's."""
    from safetensors.numpy import save_file
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 9, 256)).astype(np.float32)
    w = {n: (rng.standard_normal(s) / np.sqrt(s[1])).astype(np.float32)
         for n, s in {"gate": (512, 256), "up": (512, 256), "down": (256, 512)}.items()}
    save_file(w, str(tmp_path / "w.safetensors"))
    np.save(tmp_path / "x.npy", x)
    env = {}
    if dnnl == "forced":
        found = [p for p in blas_line(run(tmp_path, MATMUL, "-v").stdout).split("(")
                 if "libdnnl" in p]
        if not found:
            pytest.skip("no oneDNN library found")
        env["RLX_DNNL"] = found[-1].split(")")[0]
    proc = run(tmp_path, MLP, "--weights", tmp_path / "w.safetensors",
               "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "out", env=env)
    assert proc.returncode == 0, proc.stderr
    a = x.astype(np.float64) @ w["gate"].T.astype(np.float64)
    h = a / (1 + np.exp(-a)) * (x.astype(np.float64) @ w["up"].T.astype(np.float64))
    assert_close(np.load(tmp_path / "out" / "y.npy"), x + h @ w["down"].T.astype(np.float64),
                 rtol=1e-5, atol=1e-5)
    import re
    held = re.search(r"weights held: (\d+) bytes after packing \((\d+) packed, (\d+) of the "
                     r"originals released, (\d+) read into", proc.stdout)
    assert held, proc.stdout
    kn = "GEMM with a [K, N] B: oneDNN" in blas_line(proc.stdout)
    assert kn or dnnl == "default", proc.stdout
    packed = w["gate"].nbytes + w["up"].nbytes + (w["down"].nbytes if kn else 0)
    assert (int(held.group(2)), int(held.group(3)), int(held.group(4))) == (packed, 0, packed)
    assert int(held.group(1)) == sum(a.nbytes for a in w.values())
