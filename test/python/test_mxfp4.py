"""rlx_mir.mxfp4_dequantize against the OCP Microscaling (MX) v1.0 MXFP4
definition written here in numpy: E2M1 codes two per byte (the even index
in the low nibble), E8M0 scales 2^(s - 127) per 32-element block, 0xFF NaN;
on the CPU path and the emulator (its generic-path kernel). Whole gpt-oss
models with MXFP4 experts are in test_moe_models.py."""
import numpy as np
import pytest

import rlx

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def reference(blocks, scales):
    b = blocks.view(np.uint8).astype(np.int64)
    codes = np.stack([b & 0xF, b >> 4], axis=-1).reshape(*b.shape[:-1], 32)
    s = scales.view(np.uint8).astype(np.float64)
    scale = np.where(s == 255, np.nan, np.exp2(s - 127))
    return (E2M1[codes] * scale[..., None]).reshape(*b.shape[:-2], -1)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_mxfp4_dequantize(device):
    rng = np.random.default_rng(7)
    blocks = rng.integers(-128, 128, (3, 5, 4, 16)).astype(np.int8)
    scales = rng.integers(100, 150, (3, 5, 4)).astype(np.int8)
    # The ends of E8M0: 2^-127 (an f32 subnormal), 2^127, and NaN.
    scales[0, 0, :3] = np.array([0, 254, 255], np.uint8).view(np.int8)
    m = rlx.parse("""func.func @f(%b: tensor<3x5x4x16xi8> {rlx.input = "b"},
                 %s: tensor<3x5x4xi8> {rlx.input = "s"}) -> tensor<3x5x128xf32> {
  %w = rlx_mir.mxfp4_dequantize %b, %s : tensor<3x5x4x16xi8>, tensor<3x5x4xi8>
  return %w : tensor<3x5x128xf32>
}""")
    compiled = rlx.compile_cpu(m) if device == "cpu" else rlx.gpu.compile(m, device=device)
    got = next(iter(compiled.run(b=blocks, s=scales).values()))
    with np.errstate(over="ignore"):  # 6 · 2^127 is inf in f32, as the op gives it
        want = reference(blocks, scales).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])
    assert np.any(got[0, 0, :32] != 0) and np.abs(got[0, 0, :32]).max() < 1e-37


@pytest.mark.parametrize("blocks,scales,message", [
    ("3x5x4x8", "3x5x4", r"blocks must be \[..., G, 16\]"),
    ("3x5x4x16", "3x5x3", "scales must be blocks' shape without its last dim"),
])
def test_mxfp4_dequantize_verifier(blocks, scales, message):
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%b: tensor<{blocks}xi8>, %s: tensor<{scales}xi8>) {{
  %w = rlx_mir.mxfp4_dequantize %b, %s : tensor<{blocks}xi8>, tensor<{scales}xi8>
  return
}}""")
