"""rlx_mir.conv against torch.nn.functional.conv1d/2d/3d (float64) on the
CPU path and the emulator from one body: strides, symmetric and asymmetric
padding (and PyTorch's "same"), dilation, groups, depthwise with a
multiplier, with and without bias; reverse mode, forward mode and vmap by
central differences (f64); the verifier's errors."""
import numpy as np
import pytest

import rlx

from test_autodiff import build, check_grad
from test_quant_int8 import DEVICES, compile_for, tensor


def same_padding(kernel, dilation):
    """PyTorch's padding="same" (stride 1): per dim, d·(k − 1) split with
    the odd sample on the high side."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads += [total // 2, total - total // 2]
    return pads


def torch_conv(x, w, b, stride, padding, dilation, groups):
    import torch
    import torch.nn.functional as F
    nd = x.ndim - 2
    xt = torch.from_numpy(x.astype(np.float64))
    if len(padding) == 2 * nd:  # asymmetric: F.pad takes the last dim first
        pad = []
        for i in reversed(range(nd)):
            pad += [padding[2 * i], padding[2 * i + 1]]
        xt, padding = F.pad(xt, pad), [0] * nd
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return conv(xt, torch.from_numpy(w.astype(np.float64)),
                None if b is None else torch.from_numpy(b.astype(np.float64)),
                stride, padding, dilation, groups).numpy()


# name, input shape, C_out, kernel, stride, padding, dilation, groups, bias
CASES = [
    ("c1", (2, 4, 19), 6, (3,), (2,), (1,), (1,), 1, True),
    ("c1g", (1, 6, 16), 4, (5,), (1,), (3, 1), (2,), 2, False),
    ("patch", (1, 3, 32, 32), 8, (8, 8), (8, 8), (0, 0), (1, 1), 1, True),
    ("k3", (2, 5, 9, 7), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, True),
    ("s2", (1, 4, 10, 11), 6, (3, 2), (2, 3), (1, 0, 2, 1), (1, 2), 2, True),
    ("dw7", (1, 6, 12, 12), 6, (7, 7), (1, 1), (3, 3), (1, 1), 6, True),
    ("dwx2", (2, 3, 8, 9), 6, (3, 3), (2, 1), (1, 1), (1, 1), 3, False),
    ("same", (1, 2, 9, 8), 3, (4, 3), (1, 1), "same", (2, 1), 1, True),
    ("c3", (1, 2, 6, 5, 7), 4, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), 2, True),
]


def conv_text(name, shape, cout, kernel, stride, padding, dilation, groups, bias, et="f32"):
    cin = shape[1]
    wshape = (cout, cin // groups) + tuple(kernel)
    out = tuple(torch_conv(np.zeros(shape), np.zeros(wshape), None, stride, padding, dilation,
                           groups).shape)
    attrs = f" stride = {list(stride)} padding = {list(padding)} dilation = {list(dilation)}"
    if groups != 1:
        attrs += f" groups = {groups}"
    b = f" bias(%{name}_b : {tensor((cout,), et)})" if bias else ""
    return (wshape, out, f"rlx_mir.conv %{name}, %{name}_w{b}{attrs} : {tensor(shape, et)}, "
                         f"{tensor(wshape, et)} -> {tensor(out, et)}")


@pytest.mark.parametrize("device", DEVICES)
def test_conv_against_torch(device):
    rng = np.random.default_rng(0)
    args, outs, body, rets, feeds, refs = [], [], [], [], {}, {}
    for name, shape, cout, kernel, stride, padding, dilation, groups, bias in CASES:
        if padding == "same":
            padding = tuple(same_padding(kernel, dilation))
        wshape, out, text = conv_text(name, shape, cout, kernel, stride, padding, dilation,
                                      groups, bias)
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(wshape).astype(np.float32)
        b = rng.standard_normal(cout).astype(np.float32) if bias else None
        feeds.update({name: x, f"{name}_w": w})
        args += [f'%{name}: {tensor(shape, "f32")} {{rlx.input = "{name}"}}',
                 f'%{name}_w: {tensor(wshape, "f32")} {{rlx.input = "{name}_w"}}']
        if bias:
            feeds[f"{name}_b"] = b
            args.append(f'%{name}_b: {tensor((cout,), "f32")} {{rlx.input = "{name}_b"}}')
        body.append(f"  %{name}_y = {text}")
        outs.append(f'{tensor(out, "f32")} {{rlx.output = "{name}"}}')
        rets.append((f"%{name}_y", tensor(out, "f32")))
        refs[name] = torch_conv(x, w, b, stride, padding, dilation, groups)
    text = (f"func.func @f({', '.join(args)}) -> ({', '.join(outs)}) {{\n" + "\n".join(body) +
            f"\n  return {', '.join(r for r, _ in rets)} : {', '.join(t for _, t in rets)}\n}}")
    got = compile_for(device, text).run(feeds)
    for name, ref in refs.items():
        assert got[name].shape == ref.shape, name
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max(),
                                   err_msg=name)


def test_conv_gradients():
    """Input, weight and bias gradients (the gather's scatter-add: the
    transposed convolution) by central differences in f64, forward mode and
    vmap over the input, for a strided, padded, dilated, grouped 2-D conv."""
    rng = np.random.default_rng(1)
    wshape, out, text = conv_text("x", (2, 4, 7, 6), 6, (3, 2), (2, 1), (1, 0, 1, 1), (1, 2), 2,
                                  True, et="f64")
    text = text.replace("%x_w", "%w").replace("%x_b", "%b")
    body = f"  %y = {text}"
    feeds = {"x": rng.standard_normal((2, 4, 7, 6)), "w": rng.standard_normal(wshape),
             "b": rng.standard_normal(6), "R": rng.standard_normal(out)}
    check_grad(build({"x": ((2, 4, 7, 6), "f64"), "w": (wshape, "f64"), "b": ((6,), "f64")},
                     body, "%y", out), feeds, ["x", "w", "b"], vmap_args=["x"])


@pytest.mark.parametrize("op,message", [
    ("rlx_mir.conv %x, %w : tensor<2x4xf32>, tensor<3x4x1xf32> -> tensor<2x3xf32>",
     "input \\[B, C_in, S_1, ..., S_N\\]"),
    ("rlx_mir.conv %x, %w groups = 3 : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> tensor<1x3x6xf32>",
     "groups >= 1 dividing C_in = 4"),
    ("rlx_mir.conv %x, %w : tensor<1x4x8xf32>, tensor<3x2x3xf32> -> tensor<1x3x6xf32>",
     "weight \\[C_out, C_in / groups = 4"),
    ("rlx_mir.conv %x, %w stride = [0] : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> tensor<1x3x6xf32>",
     "stride needs 1 values >= 1, got \\[0\\]"),
    ("rlx_mir.conv %x, %w padding = [1, 2, 3] : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> "
     "tensor<1x3x6xf32>", "padding"),
    ("rlx_mir.conv %x, %w dilation = [5] : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> "
     "tensor<1x3x6xf32>", "leaves no output in spatial dim 0"),
    ("rlx_mir.conv %x, %w : tensor<1x4x8xf32>, tensor<3x4x3xf32> -> tensor<1x3x7xf32>",
     "tensor<1x3x6xf32>"),
])
def test_verifier(op, message):
    types = op.split(": ")[-1]
    x, w = types.split(" -> ")[0].split(", ")
    out = types.split(" -> ")[1]
    text = f"func.func @f(%x: {x}, %w: {w}) -> {out} {{\n  %y = {op}\n  return %y : {out}\n}}"
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(text)
