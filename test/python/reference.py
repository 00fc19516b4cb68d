"""Independent NumPy references for the numerical tests.

Written from the published definitions (PyTorch / Hugging Face semantics as
DESIGN §3 states them), in float64, without any RLX code: these are what the
compiled code is checked against.
"""
from __future__ import annotations

import math

import numpy as np


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu(x):
    from math import erf
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


ACT = {"none": lambda x: x, "relu": lambda x: np.maximum(x, 0), "gelu": gelu,
       "gelu_tanh": gelu_tanh, "silu": silu, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
       "tanh": np.tanh}


def rms_norm(x, w=None, eps=1e-5):
    x = np.asarray(x, np.float64)
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * w if w is not None else y


def layer_norm(x, w=None, b=None, eps=1e-5):
    x = np.asarray(x, np.float64)
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.where(np.isneginf(m), 0.0, np.exp(x - m))
    s = e.sum(axis=axis, keepdims=True)
    return np.where(s == 0, 0.0, e / np.where(s == 0, 1.0, s))


def attention(q, k, v, heads, kv_heads, head_dim, mask_kind="none", window=None,
              scale=None, softcap=None, mask=None, layout="bsd", sinks=None):
    """Naive per-head attention: q, k, v in `layout`; returns the layout of q.
    `sinks` [heads]: gpt-oss's per-head logit, concatenated to every row's
    logits for the softmax and dropped after it (GptOssAttention)."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))

    def to_bhsd(t, h):
        if layout == "bsd":
            b, s, hd = t.shape
            return t.reshape(b, s, h, hd // h).transpose(0, 2, 1, 3)
        if layout == "bshd":
            return t.transpose(0, 2, 1, 3)
        return t

    qh, kh, vh = to_bhsd(q, heads), to_bhsd(k, kv_heads), to_bhsd(v, kv_heads)
    b, _, sq, _ = qh.shape
    sk = kh.shape[2]
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    out = np.zeros((b, heads, sq, vh.shape[3]))
    for bi in range(b):
        for h in range(heads):
            g = h // (heads // kv_heads)
            s = (qh[bi, h] @ kh[bi, g].T) * scale
            if softcap is not None:
                s = softcap * np.tanh(s / softcap)
            visible = np.ones((sq, sk), bool)
            if mask_kind in ("causal", "sliding_window", "chunked"):
                i = np.arange(sq)[:, None] + (sk - sq)
                j = np.arange(sk)[None, :]
                visible = j <= i
                if mask_kind == "sliding_window":
                    visible &= j > i - window
                if mask_kind == "chunked":  # the query's own chunk (Llama-4)
                    visible &= j // window == i // window
            if mask is not None:
                m = np.asarray(mask)
                if m.ndim == 3:
                    m = m[min(bi, m.shape[0] - 1)]
                elif m.ndim == 4:
                    m = m[min(bi, m.shape[0] - 1), min(h, m.shape[1] - 1)]
                if m.dtype == bool:
                    visible = visible & m
                else:
                    s = s + m
            s = np.where(visible, s, -np.inf)
            if sinks is not None:
                sink = np.full((sq, 1), float(sinks[h]))
                out[bi, h] = softmax(np.concatenate([s, sink], axis=1))[:, :-1] @ vh[bi, g]
                continue
            out[bi, h] = softmax(s) @ vh[bi, g]
    if layout == "bsd":
        return out.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    if layout == "bshd":
        return out.transpose(0, 2, 1, 3)
    return out


def rope_inv_freq(rotary_dim, theta, scaling=None):
    f = 1.0 / theta ** (np.arange(0, rotary_dim, 2) / rotary_dim)
    if scaling and scaling.get("rope_type") == "linear":
        f = f / scaling["factor"]
    elif scaling and scaling.get("rope_type") == "llama3":
        old = scaling.get("original_max_position_embeddings", 8192)
        lo, hi, fac = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0), \
            scaling["factor"]
        wl = 2 * np.pi / f
        scaled = np.where(wl > old / lo, f / fac, f)
        smooth = (old / wl - lo) / (hi - lo)
        mid = (1 - smooth) * scaled / fac + smooth * scaled
        f = np.where(~(wl < old / hi) & ~(wl > old / lo), mid, scaled)
    elif scaling and scaling.get("rope_type") == "yarn":
        # HF _compute_yarn_parameters: extrapolated below the beta_fast
        # correction dim, interpolated (/ factor) above beta_slow's, a linear
        # ramp between.
        old, fac = scaling["original_max_position_embeddings"], scaling["factor"]

        def corr(rot):
            return rotary_dim * math.log(old / (rot * 2 * math.pi)) / (2 * math.log(theta))
        lo, hi = corr(scaling.get("beta_fast", 32)), corr(scaling.get("beta_slow", 1))
        if scaling.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, rotary_dim - 1)
        hi = hi + 0.001 if lo == hi else hi
        keep = 1 - np.clip((np.arange(rotary_dim // 2) - lo) / (hi - lo), 0, 1)
        f = f / fac * (1 - keep) + f * keep
    return f.astype(np.float32)


def rope_attention_factor(scaling=None):
    """yarn's cos/sin factor (HF: attention_factor, else 0.1·ln(factor) + 1)."""
    if not scaling or scaling.get("rope_type") != "yarn":
        return 1.0
    if scaling.get("attention_factor"):
        return scaling["attention_factor"]
    return 1.0 if scaling["factor"] <= 1 else 0.1 * math.log(scaling["factor"]) + 1.0


