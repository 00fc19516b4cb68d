"""QAT scale modes: rlx_mir.observe_minmax (per batch, running, moving
average) and rlx_mir.choose_qparams against PyTorch's own observers and
FakeQuantize modules (torch.ao.quantization), step by step, on the CPU path
and the emulator from one body; the gradient through an observed
fake_quantize is the straight-through estimator alone, as PyTorch's."""
import numpy as np
import pytest

import rlx

torch = pytest.importorskip("torch")
from torch.ao.quantization import observer as tobs  # noqa: E402
from torch.ao.quantization.fake_quantize import FakeQuantize  # noqa: E402

from test_quant_int8 import DEVICES, compile_for, tensor  # noqa: E402

SHAPE = (4, 6)


def step_text(mode, axis, symmetric, unsigned, qrange):
    """observe → choose_qparams → fake_quantize, the statistics, scale, zero
    point and output returned (running statistics in and out but per batch)."""
    st = tensor((SHAPE[axis],) if axis is not None else (), "f32")
    zt = st.replace("f32", "i8")
    xt = tensor(SHAPE, "f32")
    args = [f'%x: {xt} {{rlx.input = "x"}}']
    obs = f"rlx_mir.observe_minmax %x"
    if mode != "batch":
        args += [f'%rmin: {st} {{rlx.input = "rmin"}}', f'%rmax: {st} {{rlx.input = "rmax"}}']
        obs += f" running(%rmin, %rmax : {st}, {st})"
    if axis is not None:
        obs += f" axis = {axis}"
    if mode == "ema":
        obs += " averaging_constant = 1.000000e-01"
    qp = "" if qrange is None else f" quant_min = {qrange[0]} quant_max = {qrange[1]}"
    qp += " unsigned" if unsigned else ""
    fq_axis = f" axis = {axis}" if axis is not None else ""
    return f"""func.func @f({", ".join(args)}) -> ({st} {{rlx.output = "min"}},
    {st} {{rlx.output = "max"}}, {st} {{rlx.output = "scale"}}, {zt} {{rlx.output = "zp"}},
    {xt} {{rlx.output = "y"}}) {{
  %lo, %hi = {obs} : {xt}
  %s, %z = rlx_mir.choose_qparams %lo, %hi{qp}{" symmetric" if symmetric else ""} : {st}
  %y = rlx_mir.fake_quantize %x, %s, %z{fq_axis}{qp} : {xt}, {st}, {zt}
  return %lo, %hi, %s, %z, %y : {st}, {st}, {st}, {zt}, {xt}
}}"""


def torch_fake_quantize(mode, axis, symmetric, unsigned, qrange):
    """PyTorch's FakeQuantize with the observer of `mode` ("batch": a fresh
    MinMaxObserver per step)."""
    per_channel = axis is not None
    scheme = {(False, False): torch.per_tensor_affine, (False, True): torch.per_tensor_symmetric,
              (True, False): torch.per_channel_affine,
              (True, True): torch.per_channel_symmetric}[(per_channel, symmetric)]
    cls = {("ema", False): tobs.MovingAverageMinMaxObserver,
           ("ema", True): tobs.MovingAveragePerChannelMinMaxObserver,
           ("running", False): tobs.MinMaxObserver, ("running", True): tobs.PerChannelMinMaxObserver,
           ("batch", False): tobs.MinMaxObserver, ("batch", True): tobs.PerChannelMinMaxObserver,
           }[(mode, per_channel)]
    kw = {"dtype": torch.quint8 if unsigned else torch.qint8, "qscheme": scheme}
    if qrange is not None:
        kw["quant_min"], kw["quant_max"] = qrange
    if per_channel:
        kw["ch_axis"] = axis
    if mode == "ema":
        kw["averaging_constant"] = 0.1
    return FakeQuantize(observer=cls, **kw)


