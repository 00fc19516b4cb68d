"""Warp matrix instructions (issue 16, first part): a hand-written tensor-core
tile kernel (ldmatrix from shared memory, mma.sync m16n8k16) that ptxas
assembles for sm_80 and sm_90a and that the emulator runs with the PTX ISA's
fragment layouts, against numpy: bit-exact on integer-valued inputs (as case
G4), within f32 rounding on random ones."""
from __future__ import annotations

import pathlib
import tempfile

import numpy as np
import pytest

from gpu_harness import compile_artifact, from_bf16_bits, run_artifact, to_bf16_bits

TEMPLATE = (pathlib.Path(__file__).parent / "mma_tile.mlir.in").read_text()


def module(dtype):
    return (TEMPLATE.replace("xT>", f"x{dtype}>").replace("xT,", f"x{dtype},")
            .replace("TYPE", dtype)
            .replace("OPERAND", "vector<2xf16>" if dtype == "f16" else "i32"))


def encode(a, dtype):
    return to_bf16_bits(a) if dtype == "bf16" else a.astype(np.float16)


def decoded(a, dtype):
    return from_bf16_bits(to_bf16_bits(a)) if dtype == "bf16" else a.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_mma_tile(dtype, chip):
    with tempfile.TemporaryDirectory() as tmp:
        art = pathlib.Path(tmp) / "art"
        manifest = compile_artifact(module(dtype), art, chip=chip, cubin=True)
        ptx = (art / "tc.ptx").read_text()
        assert f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in ptx
        k = next(k for k in manifest["kernels"] if k["name"] == "mma")
        assert k["spill_bytes"] == 0 and k["stack_bytes"] == 0
        # G4-style: every product exact, so the result is bit-exact.
        i, kk = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        a = ((i + 2 * kk) % 3).astype(np.float32)
        k2, n = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
        b = ((2 * k2 + n) % 3).astype(np.float32)
        d = run_artifact(art, "f", {"a": encode(a, dtype), "b": encode(b, dtype)})["d"]
        np.testing.assert_array_equal(d, a @ b)
        # Random values: the f32 sum of exact products, rounded once.
        rng = np.random.default_rng(3)
        a = decoded(rng.standard_normal((16, 16)).astype(np.float32), dtype)
        b = decoded(rng.standard_normal((16, 8)).astype(np.float32), dtype)
        d = run_artifact(art, "f", {"a": encode(a, dtype), "b": encode(b, dtype)})["d"]
        np.testing.assert_allclose(d, a.astype(np.float64) @ b, rtol=1e-6, atol=1e-6)
