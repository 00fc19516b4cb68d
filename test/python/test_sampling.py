"""rlx_mir.random_uniform (Philox-4x32-10) and rlx_mir.sample (temperature,
top-k, top-p, min-p, inverse CDF) against references written here: Philox
in numpy with Random123's known answers, the filtering by transformers' own
logits warpers; on cpu and emu from one test body. Sampled generation with
examples/python/generate.py against transformers' model and warpers."""
from __future__ import annotations

import numpy as np
import pytest

import rlx
from rlx import hir, mir

DEVICES = ["cpu", "emu"]
M32 = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    """Random123's philox4x32 with 10 rounds (Salmon et al., SC'11)."""
    c, k = list(ctr), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k[1]) & M32,
             p0 & M32]
    return c


def uniform_ref(seed, offset, n):
    """The words of the 64-bit two's complements of seed and offset."""
    key = [seed & M32, (seed >> 32) & M32]
    off = [offset & M32, (offset >> 32) & M32]
    return np.array([(philox4x32_10([i & M32, i >> 32, *off], key)[0] >> 8)
                     * 2.0 ** -24 for i in range(n)], np.float32)


def test_numpy_philox_gives_random123_known_answers():
    assert philox4x32_10([0] * 4, [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox4x32_10([M32] * 4, [M32, M32]) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6,
                                                    0x6D5451FD]
    assert philox4x32_10([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
                         [0xA4093822, 0x299F31D0]) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420,
                                                       0x24126EA1]


def compile_on(module, device):
    return rlx.compile_cpu(module) if device == "cpu" else rlx.gpu.compile(module, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed,offset", [(0, 0), (42, 7), ((1 << 40) + 7, (1 << 33) + 5),
                                         (-1, -(1 << 40)), ((1 << 63) - 1, -3)])
def test_random_uniform_is_philox(device, seed, offset):
    f = hir.Function("f")
    o = f.input("o", (), "i64")
    f.output("u", mir.random_uniform(o, seed=seed, shape=[4, 33]))
    got = compile_on(f.build(), device).run(o=np.array(offset, np.int64))["u"]
    np.testing.assert_array_equal(got, uniform_ref(seed, offset, 4 * 33).reshape(4, 33))


def warped_probs(logits, temperature, top_k, top_p, min_p):
    """The distribution transformers samples from: its warpers in its order."""
    import torch
    from transformers.generation.logits_process import (MinPLogitsWarper, TemperatureLogitsWarper,
                                                        TopKLogitsWarper, TopPLogitsWarper)
    x = torch.from_numpy(np.asarray(logits, np.float32).copy())
    warpers = [TemperatureLogitsWarper(temperature)]
    warpers += [TopKLogitsWarper(top_k)] if top_k else []
    warpers += [TopPLogitsWarper(top_p)] if top_p < 1 else []
    warpers += [MinPLogitsWarper(min_p)] if min_p > 0 else []
    for w in warpers:
        x = w(None, x)
    return torch.softmax(x.double(), -1).numpy()


def inverse_cdf(logits, probs, u):
    """The token where the cumulative probability, in descending-logit order
    (ties to the lower id), first exceeds u times the total."""
    out = []
    for row, p, ur in zip(logits, probs, u):
        order = np.argsort(-row, kind="stable")
        cdf = np.cumsum(p[order])
        j = min(int(np.searchsorted(cdf, ur * cdf[-1], side="right")), int((p > 0).sum()) - 1)
        out.append(order[j])
    return np.array(out)


