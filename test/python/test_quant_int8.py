"""rlx_mir.quantize / dequantize against ONNX QuantizeLinear/DequantizeLinear
as written here in numpy (the quotient in f32, round half to even, then the
zero point, then saturation; NaN to the zero point), per tensor, per axis
and per group, signed, unsigned and narrowed ranges, on the CPU path and
the emulator from one body. Case I1 of ../shared/cases/README.md is checked
literally."""
import numpy as np
import pytest

import rlx

DEVICES = ["cpu", "emu"]


def compile_for(device, text):
    m = rlx.parse(text)
    return rlx.compile_cpu(m) if device == "cpu" else rlx.gpu.compile(m, device=device)


def tensor(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def expand(p, shape, axis, group):
    """The scale (or zero point) of every element of `shape`."""
    if axis is None:
        return np.broadcast_to(p, shape)
    axis %= len(shape)
    if group is None:
        return np.broadcast_to(p.reshape([-1 if d == axis else 1 for d in range(len(shape))]), shape)
    return np.take(p, np.arange(shape[axis]) // group, axis=axis)


def ref_quantize(x, scale, zp, axis=None, group=None, qmin=-128, qmax=127):
    s = expand(scale, x.shape, axis, group).astype(np.float32)
    z = expand(zp, x.shape, axis, group).astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.rint(x.astype(np.float32) / s) + z
    q = np.where(np.isnan(q), z, np.clip(q, qmin, qmax))
    return q.astype(np.int64)


def ref_dequantize(q, scale, zp, axis=None, group=None):
    s = expand(scale, q.shape, axis, group).astype(np.float64)
    z = expand(zp, q.shape, axis, group).astype(np.int64)
    return ((q.astype(np.int64) - z) * s).astype(np.float32)


def quant_attrs(axis, group, qmin, qmax, unsigned):
    attrs = [f"{k} = {v}" for k, v in [("axis", axis), ("group_size", group), ("quant_min", qmin),
                                         ("quant_max", qmax)] if v is not None]
    return " ".join(attrs + (["unsigned"] if unsigned else []))


def run_pair(device, x, scale, zp, axis=None, group=None, qmin=None, qmax=None, unsigned=False,
             et="f32"):
    """quantize x, and dequantize the result, in one function."""
    attrs = quant_attrs(axis, group, qmin, qmax, unsigned)
    xs, ss = tensor(x.shape, et), tensor(scale.shape, "f32")
    zt = tensor(scale.shape, "i8")
    zarg = f", %z: {zt} {{rlx.input = \"z\"}}" if zp is not None else ""
    zop, zty = (", %z", f", {zt}") if zp is not None else ("", "")
    qt, dt = tensor(x.shape, "i8"), tensor(x.shape, "f32")
    compiled = compile_for(device, f"""func.func @f(%x: {xs} {{rlx.input = "x"}},
      %s: {ss} {{rlx.input = "s"}}{zarg}) -> ({qt}, {dt}) {{
  %q = rlx_mir.quantize %x, %s{zop} {attrs} : {xs}, {ss}{zty}
  %d = rlx_mir.dequantize %q, %s{zop} {attrs} : {qt}, {ss}{zty}
  return %q, %d : {qt}, {dt}
}}""")
    feeds = {"x": x, "s": scale}
    if zp is not None:
        feeds["z"] = zp.astype(np.uint8).view(np.int8) if unsigned else zp.astype(np.int8)
    q, d = compiled.run(**feeds).values()
    return (q.view(np.uint8) if unsigned else q).astype(np.int64), d


@pytest.mark.parametrize("device", DEVICES)
def test_case_i1_rounds_half_to_even_then_saturates(device):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 126.5, 127.5, -128.5, -129.5], np.float32)
    q, d = run_pair(device, x, np.array(1.0, np.float32), None)
    assert q.tolist() == [-2, -2, 0, 0, 2, 2, 126, 127, -128, -128]
    np.testing.assert_array_equal(d, q.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_case_i1_f16_quotient_in_f32(device):
    # x / s = 0.5003 in f32; in f16 it would be 0.5 and round to 0.
    x = np.array([0.050018310546875, -0.050018310546875], np.float16)
    q, _ = run_pair(device, x, np.array(0.0999755859375, np.float32), None, et="f16")
    assert q.tolist() == [1, -1]


@pytest.mark.parametrize("device", DEVICES)
def test_per_tensor_zero_point_before_saturation_and_specials(device):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 33)) * 40).astype(np.float32)
    # Exact ties, both ends (x / s = 132 with zero point -5 is 127 only if
    # the zero point is added before the clamp), NaN and infinities.
    x[0, :8] = [0.25, 0.75, -0.25, 66.0, -66.0, np.nan, np.inf, -np.inf]
    scale, zp = np.array(0.5, np.float32), np.array(-5)
    q, d = run_pair(device, x, scale, zp)
    want = ref_quantize(x, scale, zp)
    np.testing.assert_array_equal(q, want)
    assert q[0, :8].tolist() == [-5, -3, -5, 127, -128, -5, 127, -128]
    np.testing.assert_allclose(d, ref_dequantize(want, scale, zp), rtol=1e-6, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_unsigned_asymmetric(device):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1.5, 3.5, (5, 16)).astype(np.float32)  # past both ends
    scale, zp = np.array(4 / 255, np.float32), np.array(64)
    q, d = run_pair(device, x, scale, zp, unsigned=True)
    want = ref_quantize(x, scale, zp, qmin=0, qmax=255)
    np.testing.assert_array_equal(q, want)
    assert q.max() == 255 and q.min() == 0
    np.testing.assert_allclose(d, ref_dequantize(want, scale, zp), rtol=1e-6, atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [0, -1])
