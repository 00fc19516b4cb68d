"""rlx_mir.gated_delta_rule (Gated DeltaNet's linear attention) against the
recurrence written here in numpy (f64, step by step, as
flash-linear-attention's fused_recurrent_gated_delta_rule and transformers'
torch_recurrent_gated_delta_rule), on the CPU path and the emulator from one
body: every chunk size (dividing the sequence or not) equals the recurrence,
with and without the q/k l2 normalization, an initial state and a scale; a
prefill split in pieces with the state carried equals one pass;
transformers' own chunked and recurrent torch forms agree; derivatives by
finite differences (reverse, forward, vmap)."""
import numpy as np
import pytest

import rlx

from test_quant_int8 import DEVICES, compile_for, tensor


def rule_text(b, length, h, dk, dv, *, state=True, l2norm=True, chunk=None, scale=None, et="f32"):
    """@f(q, k, v, g, beta[, state]) -> (o, state)."""
    shapes = {"q": (b, length, h, dk), "k": (b, length, h, dk), "v": (b, length, h, dv),
              "g": (b, length, h), "beta": (b, length, h), "state": (b, h, dk, dv)}
    names = ["q", "k", "v", "g", "beta"] + (["state"] if state else [])
    args = ", ".join(f'%{k}: {tensor(shapes[k], et)} {{rlx.input = "{k}"}}' for k in names)
    op = "rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta"
    op += f" state(%state : {tensor(shapes['state'], et)})" if state else ""
    op += " use_qk_l2norm" if l2norm else ""
    op += f" scale = {scale!r}" if scale else ""
    op += f" chunk_size = {chunk}" if chunk else ""
    ot, st = tensor((b, length, h, dv), et), tensor(shapes["state"], et)
    types = ", ".join(tensor(shapes[k], et) for k in ("q", "k", "v", "g", "beta"))
    return f"""func.func @f({args}) -> ({ot} {{rlx.output = "o"}}, {st} {{rlx.output = "state"}}) {{
  %o, %s = {op} : {types}
  return %o, %s : {ot}, {st}
}}"""


def reference(q, k, v, g, beta, state=None, l2norm=True, scale=None):
    """The recurrence, one step at a time, in f64."""
    q, k, v, g, beta = (np.asarray(x, np.float64) for x in (q, k, v, g, beta))
    if l2norm:
        q = q / np.sqrt((q * q).sum(-1, keepdims=True) + 1e-6)
        k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
    q = q * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    b, length, h, dk = q.shape
    s = np.zeros((b, h, dk, v.shape[-1])) if state is None else np.asarray(state, np.float64).copy()
    outs = []
    for t in range(length):
        s = s * np.exp(g[:, t])[:, :, None, None]
        remembered = np.einsum("bhkv,bhk->bhv", s, k[:, t])
        s = s + np.einsum("bhk,bhv->bhkv", k[:, t], beta[:, t, :, None] * (v[:, t] - remembered))
        outs.append(np.einsum("bhkv,bhk->bhv", s, q[:, t]))
    return np.stack(outs, 1), s


def random_inputs(rng, b, length, h, dk, dv):
    return {"q": rng.standard_normal((b, length, h, dk)), "k": rng.standard_normal((b, length, h, dk)),
            "v": rng.standard_normal((b, length, h, dv)),
            "g": -np.abs(rng.standard_normal((b, length, h))) * 0.5,
            "beta": 1 / (1 + np.exp(-rng.standard_normal((b, length, h)))),
            "state": rng.standard_normal((b, h, dk, dv)) * 0.5}


def f32(feeds):
    return {k: np.asarray(v, np.float32) for k, v in feeds.items()}


def close(got, want):
    for key, w in zip(("o", "state"), want):
        np.testing.assert_allclose(got[key], w, rtol=1e-4, atol=1e-4 * np.abs(w).max(), err_msg=key)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 3, 4, 16, None])
def test_every_chunk_size_equals_the_recurrence(device, chunk):
    """L = 13: chunks of 1 (the recurrence), 3 and 4 (the last padded), 16
    (one chunk) and the default."""
    rng = np.random.default_rng(chunk or 0)
    shape = (2, 13, 3, 4, 5)
    x = random_inputs(rng, *shape)
    got = compile_for(device, rule_text(*shape, chunk=chunk)).run(**f32(x))
    close(got, reference(**x))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [64, 48])
def test_aligned_keys_and_slow_decay_stay_accurate(device, chunk):
    """The regime that breaks an inverse of (I − A) by powers of A: keys
    sharing one direction (β·kᵢ·kⱼ ≈ 1), β near 1, almost no decay, one
    chunk of 64 (and of 48, not a power of two) over 64 steps. T is bounded
    while A^32 is ~1e17: the blocked substitution must match the
    recurrence."""
    rng = np.random.default_rng(21)
    b, length, h, dk, dv = 1, 64, 2, 16, 8
    x = random_inputs(rng, b, length, h, dk, dv)
    common = rng.standard_normal(dk)
    x["k"] = common + 0.05 * rng.standard_normal((b, length, h, dk))
    x["beta"] = 0.9 + 0.09 * rng.random((b, length, h))
    x["g"] = -0.001 * rng.random((b, length, h))
    got = compile_for(device, rule_text(b, length, h, dk, dv, chunk=chunk)).run(**f32(x))
    close(got, reference(**x))


