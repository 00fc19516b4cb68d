"""rlx_mir.if, rlx_mir.while and rlx_mir.scan against loops written here in
numpy, on the CPU path (scf) and the emulator (the unrolled form) from one
body: case CF1 (../shared/cases), a scan RNN in both directions with its
trajectory, both branches of an if; reverse mode, forward mode and vmap by
central differences (f64); the verifier's and the passes' errors."""
import numpy as np
import pytest

import rlx

from test_autodiff import build, check_grad
from test_quant_int8 import DEVICES, compile_for, tensor

F32 = lambda *s: tensor(s, "f32")  # noqa: E731
F64 = lambda *s: tensor(s, "f64")  # noqa: E731


def less_than(x, bound, et="f32"):
    """An op computing `%x < bound` as a 0-d tensor<i1> (%lt)."""
    return f"""%lt = rlx_mir.elementwise ins({x} : tensor<{et}>) -> tensor<i1> {{
    ^bb0(%s: {et}):
      %c = arith.constant {bound!r} : {et}
      %b = arith.cmpf olt, %s, %c : {et}
      rlx_mir.yield %b : i1
    }}"""


def cf1_text(cap):
    """Case CF1: x0, while x < 100: x = 3x."""
    cap_text = f" max_iterations = {cap}" if cap is not None else ""
    return f"""func.func @f(%x0: tensor<f32> {{rlx.input = "x0"}}) -> (tensor<f32> {{rlx.output = "x"}}, tensor<i64> {{rlx.output = "trips"}}) {{
  %x, %trips = rlx_mir.while ins(%x0 : tensor<f32>){cap_text} -> tensor<f32>, tensor<i64> cond {{
  ^bb0(%a: tensor<f32>):
    {less_than("%a", 100.0)}
    rlx_mir.yield %lt : tensor<i1>
  }} do {{
  ^bb0(%a: tensor<f32>):
    %three = rlx_mir.constant dense<3.0> : tensor<f32>
    %y = rlx_mir.mul %a, %three : tensor<f32>, tensor<f32>
    rlx_mir.yield %y : tensor<f32>
  }}
  return %x, %trips : tensor<f32>, tensor<i64>
}}"""


def cf1_reference(x0, cap):
    """The while loop in numpy: the condition before every trip."""
    x, trips = np.float32(x0), 0
    while x < 100 and (cap is None or trips < cap):
        x, trips = np.float32(3 * x), trips + 1
    return trips, x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x0,cap,expected", [(1.0, None, (5, 243.0)), (1.0, 3, (3, 27.0)),
                                             (200.0, None, (0, 200.0)), (1.0, 10, (5, 243.0)),
                                             (200.0, 4, (0, 200.0))])
def test_cf1_while(device, x0, cap, expected):
    """(trips, x) of case CF1; do-while semantics would give (1, 600) for
    x0 = 200. The emulator runs the unrolled form, which needs a trip cap."""
    assert cf1_reference(x0, cap) == expected
    if device != "cpu" and cap is None:
        with pytest.raises(rlx.RlxError, match="without max_iterations"):
            compile_for(device, cf1_text(cap))
        return
    out = compile_for(device, cf1_text(cap)).run({"x0": np.array(x0, np.float32)})
    assert (int(out["trips"]), float(out["x"])) == expected
    assert out["trips"].dtype == np.int64 and out["trips"].shape == ()