def test_per_axis_symmetric(device, axis):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((6, 24)).astype(np.float32)
    scale = (np.abs(w).max(axis=1 - axis % 2) / 127).astype(np.float32)
    q, d = run_pair(device, w, scale, None, axis=axis, qmin=-127)
    want = ref_quantize(w, scale, np.zeros(scale.shape), axis=axis, qmin=-127)
    np.testing.assert_array_equal(q, want)
    assert q.min() >= -127 and np.abs(q).max() == 127
    np.testing.assert_allclose(d, ref_dequantize(want, scale, np.zeros(scale.shape), axis=axis),
                               rtol=1e-6, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_per_group_int4_range_with_a_partial_group(device):
    rng = np.random.default_rng(6)
    w = rng.standard_normal((3, 10)).astype(np.float32)
    group = 4  # groups of K: 4, 4 and a last one of 2
    scale = rng.uniform(0.1, 0.4, (3, 3)).astype(np.float32)
    zp = rng.integers(-2, 3, (3, 3))
    q, d = run_pair(device, w, scale, zp, axis=1, group=group, qmin=-8, qmax=7)
    want = ref_quantize(w, scale, zp, axis=1, group=group, qmin=-8, qmax=7)
    np.testing.assert_array_equal(q, want)
    assert q.min() == -8 and q.max() == 7
    np.testing.assert_allclose(d, ref_dequantize(want, scale, zp, axis=1, group=group),
                               rtol=1e-6, atol=0)


@pytest.mark.parametrize("attrs,scale,message", [
    ("axis = 2", "4xf32", "axis"),
    ("group_size = 2", "f32", "group_size needs an axis"),
    ("axis = 1 group_size = 0", "4x2xf32", "group_size must be at least 1"),
    ("", "4xf32", "scale must be scalar per tensor"),
    ("axis = 0", "6xf32", "scale must be 4 per axis for an input of 4x6, got 6"),
    ("axis = 1 group_size = 4", "4x3xf32", "scale must be 4x2 per group"),
    ("quant_min = -129", "f32", r"range \[-129, 127\] must be ordered"),
    ("quant_min = 5 quant_max = 4", "f32", r"range \[5, 4\]"),
    ("quant_max = 256 unsigned", "f32", r"unsigned byte's \[0, 255\]"),
])
def test_verifier(attrs, scale, message):
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%x: tensor<4x6xf32>, %s: tensor<{scale}>) {{
  %q = rlx_mir.quantize %x, %s {attrs} : tensor<4x6xf32>, tensor<{scale}>
  return
}}""")


def test_zero_point_shape_must_be_the_scales():
    with pytest.raises(rlx.RlxError, match="zero_point must have scale's shape 4, got scalar"):
        rlx.parse("""func.func @f(%q: tensor<4x6xi8>, %s: tensor<4xf32>, %z: tensor<i8>) {
  %x = rlx_mir.dequantize %q, %s, %z axis = 0 : tensor<4x6xi8>, tensor<4xf32>, tensor<i8>
  return
}""")


# -- derivative and vmap rules ---------------------------------------------

GRANULARITIES = {  # attributes, scale shape for an input [4, 6]
    "tensor": ("", ()),
    "axis": ("axis = 0", (4,)),
    "group": ("axis = 1 group_size = 3", (4, 2)),
}


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_dequantize_derivative_in_scale_and_vmap(granularity):
    from test_autodiff import build, check_grad
    attrs, sshape = GRANULARITIES[granularity]
    rng = np.random.default_rng(8)
    q = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    z = rng.integers(-3, 4, sshape).astype(np.int8)
    s = rng.uniform(0.5, 2.0, sshape)
    st, zt = tensor(sshape, "f64"), tensor(sshape, "i8")
    text = build({"q": ((4, 6), "i8"), "s": (sshape, "f64"), "z": (sshape, "i8")},
                 f"  %d = rlx_mir.dequantize %q, %s, %z {attrs} : tensor<4x6xi8>, {st}, {zt}\n"
                 "  %y = rlx_mir.cast %d : tensor<4x6xf32> to tensor<4x6xf64>",
                 "%y", (4, 6))
    # Linear in the scale: wide steps are exact but for the f32 result.
    check_grad(text, {"q": q, "s": s, "z": z, "R": rng.standard_normal((4, 6))}, ["s"],
               h=1e-2, tol=1e-4, vmap_args=["q", "s"] if granularity == "tensor" else ["q"])


def test_quantize_batches():
    from test_autodiff import build, check_vmap
    text = build({"x": ((4, 6), "f64"), "s": ((4,), "f64")},
                 "  %q = rlx_mir.quantize %x, %s axis = 0 : tensor<4x6xf64>, tensor<4xf64>\n"
                 "  %y = rlx_mir.cast %q : tensor<4x6xi8> to tensor<4x6xf64>", "%y", (4, 6))
    rng = np.random.default_rng(9)
    inputs = {"x": rng.standard_normal((4, 6)) * 50, "s": rng.uniform(0.5, 1, 4),
              "R": rng.standard_normal((4, 6))}
    check_vmap(text, inputs, ["x"])


# -- fake_quantize (QAT): straight-through and LSQ derivatives ---------------

torch = pytest.importorskip("torch")

FAKE = {  # attributes, scale shape for an input [4, 6]; torch's learnable op
    "tensor": ("", (), lambda x, s, z, lo, hi: torch._fake_quantize_learnable_per_tensor_affine(
        x, s, z, lo, hi, 1.0)),
    "axis": ("axis = 0", (4,), lambda x, s, z, lo, hi: torch._fake_quantize_learnable_per_channel_affine(
        x, s, z, 0, lo, hi, 1.0)),
}


def fake_text(attrs, sshape, zp=True):
    st, zt = tensor(sshape, "f32"), tensor(sshape, "i8")
    from test_autodiff import build
    args = {"x": ((4, 6), "f32"), "s": (sshape, "f32")}
    if zp:
        args["z"] = (sshape, "i8")
    z = (", %z", f", {zt}") if zp else ("", "")
    return build(args, f"  %y = rlx_mir.fake_quantize %x, %s{z[0]} {attrs} : "
                       f"tensor<4x6xf32>, {st}{z[1]}", "%y", (4, 6), et="f32")


@pytest.mark.parametrize("granularity", FAKE)
def test_fake_quantize_equals_pytorchs_learnable_fake_quantize(granularity):
    attrs, sshape, reference = FAKE[granularity]
    attrs += " quant_min = -8 quant_max = 7"
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    s = rng.uniform(0.2, 0.6, sshape).astype(np.float32)
    z = rng.integers(-2, 3, sshape).astype(np.int8)
    r = rng.standard_normal((4, 6)).astype(np.float32)
    m = rlx.parse(fake_text(attrs, sshape))
    m.run_pipeline("rlx-mir-grad{wrt=x,s}")
    got = rlx.compile_cpu(m, entry="f_grad").run(x=x, s=s, z=z, R=r,
                                                  d_output=np.array(1.0, np.float32))
    tx = torch.tensor(x, requires_grad=True)
    ts = torch.tensor(s.reshape(-1) if s.ndim else s.reshape(1), requires_grad=True)
    y = reference(tx, ts, torch.tensor(z.reshape(-1).astype(np.float32)), -8, 7)
    loss = (y * torch.tensor(r)).sum()
    loss.backward()
    # A sum of terms up to ~2 that cancels: atol at the terms' rounding.
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-5, atol=1e-5)
    assert 0 < np.count_nonzero(tx.grad.numpy()) < x.size  # both sides of the clip
    np.testing.assert_array_equal(got["d_x"], tx.grad.numpy())
    np.testing.assert_allclose(got["d_s"].reshape(-1), ts.grad.numpy(), rtol=1e-5, atol=1e-5)


def surrogate(x, s, z, expand, lo, hi, ste="clipped"):
    """The STE surrogate around (x, s): round(u) replaced by u + (round(u0) −
    u0) at u0 = x / s, and the clamp's branch fixed by round(u0) + z (locally
    constant, as round is), so its derivatives are the estimators'. With
    ste "hard_tanh" or "tanh" the input's change goes through the clip of the
    unrounded code instead: clip(u + z, lo, hi), or c + h·tanh((u + z − c)/h)
    over the range's center c and half width h (the scale's part stays LSQ's)."""
    v0 = np.rint(x / expand(s)) + expand(z)
    inside = (v0 >= lo) & (v0 <= hi)
    c, h = (lo + hi) / 2, (hi - lo) / 2
    clip = {"hard_tanh": lambda v: np.clip(v, lo, hi),
            "tanh": lambda v: c + h * np.tanh((v - c) / h)}.get(ste)

    def f(xx, ss):
        se, ze = expand(ss), expand(z)
        u, u0 = (x if clip else xx) / se, x / expand(s)
        y = np.where(inside, (u + (np.rint(u0) - u0)) * se, (np.clip(v0, lo, hi) - ze) * se)
        if ste == "identity":  # the input's change passes where it is clipped too
            y = np.where(inside, y, y + (xx - x))
        if clip:  # at the fixed scale s
            y = y + (clip(xx / expand(s) + ze) - clip(x / expand(s) + ze)) * expand(s)
        return y
    return f


