"""Forward mode, Hessian-vector products and vmap (rlx.jvp, rlx.hvp,
rlx.vmap; the rlx-mir-jvp and rlx-mir-vmap passes) against numpy: a
hand-written MLP gradient and finite differences of gradients in f64, a loop
over the batch, and the same transformed functions on the CPU and on the
GPU emulator. Per-op JVP and vmap checks run with the VJP checks in
test_autodiff.py."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
import rlx
from test_autodiff import llama_layer_loss_hir, t


def mlp_text(B, D, Hd, et="f64", out="loss"):
    T = lambda *s: t(s, et)  # noqa: E731
    if out == "y":  # the network's output instead of the loss
        return f"""
func.func @f(%x: {T(B, D)} {{rlx.input = "x"}}, %w1: {T(Hd, D)} {{rlx.param = "w1"}},
    %b1: {T(Hd)} {{rlx.param = "b1"}}, %w2: {T(D, Hd)} {{rlx.param = "w2"}})
    -> ({T(B, D)} {{rlx.output = "y"}}) {{
  %h = rlx_mir.matmul %x, %w1 transpose_b : {T(B, D)}, {T(Hd, D)}
  %hb = rlx_mir.add %h, %b1 : {T(B, Hd)}, {T(Hd)}
  %a = rlx_mir.tanh %hb : {T(B, Hd)}
  %y = rlx_mir.matmul %a, %w2 transpose_b : {T(B, Hd)}, {T(D, Hd)}
  return %y : {T(B, D)}
}}
"""
    return f"""
