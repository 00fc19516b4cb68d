"""rlx_mir.ssd_scan (Mamba-2's SSD scan) against the recurrence written here
in numpy (f64, step by step, as mamba-ssm's ssd reference and transformers'
mamba2_selective_state_update), on the CPU path and the emulator from one
body: every chunk size (dividing the sequence or not) equals the
recurrence, groups of B and C shared by their heads, dt bias, softplus and
limits, a prefill split in pieces with the state carried equals one pass,
and transformers' own chunked torch form (mamba2_chunk_scan) agrees;
derivatives by finite differences (reverse, forward, vmap)."""
import numpy as np
import pytest

import rlx

from test_quant_int8 import DEVICES, compile_for, tensor

OPTIONAL = ("D", "dt_bias", "state")


def scan_text(b, length, h, p, g, n, *, with_=OPTIONAL, softplus=True, chunk=None, limits=(),
              et="f32"):
    """@f(x, dt, A, B, C[, D][, dt_bias][, state]) -> (y, state)."""
    shapes = {"x": (b, length, h, p), "dt": (b, length, h), "A": (h,), "B": (b, length, g, n),
              "C": (b, length, g, n), "D": (h,), "dt_bias": (h,), "state": (b, h, p, n)}
    names = ["x", "dt", "A", "B", "C", *[o for o in OPTIONAL if o in with_]]
    args = ", ".join(f'%{k}: {tensor(shapes[k], et)} {{rlx.input = "{k}"}}' for k in names)
    op = "rlx_mir.ssd_scan %x, %dt, %A, %B, %C"
    for k in OPTIONAL:
        if k in with_:
            op += f" {k}(%{k} : {tensor(shapes[k], et)})"
    op += " dt_softplus" if softplus else ""
    op += "".join(f" {k} = {v!r}" for k, v in zip(("dt_min", "dt_max"), limits))
    op += f" chunk_size = {chunk}" if chunk else ""
    yt, st = tensor(shapes["x"], et), tensor(shapes["state"], et)
    types = ", ".join(tensor(shapes[k], et) for k in ("x", "dt", "A", "B", "C"))
    return f"""func.func @f({args}) -> ({yt} {{rlx.output = "y"}}, {st} {{rlx.output = "state"}}) {{
  %y, %h = {op} : {types}
  return %y, %h : {yt}, {st}
}}"""


def reference(x, dt, A, B, C, D=None, dt_bias=None, state=None, softplus=True, limits=(None, None)):
    """The recurrence, one step at a time, in f64: head h reads group
    h // (H / G) of B and C."""
    x, dt, A, B, C = (np.asarray(v, np.float64) for v in (x, dt, A, B, C))
    b, length, h, p = x.shape
    r = h // B.shape[2]
    Bh, Ch = np.repeat(B, r, axis=2), np.repeat(C, r, axis=2)  # [b, L, H, N]
    dt = dt + (0 if dt_bias is None else np.asarray(dt_bias, np.float64))
    if softplus:
        dt = np.where(dt > 20, dt, np.log1p(np.exp(np.minimum(dt, 20))))
    lo, hi = (list(limits) + [None, None])[:2]
    dt = dt if lo is None else np.maximum(dt, lo)
    dt = dt if hi is None else np.minimum(dt, hi)
    s = np.zeros((b, h, p, B.shape[3])) if state is None else np.asarray(state, np.float64).copy()
    ys = []
    for t in range(length):
        decay = np.exp(dt[:, t] * A)[:, :, None, None]
        s = decay * s + (dt[:, t, :, None] * x[:, t])[..., None] * Bh[:, t, :, None, :]
        ys.append(np.einsum("bhpn,bhn->bhp", s, Ch[:, t]))
    y = np.stack(ys, 1) if ys else np.zeros(x.shape)
    if D is not None:
        y = y + np.asarray(D, np.float64)[None, None, :, None] * x
    return y, s


def random_inputs(rng, b, length, h, p, g, n):
    return {"x": rng.standard_normal((b, length, h, p)), "dt": rng.standard_normal((b, length, h)),
            "A": -np.exp(rng.standard_normal(h) * 0.5), "B": rng.standard_normal((b, length, g, n)),
            "C": rng.standard_normal((b, length, g, n)), "D": rng.standard_normal(h),
            "dt_bias": rng.standard_normal(h) * 0.5, "state": rng.standard_normal((b, h, p, n))}


def f32(feeds):
    return {k: np.asarray(v, np.float32) for k, v in feeds.items()}


def close(got, want):
    for key, w in zip(("y", "state"), want):
        np.testing.assert_allclose(got[key], w, rtol=1e-4, atol=1e-4 * np.abs(w).max(), err_msg=key)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 3, 4, 16, None])
def test_every_chunk_size_equals_the_recurrence(device, chunk):
    """L = 13, 4 heads in 2 groups: chunks of 1 (13 chunks, the chunk
    states scanned in chunks again), 3 and 4 (the last padded), 16 (one
    chunk) and the default."""
    rng = np.random.default_rng(chunk or 0)
    shape = (2, 13, 4, 3, 2, 5)
    x = random_inputs(rng, *shape)
    got = compile_for(device, scan_text(*shape, chunk=chunk)).run(**f32(x))
    close(got, reference(**x))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("with_,softplus,limits", [((), False, ()), (("D",), True, (0.2, 1.5)),
                                                   (("state",), False, (0.5,))])