@pytest.mark.parametrize("ste,zero_point", [("clipped", True), ("identity", True),
                                             ("clipped", False), ("hard_tanh", True),
                                             ("tanh", True)])
@pytest.mark.parametrize("granularity", ["tensor", "axis", "group"])
def test_fake_quantize_derivatives_are_the_surrogates(granularity, ste, zero_point):
    """Reverse and forward mode against central differences of the surrogate
    (f64), LSQ's scale_grad applied; vmap against per-entry runs."""
    from test_autodiff import build, check_vmap
    attrs, sshape = {"tensor": ("", ()), "axis": ("axis = 0", (4,)),
                     "group": ("axis = 1 group_size = 3", (4, 2))}[granularity]
    attrs += f' quant_min = -8 quant_max = 7 ste = "{ste}" scale_grad = 0.5'
    st, zt = tensor(sshape, "f64"), tensor(sshape, "i8")
    args = {"x": ((4, 6), "f64"), "s": (sshape, "f64")}
    zop = ""
    if zero_point:
        args["z"] = (sshape, "i8")
        zop, zt = ", %z", f", {zt}"
    else:
        zt = ""
    text = build(args, f"  %y = rlx_mir.fake_quantize %x, %s{zop} {attrs} : tensor<4x6xf64>, {st}{zt}",
                 "%y", (4, 6))
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 6)) * 3
    s = rng.uniform(0.2, 0.6, sshape)
    z = rng.integers(-2, 3, sshape).astype(np.int8) if zero_point else np.zeros(sshape, np.int8)
    r = rng.standard_normal((4, 6))
    expand = {"tensor": lambda p: p, "axis": lambda p: np.asarray(p)[:, None],
              "group": lambda p: np.repeat(np.asarray(p), 3, axis=1)}[granularity]
    f = surrogate(x, s, z.astype(np.float64), expand, -8, 7, ste=ste)
    h = 1e-6
    fd = {"x": lambda v: np.sum((f(x + h * v, s) - f(x - h * v, s)) * r) / (2 * h),
          "s": lambda v: 0.5 * np.sum((f(x, s + h * v) - f(x, s - h * v)) * r) / (2 * h)}
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-grad{wrt=x,s}")
    feeds = {"x": x, "s": s, "R": r, **({"z": z} if zero_point else {})}
    got = rlx.compile_cpu(m, entry="f_grad").run(d_output=np.array(1.0), **feeds)
    m = rlx.parse(text)
    m.run_pipeline("rlx-mir-jvp{wrt=x,s function=f}")
    jvp = rlx.compile_cpu(m, entry="f_jvp")
    for _ in range(3):
        v = {"x": rng.standard_normal(x.shape), "s": rng.standard_normal(np.shape(s))}
        for name in ["x", "s"]:
            an = float(np.sum(got[f"d_{name}"] * v[name]))
            assert abs(fd[name](v[name]) - an) <= 1e-6 * max(1.0, abs(an)), (name, an)
        # Forward mode: the scale's tangent enters with scale_grad too.
        t = float(jvp.run(t_x=v["x"], t_s=v["s"], **feeds)["t_loss"])
        assert abs(t - fd["x"](v["x"]) - fd["s"](v["s"])) <= 1e-6 * max(1.0, abs(t))
    check_vmap(text, feeds, ["x"])


