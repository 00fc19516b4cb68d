"""rlx_mir.selective_scan (Mamba-1's selective scan) against the recurrence
written here in numpy (f64, step by step, as mamba-ssm's selective_scan_ref
and transformers' MambaMixer.slow_forward), on the CPU path and the emulator
from one body: every chunk size (dividing the sequence or not) equals the
recurrence, a prefill split in pieces with the state carried equals one
pass, case SS1 of ../shared/cases/README.md literally; derivatives by finite
differences (reverse, forward, vmap)."""
import numpy as np
import pytest

import rlx

from test_quant_int8 import DEVICES, compile_for, tensor

OPTIONAL = ("D", "z", "delta_bias", "state")


def scan_text(b, d, length, n, *, with_=OPTIONAL, softplus=True, chunk=None, et="f32"):
    """@f(u, delta, A, B, C[, D][, z][, delta_bias][, state]) -> (y, state)."""
    shapes = {"u": (b, d, length), "delta": (b, d, length), "A": (d, n), "B": (b, n, length),
              "C": (b, n, length), "D": (d,), "z": (b, d, length), "delta_bias": (d,),
              "state": (b, d, n)}
    names = ["u", "delta", "A", "B", "C", *[o for o in OPTIONAL if o in with_]]
    args = ", ".join(f'%{k}: {tensor(shapes[k], et)} {{rlx.input = "{k}"}}' for k in names)
    op = "rlx_mir.selective_scan %u, %delta, %A, %B, %C"
    for k in OPTIONAL:
        if k in with_:
            op += f" {k}(%{k} : {tensor(shapes[k], et)})"
    op += (" delta_softplus" if softplus else "") + (f" chunk_size = {chunk}" if chunk else "")
    yt, st = tensor(shapes["u"], et), tensor(shapes["state"], et)
    types = ", ".join(tensor(shapes[k], et) for k in ("u", "delta", "A", "B", "C"))
    return f"""func.func @f({args}) -> ({yt} {{rlx.output = "y"}}, {st} {{rlx.output = "state"}}) {{
  %y, %h = {op} : {types}
  return %y, %h : {yt}, {st}
}}"""


def reference(u, delta, A, B, C, D=None, z=None, delta_bias=None, state=None, softplus=True):
    """The recurrence, one step at a time, in f64."""
    u, delta, A, B, C = (np.asarray(v, np.float64) for v in (u, delta, A, B, C))
    dt = delta + (0 if delta_bias is None else np.asarray(delta_bias, np.float64)[None, :, None])
    if softplus:
        dt = np.where(dt > 20, dt, np.log1p(np.exp(np.minimum(dt, 20))))
    h = np.zeros(u.shape[:2] + A.shape[1:]) if state is None else np.asarray(state, np.float64).copy()
    ys = []
    for t in range(u.shape[2]):
        h = np.exp(dt[:, :, t, None] * A) * h + (dt[:, :, t] * u[:, :, t])[..., None] * B[:, None, :, t]
        ys.append(np.einsum("bdn,bn->bd", h, C[:, :, t]))
    y = np.stack(ys, -1) if ys else np.zeros(u.shape)
    if D is not None:
        y = y + np.asarray(D, np.float64)[None, :, None] * u
    if z is not None:
        z = np.asarray(z, np.float64)
        y = y * z / (1 + np.exp(-z))
    return y, h


def random_inputs(rng, b, d, length, n):
    return {"u": rng.standard_normal((b, d, length)), "delta": rng.standard_normal((b, d, length)),
            "A": -np.exp(rng.standard_normal((d, n)) * 0.5), "B": rng.standard_normal((b, n, length)),
            "C": rng.standard_normal((b, n, length)), "D": rng.standard_normal(d),
            "z": rng.standard_normal((b, d, length)), "delta_bias": rng.standard_normal(d) * 0.5,
            "state": rng.standard_normal((b, d, n))}


def f32(feeds):
    return {k: np.asarray(v, np.float32) for k, v in feeds.items()}


def ss1_inputs():
    t, d, n = np.arange(5.0), np.arange(2.0), np.arange(2.0)
    return {"u": (0.5 + 0.1 * t[None] - 0.2 * d[:, None])[None],
            "delta": (-1 + 0.3 * t[None] + 0.1 * d[:, None])[None],
            "delta_bias": 0.1 * (d + 1), "A": -0.5 * (n[None] + 1) * (d[:, None] + 1),
            "B": (0.2 * (n[:, None] + 1) - 0.05 * t[None])[None],
            "C": (0.3 + 0.1 * n[:, None] + 0.02 * t[None])[None], "D": 1 + 0.5 * d,
            "z": (0.5 + 0.1 * t[None] - 0.3 * d[:, None])[None]}