def test_optional_operands_and_limits(device, with_, softplus, limits):
    rng = np.random.default_rng(len(with_) + len(limits))
    shape = (1, 6, 2, 2, 1, 3)
    x = random_inputs(rng, *shape)
    if not softplus:
        x["dt"] = np.abs(x["dt"])  # a positive step without softplus
    feeds = {k: v for k, v in x.items() if k in ("x", "dt", "A", "B", "C") or k in with_}
    got = compile_for(device, scan_text(*shape, with_=with_, softplus=softplus, chunk=4,
                                        limits=limits)).run(**f32(feeds))
    close(got, reference(**feeds, softplus=softplus, limits=limits))
    if limits:  # the limits bind here
        free = reference(**feeds, softplus=softplus)[0]
        assert np.abs(free - reference(**feeds, softplus=softplus, limits=limits)[0]).max() > 1e-3


@pytest.mark.parametrize("device", DEVICES)
def test_split_prefill_and_decode_equal_one_pass(device):
    """A prefill of 5, then 4, then two decode steps (L = 1), the state
    carried, equals one pass over all 11."""
    rng = np.random.default_rng(5)
    b, h, p, g, n = 1, 4, 2, 2, 3
    x = random_inputs(rng, b, 11, h, p, g, n)
    whole = compile_for(device, scan_text(b, 11, h, p, g, n, chunk=4)).run(**f32(x))
    state, ys = f32(x)["state"], []
    for lo, hi in [(0, 5), (5, 9), (9, 10), (10, 11)]:
        piece = {k: np.ascontiguousarray(v[:, lo:hi]) if k in ("x", "dt", "B", "C") else v
                 for k, v in x.items()}
        out = compile_for(device, scan_text(b, hi - lo, h, p, g, n, chunk=4)).run(
            **f32({**piece, "state": state}))
        ys.append(out["y"])
        state = out["state"]
    scale = np.abs(whole["y"]).max()
    np.testing.assert_allclose(np.concatenate(ys, 1), whole["y"], rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(state, whole["state"], rtol=1e-5, atol=1e-5 * np.abs(state).max())


def test_transformers_chunked_form_agrees():
    """transformers' own torch SSD (mamba2_chunk_scan, chunk 4 over 10
    steps) gives the op's output and final state."""
    torch = pytest.importorskip("torch")
    from transformers.models.mamba2 import modeling_mamba2 as m2
    rng = np.random.default_rng(9)
    shape = (2, 10, 4, 3, 2, 5)
    x = f32(random_inputs(rng, *shape))
    t = {k: torch.from_numpy(v) for k, v in x.items()}
    y, s = m2.mamba2_chunk_scan(t["x"], t["dt"], t["A"], t["B"], t["C"], chunk_size=4, D=t["D"],
                                dt_bias=t["dt_bias"], initial_states=t["state"], dt_softplus=True,
                                return_final_states=True)
    got = compile_for("cpu", scan_text(*shape, chunk=4)).run(**x)
    close(got, (y.numpy(), s.numpy()))


def test_derivatives_and_vmap():
    """Reverse and forward mode through the chunked decomposition (chunks of
    2 over L = 5: a padded last chunk and the chunk scan) against central
    differences (f64) in every operand; vmap over x."""
    from test_autodiff import build, check_grad
    b, length, h, p, g, n = 1, 5, 2, 2, 1, 3
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    body = (f"  %y, %st = rlx_mir.ssd_scan %x, %dt, %A, %B, %C D(%D : {t(h)}) "
            f"dt_bias(%db : {t(h)}) state(%s : {t(b, h, p, n)}) dt_softplus chunk_size = 2 : "
            f"{t(b, length, h, p)}, {t(b, length, h)}, {t(h)}, {t(b, length, g, n)}, "
            f"{t(b, length, g, n)}")
    shapes = {"x": (b, length, h, p), "dt": (b, length, h), "A": (h,), "B": (b, length, g, n),
              "C": (b, length, g, n), "D": (h,), "db": (h,), "s": (b, h, p, n)}
    text = build({k: (s, "f64") for k, s in shapes.items()}, body, "%y", (b, length, h, p))
    rng = np.random.default_rng(11)
    feeds = {k: rng.standard_normal(s) for k, s in shapes.items()}
    feeds["A"] = -np.exp(feeds["A"] * 0.5)
    feeds["R"] = rng.standard_normal((b, length, h, p))
    check_grad(text, feeds, list(shapes), vmap_args=["x"])  # jvp and vmap too


@pytest.mark.parametrize("change,message", [
    ({"x": "2x5x4"}, r"needs x \[B, L, H, P\]"),
    ({"B": "2x5x3x3", "C": "2x5x3x3"}, r"4 heads are not a multiple of the 3 groups"),
    ({"dt": "2x5x3"}, r"dt must be \[B, L, H\] = \[2, 5, 4\]"),
    ({"C": "2x5x2x4"}, r"C must be \[B, L, G, N\] = \[2, 5, 2, 3\]"),
    ({"extra": "D(%D : tensor<3xf32>)"}, r"D must be \[H\] = \[4\]"),
    ({"extra": "chunk_size = 0"}, r"chunk_size must be >= 1"),
])
def test_verifier(change, message):
    ty = {"x": "2x5x4x2", "dt": "2x5x4", "A": "4", "B": "2x5x2x3", "C": "2x5x2x3", **change}
    extra = ty.pop("extra", "")
    ts = {k: f"tensor<{v}xf32>" for k, v in ty.items()}
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%x: {ts['x']}, %dt: {ts['dt']}, %A: {ts['A']}, %B: {ts['B']},
      %C: {ts['C']}, %D: tensor<3xf32>) {{
  %y, %h = rlx_mir.ssd_scan %x, %dt, %A, %B, %C {extra} : {ts['x']}, {ts['dt']}, {ts['A']}, {ts['B']}, {ts['C']}
  return
}}""")