def test_hard_tanh_and_clipped_differ_in_the_half_step_beyond_the_range():
    """x / s + zp at 7.3 and −8.4 (range [−8, 7]): their codes round into the
    range, so "clipped" passes the cotangent and "hard_tanh" (the unrounded
    code) does not; at 6.9 and −7.6 both pass, at 7.6 neither."""
    from test_autodiff import build
    x = np.array([7.3, -8.4, 6.9, -7.6, 7.6]) * 0.5 - 0.5  # s = 0.5, zp = 1
    want = {"clipped": [1, 1, 1, 1, 0], "hard_tanh": [0, 0, 1, 1, 0]}
    for ste, expected in want.items():
        text = build({"x": ((5,), "f64")},
                     f'  %y = rlx_mir.fake_quantize %x, %s, %z quant_min = -8 quant_max = 7 ste = "{ste}" '
                     f': tensor<5xf64>, tensor<f64>, tensor<i8>', "%y", (5,))
        text = text.replace("  %y =", "  %s = rlx_mir.constant dense<0.5> : tensor<f64>\n"
                            "  %z = rlx_mir.constant dense<1> : tensor<i8>\n  %y =", 1)
        m = rlx.parse(text)
        m.run_pipeline("rlx-mir-grad{wrt=x}")
        got = rlx.compile_cpu(m, entry="f_grad").run(x=x, R=np.ones(5), d_output=np.array(1.0))
        np.testing.assert_array_equal(got["d_x"], expected, err_msg=ste)