@pytest.mark.parametrize("device", DEVICES)
def test_case_ss1(device):
    """SS1's values, in one pass and as t = 0..2 then t = 3..4 with the state."""
    x = ss1_inputs()
    want_y = [[0.1672943, 0.2628314, 0.3816606, 0.5195500, 0.6683577],
              [0.0524113, 0.1123494, 0.1969387, 0.3062703, 0.4386772]]
    want_h = [[0.0593362, 0.2541634], [0.0185544, 0.1569372]]
    ref_y, ref_h = reference(**x)
    np.testing.assert_allclose(ref_y[0], want_y, atol=2e-7)  # the numpy reference is SS1's
    np.testing.assert_allclose(ref_h[0], want_h, atol=2e-7)
    full = compile_for(device, scan_text(1, 2, 5, 2, with_=("D", "z", "delta_bias"))).run(**f32(x))
    np.testing.assert_allclose(full["y"][0], want_y, atol=1e-6)
    np.testing.assert_allclose(full["state"][0], want_h, atol=1e-6)
    first = compile_for(device, scan_text(1, 2, 3, 2, with_=("D", "z", "delta_bias")))
    part = {k: (v[..., :3] if np.ndim(v) == 3 and v.shape[-1] == 5 else v) for k, v in x.items()}
    a = first.run(**f32(part))
    second = compile_for(device, scan_text(1, 2, 2, 2))
    rest = {k: np.ascontiguousarray(v[..., 3:]) if np.ndim(v) == 3 and v.shape[-1] == 5 else v
            for k, v in x.items()}
    b = second.run(**f32({**rest, "state": a["state"]}))
    np.testing.assert_allclose(np.concatenate([a["y"], b["y"]], -1)[0], want_y, atol=1e-6)
    np.testing.assert_allclose(b["state"][0], want_h, atol=1e-6)
    # Detection: the second piece from a zero state.
    assert not np.allclose(b["y"][0], [[0.4822926, 0.6456176], [0.2999294, 0.4366254]], atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 16, None])
def test_every_chunk_size_equals_the_recurrence(device, chunk):
    """L = 37: chunks of 1 (the recurrence itself); 2 and 3 (19 and 13
    chunks, whose ends are scanned in chunks again, two levels and one);
    5 (8 chunks carried in order), 16 (3, the last padded) and the default."""
    rng = np.random.default_rng(chunk or 0)
    b, d, length, n = 2, 3, 37, 4
    x = random_inputs(rng, b, d, length, n)
    got = compile_for(device, scan_text(b, d, length, n, chunk=chunk)).run(**f32(x))
    want_y, want_h = reference(**x)
    np.testing.assert_allclose(got["y"], want_y, rtol=1e-4, atol=1e-4 * np.abs(want_y).max())
    np.testing.assert_allclose(got["state"], want_h, rtol=1e-4, atol=1e-4 * np.abs(want_h).max())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_,softplus", [((), False), (("D",), True), (("z", "state"), False)])
def test_optional_operands(device, with_, softplus):
    rng = np.random.default_rng(len(with_))
    b, d, length, n = 1, 4, 6, 3
    x = random_inputs(rng, b, d, length, n)
    x["delta"] = np.abs(x["delta"])  # a positive step without softplus
    feeds = {k: v for k, v in x.items() if k in ("u", "delta", "A", "B", "C") or k in with_}
    got = compile_for(device, scan_text(b, d, length, n, with_=with_, softplus=softplus,
                                        chunk=4)).run(**f32(feeds))
    want_y, want_h = reference(**feeds, softplus=softplus)
    np.testing.assert_allclose(got["y"], want_y, rtol=1e-4, atol=1e-4 * np.abs(want_y).max())
    np.testing.assert_allclose(got["state"], want_h, rtol=1e-4, atol=1e-4 * np.abs(want_h).max())


