"""PT2E-quantized PyTorch modules (torchao's prepare_pt2e/convert_pt2e with
the XNNPACK quantizer's int8 configs, as users quantize for deployment)
exported by torch-mlir and compiled by RLX on the CPU path and the emulator
from one body. The reference is the converted module itself, run by
PyTorch: its quantize/dequantize pairs (quantized_decomposed ops: round half
to even, zero point, saturation) around f32 linears. The outputs are the
last dequantize's, (q − zero_point) · scale, so equal floats are equal int8
codes: they must be exactly equal."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import rlx

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
pytest.importorskip("torchao")

from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.testing.pt2e._xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer, get_symmetric_quantization_config)

DEVICES = ["cpu", "emu"]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 48)
        self.fc2 = torch.nn.Linear(48, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def quantized(per_channel):
    torch.manual_seed(0)
    model, x = Mlp().eval(), torch.randn(5, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.export.export(model, (x,)).module()
        prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(
            get_symmetric_quantization_config(is_per_channel=per_channel)))
        for _ in range(4):  # calibration
            prepared(torch.randn(5, 16) * 2)
        return convert_pt2e(prepared), x


# torch-mlir's TOSA lowering has no dequantize_per_channel (it fails in
# torch-mlir, before RLX): per channel goes through linalg only.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("output,per_channel", [("linalg", False), ("tosa", False),
                                                ("linalg", True)])
def test_quantized_mlp_equals_pytorch(device, output, per_channel):
    model, x = quantized(per_channel)
    want = model(x).detach().numpy()
    compiled = rlx.from_torch(model, x, output=output, device=device)
    got = np.asarray(compiled(x))
    assert want.shape == got.shape and np.count_nonzero(want) > want.size // 2
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_linears_run_in_int8(per_channel):
    """Both QDQ linears of the linalg export become rlx_mir.qmatmul (int8 ×
    int8 in i32, the scales applied once), no float matmul is left, and the
    quantize/dequantize generics are raised (nothing stays linalg)."""
    model, x = quantized(per_channel)
    text, _, _ = rlx.export_torch(model, x, output="linalg")
    m = rlx.parse(text)
    m.run_pipeline("rlx-import-to-mir")
    raised = m.text()
    assert raised.count("rlx_mir.qmatmul") == 2
    assert "rlx_mir.matmul" not in raised and "linalg." not in raised