@pytest.mark.parametrize("device", DEVICES)
def test_fake_quantize_forward_on_both_paths(device):
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    s, z = np.array(0.3, np.float32), np.array(2, np.int8)
    compiled = compile_for(device, """func.func @f(%x: tensor<4x6xf32> {rlx.input = "x"},
      %s: tensor<f32> {rlx.input = "s"}, %z: tensor<i8> {rlx.input = "z"}) -> tensor<4x6xf32> {
  %y = rlx_mir.fake_quantize %x, %s, %z quant_min = -8 quant_max = 7 : tensor<4x6xf32>, tensor<f32>, tensor<i8>
  return %y : tensor<4x6xf32>
}""")
    got = next(iter(compiled.run(x=x, s=s, z=z).values()))
    want = torch.fake_quantize_per_tensor_affine(torch.tensor(x), 0.3, 2, -8, 7).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    np.testing.assert_allclose(got, ref_dequantize(ref_quantize(x, s, z, qmin=-8, qmax=7), s, z),
                               rtol=1e-6, atol=0)


def test_fake_quantize_verifier():
    with pytest.raises(rlx.RlxError, match='ste must be "clipped", "identity", "hard_tanh" or '
                                           '"tanh", got "sigmoid"'):
        rlx.parse("""func.func @f(%x: tensor<4xf32>, %s: tensor<f32>) {
  %y = rlx_mir.fake_quantize %x, %s ste = "sigmoid" : tensor<4xf32>, tensor<f32>
  return
}""")


