"""Split-KV attention (issue 17): rlx_mir.attention_partial (per-split
outputs and natural-log LSEs) and rlx_mir.attention_combine on the CPU path
and on the GPU kernels under the emulator, against numpy written here; case
G1 of ../shared/cases (empty splits, the LSE base), and rlx-mir-split-kv's
rewrite matching plain attention."""
from __future__ import annotations

import numpy as np
import pytest

import reference
from gpu_harness import from_bf16_bits, run_gpu, to_bf16_bits
from harness import assert_close, assert_rejected, run_mlir, scaled_tolerance


def t(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def run(backend, text, inputs, flags=()):
    if backend == "cpu":
        return run_mlir(text, inputs)
    return run_gpu(text, inputs, flags=list(flags))


def combine_module(N, B, H, Sq, Dv, out_dtype="f32", layout="bsd"):
    out = {"bsd": (B, Sq, H * Dv), "bshd": (B, Sq, H, Dv), "bhsd": (B, H, Sq, Dv)}[layout]
    lay = "" if layout == "bsd" else f" layout {layout}"
    ot, lt, rt = t((N, B, H, Sq, Dv)), t((N, B, H, Sq)), t(out, out_dtype)
    return f"""func.func @f(%o: {ot} {{rlx.input = "o"}}, %l: {lt} {{rlx.input = "l"}}) -> {rt} {{
  %y = rlx_mir.attention_combine %o, %l{lay} : {ot}, {lt} -> {rt}
  return %y : {rt}
}}"""


def numpy_partial(q, k, v, scale, splits):
    """One head: q [Sq, D], k [Sk, D], v [Sk, Dv]; splits as (lo, hi)."""
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    outs, lses = [], []
    for lo, hi in splits:
        if hi <= lo:
            outs.append(np.zeros((q.shape[0], v.shape[1])))
            lses.append(np.full(q.shape[0], -np.inf))
            continue
        x = s[:, lo:hi]
        m = x.max(1, keepdims=True)
        p = np.exp(x - m)
        outs.append(p @ v[lo:hi] / p.sum(1, keepdims=True))
        lses.append(m[:, 0] + np.log(p.sum(1)))
    return np.stack(outs), np.stack(lses)


G1_Q = np.array([[1, 0, 1, 0]], np.float32)
G1_K = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 1]], np.float32)
G1_V = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [0, 0, 0, 0]],
                np.float32)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_g1_combine_with_empty_partials(backend):
    """G1: the four splits [0,0), [0,2), [2,5), [5,5) of one head merge to
    the single-pass result; the partials themselves are the case's figures."""
    o, lse = numpy_partial(G1_Q, G1_K, G1_V, 0.5, [(0, 0), (0, 2), (2, 5), (5, 5)])
    np.testing.assert_allclose(o[1, 0], [2.5101627, 3.5101627, 4.5101627, 5.5101627], rtol=1e-6)
    np.testing.assert_allclose(lse[1:3, 0], [0.9740770, 1.6802697], rtol=1e-6)
    inputs = {"o": o.reshape(4, 1, 1, 1, 4).astype(np.float32),
              "l": lse.reshape(4, 1, 1, 1).astype(np.float32)}
    y = run(backend, combine_module(4, 1, 1, 1, 4), inputs)["result0"]
    np.testing.assert_allclose(y[0, 0], [4.3024449, 4.9633263, 5.6242076, 6.2850889], rtol=1e-5)
    # Every split empty: 0, never NaN.
    y = run(backend, combine_module(2, 1, 1, 1, 4),
            {"o": np.zeros((2, 1, 1, 1, 4), np.float32),
             "l": np.full((2, 1, 1, 1), -np.inf, np.float32)})["result0"]
    np.testing.assert_array_equal(y, np.zeros((1, 1, 4), np.float32))


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_attention_partial_g1_and_an_empty_tail(backend, dtype):
    """G1 through attention_partial itself: 5 keys in 3 splits of 2 ([0,2),
    [2,4), [4,5)) and 7 splits (the last two empty: lse −inf, output 0)."""
    for splits in (3, 7):
        qt, kt = t((1, 1, 4), dtype), t((1, 5, 4), dtype)
        pt, lt = t((splits, 1, 1, 1, 4)), t((splits, 1, 1, 1))
        text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> ({pt} {{rlx.output = "o"}}, {lt} {{rlx.output = "lse"}}) {{
  %o, %l = rlx_mir.attention_partial %q, %k, %v heads = 1, kv_heads = 1, head_dim = 4 scale = 5.000000e-01 kv_splits = {splits} : {qt}, {kt}, {kt}
  return %o, %l : {pt}, {lt}
}}"""
        out = run(backend, text, {"q": G1_Q[None], "k": G1_K[None], "v": G1_V[None]})
        c = -(-5 // splits)
        ranges = [(min(5, s * c), min(5, (s + 1) * c)) for s in range(splits)]
        o, lse = numpy_partial(G1_Q, G1_K, G1_V, 0.5, ranges)
        tol = dict(rtol=1e-5, atol=1e-5) if dtype == "f32" else dict(rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(out["o"].reshape(splits, 4), o[:, 0], **tol)
        np.testing.assert_array_equal(np.isinf(out["lse"].reshape(-1)), np.isinf(lse[:, 0]))
        fin = np.isfinite(lse[:, 0])
        np.testing.assert_allclose(out["lse"].reshape(-1)[fin], lse[fin, 0], **tol)


@pytest.mark.parametrize("layout", ["bsd", "bshd", "bhsd"])
def test_combine_layouts_on_cpu_and_gpu(layout):
    rng = np.random.default_rng(3)
    N, B, H, Sq, Dv = 3, 2, 4, 5, 16
    o = rng.standard_normal((N, B, H, Sq, Dv)).astype(np.float32)
    lse = rng.standard_normal((N, B, H, Sq)).astype(np.float32)
    lse[1, 0, 2] = -np.inf  # an empty split of some rows
    w = np.exp(lse - lse.max(0))
    ref = (w[..., None] * o).sum(0) / w.sum(0)[..., None]  # [B, H, Sq, Dv]
    ref = {"bhsd": ref, "bshd": ref.transpose(0, 2, 1, 3),
           "bsd": ref.transpose(0, 2, 1, 3).reshape(B, Sq, H * Dv)}[layout]
    for backend in ("cpu", "gpu"):
        y = run(backend, combine_module(N, B, H, Sq, Dv, "bf16", layout), {"o": o, "l": lse})
        assert_close(y["result0"], ref, "bf16")


def decode_module(B, Sq, Sk, H, KV, D, dtype="bf16", attrs="causal"):
    qt, kt = t((B, Sq, H * D), dtype), t((B, Sk, KV * D), dtype)
    return f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> {qt} {{
  %o = rlx_mir.attention %q, %k, %v heads = {H}, kv_heads = {KV}, head_dim = {D} {attrs} : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""


def bf16(a):
    return from_bf16_bits(to_bf16_bits(np.asarray(a, np.float32)))


def kernels_of(text, flags):
    import pathlib
    import tempfile
    from gpu_harness import compile_artifact
    with tempfile.TemporaryDirectory() as tmp:
        m = compile_artifact(text, pathlib.Path(tmp) / "art", flags=["--no-emulator", *flags])
        return [k["name"] for k in m["kernels"]]


@pytest.mark.parametrize("flags,split", [([], True), (["--kv-splits", "7"], True),
                                         (["--kv-splits", "1"], False)])
def test_decode_split_kv_on_flash_matches_numpy(flags, split):
    """A Llama-3.1-8B-shaped decode step (32 query heads, 8 kv heads,
    head_dim 128, 1000 cached keys, batch 2): the heuristic splits it for
    sm_90a's 132 SMs (partial on the flash kernel + combine), forced 7
    splits, and no split, all equal to numpy."""
    B, Sq, Sk, H, KV, D = 2, 1, 1000, 32, 8, 128
    text = decode_module(B, Sq, Sk, H, KV, D)
    names = kernels_of(text, flags)
    assert any("attention_partial" in n for n in names) == split, names
    assert any("attention_combine" in n for n in names) == split, names
    rng = np.random.default_rng(11)
    q, k, v = (bf16(rng.standard_normal(s)) for s in ((B, Sq, H * D), (B, Sk, KV * D), (B, Sk, KV * D)))
    y = run_gpu(text, {"q": q, "k": k, "v": v}, flags=flags)["result0"]
    ref = reference.attention(q, k, v, H, KV, D, mask_kind="causal")
    # Outputs are ~0.03: the tolerance scales with them, and catches a
    # dropped newest (diagonal) key and a 5 % softmax-scale error.
    tol = scaled_tolerance(ref, 2e-2)
    assert_rejected(reference.attention(q, k[:, :-1], v[:, :-1], H, KV, D, mask_kind="causal"),
                    ref, tol, "a dropped newest key")
    assert_rejected(reference.attention(q, k, v, H, KV, D, mask_kind="causal",
                                        scale=1.05 / np.sqrt(D)), ref, tol, "a 5 % scale error")
    assert_close(y, ref, **tol)


@pytest.mark.parametrize("mask_kind,window,split", [("chunked", 512, True),
                                                    ("sliding_window", 300, False)])
def test_decode_split_kv_counts_the_visible_keys(mask_kind, window, split):
    """The heuristic splits the keys a decode row can see: 512 of a chunk
    (4 splits of 256 over the 1000 keys, the first two finding no key tile
    of the row's chunk and writing lse = -inf), and no split for a window of
    300 (too few keys); both equal to numpy."""
    B, Sq, Sk, H, KV, D = 2, 1, 1000, 32, 8, 128
    text = decode_module(B, Sq, Sk, H, KV, D, attrs=f"{mask_kind} window = {window}")
    names = kernels_of(text, [])
    assert any("attention_partial" in n for n in names) == split, names
    rng = np.random.default_rng(12)
    q, k, v = (bf16(rng.standard_normal(s)) for s in ((B, Sq, H * D), (B, Sk, KV * D), (B, Sk, KV * D)))
    y = run_gpu(text, {"q": q, "k": k, "v": v})["result0"]
    ref = reference.attention(q, k, v, H, KV, D, mask_kind=mask_kind, window=window)
    tol = scaled_tolerance(ref, 2e-2)
    assert_rejected(reference.attention(q, k, v, H, KV, D, mask_kind="causal"), ref, tol,
                    "the whole causal row")
    assert_close(y, ref, **tol)


@pytest.mark.parametrize("dtype,kernel", [("bf16", "flash"), ("bf16", "wgmma"), ("f32", "auto")])
def test_attention_partial_flash_and_simt_match_numpy(dtype, kernel):
    """attention_partial itself on the mma.sync and the sm_90a wgmma flash
    kernels (bf16, head_dim 64, GQA 4, a sliding window) and the SIMT kernel
    (f32): per-split outputs and LSEs."""
    B, Sq, Sk, H, KV, D, N, W = 1, 3, 150, 4, 1, 64, 3, 90
    qt, kt = t((B, Sq, H * D), dtype), t((B, Sk, KV * D), dtype)
    pt, lt = t((N, B, H, Sq, D)), t((N, B, H, Sq))
    text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> ({pt} {{rlx.output = "o"}}, {lt} {{rlx.output = "lse"}}) {{
  %o, %l = rlx_mir.attention_partial %q, %k, %v heads = {H}, kv_heads = {KV}, head_dim = {D} sliding_window window = {W} kv_splits = {N} : {qt}, {kt}, {kt}
  return %o, %l : {pt}, {lt}
}}"""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((B, Sq, H * D), (B, Sk, KV * D), (B, Sk, KV * D)))
    if dtype == "bf16":
        q, k, v = bf16(q), bf16(k), bf16(v)
    flags = ["--attention-kernel", kernel]
    out = run_gpu(text, {"q": q, "k": k, "v": v}, flags=flags)
    cpu = run_mlir(text, {"q": q, "k": k, "v": v})
    c = -(-Sk // N)
    for h in range(H):
        qh = q[0, :, h * D:(h + 1) * D].astype(np.float64)
        s = qh @ k[0].astype(np.float64).T / np.sqrt(D)
        i = np.arange(Sq)[:, None] + Sk - Sq
        jj = np.arange(Sk)[None, :]
        vis = (jj <= i) & (jj > i - W)
        for sp in range(N):
            lo, hi = sp * c, min(Sk, (sp + 1) * c)
            x = np.where(vis[:, lo:hi], s[:, lo:hi], -np.inf)
            m = x.max(1, keepdims=True)
            p = np.where(np.isfinite(m), np.exp(x - np.where(np.isfinite(m), m, 0)), 0)
            l = p.sum(1)
            o = np.where(l[:, None] > 0, p @ v[0, lo:hi].astype(np.float64) / np.where(l > 0, l, 1)[:, None], 0)
            lse = np.where(l > 0, m[:, 0] + np.log(np.where(l > 0, l, 1)), -np.inf)
            for res in (out, cpu):
                tol = 2e-2 if dtype == "bf16" else 1e-5
                np.testing.assert_allclose(res["o"][sp, 0, h], o, rtol=tol, atol=tol)
                np.testing.assert_array_equal(np.isinf(res["lse"][sp, 0, h]), np.isinf(lse))
                f = np.isfinite(lse)
                np.testing.assert_allclose(res["lse"][sp, 0, h][f], lse[f], rtol=tol, atol=tol)
