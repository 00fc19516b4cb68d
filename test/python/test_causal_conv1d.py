"""rlx_mir.causal_conv1d (Mamba's short convolution with a decode state)
against PyTorch's depthwise Conv1d (padding K − 1, cut to L) and a decode
loop written here in numpy, on the CPU path and the emulator from one body;
case SS2 of ../shared/cases/README.md literally; derivatives by finite
differences; vmap against per-entry runs."""
import numpy as np
import pytest

import rlx

from test_quant_int8 import DEVICES, compile_for, tensor

torch = pytest.importorskip("torch")


def conv_text(b, d, length, k, *, state=None, bias=False, silu=False, et="f32"):
    """@f(x, w[, bias][, state]) -> (y, final_state)."""
    xt, wt = tensor((b, d, length), et), tensor((d, k), et)
    s = state if state is not None else k - 1
    st = tensor((b, d, s), et)
    args = [f'%x: {xt} {{rlx.input = "x"}}', f'%w: {wt} {{rlx.input = "w"}}']
    op = "rlx_mir.causal_conv1d %x, %w"
    if bias:
        args.append(f'%b: {tensor((d,), et)} {{rlx.input = "b"}}')
        op += f" bias(%b : {tensor((d,), et)})"
    if state is not None:
        args.append(f'%s: {st} {{rlx.input = "s"}}')
        op += f" state(%s : {st})"
    if silu:
        op += ' activation = "silu"'
    return f"""func.func @f({", ".join(args)}) -> ({xt} {{rlx.output = "y"}}, {st} {{rlx.output = "state"}}) {{
  %y, %st = {op} : {xt}, {wt}
  return %y, %st : {xt}, {st}
}}"""


def torch_conv(x, w, bias=None, silu=False, state=None):
    """PyTorch's depthwise Conv1d on the state's last K − 1 inputs ++ x."""
    k = w.shape[1]
    xx = torch.tensor(x, dtype=torch.float64)
    if state is not None and k > 1:
        xx = torch.cat([torch.tensor(state[..., state.shape[-1] - (k - 1):], dtype=torch.float64), xx], -1)
        pad = 0
    else:
        pad = k - 1
    y = torch.nn.functional.conv1d(xx, torch.tensor(w, dtype=torch.float64)[:, None, :],
                                   None if bias is None else torch.tensor(bias, dtype=torch.float64),
                                   padding=pad, groups=w.shape[0])[..., :x.shape[-1]]
    return (torch.nn.functional.silu(y) if silu else y).numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_case_ss2(device):
    """SS2: K = 4, w = [1, 10, 100, 1000], x = 1..6."""
    w = np.array([[1, 10, 100, 1000]], np.float32)
    full = compile_for(device, conv_text(1, 1, 6, 4)).run(x=np.arange(1, 7, dtype=np.float32)[None, None], w=w)
    np.testing.assert_array_equal(full["y"][0, 0], [1000, 2100, 3210, 4321, 5432, 6543])
    np.testing.assert_array_equal(full["state"][0, 0], [4, 5, 6])
    prefill = compile_for(device, conv_text(1, 1, 4, 4)).run(x=np.arange(1, 5, dtype=np.float32)[None, None], w=w)
    np.testing.assert_array_equal(prefill["state"][0, 0], [2, 3, 4])  # the last 3 raw inputs
    decode = compile_for(device, conv_text(1, 1, 1, 4, state=3))
    state, got = prefill["state"], []
    for v in (5, 6):
        out = decode.run(x=np.full((1, 1, 1), v, np.float32), w=w, s=state)
        got.append(float(out["y"][0, 0, 0]))
        state = out["state"]
    assert got == [5432, 6543]  # detection: 4325 (state reversed), 2345 (kernel flipped)
    short = compile_for(device, conv_text(1, 1, 2, 4)).run(x=np.array([[[1, 2]]], np.float32), w=w)
    np.testing.assert_array_equal(short["state"][0, 0], [0, 1, 2])
    out = decode.run(x=np.full((1, 1, 1), 3, np.float32), w=w, s=short["state"])
    assert float(out["y"][0, 0, 0]) == 3210


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,bias,silu", [(4, True, True), (3, False, False), (1, True, False)])
def test_prefill_matches_pytorch_conv1d(device, k, bias, silu):
    rng = np.random.default_rng(k)
    b, d, length = 2, 5, 7
    x = rng.standard_normal((b, d, length)).astype(np.float32)
    w = rng.standard_normal((d, k)).astype(np.float32)
    bb = rng.standard_normal(d).astype(np.float32) if bias else None
    feeds = {"x": x, "w": w, **({"b": bb} if bias else {})}
    got = compile_for(device, conv_text(b, d, length, k, bias=bias, silu=silu)).run(**feeds)
    np.testing.assert_allclose(got["y"], torch_conv(x, w, bb, silu), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got["state"], x[..., length - (k - 1):])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("state_len", [3, 4])