def test_qat_example_reduces_the_loss():
    """examples/python/qat.py: 50 SGD steps of a 4-bit LSQ linear layer."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "qat.py"
    spec = importlib.util.spec_from_file_location("qat_example", path)
    qat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(qat)
    logged = []
    losses = qat.train(steps=50, log=logged.append)
    assert len(losses) == 50 and all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], losses
    assert len(logged) == 6 and "mean scale" in logged[-1]


def numpy_qmatmul(a, b, za=0, zb=0, transpose_b=False, ua=False, ub=False):
    av = (a.view(np.uint8) if ua else a).astype(np.int64) - za
    bv = (b.view(np.uint8) if ub else b).astype(np.int64) - zb
    return av @ (bv.T if transpose_b else bv)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["plain", "transpose_b-zero-points", "unsigned-batched",
                                  "unsigned-rhs-blocks"])
def test_qmatmul_is_exact_int32(device, case):
    """Every int8 value (both ends included), zero points and unsigned
    storage: the i32 accumulation equals numpy's int64 product exactly.
    "unsigned-rhs-blocks" has M, N off the CPU kernel's 4×2 blocks and
    enough work to split over threads, with the largest centered values
    (0 − 200 and 127 + 5) on both sides."""
    rng = np.random.default_rng(7)
    batched = case == "unsigned-batched"
    blocks = case == "unsigned-rhs-blocks"
    tb = case in ("transpose_b-zero-points", "unsigned-rhs-blocks")
    m, n, k = (67, 131, 300) if blocks else (5, 24, 96)
    a = rng.integers(-128, 128, ((2, m, k) if batched else (m, k)), dtype=np.int64).astype(np.int8)
    a.flat[:2] = [-128, 127]
    b = rng.integers(-128, 128, ((n, k) if tb else (k, n)), dtype=np.int64).astype(np.int8)
    b.flat[:2] = [-1, 0]  # 255 and 0 read unsigned
    za, zb = (3, -2) if tb else ((128, 0) if batched else (0, 0))
    if blocks:
        za, zb = -5, 200
    ua, ub = batched, blocks
    attrs = (" transpose_b" if tb else "") + (f" lhs_zero_point = {za}" if za else "") + \
        (f" rhs_zero_point = {zb}" if zb else "") + (" lhs_unsigned" if ua else "") + \
        (" rhs_unsigned" if ub else "")
    at, bt = tensor(a.shape, "i8"), tensor(b.shape, "i8")
    out = tensor(a.shape[:-1] + (n,), "i32")
    compiled = compile_for(device, f"""func.func @f(%a: {at} {{rlx.input = "a"}},
      %b: {bt} {{rlx.input = "b"}}) -> ({out}) {{
  %y = rlx_mir.qmatmul %a, %b{attrs} : {at}, {bt}
  return %y : {out}
}}""")
    got = next(iter(compiled.run(a=a, b=b).values()))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, numpy_qmatmul(a, b, za, zb, tb, ua, ub))


@pytest.mark.parametrize("device", DEVICES)
def test_qmatmuls_sharing_an_output_shape(device):
    """Two qmatmuls with one output shape (their zero fills merge into one
    before bufferization, so at most one of them follows its fill): both
    exact."""
    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, (9, 40), dtype=np.int64).astype(np.int8)
    b1 = rng.integers(-128, 128, (12, 40), dtype=np.int64).astype(np.int8)
    b2 = rng.integers(-128, 128, (12, 40), dtype=np.int64).astype(np.int8)
    at, bt, out = tensor(a.shape, "i8"), tensor(b1.shape, "i8"), tensor((9, 12), "i32")
    compiled = compile_for(device, f"""func.func @f(%a: {at} {{rlx.input = "a"}},
      %b1: {bt} {{rlx.input = "b1"}}, %b2: {bt} {{rlx.input = "b2"}}) -> ({out}, {out}) {{
  %y1 = rlx_mir.qmatmul %a, %b1 transpose_b lhs_zero_point = 7 : {at}, {bt}
  %y2 = rlx_mir.qmatmul %a, %b2 transpose_b rhs_zero_point = -3 : {at}, {bt}
  return %y1, %y2 : {out}, {out}
}}""")
    got = list(compiled.run(a=a, b1=b1, b2=b2).values())
    np.testing.assert_array_equal(got[0], numpy_qmatmul(a, b1, 7, 0, True))
    np.testing.assert_array_equal(got[1], numpy_qmatmul(a, b2, 0, -3, True))