def rope_tables(positions, rotary_dim, theta, scaling=None):
    """cos/sin [.., S, rotary_dim/2] in float32 (as HF computes them)."""
    f = rope_inv_freq(rotary_dim, theta, scaling)
    ang = np.asarray(positions, np.float32)[..., None] * f
    a = np.float32(rope_attention_factor(scaling))
    return np.cos(ang) * a, np.sin(ang) * a


def rope(x, cos, sin, head_dim, rotary_dim=None, style="neox"):
    """x [B, S, H*D]; cos/sin [S, r/2] or [B, S, r/2]."""
    x = np.asarray(x, np.float64)
    r = rotary_dim or head_dim
    b, s, hd = x.shape
    t = x.reshape(b, s, hd // head_dim, head_dim).copy()
    c = np.asarray(cos, np.float64)
    sn = np.asarray(sin, np.float64)
    c = c[None] if c.ndim == 2 else c
    sn = sn[None] if sn.ndim == 2 else sn
    c, sn = c[:, :, None, :], sn[:, :, None, :]
    if style == "neox":
        a, bb = t[..., : r // 2].copy(), t[..., r // 2: r].copy()
        t[..., : r // 2] = a * c - bb * sn
        t[..., r // 2: r] = bb * c + a * sn
    else:
        a, bb = t[..., 0:r:2].copy(), t[..., 1:r:2].copy()
        t[..., 0:r:2] = a * c - bb * sn
        t[..., 1:r:2] = bb * c + a * sn
    return t.reshape(b, s, hd)


def llama_layer(x, pos, w, cfg, prefix="model.layers.0.", past=None, rnd=None):
    """One pre-norm decoder layer (HF LlamaDecoderLayer / Qwen3 / Mistral).
    `rnd` rounds the activations a model in a narrow dtype keeps in it (norm
    outputs, q/k/v, the attention output, the residual stream, the gated
    MLP activation), as HF's modules in that dtype do.

    Returns (output, present_key, present_value)."""
    rnd = rnd or (lambda a: a)
    H, KV, D = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    eps = cfg["eps"]
    p = prefix
    h = rnd(rms_norm(x, w[p + "input_layernorm.weight"], eps))
    q = h @ w[p + "self_attn.q_proj.weight"].T
    k = h @ w[p + "self_attn.k_proj.weight"].T
    v = h @ w[p + "self_attn.v_proj.weight"].T
    if cfg.get("attention_bias"):
        q = q + w[p + "self_attn.q_proj.bias"]
        k = k + w[p + "self_attn.k_proj.bias"]
        v = v + w[p + "self_attn.v_proj.bias"]
    if cfg.get("qk_norm"):
        b, s, _ = q.shape
        q = rms_norm(q.reshape(b, s, H, D), w[p + "self_attn.q_norm.weight"], eps).reshape(b, s, H * D)
        k = rms_norm(k.reshape(b, s, KV, D), w[p + "self_attn.k_norm.weight"], eps).reshape(b, s, KV * D)
    cos, sin = rope_tables(pos, D, cfg["rope_theta"], cfg.get("rope_scaling"))
    q, k, v = rnd(rope(q, cos, sin, D)), rnd(rope(k, cos, sin, D)), rnd(v)
    if past is not None:
        k = np.concatenate([past[0], k], 1)
        v = np.concatenate([past[1], v], 1)
    kind = "sliding_window" if cfg.get("sliding_window") else "causal"
    a = rnd(attention(q, k, v, H, KV, D, kind, cfg.get("sliding_window")))
    r = rnd(x + a @ w[p + "self_attn.o_proj.weight"].T)
    n = rnd(rms_norm(r, w[p + "post_attention_layernorm.weight"], eps))
    g = n @ w[p + "mlp.gate_proj.weight"].T
    u = n @ w[p + "mlp.up_proj.weight"].T
    return r + rnd(ACT[cfg.get("act", "silu")](g) * u) @ w[p + "mlp.down_proj.weight"].T, k, v


def gpt2_layer(x, w, cfg, prefix="transformer.h.0.", past=None, rnd=None):
    """One GPT-2 block; `rnd` as for llama_layer."""
    rnd = rnd or (lambda a: a)
    p, H = prefix, cfg["heads"]
    eps = cfg["eps"]
    hid = x.shape[-1]
    h = rnd(layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps))
    qkv = rnd(h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"])
    q, k, v = qkv[..., :hid], qkv[..., hid:2 * hid], qkv[..., 2 * hid:]
    if past is not None:
        k = np.concatenate([past[0], k], 1)
        v = np.concatenate([past[1], v], 1)
    a = rnd(attention(q, k, v, H, H, hid // H, "causal"))
    r = rnd(x + a @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"])
    n = rnd(layer_norm(r, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps))
    f = rnd(ACT[cfg.get("act", "gelu_tanh")](n @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]))
    return r + f @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"], k, v