CONFIGS = [(1.0, 0, 1.0, 0.0), (0.7, 10, 1.0, 0.0), (1.3, 0, 0.9, 0.0), (1.0, 0, 1.0, 0.1),
           (0.8, 20, 0.8, 0.05), (2.0, 1, 1.0, 0.0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "t%s-k%s-p%s-m%s" % c)
def test_sample_matches_transformers_warpers(device, config):
    temperature, top_k, top_p, min_p = config
    rng = np.random.default_rng(1)
    rows, vocab = 48, 300
    logits = (rng.standard_normal((2, rows // 2, vocab)) * 3).astype(np.float32)
    u = rng.random((2, rows // 2)).astype(np.float32)
    f = hir.Function("f")
    x, uu = f.input("x", logits.shape), f.input("u", u.shape)
    f.output("ids", mir.sample(x, uu, temperature=temperature, top_k=top_k, top_p=top_p,
                               min_p=min_p))
    got = compile_on(f.build(), device).run(x=logits, u=u)["ids"]
    flat = logits.reshape(rows, vocab)
    want = inverse_cdf(flat, warped_probs(flat, *config), u.reshape(rows))
    assert got.dtype == np.int64 and got.shape == (2, rows // 2)
    np.testing.assert_array_equal(got.reshape(rows), want)


@pytest.mark.parametrize("device", DEVICES)
def test_sample_of_bf16_logits_and_extreme_uniforms(device):
    """bf16 logits (widened to f32), u = 0 (the most likely token) and u just
    below 1 (the last kept one)."""
    import ml_dtypes
    rng = np.random.default_rng(2)
    logits = (rng.standard_normal((4, 64)) * 2).astype(ml_dtypes.bfloat16)
    u = np.array([0.0, 1 - 2.0 ** -24, 0.5, 0.25], np.float32)
    f = hir.Function("f")
    x, uu = f.input("x", (4, 64), "bf16"), f.input("u", (4,))
    f.output("ids", mir.sample(x, uu, top_k=8))
    got = compile_on(f.build(), device).run(x=logits, u=u)["ids"]
    l32 = logits.astype(np.float32)
    want = inverse_cdf(l32, warped_probs(l32, 1.0, 8, 1.0, 0.0), u)
    np.testing.assert_array_equal(got, want)
    order = np.argsort(-l32, axis=1, kind="stable")
    assert got[0] == order[0, 0] and got[1] == order[1, 7]


@pytest.mark.parametrize("device", DEVICES)
def test_sample_edges(device):
    """u = 1 (the cap at the last kept token), one token, NaN and all -inf
    rows (the first sorted id, where torch.multinomial would raise)."""
    logits = np.array([[0.5, 2.0, 1.0, -1.0], [3.0, 3.0, 0.0, 0.0],
                       [np.nan, 1.0, 0.0, 2.0], [-np.inf] * 4], np.float32)
    u = np.array([1.0, 0.0, 0.3, 0.5], np.float32)
    f = hir.Function("f")
    x, uu = f.input("x", (4, 4)), f.input("u", (4,))
    f.output("ids", mir.sample(x, uu, top_k=3))
    got = compile_on(f.build(), device).run(x=logits, u=u)["ids"]
    # Row 0 keeps 1, 2, 0 (top 3): u = 1 takes the last kept; row 1: a tie,
    # the lower id first.
    assert got[0] == 0 and got[1] == 0
    assert 0 <= got[2] < 4 and got[3] == 0
    f1 = hir.Function("g")
    x1, u1 = f1.input("x", (2, 1)), f1.input("u", (2,))
    f1.output("ids", mir.sample(x1, u1))
    one = compile_on(f1.build(), device).run(x=np.array([[5.0], [-2.0]], np.float32),
                                             u=np.array([0.9, 0.1], np.float32))["ids"]
    np.testing.assert_array_equal(one, [0, 0])


@pytest.mark.parametrize("kw,message", [
    ({"temperature": 0.0}, "temperature must be > 0"),
    ({"temperature": 1e-40}, "1/temperature an f32"),
    ({"top_k": -1}, "top_k must be >= 0"),
    ({"top_p": 0.0}, r"top_p must be in \(0, 1\]"),
    ({"min_p": 1.0}, r"min_p must be in \[0, 1\)"),
])
def test_sample_verifier(kw, message):
    f = hir.Function("f")
    x, u = f.input("x", (2, 8)), f.input("u", (2,))
    with pytest.raises(rlx.RlxError, match=message):
        mir.sample(x, u, **kw)


def test_shape_errors():
    f = hir.Function("f")
    x, u = f.input("x", (2, 8)), f.input("u", (2,))
    with pytest.raises(rlx.RlxError, match="one uniform number per row: shape 2 for logits 2x8, got 3"):
        mir.sample(x, f.input("v", (3,)))
    with pytest.raises(rlx.RlxError, match="V >= 1, got 2x0"):
        mir.sample(f.input("e", (2, 0)), u)
    with pytest.raises(rlx.RlxError, match="offset must be tensor<i64>"):
        mir.random_uniform(f.input("o", (2,), "i64"), seed=0, shape=[2])


def test_sample_batches_under_vmap():
    """rlx.vmap over a new leading axis (the op's decomposition batches)
    gives what a loop over the batch gives."""
    rng = np.random.default_rng(3)
    f = hir.Function("f")
    x, u = f.input("x", (3, 40)), f.input("u", (3,))
    f.output("ids", mir.sample(x, u, top_p=0.8))
    batched = rlx.compile_cpu(rlx.vmap(f.build(), 4, args=["x", "u"], function="f"),
                              entry="f_vmap")
    one = rlx.compile_cpu(f.build())
    xs = (rng.standard_normal((4, 3, 40)) * 2).astype(np.float32)
    us = rng.random((4, 3)).astype(np.float32)
    got = batched.run(x=xs, u=us)["ids"]
    want = np.stack([one.run(x=xs[i], u=us[i])["ids"] for i in range(4)])
    np.testing.assert_array_equal(got, want)