@pytest.mark.parametrize("device", DEVICES)
def test_split_prefill_and_decode_equal_one_pass(device):
    """A prefill of 6, then 4, then three decode steps (L = 1), the state
    carried, equals one pass over all 13."""
    rng = np.random.default_rng(5)
    b, d, n = 2, 3, 4
    x = random_inputs(rng, b, d, 13, n)
    whole = compile_for(device, scan_text(b, d, 13, n)).run(**f32(x))
    state, ys = f32(x)["state"], []
    for lo, hi in [(0, 6), (6, 10), (10, 11), (11, 12), (12, 13)]:
        piece = {k: np.ascontiguousarray(v[..., lo:hi]) if np.ndim(v) == 3 and v.shape[-1] == 13 else v
                 for k, v in x.items()}
        out = compile_for(device, scan_text(b, d, hi - lo, n)).run(**f32({**piece, "state": state}))
        ys.append(out["y"])
        state = out["state"]
    scale = np.abs(whole["y"]).max()
    np.testing.assert_allclose(np.concatenate(ys, -1), whole["y"], rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(state, whole["state"], rtol=1e-5, atol=1e-5 * np.abs(state).max())


def test_large_steps_do_not_overflow():
    """softplus of a large step is the step itself (PyTorch's threshold), and
    exp(dt·A) underflows to 0 rather than giving NaN."""
    b, d, length, n = 1, 2, 4, 2
    x = random_inputs(np.random.default_rng(1), b, d, length, n)
    x["delta"][...] = 90.0
    got = compile_for("cpu", scan_text(b, d, length, n, chunk=2)).run(**f32(x))
    want_y, want_h = reference(**x)
    assert np.isfinite(got["y"]).all()
    np.testing.assert_allclose(got["y"], want_y, rtol=1e-4, atol=1e-4 * np.abs(want_y).max())


def test_derivatives_and_vmap():
    """Reverse and forward mode through the chunked decomposition (chunks of
    2 over L = 5: a padded last chunk and the carry) against central
    differences (f64) in every operand; vmap over u."""
    from test_autodiff import build, check_grad
    b, d, length, n = 1, 2, 5, 3
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    body = (f"  %y, %st = rlx_mir.selective_scan %u, %delta, %A, %B, %C D(%D : {t(d)}) "
            f"z(%z : {t(b, d, length)}) delta_bias(%db : {t(d)}) state(%s : {t(b, d, n)}) "
            f"delta_softplus chunk_size = 2 : {t(b, d, length)}, {t(b, d, length)}, {t(d, n)}, "
            f"{t(b, n, length)}, {t(b, n, length)}")
    shapes = {"u": (b, d, length), "delta": (b, d, length), "A": (d, n), "B": (b, n, length),
              "C": (b, n, length), "D": (d,), "z": (b, d, length), "db": (d,), "s": (b, d, n)}
    text = build({k: (s, "f64") for k, s in shapes.items()}, body, "%y", (b, d, length))
    rng = np.random.default_rng(11)
    feeds = {k: rng.standard_normal(s) for k, s in shapes.items()}
    feeds["A"] = -np.exp(feeds["A"] * 0.5)
    feeds["R"] = rng.standard_normal((b, d, length))
    check_grad(text, feeds, list(shapes), vmap_args=["u"])  # jvp and vmap too


@pytest.mark.parametrize("change,message", [
    ({"u": "2x3"}, r"needs u \[B, D, L\]"),
    ({"A": "3"}, r"A must be \[D, N\] with a static N >= 1"),
    ({"delta": "2x3x6"}, r"delta must be \[B, D, L\] = \[2, 3, 5\]"),
    ({"B": "2x4x5"}, r"B must be \[B, N, L\] = \[2, 2, 5\]"),
    ({"C": "2x2x4"}, r"C must be \[B, N, L\] = \[2, 2, 5\]"),
    ({"extra": "D(%D : tensor<4xf32>)"}, r"D must be \[D\] = \[3\]"),
    ({"extra": "state(%st : tensor<2x3x3xf32>)"}, r"state must be \[B, D, N\] = \[2, 3, 2\]"),
    ({"extra": "chunk_size = 0"}, r"chunk_size must be >= 1"),
])
def test_verifier(change, message):
    ty = {"u": "2x3x5", "delta": "2x3x5", "A": "3x2", "B": "2x2x5", "C": "2x2x5", **change}
    extra = ty.pop("extra", "")
    ts = {k: f"tensor<{v}xf32>" for k, v in ty.items()}
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%u: {ts['u']}, %delta: {ts['delta']}, %A: {ts['A']}, %B: {ts['B']},
      %C: {ts['C']}, %D: tensor<4xf32>, %st: tensor<2x3x3xf32>) {{
  %y, %h = rlx_mir.selective_scan %u, %delta, %A, %B, %C {extra} : {ts['u']}, {ts['delta']}, {ts['A']}, {ts['B']}, {ts['C']}
  return
}}""")
