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


def kept_distribution(device, logits, **kw):
    """The distribution sample draws from for one row of logits, read back by
    the inverse CDF over a grid of 4096 uniform numbers: token -> share."""
    n = 4096
    f = hir.Function("f")
    x, uu = f.input("x", (n, len(logits))), f.input("u", (n,))
    f.output("ids", mir.sample(x, uu, **kw))
    u = ((np.arange(n) + 0.5) / n).astype(np.float32)
    got = compile_on(f.build(), device).run(
        x=np.tile(np.asarray(logits, np.float32), (n, 1)), u=u)["ids"]
    return np.bincount(got, minlength=len(logits)) / n


S1_P = [0.5, 0.25, 0.125, 0.0625, 0.0625]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [
    # ../shared/cases S1: top-p keeps a token while the mass before it is < top_p.
    (dict(top_p=1e-8), S1_P, [1, 0, 0, 0, 0]),
    (dict(top_p=0.5), S1_P, [1, 0, 0, 0, 0]),
    (dict(top_p=0.6), S1_P, [2 / 3, 1 / 3, 0, 0, 0]),
    (dict(top_p=0.75), S1_P, [2 / 3, 1 / 3, 0, 0, 0]),
    (dict(top_p=0.8), S1_P, [4 / 7, 2 / 7, 1 / 7, 0, 0]),
    (dict(top_p=0.95), S1_P, S1_P),
    (dict(top_p=1.0), S1_P, S1_P),
    # S2: the top-k filter keeps ties at the k-th value; min-p.
    (dict(top_k=2), np.exp([3, 1, 3, 2, 3]), [1 / 3, 0, 1 / 3, 0, 1 / 3]),
    (dict(top_k=1, temperature=0.7), np.exp([3, 1, 3, 2, 3]), [1 / 3, 0, 1 / 3, 0, 1 / 3]),
    (dict(min_p=0.3), S1_P, [2 / 3, 1 / 3, 0, 0, 0]),
    # S5: temperature before the filters.
    (dict(temperature=0.5, top_p=0.85), np.exp([2, 1, 0]), [1, 0, 0]),
], ids=lambda c: "-".join("%s%s" % kv for kv in c[0].items()))
def test_sampling_field_cases(device, case):
    kw, p, want = case
    got = kept_distribution(device, np.log(np.asarray(p, np.float64)), **kw)
    # Exactly the kept set; shares within the grid's resolution.
    np.testing.assert_array_equal(got > 0, np.asarray(want) > 0)
    np.testing.assert_allclose(got, want, atol=2 / 4096)


@pytest.mark.parametrize("device", DEVICES)
def test_temperature_zero_is_greedy(device):
    """S5: T = 0 takes the first largest logit, for any filter, with no NaN."""
    logits = np.array([[1, 5, 5, 2], [0, 0, 0, 0], [-np.inf, -1, -np.inf, -2]], np.float32)
    u = np.array([0.99, 0.5, 0.0], np.float32)
    for kw in [{}, dict(top_k=3), dict(top_p=0.1), dict(top_k=1, top_p=0.5, min_p=0.9)]:
        f = hir.Function("f")
        x, uu = f.input("x", logits.shape), f.input("u", (3,))
        f.output("ids", mir.sample(x, uu, temperature=0.0, **kw))
        got = compile_on(f.build(), device).run(x=logits, u=u)["ids"]
        np.testing.assert_array_equal(got, [1, 0, 1])


CHI_SETTINGS = [dict(), dict(temperature=0.6), dict(temperature=1.5, top_k=5),
                dict(top_p=0.7), dict(top_k=8, top_p=0.9, min_p=0.05), dict(min_p=0.2)]


@pytest.mark.parametrize("kw", CHI_SETTINGS, ids=lambda kw: "-".join(
    "%s%s" % kv for kv in kw.items()) or "plain")
def test_sampled_distribution_chi_square(kw):
    """100,000 tokens drawn with rlx_mir.random_uniform's numbers follow the
    distribution transformers' warpers leave (chi-square, p > 0.001), and
    no filtered-out token is ever drawn; the emulator draws the same tokens
    as the CPU for the same seed (on a prefix, for time)."""
    from scipy.stats import chisquare
    n, vocab = 100_000, 12
    logits = np.random.default_rng(5).standard_normal(vocab).astype(np.float32) * 1.5
    probs = warped_probs(logits[None], kw.get("temperature", 1.0), kw.get("top_k", 0),
                         kw.get("top_p", 1.0), kw.get("min_p", 0.0))[0]

    def draw(rows, device):
        f = hir.Function("f")
        x, off = f.input("x", (rows, vocab)), f.input("offset", (), "i64")
        f.output("ids", mir.sample(x, mir.random_uniform(off, seed=1234, shape=[rows]), **kw))
        return compile_on(f.build(), device).run(
            x=np.tile(logits, (rows, 1)), offset=np.array(0, np.int64))["ids"]

    ids = draw(n, "cpu")
    counts = np.bincount(ids, minlength=vocab)
    kept = probs > 0
    assert counts[~kept].sum() == 0
    p = chisquare(counts[kept], probs[kept] / probs[kept].sum() * n).pvalue
    assert p > 1e-3, (counts, probs * n)
    np.testing.assert_array_equal(draw(512, "emu"), ids[:512])


@pytest.mark.parametrize("kw,message", [
    ({"temperature": -1.0}, "temperature must be >= 0"),
    ({"temperature": float("inf")}, "temperature must be >= 0 and finite"),
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


@pytest.mark.parametrize("config", [(0.7, 50, 1.0, 0.0), (1.0, 0, 0.9, 0.0), (0.8, 0, 1.0, 0.05)],
                         ids=lambda c: "t%s-k%s-p%s-m%s" % c)
def test_sample_of_a_real_vocabulary_on_the_cpu(config):
    """Llama-3's 128,256-token vocabulary on the CPU path (the runtime's
    sort, not topk's quadratic linalg form, which the emulator's generic path
    runs: too slow there at this size): the tokens of the inverse CDF of
    transformers' warped distribution."""
    temperature, top_k, top_p, min_p = config
    rng = np.random.default_rng(11)
    rows, vocab = 4, 128_256
    logits = (rng.standard_normal((rows, vocab)) * 4).astype(np.float32)
    u = rng.random(rows).astype(np.float32)
    f = hir.Function("f")
    x, uu = f.input("x", logits.shape), f.input("u", u.shape)
    f.output("ids", mir.sample(x, uu, temperature=temperature, top_k=top_k, top_p=top_p,
                               min_p=min_p))
    got = compile_on(f.build(), "cpu").run(x=logits, u=u)["ids"]
    want = inverse_cdf(logits, warped_probs(logits, *config), u)
    np.testing.assert_array_equal(got, want)