def test_split_prefill_and_decode_equal_one_pass(device, state_len):
    """A prefill of 5 then 2 then three decode steps, the state carried
    (K − 1 = 3 columns, or transformers' K = 4), equals one pass over all 10;
    the final states agree too."""
    rng = np.random.default_rng(7)
    b, d, k = 2, 3, 4
    x = rng.standard_normal((b, d, 10)).astype(np.float32)
    w = rng.standard_normal((d, k)).astype(np.float32)
    bb = rng.standard_normal(d).astype(np.float32)
    one = compile_for(device, conv_text(b, d, 10, k, state=state_len, bias=True, silu=True))
    zero = np.zeros((b, d, state_len), np.float32)
    want = one.run(x=x, w=w, b=bb, s=zero)
    np.testing.assert_allclose(want["y"], torch_conv(x, w, bb, True), rtol=1e-5, atol=1e-5)
    state, ys = zero, []
    for lo, hi in [(0, 5), (5, 7), (7, 8), (8, 9), (9, 10)]:
        step = compile_for(device, conv_text(b, d, hi - lo, k, state=state_len, bias=True, silu=True))
        out = step.run(x=np.ascontiguousarray(x[..., lo:hi]), w=w, b=bb, s=state)
        ys.append(out["y"])
        state = out["state"]
    np.testing.assert_allclose(np.concatenate(ys, -1), want["y"], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(state, want["state"])
    np.testing.assert_array_equal(state, x[..., 10 - state_len:])


def test_derivatives_and_vmap():
    """Reverse and forward mode through the decomposition against central
    differences (f64), in every operand, the state included; vmap over x."""
    from test_autodiff import build, check_grad
    b, d, length, k = 2, 3, 5, 3
    body = (f"  %y, %st = rlx_mir.causal_conv1d %x, %w bias(%b : {tensor((d,), 'f64')}) "
            f"state(%s : {tensor((b, d, 4), 'f64')}) activation = \"silu\" : "
            f"{tensor((b, d, length), 'f64')}, {tensor((d, k), 'f64')}")
    text = build({"x": ((b, d, length), "f64"), "w": ((d, k), "f64"), "b": ((d,), "f64"),
                  "s": ((b, d, 4), "f64")}, body, "%y", (b, d, length))
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((b, d, length)), "w": rng.standard_normal((d, k)),
             "b": rng.standard_normal(d), "s": rng.standard_normal((b, d, 4)),
             "R": rng.standard_normal((b, d, length))}
    check_grad(text, feeds, ["x", "w", "b", "s"], vmap_args=["x"])  # jvp and vmap too


@pytest.mark.parametrize("x,w,extra,message", [
    ("2x3", "3x4", "", r"needs an input \[B, D, L\]"),
    ("2x3x5", "4x4", "", r"weight must be \[D, K\] = \[3, K\]"),
    ("2x3x5", "3x4", "state(%st : tensor<2x3x2xf32>)", r"S >= K - 1 = 3"),
    ("2x3x5", "3x4", "bias(%b : tensor<4xf32>)", r"bias must be \[D\] = \[3\]"),
    ("2x3x5", "3x4", 'activation = "relu"', 'activation must be "silu"'),
])
def test_verifier(x, w, extra, message):
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>, %st: tensor<2x3x2xf32>,
      %b: tensor<4xf32>) {{
  %y, %s = rlx_mir.causal_conv1d %x, %w {extra} : tensor<{x}xf32>, tensor<{w}xf32>
  return
}}""")