CASES = [  # mode, axis, symmetric, unsigned, quant range (None: the byte's)
    ("ema", None, False, True, None),
    ("ema", None, True, False, None),
    ("ema", 0, False, False, (-8, 7)),
    ("ema", 1, True, True, None),
    ("running", None, False, False, None),
    ("running", 1, False, True, (0, 15)),
    ("batch", None, True, True, (0, 127)),
    ("batch", 0, False, False, None),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode,axis,symmetric,unsigned,qrange", CASES)
def test_observed_fake_quantize_matches_pytorch(mode, axis, symmetric, unsigned, qrange, device):
    """Five steps: the statistics, scale, zero point and output of each equal
    PyTorch's FakeQuantize with the same observer (scale and statistics to
    f32 rounding, the zero point and the quantized output exactly)."""
    compiled = compile_for(device, step_text(mode, axis, symmetric, unsigned, qrange))
    fq = torch_fake_quantize(mode, axis, symmetric, unsigned, qrange)
    rng = np.random.default_rng(20)
    st = (SHAPE[axis],) if axis is not None else ()
    rmin, rmax = np.full(st, np.inf, np.float32), np.full(st, -np.inf, np.float32)
    for step in range(5):
        # Shifted batches, so that the statistics move (and go one-sided).
        x = (rng.standard_normal(SHAPE) * (1 + step) + 0.5 * step).astype(np.float32)
        if mode == "batch":
            fq = torch_fake_quantize(mode, axis, symmetric, unsigned, qrange)
        want = fq(torch.tensor(x)).numpy()
        feeds = {"x": x} if mode == "batch" else {"x": x, "rmin": rmin, "rmax": rmax}
        got = compiled.run(**feeds)
        o = fq.activation_post_process
        np.testing.assert_allclose(got["min"], o.min_val.numpy().reshape(st), rtol=1e-6)
        np.testing.assert_allclose(got["max"], o.max_val.numpy().reshape(st), rtol=1e-6)
        np.testing.assert_allclose(got["scale"], fq.scale.numpy().reshape(st), rtol=1e-6)
        zp = got["zp"].astype(np.uint8 if unsigned else np.int8).astype(np.int64)
        np.testing.assert_array_equal(zp, fq.zero_point.numpy().reshape(st))
        check_output(got["y"], want, x, got["scale"], axis)
        rmin, rmax = got["min"], got["max"]


def check_output(got, want, x, scale, axis):
    """Equal up to the scale's rounding, but at ties: fake_quantize divides by
    the scale (as quantize does) where PyTorch's kernel multiplies by its
    reciprocal, so where x / scale is a tie (k + 0.5, as a symmetric range's
    end is by construction) the two may round one step apart."""
    s = np.asarray(scale, np.float64)
    s = s.reshape([-1 if d == axis else 1 for d in range(x.ndim)]) if axis is not None else s
    s = np.broadcast_to(s, x.shape)
    off = np.abs(got.astype(np.float64) - want) > 1e-6 * s
    u = x.astype(np.float64) / s
    tie = np.abs(np.abs(u - np.floor(u)) - 0.5) < 1e-5
    assert np.all(tie[off]), (np.argwhere(off & ~tie), got[off & ~tie], want[off & ~tie])
    np.testing.assert_allclose(np.abs(got - want)[off], s[off], rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_nothing_observed_gives_unit_scale(device):
    """choose_qparams on the initial state (+inf, −inf): scale 1, zero point 0,
    as PyTorch's calculate_qparams before any data."""
    st = tensor((3,), "f32")
    compiled = compile_for(device, f"""func.func @f(%lo: {st} {{rlx.input = "lo"}},
      %hi: {st} {{rlx.input = "hi"}}) -> ({st} {{rlx.output = "s"}}, tensor<3xi8> {{rlx.output = "z"}}) {{
  %s, %z = rlx_mir.choose_qparams %lo, %hi unsigned : {st}
  return %s, %z : {st}, tensor<3xi8>
}}""")
    lo = np.array([np.inf, -1.0, 2.0], np.float32)
    hi = np.array([-np.inf, 3.0, 2.0], np.float32)
    got = compiled.run(lo=lo, hi=hi)
    o = tobs.PerChannelMinMaxObserver(ch_axis=0, dtype=torch.quint8)
    o.min_val, o.max_val = torch.tensor(lo[1:]), torch.tensor(hi[1:])
    s, z = o.calculate_qparams()
    np.testing.assert_allclose(got["s"], [1.0, *s.numpy()], rtol=1e-6)
    np.testing.assert_array_equal(got["z"].astype(np.uint8), [0, *z.numpy()])


@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch_leaves_the_moving_average(device):
    """A zero-size batch: the running range stays (PyTorch's observers return
    before updating)."""
    compiled = compile_for(device, """func.func @f(%x: tensor<0x3xf32> {rlx.input = "x"},
      %lo: tensor<3xf32> {rlx.input = "lo"}, %hi: tensor<3xf32> {rlx.input = "hi"})
      -> (tensor<3xf32> {rlx.output = "lo"}, tensor<3xf32> {rlx.output = "hi"}) {
  %a, %b = rlx_mir.observe_minmax %x running(%lo, %hi : tensor<3xf32>, tensor<3xf32>) axis = 1
      averaging_constant = 1.000000e-01 : tensor<0x3xf32>
  return %a, %b : tensor<3xf32>, tensor<3xf32>
}""")
    lo, hi = np.array([-1, np.inf, 0], np.float32), np.array([2, -np.inf, 0.5], np.float32)
    got = compiled.run(x=np.zeros((0, 3), np.float32), lo=lo, hi=hi)
    np.testing.assert_array_equal(got["lo"], lo)
    np.testing.assert_array_equal(got["hi"], hi)


def test_gradient_through_an_observed_fake_quantize_is_the_ste():
    """d(sum(y · R))/dx with y = fake_quantize(x, choose_qparams(observe(x))):
    the clipped estimator alone (the observers pass nothing back), equal to
    PyTorch's FakeQuantize backward; forward mode agrees."""
    from test_autodiff import build
    text = build({"x": (SHAPE, "f32"), "rmin": ((), "f32"), "rmax": ((), "f32")},
                 f"""  %lo, %hi = rlx_mir.observe_minmax %x running(%rmin, %rmax : tensor<f32>, tensor<f32>)
      averaging_constant = 1.000000e-01 : {tensor(SHAPE, "f32")}
  %s, %z = rlx_mir.choose_qparams %lo, %hi quant_min = -8 quant_max = 7 : tensor<f32>
  %y = rlx_mir.fake_quantize %x, %s, %z quant_min = -8 quant_max = 7
      : {tensor(SHAPE, "f32")}, tensor<f32>, tensor<i8>""", "%y", SHAPE, et="f32")
    rng = np.random.default_rng(21)
    x = (rng.standard_normal(SHAPE) * 2).astype(np.float32)
    r = rng.standard_normal(SHAPE).astype(np.float32)
    # A running range narrower than the batch's, so that some inputs clip.
    rmin, rmax = np.float32(-1.0), np.float32(1.5)
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-grad{wrt=x}")
    got = rlx.compile_cpu(m, entry="f_grad").run(x=x, rmin=rmin, rmax=rmax, R=r,
                                                  d_output=np.array(1.0, np.float32))
    fq = FakeQuantize(observer=tobs.MovingAverageMinMaxObserver, quant_min=-8, quant_max=7,
                      dtype=torch.qint8, averaging_constant=0.1)
    fq.activation_post_process.min_val = torch.tensor(rmin)
    fq.activation_post_process.max_val = torch.tensor(rmax)
    tx = torch.tensor(x, requires_grad=True)
    (fq(tx) * torch.tensor(r)).sum().backward()
    assert 0 < np.count_nonzero(tx.grad.numpy()) < x.size  # both sides of the clip
    np.testing.assert_array_equal(got["d_x"], tx.grad.numpy())
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-jvp{wrt=x function=f}")
    v = rng.standard_normal(SHAPE).astype(np.float32)
    t = rlx.compile_cpu(m, entry="f_jvp").run(x=x, rmin=rmin, rmax=rmax, R=r, t_x=v)["t_loss"]
    np.testing.assert_allclose(t, np.sum(got["d_x"] * v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("body,message", [
    ("%a, %b = rlx_mir.observe_minmax %x averaging_constant = 5.0e-01 : tensor<4x6xf32>",
     r"averaging_constant needs running\(%min, %max\)"),
    ("%a, %b = rlx_mir.observe_minmax %x running(%s, %s : tensor<f32>, tensor<f32>) "
     "averaging_constant = 1.5 : tensor<4x6xf32>", r"averaging_constant must be in \(0, 1\]"),
    ("%a, %b = rlx_mir.observe_minmax %x running(%s, %s : tensor<f32>, tensor<f32>) axis = 1 "
     ": tensor<4x6xf32>", "running_min must be tensor<6xf32>"),
    ("%a, %b = rlx_mir.observe_minmax %x axis = 2 : tensor<4x6xf32>", "axis"),
    ("%a, %b = rlx_mir.choose_qparams %s, %s quant_min = 3 quant_max = 3 : tensor<f32>",
     r"range \[3, 3\] must be increasing"),
    ("%a, %b = rlx_mir.choose_qparams %s, %s quant_min = 1 quant_max = 127 : tensor<f32>",
     r"must be increasing, hold 0"),
    ("%a, %b = rlx_mir.choose_qparams %x, %x : tensor<4x6xf32>", "rank 0 or 1"),
    ("%a, %b = rlx_mir.choose_qparams %s, %s eps = 0.0 : tensor<f32>", "eps"),
])
def test_observer_verifiers(body, message):
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%x: tensor<4x6xf32>, %s: tensor<f32>) {{
  {body}
  return
}}""")
