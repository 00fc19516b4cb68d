"""The device check's cases: each a module (MIR text), its inputs (closed
formulas or a seeded generator) and a reference written with numpy here (torch
on the GPU machine computes the same formulas, in float64, as a second
reference). Shared by prepare.py (builds the artifacts here) and
device_check.py (runs them there)."""
from __future__ import annotations

import json
import pathlib

import numpy as np


def t(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def rms_norm_case(rows, H, name, bench=False):
    text = f"""func.func @f(%x: {t((rows, H))} {{rlx.input = "x"}}, %g: {t((H,))} {{rlx.input = "g"}}) -> {t((rows, H))} {{
  %y = rlx_mir.rms_norm %x, %g eps = 1.0e-06 : {t((rows, H))}, {t((H,))}
  return %y : {t((rows, H))}
}}"""

    def inputs():
        r, j = np.meshgrid(np.arange(rows), np.arange(H), indexing="ij")
        x = ((((r * H + j) % 13) - 6) / 4).astype(np.float32)
        g = (1 + (np.arange(H) % 5) / 10).astype(np.float32)
        return {"x": x, "g": g}

    def reference(v):
        x = v["x"].astype(np.float64)
        return {"result0": x / np.sqrt((x ** 2).mean(1, keepdims=True) + 1e-6) * v["g"]}

    def torch_reference(v, torch):
        x = torch.from_numpy(v["x"]).cuda().double()
        g = torch.from_numpy(v["g"]).cuda().double()
        return {"result0": torch.nn.functional.rms_norm(x, (H,), g, 1e-6).cpu().numpy()}

    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=bench,
                bytes=2 * rows * H * 4, dims={}, torch_reference=torch_reference)


def add_case(rows, H, name, bench=False):
    text = f"""func.func @f(%x: {t((rows, H))} {{rlx.input = "x"}}, %y: {t((rows, H))} {{rlx.input = "y"}}) -> {t((rows, H))} {{
  %s = rlx_mir.add %x, %y : {t((rows, H))}, {t((rows, H))}
  return %s : {t((rows, H))}
}}"""

    def inputs():
        rng = np.random.default_rng(1)
        return {"x": rng.standard_normal((rows, H)).astype(np.float32),
                "y": rng.standard_normal((rows, H)).astype(np.float32)}

    def torch_reference(v, torch):
        return {"result0": (torch.from_numpy(v["x"]).cuda().double() +
                            torch.from_numpy(v["y"]).cuda().double()).cpu().numpy()}

    return dict(name=name, text=text, inputs=inputs, bench=bench, bytes=3 * rows * H * 4, dims={},
                reference=lambda v: {"result0": v["x"].astype(np.float64) + v["y"]},
                torch_reference=torch_reference)