def rnn_text(length, b, d, h, *, et="f32", reverse=False, trajectory=False, extra_ys=True,
             checkpoints=None):
    """h ← tanh(x_t·W + h·U + bias); ys: 2·h per step (and the trajectory)."""
    t = lambda *s: tensor(s, et)  # noqa: E731
    flags = (" reverse" if reverse else "") + (" trajectory" if trajectory else "")
    flags += f" num_checkpoints = {checkpoints}" if checkpoints else ""
    outs = [t(b, h)] + ([t(length, b, h)] if extra_ys else []) + ([t(length, b, h)] if trajectory else [])
    names = ["%hT"] + (["%ys"] if extra_ys else []) + (["%traj"] if trajectory else [])
    yields = "%n, %y2" if extra_ys else "%n"
    ytypes = f"{t(b, h)}, {t(b, h)}" if extra_ys else t(b, h)
    body = f"""  {', '.join(names)} = rlx_mir.scan init(%h0 : {t(b, h)}) xs(%x : {t(length, b, d)})
      consts(%w, %u, %bias : {t(d, h)}, {t(h, h)}, {t(h)}){flags} -> {', '.join(outs)} {{
  ^bb0(%c: {t(b, h)}, %xt: {t(b, d)}, %wk: {t(d, h)}, %uk: {t(h, h)}, %bk: {t(h)}):
    %a = rlx_mir.matmul %xt, %wk : {t(b, d)}, {t(d, h)}
    %r = rlx_mir.matmul %c, %uk : {t(b, h)}, {t(h, h)}
    %s = rlx_mir.add %a, %r : {t(b, h)}, {t(b, h)}
    %sb = rlx_mir.add %s, %bk : {t(b, h)}, {t(h)}
    %n = rlx_mir.tanh %sb : {t(b, h)}
    %two = rlx_mir.constant dense<2.0> : tensor<{et}>
    %y2 = rlx_mir.mul %n, %two : {t(b, h)}, tensor<{et}>
    rlx_mir.yield {yields} : {ytypes}
  }}"""
    return body, names, outs


def rnn_reference(h0, x, w, u, bias, reverse=False):
    h, ys, traj = h0.astype(np.float64), [None] * len(x), [None] * len(x)
    for t in (reversed(range(len(x))) if reverse else range(len(x))):
        h = np.tanh(x[t] @ w + h @ u + bias)
        ys[t], traj[t] = 2 * h, h
    return h, np.stack(ys), np.stack(traj)


def rnn_inputs(rng, length, b, d, h):
    return {"h0": rng.standard_normal((b, h)) * 0.5, "x": rng.standard_normal((length, b, d)),
            "w": rng.standard_normal((d, h)) * 0.5, "u": rng.standard_normal((h, h)) * 0.5,
            "bias": rng.standard_normal(h) * 0.1}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_rnn(device, reverse):
    """Final carry, per-step outputs and trajectory of a tanh RNN over 7
    steps, forward and reverse, equal the numpy loop (f32)."""
    length, b, d, h = 7, 2, 3, 4
    body, names, outs = rnn_text(length, b, d, h, reverse=reverse, trajectory=True)
    args = {"h0": (b, h), "x": (length, b, d), "w": (d, h), "u": (h, h), "bias": (h,)}
    sig = ", ".join(f'%{k}: {F32(*s)} {{rlx.input = "{k}"}}' for k, s in args.items())
    res = ", ".join(f'{o} {{rlx.output = "{n[1:]}"}}' for n, o in zip(names, outs))
    text = f"func.func @f({sig}) -> ({res}) {{\n{body}\n  return {', '.join(names)} : {', '.join(outs)}\n}}"
    feeds = {k: v.astype(np.float32) for k, v in rnn_inputs(np.random.default_rng(3), length, b, d, h).items()}
    got = compile_for(device, text).run(feeds)
    h_ref, ys_ref, traj_ref = rnn_reference(*(feeds[k] for k in args), reverse=reverse)
    for name, ref in (("hT", h_ref), ("ys", ys_ref), ("traj", traj_ref)):
        np.testing.assert_allclose(got[name], ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max(), err_msg=name)


def scan_without_xs_text():
    """length = 5 steps and no xs: powers of a matrix applied to a vector."""
    return f"""func.func @f(%v: {F32(3)} {{rlx.input = "v"}}, %m: {F32(3, 3)} {{rlx.input = "m"}})
    -> ({F32(3)} {{rlx.output = "last"}}, {F32(5, 3)} {{rlx.output = "all"}}) {{
  %last, %all = rlx_mir.scan init(%v : {F32(3)}) consts(%m : {F32(3, 3)}) length = 5 -> {F32(3)}, {F32(5, 3)} {{
  ^bb0(%c: {F32(3)}, %mk: {F32(3, 3)}):
    %r = rlx_mir.reshape %c [1, 3] : {F32(3)}
    %p = rlx_mir.matmul %r, %mk : {F32(1, 3)}, {F32(3, 3)}
    %n = rlx_mir.reshape %p [3] : {F32(1, 3)}
    rlx_mir.yield %n, %n : {F32(3)}, {F32(3)}
  }}
  return %last, %all : {F32(3)}, {F32(5, 3)}
}}"""