@pytest.mark.parametrize("device", DEVICES)
def test_without_normalization_state_and_with_a_scale(device):
    rng = np.random.default_rng(3)
    shape = (1, 7, 2, 3, 4)
    x = random_inputs(rng, *shape)
    del x["state"]
    x["q"] *= 0.3
    x["k"] *= 0.3  # the delta rule without normalized keys stays bounded for small keys
    got = compile_for(device, rule_text(*shape, state=False, l2norm=False, chunk=4,
                                        scale=0.7)).run(**f32(x))
    close(got, reference(**x, l2norm=False, scale=0.7))


@pytest.mark.parametrize("device", DEVICES)
def test_split_prefill_and_decode_equal_one_pass(device):
    """A prefill of 5, then 4, then two decode steps (L = 1), the state
    carried, equals one pass over all 11."""
    rng = np.random.default_rng(5)
    b, h, dk, dv = 1, 2, 4, 3
    x = random_inputs(rng, b, 11, h, dk, dv)
    whole = compile_for(device, rule_text(b, 11, h, dk, dv, chunk=4)).run(**f32(x))
    state, outs = f32(x)["state"], []
    for lo, hi in [(0, 5), (5, 9), (9, 10), (10, 11)]:
        piece = {k: np.ascontiguousarray(v[:, lo:hi]) if k != "state" else v for k, v in x.items()}
        out = compile_for(device, rule_text(b, hi - lo, h, dk, dv, chunk=4)).run(
            **f32({**piece, "state": state}))
        outs.append(out["o"])
        state = out["state"]
    scale = np.abs(whole["o"]).max()
    np.testing.assert_allclose(np.concatenate(outs, 1), whole["o"], rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(state, whole["state"], rtol=1e-5, atol=1e-5 * np.abs(state).max())


def test_transformers_torch_forms_agree():
    """transformers' torch_chunk_gated_delta_rule (chunk 4 over 10 steps) and
    torch_recurrent_gated_delta_rule give the op's output and final state."""
    torch = pytest.importorskip("torch")
    from transformers.models.qwen3_next import modeling_qwen3_next as qn
    rng = np.random.default_rng(9)
    shape = (2, 10, 3, 4, 5)
    x = f32(random_inputs(rng, *shape))
    t = {k: torch.from_numpy(v) for k, v in x.items()}
    got = compile_for("cpu", rule_text(*shape, chunk=4)).run(**x)
    for fn, kw in ((qn.torch_chunk_gated_delta_rule, {"chunk_size": 4}),
                   (qn.torch_recurrent_gated_delta_rule, {})):
        o, s = fn(t["q"], t["k"], t["v"], t["g"], t["beta"], initial_state=t["state"],
                  output_final_state=True, use_qk_l2norm_in_kernel=True, **kw)
        close(got, (o.numpy(), s.numpy()))


def test_derivatives_and_vmap():
    """Reverse and forward mode through the chunked decomposition (chunks of
    2 over L = 5: a padded chunk, the forward substitution and the chunk
    loop) against central differences (f64) in every operand; vmap over v."""
    from test_autodiff import build, check_grad
    b, length, h, dk, dv = 1, 5, 2, 3, 2
    t = lambda *s: tensor(s, "f64")  # noqa: E731
    body = (f"  %o, %st = rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta state(%s : {t(b, h, dk, dv)}) "
            f"use_qk_l2norm chunk_size = 2 : {t(b, length, h, dk)}, {t(b, length, h, dk)}, "
            f"{t(b, length, h, dv)}, {t(b, length, h)}, {t(b, length, h)}")
    shapes = {"q": (b, length, h, dk), "k": (b, length, h, dk), "v": (b, length, h, dv),
              "g": (b, length, h), "beta": (b, length, h), "s": (b, h, dk, dv)}
    text = build({k: (s, "f64") for k, s in shapes.items()}, body, "%o", (b, length, h, dv))
    rng = np.random.default_rng(11)
    feeds = {k: rng.standard_normal(s) for k, s in shapes.items()}
    feeds["g"] = -np.abs(feeds["g"]) * 0.5
    feeds["beta"] = 1 / (1 + np.exp(-feeds["beta"]))
    feeds["R"] = rng.standard_normal((b, length, h, dv))
    check_grad(text, feeds, list(shapes), vmap_args=["v"])  # jvp and vmap too


@pytest.mark.parametrize("change,message", [
    ({"q": "2x5x4"}, r"needs query \[B, L, H, Dk\]"),
    ({"k": "2x5x4x2"}, r"key must be \[B, L, H, Dk\] = \[2, 5, 4, 3\]"),
    ({"g": "2x5x3"}, r"g must be \[B, L, H\] = \[2, 5, 4\]"),
    ({"beta": "2x4x4"}, r"beta must be \[B, L, H\] = \[2, 5, 4\]"),
    ({"extra": "chunk_size = 0"}, r"chunk_size must be >= 1"),
    ({"extra": "scale = -1.0"}, r"scale must be positive and finite"),
])
def test_verifier(change, message):
    ty = {"q": "2x5x4x3", "k": "2x5x4x3", "v": "2x5x4x6", "g": "2x5x4", "beta": "2x5x4", **change}
    extra = ty.pop("extra", "")
    ts = {k: f"tensor<{v}xf32>" for k, v in ty.items()}
    with pytest.raises(rlx.RlxError, match=message):
        rlx.parse(f"""func.func @f(%q: {ts['q']}, %k: {ts['k']}, %v: {ts['v']}, %g: {ts['g']},
      %beta: {ts['beta']}) {{
  %o, %s = rlx_mir.gated_delta_rule %q, %k, %v, %g, %beta {extra} : {ts['q']}, {ts['k']}, {ts['v']}, {ts['g']}, {ts['beta']}
  return
}}""")