def attention_case(S, name):
    heads, kv, D = 14, 2, 64
    qt, kt = t((1, S, heads * D)), t((1, S, kv * D))
    text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> {qt} {{
  %o = rlx_mir.attention %q, %k, %v heads = {heads}, kv_heads = {kv}, head_dim = {D} causal : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""

    def inputs():
        rng = np.random.default_rng(S)
        return {"q": rng.standard_normal((1, S, heads * D)).astype(np.float32),
                "k": rng.standard_normal((1, S, kv * D)).astype(np.float32),
                "v": rng.standard_normal((1, S, kv * D)).astype(np.float32)}

    def reference(v):
        q = v["q"].reshape(S, heads, D).astype(np.float64)
        k = v["k"].reshape(S, kv, D).astype(np.float64)
        vv = v["v"].reshape(S, kv, D).astype(np.float64)
        out = np.zeros((S, heads, D))
        mask = np.arange(S)[None, :] > np.arange(S)[:, None]
        for h in range(heads):
            s = q[:, h] @ k[:, h // (heads // kv)].T / np.sqrt(D)
            s = np.where(mask, -np.inf, s)
            p = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (p / p.sum(-1, keepdims=True)) @ vv[:, h // (heads // kv)]
        return {"result0": out.reshape(1, S, heads * D)}

    def torch_reference(v, torch):
        def bhsd(a, n):
            return torch.from_numpy(a).cuda().double().reshape(1, S, n, D).transpose(1, 2)
        o = torch.nn.functional.scaled_dot_product_attention(
            bhsd(v["q"], heads), bhsd(v["k"], kv), bhsd(v["v"], kv), is_causal=True,
            enable_gqa=True)
        return {"result0": o.transpose(1, 2).reshape(1, S, heads * D).cpu().numpy()}

    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=False, dims={},
                torch_reference=torch_reference)


def matmul_case(M, K, N, name):
    text = f"""func.func @f(%x: {t((M, K))} {{rlx.input = "x"}}, %w: {t((N, K))} {{rlx.input = "w"}}, %b: {t((N,))} {{rlx.input = "b"}}) -> {t((M, N))} {{
  %m = rlx_mir.matmul %x, %w transpose_b : {t((M, K))}, {t((N, K))}
  %y = rlx_mir.add %m, %b : {t((M, N))}, {t((N,))}
  return %y : {t((M, N))}
}}"""

    def inputs():
        rng = np.random.default_rng(M)
        return {"x": rng.standard_normal((M, K)).astype(np.float32),
                "w": rng.standard_normal((N, K)).astype(np.float32),
                "b": rng.standard_normal(N).astype(np.float32)}

    def torch_reference(v, torch):
        x, w, b = (torch.from_numpy(v[k]).cuda().double() for k in ("x", "w", "b"))
        return {"result0": torch.nn.functional.linear(x, w, b).cpu().numpy()}

    return dict(name=name, text=text, inputs=inputs, bench=False, dims={},
                reference=lambda v: {"result0": v["x"].astype(np.float64) @ v["w"].T + v["b"]},
                torch_reference=torch_reference)


def bf16_bits(a):
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_matmul_text(M, K, N):
    """y = x[M, K] · w[N, K]ᵀ in bf16 (a Linear)."""
    t = lambda *d: "tensor<" + "x".join(map(str, d)) + "xbf16>"
    return f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {t(N, K)} {{rlx.input = "w"}}) -> {t(M, N)} {{
  %y = rlx_mir.matmul %x, %w transpose_b : {t(M, K)}, {t(N, K)}
  return %y : {t(M, N)}
}}"""


def grouped_matmul_text(T, K, E, N, dtype="bf16"):
    """y[t] = x[t, K] · w[ids[t], N, K]ᵀ: T rows routed over E experts'
    nn.Linear weights (rlx_mir.grouped_matmul)."""
    ty = lambda *d, e=dtype: "tensor<" + "x".join(map(str, d)) + "x" + e + ">"
    return f"""func.func @f(%x: {ty(T, K)} {{rlx.input = "x"}}, %w: {ty(E, N, K)} {{rlx.input = "w"}}, %ids: {ty(T, e="i32")} {{rlx.input = "ids"}}) -> {ty(T, N)} {{
  %y = rlx_mir.grouped_matmul %x, %w, %ids : {ty(T, K)}, {ty(E, N, K)}, {ty(T, e="i32")}
  return %y : {ty(T, N)}
}}"""


def matmul_bench_case(M, N, K, name):
    """bf16 x[M, K] · w[N, K]ᵀ (a Linear), timed against torch.matmul."""
    text = bf16_matmul_text(M, K, N)

    def inputs():
        rng = np.random.default_rng(0)
        return {"x": bf16_bits(rng.standard_normal((M, K), np.float32)),
                "w": bf16_bits(0.02 * rng.standard_normal((N, K), np.float32))}

    return dict(name=name, text=text, inputs=inputs, bench=True, kind="matmul", dims={},
                flops=2 * M * N * K, shape=(M, N, K), bytes=2 * (M * K + N * K + M * N))


def nvfp4_bench_case(M, N, K, name):
    """bf16 x[M, K] · an NVFP4 weight [N, K/2] codes + [N, K/16] E4M3
    scales + f32 global (nvfp4_matmul), timed against bf16 torch.matmul of
    the same shape: the speed-up and the effective weight bandwidth (the
    packed codes and scales over the time). Inputs are zeros
    (--zero-missing): the kernel's work does not depend on the values."""
    t = lambda *d, e="bf16": "tensor<" + "x".join(map(str, d)) + f"x{e}>"  # noqa: E731
    ws, ss = t(N, K // 2, e="i8"), t(N, K // 16, e="f8E4M3FN")
    text = f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %w: {ws} {{rlx.input = "w"}}, %s: {ss} {{rlx.input = "s"}}, %g: tensor<f32> {{rlx.input = "g"}}) -> {t(M, N)} {{
  %y = rlx_mir.nvfp4_matmul %x, %w, %s, %g : {t(M, K)}, {ws}, {ss}, tensor<f32>
  return %y : {t(M, N)}
}}"""
    return dict(name=name, text=text, inputs=lambda: {}, bench=True, kind="nvfp4_matmul",
                dims={}, flops=2 * M * N * K, shape=(M, N, K),
                weight_bytes=N * K // 2 + N * K // 16)


def nvfp4_numerics_case(M, N, K, name):
    """NVFP4 matmul numerics on the device: a seeded quantized weight
    (numpy's two-level recipe) against numpy on the dequantized weight."""
    import ml_dtypes

    def quantize(w):
        g = np.float32(np.abs(w).max() / (448 * 6))
        bam = np.abs(w.reshape(N, K // 16, 16)).max(-1)
        s8 = (bam / np.float32(6) / g).astype(ml_dtypes.float8_e4m3fn)
        denom = np.repeat(s8.astype(np.float32), 16, axis=1) * g
        q = w / np.where(denom > 0, denom, 1)
        mags = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
        code = np.abs(np.abs(q)[..., None] - mags).argmin(-1).astype(np.uint8)
        code |= np.where(q < 0, 8, 0).astype(np.uint8)
        packed = (code[:, 0::2] | (code[:, 1::2] << 4)).view(np.int8)
        return packed, s8.view(np.uint8), g

    def inputs():
        rng = np.random.default_rng(M)
        packed, s8, g = quantize(rng.standard_normal((N, K)).astype(np.float32))
        return {"x": bf16_bits(rng.standard_normal((M, K), np.float32)), "w": packed, "s": s8,
                "g": np.array(g, np.float32)}

    def reference(v):
        e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
        b = v["w"].view(np.uint8)
        codes = np.empty((N, K), np.uint8)
        codes[:, 0::2], codes[:, 1::2] = b & 15, b >> 4
        s = v["s"].view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        w = e2m1[codes] * np.repeat(np.where(np.isnan(s), 0, s), 16, axis=1) * float(v["g"])
        return {"result0": from_bf16_bits(v["x"]).astype(np.float64) @ w.T}

    case = nvfp4_bench_case(M, N, K, name)
    case.update(inputs=inputs, reference=reference, bench=False, tolerance=2e-2, bf16_outputs=True)
    return case


def from_bf16_bits(u):
    return (np.asarray(u, np.uint16).astype(np.uint32) << 16).view(np.float32)


def wgmma_matmul_case(M, K, N, name):
    """Numerics of the plain bf16 matmul on sm_90a's wgmma kernel (TMA ring,
    producer and consumer warpgroups) against numpy, every edge ragged."""
    text = bf16_matmul_text(M, K, N)

    def inputs():
        rng = np.random.default_rng(M + K + N)
        return {"x": bf16_bits(rng.standard_normal((M, K), np.float32)),
                "w": bf16_bits(rng.standard_normal((N, K), np.float32) / np.sqrt(K))}

    def reference(v):
        x, w = (from_bf16_bits(v[k]).astype(np.float64) for k in ("x", "w"))
        return {"result0": x @ w.T}

    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=False, dims={},
                tolerance=2e-2, bf16_outputs=True, flags=["--matmul-kernel", "wgmma"])


def skewed_expert_ids(T, E, seed):
    """Expert ids as a router gives them, unevenly: half the rows on
    expert 1, one expert with none, two ids to clamp."""
    rng = np.random.default_rng(seed)
    ids = rng.choice([e for e in range(E) if e != E - 2], size=T).astype(np.int32)
    ids[rng.permutation(T)[:T // 2]] = 1
    ids[[0, T - 1]] = [-1, E + 3]
    return ids


def grouped_matmul_case(T, K, E, N, name):
    """Numerics of the grouped GEMM on mma.sync against numpy (rows through
    their expert's nn.Linear weight; ragged T, N and K)."""
    def inputs():
        rng = np.random.default_rng(T + K + N)
        return {"x": bf16_bits(rng.standard_normal((T, K), np.float32)),
                "w": bf16_bits(rng.standard_normal((E, N, K), np.float32) / np.sqrt(K)),
                "ids": skewed_expert_ids(T, E, T)}

    def reference(v):
        x, w = (from_bf16_bits(v[k]).astype(np.float64) for k in ("x", "w"))
        return {"result0": np.einsum("tk,tnk->tn", x, w[np.clip(v["ids"], 0, E - 1)])}

    return dict(name=name, text=grouped_matmul_text(T, K, E, N), inputs=inputs,
                reference=reference, bench=False, dims={}, tolerance=2e-2, bf16_outputs=True)


def grouped_matmul_bench_case(T, K, E, N, name):
    """The grouped GEMM against the loop transformers' experts module runs in
    eager PyTorch (per expert: gather its rows, F.linear, scatter back),
    bf16, on the same GPU, with the same routing."""
    def inputs():
        rng = np.random.default_rng(0)
        w = bf16_bits(0.02 * rng.standard_normal((N, K), np.float32))
        return {"x": bf16_bits(rng.standard_normal((T, K), np.float32)),
                "w": np.broadcast_to(w, (E, N, K)).copy(), "ids": skewed_expert_ids(T, E, 0)}

    def torch_baseline(torch):
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
        ids = torch.from_numpy(skewed_expert_ids(T, E, 0).astype(np.int64)).cuda().clamp(0, E - 1)

        def step():
            out = torch.empty(T, N, device="cuda", dtype=torch.bfloat16)
            for e in range(E):
                rows = (ids == e).nonzero().squeeze(1)
                if rows.numel():
                    out[rows] = torch.nn.functional.linear(x[rows], w[e])
            return out
        return step

    return dict(name=name, text=grouped_matmul_text(T, K, E, N), inputs=inputs, bench=True,
                kind="torch_baseline", torch_baseline=torch_baseline, dims={},
                flops=2 * T * N * K, shape=(T, N, K))


def norm_swiglu_text(M, K, N):
    """The MLP's first half as one fused_matmul: rms_norm prologue, packed
    gate|up weight [2N, K], SwiGLU epilogue; bf16."""
    t = lambda *d: "tensor<" + "x".join(map(str, d)) + "xbf16>"
    return f"""func.func @f(%x: {t(M, K)} {{rlx.input = "x"}}, %g: {t(K)} {{rlx.input = "g"}}, %w: {t(2 * N, K)} {{rlx.input = "w"}}) -> {t(M, N)} {{
  %y = rlx_mir.fused_matmul %x, %w transpose_b norm rms_norm eps = 1.0e-05 norm_weight(%g : {t(K)}) activation silu glu : {t(M, K)}, {t(2 * N, K)}
  return %y : {t(M, N)}
}}"""


def norm_swiglu_inputs(M, K, N):
    rng = np.random.default_rng(M + N)
    return {"x": bf16_bits(rng.standard_normal((M, K), np.float32)),
            "g": bf16_bits(1 + 0.1 * rng.standard_normal(K, np.float32)),
            "w": bf16_bits(rng.standard_normal((2 * N, K), np.float32) / np.sqrt(K))}


def norm_swiglu_case(M, K, N, name):
    """Numerics of the sm_90a wgmma kernel (the producer warpgroup applies the
    norm to the TMA-loaded A tiles) against numpy: statistics in f32, the
    normalized rows rounded once to bf16, f32 accumulation, SwiGLU, one
    rounding; bf16 tolerance."""
    def reference(v):
        x, g, w = (from_bf16_bits(v[k]).astype(np.float64) for k in ("x", "g", "w"))
        n = from_bf16_bits(bf16_bits(x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g))
        z = n.astype(np.float64) @ w.T
        gate, up = z[:, :N], z[:, N:]
        return {"result0": gate / (1 + np.exp(-gate)) * up}

    return dict(name=name, text=norm_swiglu_text(M, K, N), inputs=lambda: norm_swiglu_inputs(M, K, N),
                reference=reference, bench=False, dims={}, tolerance=2e-2, bf16_outputs=True)


def norm_swiglu_bench_case(M, K, N, name):
    """The fused kernel against the PyTorch sequence it replaces (rms_norm in
    f32, the packed gate|up linear, silu · up), bf16, on the same GPU."""
    def torch_baseline(torch):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        g = torch.ones(K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(2 * N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5

        def step():
            xf = x.float()
            h = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(torch.bfloat16) * g
            gu = torch.nn.functional.linear(h, w)
            return torch.nn.functional.silu(gu[:, :N]) * gu[:, N:]
        return step

    return dict(name=name, text=norm_swiglu_text(M, K, N), inputs=lambda: norm_swiglu_inputs(M, K, N),
                bench=True, kind="torch_baseline", torch_baseline=torch_baseline, dims={},
                flops=2 * M * 2 * N * K, shape=(M, 2 * N, K))


def attention_text(B, Sq, Sk, H, Hkv, D, causal, dtype="bf16"):
    qt, kt = t((B, Sq, H * D), dtype), t((B, Sk, Hkv * D), dtype)
    return f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}) -> {qt} {{
  %o = rlx_mir.attention %q, %k, %v heads = {H}, kv_heads = {Hkv}, head_dim = {D}{" causal" if causal else ""} : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""


def causal_attention_reference(v, B, Sq, Sk, H, Hkv, D, sinks=None):
    """Bottom-right causal GQA attention of the bf16 inputs q, k, v in
    float64; with `sinks` each head's logit joins every row's softmax and is
    dropped after it (GptOssAttention)."""
    q, k, vv = (from_bf16_bits(v[n]).astype(np.float64) for n in ("q", "k", "v"))
    q = q.reshape(B, Sq, H, D)
    k, vv = k.reshape(B, Sk, Hkv, D), vv.reshape(B, Sk, Hkv, D)
    out = np.zeros((B, Sq, H, D))
    hidden = np.arange(Sk)[None, :] > np.arange(Sq)[:, None] + (Sk - Sq)
    for b in range(B):
        for h in range(H):
            s = np.where(hidden, -np.inf, q[b, :, h] @ k[b, :, h // (H // Hkv)].T / np.sqrt(D))
            if sinks is not None:
                s = np.concatenate([s, np.full((Sq, 1), sinks[h])], 1)
            p = np.exp(s - s.max(-1, keepdims=True))
            p = p / p.sum(-1, keepdims=True)
            out[b, :, h] = p[:, :Sk] @ vv[b, :, h // (H // Hkv)]
    return {"result0": out.reshape(B, Sq, H * D)}


def flash_attention_case(B, Sq, Sk, H, Hkv, D, name, kernel="auto"):
    """Numerics of a bf16 flash-attention kernel (bottom-right causal, GQA,
    lengths off the row and key tiles) against numpy in float64: `kernel`
    auto (sm_90a: the wgmma kernel) or flash (the mma.sync kernel)."""
    def inputs():
        rng = np.random.default_rng(Sq + Sk)
        return {"q": bf16_bits(rng.standard_normal((B, Sq, H * D), np.float32)),
                "k": bf16_bits(rng.standard_normal((B, Sk, Hkv * D), np.float32)),
                "v": bf16_bits(rng.standard_normal((B, Sk, Hkv * D), np.float32))}

    def reference(v):
        return causal_attention_reference(v, B, Sq, Sk, H, Hkv, D)

    return dict(name=name, text=attention_text(B, Sq, Sk, H, Hkv, D, True), inputs=inputs,
                reference=reference, bench=False, dims={}, tolerance=2e-2, bf16_outputs=True,
                flags=["--attention-kernel", kernel])


def sinks_attention_case(B, Sq, Sk, H, Hkv, D, name, kernel="auto"):
    """gpt-oss's attention with sinks (rlx_hir.attention sinks: the fused
    attention_partial kernels and an attention_combine holding the sinks;
    split-KV on a decode shape), bf16, bottom-right causal, against numpy in
    float64 (the sink concatenated to each row's logits, dropped after the
    softmax, as GptOssAttention)."""
    qt, kt, st = t((B, Sq, H * D), "bf16"), t((B, Sk, Hkv * D), "bf16"), t((H,), "bf16")
    text = f"""func.func @f(%q: {qt} {{rlx.input = "q"}}, %k: {kt} {{rlx.input = "k"}}, %v: {kt} {{rlx.input = "v"}}, %s: {st} {{rlx.input = "s"}}) -> {qt} {{
  %o = rlx_hir.attention %q, %k, %v sinks(%s : {st}) heads = {H}, kv_heads = {Hkv}, head_dim = {D} causal : {qt}, {kt}, {kt}
  return %o : {qt}
}}"""

    def inputs():
        rng = np.random.default_rng(Sq + Sk + 1)
        return {"q": bf16_bits(rng.standard_normal((B, Sq, H * D), np.float32)),
                "k": bf16_bits(rng.standard_normal((B, Sk, Hkv * D), np.float32)),
                "v": bf16_bits(rng.standard_normal((B, Sk, Hkv * D), np.float32)),
                # About the keys' whole mass, so that the sinks matter.
                "s": bf16_bits(rng.standard_normal(H).astype(np.float32) + np.log(Sk))}

    def reference(v):
        return causal_attention_reference(v, B, Sq, Sk, H, Hkv, D,
                                          from_bf16_bits(v["s"]).astype(np.float64))

    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=False, dims={},
                tolerance=2e-2, bf16_outputs=True, flags=["--attention-kernel", kernel])


def attention_bench_case(B, Sq, Sk, H, Hkv, D, causal, name, kernel="auto"):
    """bf16 attention against torch's scaled_dot_product_attention on the
    same GPU, interleaved. Inputs are zeros (--zero-missing: timing does not
    depend on the values and a 32k-token cache is too large to ship). Prefill:
    TFLOP/s = 4·B·H·Sq·Sk·D (halved for causal); decode (Sq = 1): the K/V
    bytes over the time, against the device-to-device copy bandwidth.
    `kernel`: auto (sm_90a: the wgmma kernel) or flash (mma.sync), to compare
    the two in the same run."""
    def torch_baseline(torch):
        q = torch.randn(B, Sq, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        k = torch.randn(B, Sk, Hkv, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        v = torch.randn(B, Sk, Hkv, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        # torch's is_causal is top-left aligned: Sq = Sk here, or Sq = 1 with
        # every key visible (bottom-right), which is causal=False there.
        sdpa_causal = causal and Sq == Sk
        return lambda: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=sdpa_causal, enable_gqa=H != Hkv)

    def flash_baselines(torch):
        """{name: step} of the FlashAttention kernels on the machine: SDPA
        held to its flash backend, and FlashAttention-3 (flash_attn_interface)
        or FlashAttention-2 (flash_attn) where their wheels are installed;
        {name: why not} for those that are not."""
        out = {}
        sdpa = torch_baseline(torch)
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            def sdpa_flash():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return sdpa()
            sdpa_flash()
            out["sdpa_flash"] = sdpa_flash
        except Exception as e:  # noqa: BLE001
            out["sdpa_flash"] = f"unavailable: {str(e)[:200]}"
        q = torch.randn(B, Sq, H, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, Sk, Hkv, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(B, Sk, Hkv, D, device="cuda", dtype=torch.bfloat16)
        # Both are bottom-right aligned causal, as rlx_mir.attention is.
        for label, module in (("flash_attn_3", "flash_attn_interface"), ("flash_attn_2", "flash_attn")):
            try:
                fa = __import__(module).flash_attn_func
                fa(q, k, v, causal=causal)
                out[label] = lambda fa=fa: fa(q, k, v, causal=causal)
            except Exception as e:  # noqa: BLE001
                out[label] = f"unavailable: {str(e)[:200]}"
        return out

    flops = 4 * B * H * Sq * Sk * D // (2 if causal and Sq == Sk else 1)
    return dict(name=name, text=attention_text(B, Sq, Sk, H, Hkv, D, causal), inputs=lambda: {},
                bench=True, kind="attention", torch_baseline=torch_baseline, dims={},
                flash_baselines=flash_baselines,
                flops=flops, kv_bytes=2 * B * Sk * Hkv * D * 2, decode=Sq == 1,
                shape=dict(batch=B, sq=Sq, sk=Sk, heads=H, kv_heads=Hkv, head_dim=D,
                           causal=causal, kernel=kernel),
                flags=["--attention-kernel", kernel])


ATTENTION_BENCH = [
    # batch·seq = 16k, heads·head_dim = 2048.
    *[attention_bench_case(4, 4096, 4096, 2048 // D, 2048 // D, D, c,
                           f"bench_attention_d{D}_{'causal' if c else 'full'}")
      for D in (64, 128) for c in (False, True)],
    # Llama-3.1-8B: 32 query heads, 8 kv heads, head_dim 128.
    attention_bench_case(4, 4096, 4096, 32, 8, 128, True, "bench_attention_llama8b_causal"),
    *[attention_bench_case(B, 1, Sk, 32, 8, 128, True, f"bench_decode_llama8b_b{B}_kv{Sk // 1024}k")
      for Sk in (1024, 8192, 32768) for B in (1, 8, 64)],
    # The mma.sync kernel on the same shapes, for the wgmma kernel's gain.
    attention_bench_case(4, 4096, 4096, 16, 16, 128, True, "bench_attention_d128_causal_mma_sync",
                         "flash"),
    attention_bench_case(4, 4096, 4096, 32, 8, 128, True, "bench_attention_llama8b_causal_mma_sync",
                         "flash"),
    attention_bench_case(8, 1, 8192, 32, 8, 128, True, "bench_decode_llama8b_b8_kv8k_mma_sync",
                         "flash"),
]


NVFP4_BENCH = [
    # M = 1, 16, 128, 2048 at N = K = 4096; Llama-3.1-8B's MLP (gate/up
    # 14336 × 4096 and down 4096 × 14336) at decode and prefill sizes.
    *[nvfp4_bench_case(M, 4096, 4096, f"bench_nvfp4_4096_m{M}") for M in (1, 16, 128, 2048)],
    *[nvfp4_bench_case(M, 14336, 4096, f"bench_nvfp4_up_m{M}") for M in (1, 2048)],
    *[nvfp4_bench_case(M, 4096, 14336, f"bench_nvfp4_down_m{M}") for M in (1, 2048)],
]


def tensor_parallel_mlp_case(M, H, I, name):
    """A tensor-parallel artifact (`rlx-compile --tp 1`): column-parallel
    up_proj, SiLU, row-parallel down_proj, whose all-reduce is a collective
    step of the plan. On the GPU it runs on NCCL as rank 0 of 1
    (`rlx-gpu-run --nccl`): the single-GPU check of the NCCL path."""
    text = f"""func.func @f(%x: {t((M, H))} {{rlx.input = "x"}}, %up: {t((I, H))} {{rlx.param = "model.layers.0.mlp.up_proj.weight"}}, %down: {t((H, I))} {{rlx.param = "model.layers.0.mlp.down_proj.weight"}}) -> {t((M, H))} {{
  %h = rlx_mir.matmul %x, %up transpose_b : {t((M, H))}, {t((I, H))}
  %a = rlx_mir.silu %h : {t((M, I))}
  %o = rlx_mir.matmul %a, %down transpose_b : {t((M, I))}, {t((H, I))}
  return %o : {t((M, H))}
}}"""

    def inputs():
        rng = np.random.default_rng(M + I)
        return {"x": rng.standard_normal((M, H)).astype(np.float32),
                "model.layers.0.mlp.up_proj.weight":
                    (rng.standard_normal((I, H)) / np.sqrt(H)).astype(np.float32),
                "model.layers.0.mlp.down_proj.weight":
                    (rng.standard_normal((H, I)) / np.sqrt(I)).astype(np.float32)}

    def reference(v):
        h = v["x"].astype(np.float64) @ v["model.layers.0.mlp.up_proj.weight"].T.astype(np.float64)
        a = h / (1 + np.exp(-h))
        return {"result0": a @ v["model.layers.0.mlp.down_proj.weight"].T.astype(np.float64)}

    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=False,
                bytes=0, dims={}, flags=["--tp", "1"], cuda_run_flags=["--nccl"], tolerance=1e-4)

HERE = pathlib.Path(__file__).resolve().parent


def read_safetensors(path):
    """The tensors of a .safetensors file by name (the format: an 8-byte
    little-endian header length, a JSON header, the data), as numpy arrays;
    BF16 as float32 (exactly)."""
    raw = pathlib.Path(path).read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    dtypes = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64,
              "I32": np.int32, "I8": np.int8, "U8": np.uint8}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        a = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtypes[t["dtype"]]).reshape(t["shape"])
        out[name] = (a.astype(np.uint32) << 16).view(np.float32) if t["dtype"] == "BF16" else a
    return out


def prepared_case(route, name, tolerance=1e-4):
    """A model case prepare.py makes here (model_cases.py: transformers'
    model and logits); on the device only its files are read: the inputs,
    the checkpoint's tensors by name (route "checkpoint") and the logits."""
    data = HERE / "artifacts" / f"{name}.data"

    def inputs():
        v = dict(np.load(data / "inputs.npz"))
        if route == "checkpoint":
            v.update(read_safetensors(data / "model.safetensors"))
        return v

    def reference(v):
        ref = {k: a.astype(np.float64) for k, a in np.load(data / "reference.npz").items()}
        names = data / "outputs.json"
        rename = json.loads(names.read_text()) if names.exists() else {}
        return {out: ref[key] for out, key in rename.items()} if rename else ref

    return dict(name=name, route=route, text=None, inputs=inputs, reference=reference,
                bench=False, dims={}, tolerance=tolerance,
                flags=["--dims", "seq=9"] if route == "checkpoint" else [])


def rfft_case(rows, n, name, bench=False):
    """rlx_mir.rfft of [rows, n] f32 along the last axis (the shared-memory
    FFT kernel: Whisper's 400-point frames), against numpy in f64 and, timed,
    against torch.fft.rfft (cuFFT) on the same GPU, interleaved."""
    bins = n // 2 + 1
    text = f"""func.func @f(%x: {t((rows, n))} {{rlx.input = "x"}}) -> {t((rows, 2 * bins))} {{
  %y = rlx_mir.rfft %x axis = 1 : {t((rows, n))} -> {t((rows, 2 * bins))}
  return %y : {t((rows, 2 * bins))}
}}"""

    def inputs():
        return {"x": np.random.default_rng(3).standard_normal((rows, n)).astype(np.float32)}

    def reference(v):
        z = np.fft.rfft(v["x"].astype(np.float64), axis=1)
        return {"result0": np.concatenate([z.real, z.imag], 1)}

    def torch_baseline(torch):
        x = torch.from_numpy(inputs()["x"]).cuda()
        return lambda: torch.fft.rfft(x, dim=1)

    # 2.5·n·log2(n) flops per real transform (half a complex one's 5·n·log2(n)).
    return dict(name=name, text=text, inputs=inputs, reference=reference, bench=bench,
                kind="torch_baseline" if bench else None, torch_baseline=torch_baseline,
                dims={}, flops=2.5 * rows * n * np.log2(n), shape=(rows, n, 1),
                tolerance=1e-4)  # f32 error grows like log n; outputs ~√n


# Llama-3.1-8B sizes: hidden 4096, 4096 tokens.
CASES = [
    rms_norm_case(7, 1, "rms_norm_g6_h1"),
    rms_norm_case(7, 17, "rms_norm_g6_h17"),
    rms_norm_case(7, 769, "rms_norm_g6_h769"),
    rms_norm_case(7, 4097, "rms_norm_g6_h4097"),
    add_case(37, 769, "add_37x769"),
    attention_case(37, "attention_gqa_s37"),
    attention_case(100, "attention_gqa_s100"),
    matmul_case(37, 45, 29, "matmul_bias_37x45x29"),
    # What users bring: a checkpoint by name (packed on the device) and a
    # torch export with its constants (model_cases.py).
    prepared_case("checkpoint", "llama_checkpoint_by_name"),
    prepared_case("from_torch", "llama_from_torch_frozen"),
    tensor_parallel_mlp_case(5, 64, 96, "tensor_parallel_mlp_nccl"),
    rms_norm_case(4096, 4096, "bench_rms_norm_llama8b", bench=True),
    add_case(4096, 4096, "bench_add_llama8b", bench=True),
    # Llama-3.1-8B projections (q/o: 4096 × 4096, gate|up: 28672 × 4096,
    # down: 4096 × 14336, k/v: 1024 × 4096) at decode and prefill sizes, and
    # 4096³. Decode (M ≤ 16) runs the gemv kernel, split-K where N is small.
    matmul_bench_case(1, 4096, 4096, "bench_matmul_q_m1"),
    matmul_bench_case(1, 1024, 4096, "bench_matmul_kv_m1"),
    matmul_bench_case(16, 4096, 4096, "bench_matmul_q_m16"),
    matmul_bench_case(16, 4096, 14336, "bench_matmul_down_m16"),
    matmul_bench_case(128, 4096, 4096, "bench_matmul_q_m128"),
    matmul_bench_case(2048, 28672, 4096, "bench_matmul_gate_up_m2048"),
    matmul_bench_case(2048, 4096, 14336, "bench_matmul_down_m2048"),
    matmul_bench_case(4096, 4096, 4096, "bench_matmul_4096"),
    matmul_bench_case(8192, 4096, 4096, "bench_matmul_q_m8192"),
    matmul_bench_case(8192, 8192, 8192, "bench_matmul_8192"),
    # The wgmma kernel with the norm prologue and SwiGLU epilogue: numerics
    # (ragged edges, 9 k-tiles), then Llama-3.1-8B's gate|up at 2048 tokens
    # against the PyTorch sequence it replaces.
    wgmma_matmul_case(130, 520, 136, "wgmma_matmul_130x520x136"),
    norm_swiglu_case(300, 520, 136, "wgmma_norm_swiglu_300x520x136"),
    norm_swiglu_bench_case(2048, 4096, 14336, "bench_fused_norm_swiglu_m2048"),
    # Flash attention: numerics at Llama-3.1-8B's heads, prefill and a decode
    # step on a cache off the tile size, on the sm_90a wgmma kernel (auto) and
    # on the mma.sync kernel; head dims 64 and 256 on wgmma; then the
    # benchmarks.
    flash_attention_case(2, 300, 300, 32, 8, 128, "flash_attention_llama8b_s300"),
    flash_attention_case(3, 1, 1000, 32, 8, 128, "flash_attention_llama8b_decode_kv1000"),
    flash_attention_case(2, 300, 300, 32, 8, 128, "mma_sync_attention_llama8b_s300", "flash"),
    flash_attention_case(3, 1, 1000, 32, 8, 128, "mma_sync_attention_llama8b_decode_kv1000",
                         "flash"),
    flash_attention_case(1, 777, 777, 14, 2, 64, "flash_attention_gqa7_d64_s777"),
    flash_attention_case(1, 130, 260, 4, 1, 256, "flash_attention_d256_s130_kv260"),
    *ATTENTION_BENCH,
    # NVFP4 matmuls: numerics (decode on the GEMV, prefill on wgmma), then
    # the benchmarks against bf16 torch.matmul.
    nvfp4_numerics_case(3, 512, 1024, "nvfp4_matmul_m3"),
    nvfp4_numerics_case(200, 256, 512, "nvfp4_matmul_m200"),
    *NVFP4_BENCH,
    # MoE experts (the grouped GEMM, mma.sync): numerics with ragged edges,
    # then Mixtral-8x7B's gate|up scaled down 4× in N and K (512 tokens
    # routed top-2: 1024 rows over 8 experts) against transformers' loop.
    grouped_matmul_case(300, 520, 8, 136, "grouped_matmul_300x520_e8"),
    grouped_matmul_bench_case(1024, 1024, 8, 7168, "bench_grouped_matmul_mixtral_div4"),
    # A decode step's routed rows on the grouped GEMV.
    grouped_matmul_case(5, 520, 8, 136, "grouped_gemv_5x520_e8"),
    # gpt-oss's attention sinks (64 heads of 64 over 8 KV heads): a prefill
    # on the flash kernels, a decode step split over KV.
    sinks_attention_case(1, 200, 200, 64, 8, 64, "sinks_attention_gpt_oss_s200"),
    sinks_attention_case(2, 1, 3000, 64, 8, 64, "sinks_attention_gpt_oss_decode_kv3000"),
    # Whisper's STFT frames (30 s: 3001 × 400) on the shared-memory FFT
    # kernel, and timed against cuFFT.
    rfft_case(3001, 400, "rfft_whisper_3001x400"),
    rfft_case(3001, 400, "bench_rfft_whisper_3001x400_vs_cufft", bench=True),
]