func.func @f(%x: {T(B, D)} {{rlx.input = "x"}}, %R: {T(B, D)} {{rlx.input = "R"}},
    %w1: {T(Hd, D)} {{rlx.param = "w1"}}, %b1: {T(Hd)} {{rlx.param = "b1"}},
    %w2: {T(D, Hd)} {{rlx.param = "w2"}}) -> ({T()} {{rlx.output = "loss"}}) {{
  %h = rlx_mir.matmul %x, %w1 transpose_b : {T(B, D)}, {T(Hd, D)}
  %hb = rlx_mir.add %h, %b1 : {T(B, Hd)}, {T(Hd)}
  %a = rlx_mir.tanh %hb : {T(B, Hd)}
  %y = rlx_mir.matmul %a, %w2 transpose_b : {T(B, Hd)}, {T(D, Hd)}
  %l = rlx_mir.mul %y, %R : {T(B, D)}, {T(B, D)}
  %loss = rlx_mir.reduce sum %l axes = [0, 1] : {T(B, D)}
  return %loss : {T()}
}}
"""


def numpy_mlp_grad(x, R, w):
    """d loss / d (w1, b1, w2) of loss = Σ (tanh(x w1ᵀ + b1) w2ᵀ) · R, by hand."""
    a = np.tanh(x @ w["w1"].T + w["b1"])
    da = R @ w["w2"]
    dh = da * (1 - a * a)
    return {"w1": dh.T @ x, "b1": dh.sum(0), "w2": R.T @ a}


def fd_hvp(grad, w, v, h=1e-5):
    """(∇L(w + h v) − ∇L(w − h v)) / 2h for every parameter."""
    plus = grad({k: w[k] + h * v[k] for k in w})
    minus = grad({k: w[k] - h * v[k] for k in w})
    return {k: (plus[k] - minus[k]) / (2 * h) for k in w}


def test_hvp_of_an_mlp_matches_numpy_finite_differences():
    B, D, Hd = 4, 5, 7
    rng = np.random.default_rng(0)
    x, R = rng.standard_normal((B, D)), rng.standard_normal((B, D))
    w = {"w1": rng.standard_normal((Hd, D)) / 2, "b1": rng.standard_normal(Hd),
         "w2": rng.standard_normal((D, Hd)) / 2}
    v = {k: rng.standard_normal(a.shape) for k, a in w.items()}
    m = rlx.hvp(rlx.parse(mlp_text(B, D, Hd)), wrt=list(w), function="f")
    got = rlx.compile_cpu(m, entry="f_grad_jvp").run(
        dict(w, x=x, R=R, d_output=np.array(1.0), **{f"t_{k}": a for k, a in v.items()}))
    want = fd_hvp(lambda p: numpy_mlp_grad(x, R, p), w, v)
    for k in w:
        # The gradient itself, and H·v (f64 differences: ~h² truncation).
        np.testing.assert_allclose(got[f"d_{k}"], numpy_mlp_grad(x, R, w)[k], rtol=1e-12,
                                   atol=1e-12)
        scale = max(1.0, np.abs(want[k]).max())
        np.testing.assert_allclose(got[f"t_d_{k}"], want[k], rtol=0, atol=1e-7 * scale, err_msg=k)


def test_hvp_of_an_attention_layer_matches_finite_differences_of_its_gradient():
    """A Llama layer (attention, RoPE, norms, SwiGLU): H·v along every weight
    at once against central differences of the gradient function."""
    S, D, H, KV, HD, F, eps = 4, 16, 4, 2, 4, 24, 1e-5
    rng = np.random.default_rng(1)
    shapes = {"n1": (D,), "wq": (H * HD, D), "wk": (KV * HD, D), "wv": (KV * HD, D),
              "wo": (D, H * HD), "n2": (D,), "wg": (F, D), "wu": (F, D), "wd": (D, F)}
    w = {k: rng.standard_normal(s) * (0.3 if len(s) == 2 else 1.0) for k, s in shapes.items()}
    cos, sin = (a.astype(np.float64) for a in ref.rope_tables(np.arange(S), HD, 10000.0))
    data = dict(x=rng.standard_normal((1, S, D)), R=rng.standard_normal((1, S, D)), cos=cos,
                sin=sin, d_output=np.array(1.0))
    v = {k: rng.standard_normal(s) for k, s in shapes.items()}
    m = rlx.hvp(rlx.parse(llama_layer_loss_hir(S, D, H, KV, HD, F, eps)), wrt=list(shapes),
                function="f")
    got = rlx.compile_cpu(m, entry="f_grad_jvp").run(
        dict(w, **data, **{f"t_{k}": a for k, a in v.items()}))
    grad_fn = rlx.compile_cpu(m, entry="f_grad")

    def grad(p):
        grad_fn.invalidate_packed_params()
        out = grad_fn.run(dict(p, **data))
        return {k: out[f"d_{k}"] for k in p}

    want = fd_hvp(grad, w, v)
    for k in shapes:
        scale = max(1.0, np.abs(want[k]).max())
        np.testing.assert_allclose(got[f"t_d_{k}"], want[k], rtol=0, atol=1e-6 * scale, err_msg=k)


def test_vmap_over_the_middle_axis_and_shared_parameters():
    """Default args batch the input x and share the parameters; axis=1 in
    the input and in the output."""
    B, D, Hd, N = 4, 5, 7, 3
    rng = np.random.default_rng(2)
    w = {"w1": rng.standard_normal((Hd, D)), "b1": rng.standard_normal(Hd),
         "w2": rng.standard_normal((D, Hd))}
    xs = rng.standard_normal((B, N, D))
    m = rlx.vmap(rlx.parse(mlp_text(B, D, Hd, out="y")), N, axis=1, function="f")
    assert "func.func @f_vmap(%arg0: tensor<4x3x5xf64>" in m.text()
    got = rlx.compile_cpu(m, entry="f_vmap").run(dict(w, x=xs))["y"]
    want = np.stack([np.tanh(xs[:, i] @ w["w1"].T + w["b1"]) @ w["w2"].T for i in range(N)], 1)
    assert got.shape == (B, N, D)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_transforms_compose_vmap_of_jvp():
    """Per-example directional derivatives: vmap over the tangent of f_jvp."""
    B, D, Hd, N = 2, 3, 4, 5
    rng = np.random.default_rng(3)
    w = {"w1": rng.standard_normal((Hd, D)), "b1": rng.standard_normal(Hd),
         "w2": rng.standard_normal((D, Hd))}
    x, R = rng.standard_normal((B, D)), rng.standard_normal((B, D))
    tx = rng.standard_normal((N, B, D))
    m = rlx.jvp(rlx.parse(mlp_text(B, D, Hd)), wrt=["x"], function="f")
    m = rlx.vmap(m, N, args=["t_x"], function="f_jvp")
    got = rlx.compile_cpu(m, entry="f_jvp_vmap").run(dict(w, x=x, R=R, t_x=tx))
    # d loss = Σ R · (tanh'(·) ⊙ (t_x w1ᵀ)) w2ᵀ, per tangent.
    a = np.tanh(x @ w["w1"].T + w["b1"])
    want = [np.sum(((1 - a * a) * (tx[i] @ w["w1"].T)) @ w["w2"].T * R) for i in range(N)]
    np.testing.assert_allclose(got["t_loss"], want, rtol=1e-12)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_jvp_and_vmap_run_on_every_device(device):
    """The transformed functions are ordinary MIR: the same f32 module runs
    on the CPU and the GPU emulator (sm_90a)."""
    B, D, Hd, N = 4, 8, 16, 3
    rng = np.random.default_rng(4)
    w = {"w1": rng.standard_normal((Hd, D)).astype(np.float32) / 3,
         "b1": rng.standard_normal(Hd).astype(np.float32),
         "w2": rng.standard_normal((D, Hd)).astype(np.float32) / 3}
    x = rng.standard_normal((B, D)).astype(np.float32)
    R = rng.standard_normal((B, D)).astype(np.float32)
    tw = rng.standard_normal((Hd, D)).astype(np.float32)
    xs = rng.standard_normal((N, B, D)).astype(np.float32)
    base = rlx.parse(mlp_text(B, D, Hd, "f32"))

    def run(m, entry, inputs):
        if device == "cpu":
            return rlx.compile_cpu(m, entry=entry).run(inputs)
        return rlx.gpu.compile(m, device="emu").run(inputs)  # entry: the last function

    a = np.tanh(x.astype(np.float64) @ w["w1"].T + w["b1"])
    tangent = np.sum(((1 - a * a) * (x @ tw.T)) @ w["w2"].T * R)
    got = run(rlx.jvp(base, wrt=["w1"], function="f"), "f_jvp", dict(w, x=x, R=R, t_w1=tw))
    np.testing.assert_allclose(got["t_loss"], tangent, rtol=1e-4, atol=1e-4 * abs(tangent))

    want = [np.sum((np.tanh(xs[i] @ w["w1"].T + w["b1"]) @ w["w2"].T) * R) for i in range(N)]
    got = run(rlx.vmap(base, N, args=["x"], function="f"), "f_vmap", dict(w, x=xs, R=R))
    np.testing.assert_allclose(got["loss"], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("pipeline, message", [
    ("rlx-mir-vmap", "batch-size must be positive (got 0)"),
    ("rlx-mir-vmap{batch-size=2 axis=3 args=e}", "axis 3 is outside [-3, 2] for argument 'e'"),
    ("rlx-mir-vmap{batch-size=2 args=nope}", "no tensor argument named 'nope' (args)"),
    ("rlx-mir-jvp{wrt=ids}", "argument 'ids' is not a floating-point tensor"),
])
def test_transform_errors_are_diagnostics(pipeline, message):
    m = rlx.parse(f"""func.func @f(%e: {t((7, 4))} {{rlx.input = "e"}},
        %ids: {t((3,), 'i64')} {{rlx.input = "ids"}}) -> {t((3, 4))} {{
      %y = rlx_mir.gather %e[%ids] : {t((7, 4))}, {t((3,), 'i64')}
      return %y : {t((3, 4))}
    }}""")
    with pytest.raises(rlx.RlxError) as e:
        m.run_pipeline(pipeline)
    assert message in str(e.value)


def test_jvp_of_a_prod_reduction_is_a_diagnostic():
    m = rlx.parse(f"""func.func @f(%x: {t((3, 4))} {{rlx.input = "x"}}) -> {t((3,))} {{
      %y = rlx_mir.reduce prod %x axes = [1] : {t((3, 4))}
      return %y : {t((3,))}
    }}""")
    with pytest.raises(rlx.RlxError) as e:
        rlx.jvp(m)
    assert "no forward-mode rule for 'rlx_mir.reduce': prod reductions are not differentiated" \
        in str(e.value)


KINKS = {
    # op text, d op / dx as torch defines it at the kinks (x = 0, ties)
    "relu": ("rlx_mir.relu %x : {T}", lambda x: (x > 0).astype(np.float64)),
    "abs": ("rlx_mir.abs %x : {T}", np.sign),
    "max_of_itself": ("rlx_mir.max %x, %x : {T}, {T}", np.ones_like),
    "square": ("rlx_mir.pow %x, %two : {T}, tensor<f64>", lambda x: 2 * x),
    "power_zero": ("rlx_mir.pow %x, %zero : {T}, tensor<f64>", np.zeros_like),
    "zero_base": ("rlx_mir.pow %zeros, %x : {T}, {T}", np.zeros_like),
}


@pytest.mark.parametrize("case", list(KINKS))
def test_derivatives_at_kinks_follow_torch(case):
    """relu'(0) = 0, abs'(0) = 0, max(x, x)' = 1, d/dx x² at 0, d/dx x⁰ = 0
    (also at 0), d/de 0^e = 0 for e ≥ 0: no NaN from 0·inf, in both modes."""
    x = np.array([0.0, 1.0, 0.5, 2.0]) if case == "zero_base" else np.array([0.0, 1.0, -1.0, 2.0])
    T = t((4,))
    op, deriv = KINKS[case]
    text = f"""func.func @f(%x: {T} {{rlx.input = "x"}}) -> (tensor<f64> {{rlx.output = "loss"}}) {{
      %two = rlx_mir.constant dense<2.0> : tensor<f64>
      %zero = rlx_mir.constant dense<0.0> : tensor<f64>
      %zeros = rlx_mir.constant dense<0.0> : {T}
      %y = {op.format(T=T)}
      %l = rlx_mir.reduce sum %y axes = [0] : {T}
      return %l : tensor<f64>
    }}"""
    m = rlx.jvp(rlx.vjp(rlx.parse(text), wrt=["x"], function="f"), wrt=["x"], function="f")
    g = rlx.compile_cpu(m, entry="f_grad").run(x=x, d_output=np.array(1.0))["d_x"]
    np.testing.assert_array_equal(g, deriv(x))
    v = np.array([1.0, -2.0, 3.0, 0.5])
    tl = rlx.compile_cpu(m, entry="f_jvp").run(x=x, t_x=v)["t_loss"]
    assert float(tl) == float(np.sum(deriv(x) * v))


def test_vmap_of_batched_tables_unbatched_pieces_and_a_batched_weight():
    """RoPE with per-entry tables on a shared input, a concat with a shared
    parameter, a reshape with -1 and a matmul whose weight alone is batched."""
    T = lambda *s: t(s)  # noqa: E731
    text = f"""func.func @f(%x: {T(1, 4, 8)} {{rlx.input = "x"}},
        %cos: {T(4, 2)} {{rlx.input = "cos"}}, %sin: {T(4, 2)} {{rlx.input = "sin"}},
        %w: {T(16, 3)} {{rlx.input = "w"}}, %p: {T(1, 4, 8)} {{rlx.param = "p"}}) -> {T(4, 3)} {{
      %r = rlx_mir.rope %x, %cos, %sin head_dim = 4 : {T(1, 4, 8)}, {T(4, 2)}, {T(4, 2)}
      %c = rlx_mir.concat %r, %p axis = -1 : {T(1, 4, 8)}, {T(1, 4, 8)}
      %s = rlx_mir.reshape %c [4, -1] : {T(1, 4, 16)}
      %m = rlx_mir.matmul %s, %w : {T(4, 16)}, {T(16, 3)}
      return %m : {T(4, 3)}
    }}"""
    rng = np.random.default_rng(6)
    N = 3
    base = {"x": rng.standard_normal((1, 4, 8)), "p": rng.standard_normal((1, 4, 8))}
    batched = {"cos": rng.standard_normal((N, 4, 2)), "sin": rng.standard_normal((N, 4, 2)),
               "w": rng.standard_normal((N, 16, 3))}
    m = rlx.vmap(rlx.parse(text), N, args=["cos", "sin", "w"], function="f")
    got = rlx.compile_cpu(m, entry="f_vmap").run(dict(base, **batched))["result0"]
    fwd = rlx.compile_cpu(m, entry="f")
    want = np.stack([fwd.run(dict(base, **{k: v[i] for k, v in batched.items()}))["result0"]
                     for i in range(N)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