@pytest.mark.parametrize("device", DEVICES)
def test_scan_with_length_and_no_xs(device):
    rng = np.random.default_rng(5)
    v, m = rng.standard_normal(3).astype(np.float32), (rng.standard_normal((3, 3)) * 0.7).astype(np.float32)
    got = compile_for(device, scan_without_xs_text()).run({"v": v, "m": m})
    ref = [v.astype(np.float64)]
    for _ in range(5):
        ref.append(ref[-1] @ m)
    np.testing.assert_allclose(got["all"], np.stack(ref[1:]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["last"], ref[-1], rtol=1e-5, atol=1e-5)


def if_text(et="f32", shape=(2, 3)):
    t = tensor(shape, et)
    return f"""func.func @f(%p: tensor<i1> {{rlx.input = "p"}}, %x: {t} {{rlx.input = "x"}}, %w: {t} {{rlx.input = "w"}})
    -> ({t} {{rlx.output = "y"}}, {t} {{rlx.output = "z"}}) {{
  %y, %z = rlx_mir.if %p : tensor<i1> ins(%x, %w : {t}, {t}) -> {t}, {t} {{
  ^bb0(%a: {t}, %b: {t}):
    %m = rlx_mir.mul %a, %b : {t}, {t}
    %e = rlx_mir.tanh %m : {t}
    rlx_mir.yield %e, %b : {t}, {t}
  }} else {{
  ^bb0(%a: {t}, %b: {t}):
    %s = rlx_mir.mul %a, %a : {t}, {t}
    %e = rlx_mir.exp %b : {t}
    rlx_mir.yield %s, %e : {t}, {t}
  }}
  return %y, %z : {t}, {t}
}}"""


@pytest.mark.parametrize("device", DEVICES)
def test_if_both_branches(device):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    prog = compile_for(device, if_text())
    for p, (y, z) in ((True, (np.tanh(x * w), w)), (False, (x * x, np.exp(w)))):
        got = prog.run({"p": np.array(p), "x": x, "w": w})
        np.testing.assert_allclose(got["y"], y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["z"], z, rtol=1e-5, atol=1e-6)


# -- derivatives ------------------------------------------------------------

@pytest.mark.parametrize("reverse,checkpoints", [(False, None), (True, None), (False, 3), (True, 2)])
def test_scan_derivatives(reverse, checkpoints):
    """d/d(h0, x, W, U, bias) of Σ R·(final carry) + Σ R2·ys + Σ R3·trajectory
    through the backward scan (with checkpoints: over segments of 2 or 3 of
    the 6 steps, each recomputed from its carry); jvp; vmap over x (batched
    along its axis 0, the steps stay axis 1)."""
    length, b, d, h = 6, 2, 3, 4
    body, names, outs = rnn_text(length, b, d, h, et="f64", reverse=reverse, trajectory=True,
                                 checkpoints=checkpoints)
    body += f"""
  %rys = rlx_mir.mul %ys, %R2 : {F64(length, b, h)}, {F64(length, b, h)}
  %rtr = rlx_mir.mul %traj, %R3 : {F64(length, b, h)}, {F64(length, b, h)}
  %sum = rlx_mir.add %rys, %rtr : {F64(length, b, h)}, {F64(length, b, h)}
  %part = rlx_mir.reduce sum %sum axes = [0] : {F64(length, b, h)}
  %out = rlx_mir.add %hT, %part : {F64(b, h)}, {F64(b, h)}"""
    args = {"h0": ((b, h), "f64"), "x": ((length, b, d), "f64"), "w": ((d, h), "f64"),
            "u": ((h, h), "f64"), "bias": ((h,), "f64"), "R2": ((length, b, h), "f64"),
            "R3": ((length, b, h), "f64")}
    text = build(args, body, "%out", (b, h))
    rng = np.random.default_rng(13)
    feeds = rnn_inputs(rng, length, b, d, h)
    feeds.update(R2=rng.standard_normal((length, b, h)), R3=rng.standard_normal((length, b, h)),
                 R=rng.standard_normal((b, h)))
    check_grad(text, feeds, ["h0", "x", "w", "u", "bias"], vmap_args=["x"])


def test_while_derivatives():
    """A while with a fixed trip count (a float counter to 3): x ← sin(x)·w + x;
    reverse and forward mode in x0 and w; vmap over x0."""
    t = F64(2, 3)
    body = f"""  %zero = rlx_mir.constant dense<0.0> : tensor<f64>
  %x, %i, %trips = rlx_mir.while ins(%x0, %zero, %w : {t}, tensor<f64>, {t}) max_iterations = 6
      -> {t}, tensor<f64>, {t}, tensor<i64> cond {{
  ^bb0(%a: {t}, %k: tensor<f64>, %wk: {t}):
    {less_than("%k", 2.5, "f64")}
    rlx_mir.yield %lt : tensor<i1>
  }} do {{
  ^bb0(%a: {t}, %k: tensor<f64>, %wk: {t}):
    %s = rlx_mir.sin %a : {t}
    %m = rlx_mir.mul %s, %wk : {t}, {t}
    %n = rlx_mir.add %m, %a : {t}, {t}
    %one = rlx_mir.constant dense<1.0> : tensor<f64>
    %k1 = rlx_mir.add %k, %one : tensor<f64>, tensor<f64>
    rlx_mir.yield %n, %k1, %wk : {t}, tensor<f64>, {t}
  }}"""
    body = body.replace("%x, %i, %trips = ", "%x, %i, %wout, %trips = ")
    text = build({"x0": ((2, 3), "f64"), "w": ((2, 3), "f64")}, body, "%x", (2, 3))
    rng = np.random.default_rng(17)
    feeds = {"x0": rng.standard_normal((2, 3)), "w": rng.standard_normal((2, 3)),
             "R": rng.standard_normal((2, 3))}
    check_grad(text, feeds, ["x0", "w"], vmap_args=["x0"])


@pytest.mark.parametrize("p", [True, False])
def test_if_derivatives(p):
    """Through either branch; vmap over x (the condition not batched)."""
    body = if_text("f64").split("{\n", 1)[1].rsplit("  return", 1)[0]
    body += f"  %out = rlx_mir.add %y, %z : {F64(2, 3)}, {F64(2, 3)}"
    text = build({"p": ((), "i1"), "x": ((2, 3), "f64"), "w": ((2, 3), "f64")}, body, "%out", (2, 3))
    rng = np.random.default_rng(19)
    feeds = {"p": np.array(p), "x": rng.standard_normal((2, 3)), "w": rng.standard_normal((2, 3)),
             "R": rng.standard_normal((2, 3))}
    check_grad(text, feeds, ["x", "w"], vmap_args=["x"])


def test_grad_of_an_uncapped_while_is_an_error():
    body = cf1_text(None).replace("f32", "f64").replace("100.0 : f64", "100.0 : f64")
    m = rlx.parse(body.replace('-> (tensor<f64> {rlx.output = "x"}, tensor<i64> {rlx.output = "trips"})',
                               '-> (tensor<f64> {rlx.output = "x"})')
                  .replace("return %x, %trips : tensor<f64>, tensor<i64>", "return %x : tensor<f64>"))
    with pytest.raises(rlx.RlxError, match=r"rlx-mir-grad: an rlx_mir.while without max_iterations \(unbounded trips\) cannot be differentiated"):
        m.run_pipeline("rlx-mir-grad")


@pytest.mark.parametrize("text,message", [
    ("%r = rlx_mir.if %q : tensor<2xi1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n} else {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects a 0-d tensor<i1> condition, got 'tensor<2xi1>'"),
    ("%r = rlx_mir.if %p : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n} else {\n"
     "^bb0(%a: tensor<2xf32>):\n rlx_mir.yield %a : tensor<2xf32>\n}",
     r"expects its else region to take \(tensor<4xf32>\)"),
    ("%r = rlx_mir.while ins(%x : tensor<4xf32>) -> tensor<4xf32> cond {\n"
     "^bb0(%a: tensor<4xf32>):\n %c = rlx_mir.constant dense<true> : tensor<i1>\n rlx_mir.yield %c : tensor<i1>\n} do {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects results of the carry types followed by 'tensor<i64>'"),
    ("%r, %n = rlx_mir.while ins(%x : tensor<4xf32>) max_iterations = -1 -> tensor<4xf32>, tensor<i64> cond {\n"
     "^bb0(%a: tensor<4xf32>):\n %c = rlx_mir.constant dense<true> : tensor<i1>\n rlx_mir.yield %c : tensor<i1>\n} do {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects max_iterations >= 0, got -1"),
    ("%r = rlx_mir.scan init(%x : tensor<4xf32>) -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects a length when it has no xs"),
    ("%r = rlx_mir.scan init(%x : tensor<4xf32>) xs(%xs, %ys : tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects every xs to have the same leading size, got 3 and 2"),
    ("%r = rlx_mir.scan init(%x : tensor<4xf32>) xs(%xs : tensor<3x4xf32>) length = 4 -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"has length 4 but its xs have 3 steps"),
    ("%r, %s = rlx_mir.scan init(%x : tensor<4xf32>) xs(%xs : tensor<3x4xf32>) -> tensor<4xf32>, tensor<2x4xf32> {\n"
     "^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):\n rlx_mir.yield %a, %b : tensor<4xf32>, tensor<4xf32>\n}",
     r"expects per-step results with a leading size of 3 \(the steps\)"),
    ("%r = rlx_mir.scan init(%x : tensor<4xf32>) xs(%xs : tensor<3x4xf32>) -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects its body region to take \(tensor<4xf32>, tensor<4xf32>\)"),
    ("%r = rlx_mir.scan init(%x : tensor<4xf32>) xs(%xs : tensor<3x4xf32>) num_checkpoints = 2 -> tensor<4xf32> {\n"
     "^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):\n rlx_mir.yield %a : tensor<4xf32>\n}",
     r"expects num_checkpoints to divide the 3 steps, got 2"),
])
def test_verifier(text, message):
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%p: tensor<i1>, %q: tensor<2xi1>, %x: tensor<4xf32>,
    %xs: tensor<3x4xf32>, %ys: tensor<2x4xf32>) {{
  {text}
  return
}}""")


# -- torch.while_loop through torch-mlir -------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_torch_while_loop_export(device):
    """torch's while_loop HOP, exported by torch-mlir (linalg on tensors: an
    scf.while carrying its condition, reading constants from outside), runs
    as rlx_mir.while: values equal the module's own. The GPU path unrolls
    loops and torch's have no trip cap: there it is a located error.
    (torch-mlir itself refuses a loop body that reads a parameter.)"""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    from torch._higher_order_ops.while_loop import while_loop

    class Grow(torch.nn.Module):
        def forward(self, x, n):
            return while_loop(lambda x, n: x.sum() < 100.0, lambda x, n: (x * 1.5 + 1.0, n + 1), (x, n))

    module = Grow()
    x, n = torch.tensor([0.5, -0.25, 1.0]), torch.zeros((), dtype=torch.int64)
    with torch.no_grad():
        want_x, want_n = module(x, n)
    text, inputs, params = rlx.export_torch(module, x, n, output="linalg")
    assert "scf.while" in text and inputs == ["x", "n"]
    m = rlx.parse(text)
    m.run_pipeline("rlx-import-to-mir")
    assert "rlx_mir.while" in m.text() and "scf.while" not in m.text()
    feeds = {"x": x.numpy(), "n": n.numpy()}
    if device != "cpu":
        with pytest.raises(rlx.RlxError, match="without max_iterations"):
            compile_for(device, text)
        return
    got = compile_for(device, text).run(feeds)
    values = list(got.values())
    np.testing.assert_allclose(values[0], want_x.numpy(), rtol=1e-6)
    assert int(values[1]) == int(want_n) == 7
