"""rlx.hir: building HIR from Python, checked as it is built, run against NumPy."""
import math
import re

import numpy as np
import pytest

import reference as ref
import rlx
from harness import assert_close
from rlx import hir


def test_builder_layer_matches_numpy():
    H, heads, kv, D, inter, S = 64, 4, 2, 16, 96, 7
    f = hir.Function("layer")
    x = f.input("x", (1, "seq", H))
    pos = f.input("position_ids", ("seq",), "i64")
    names = ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
             "self_attn.v_proj.weight", "self_attn.o_proj.weight",
             "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
             "mlp.down_proj.weight"]
    shapes = [(H,), (heads * D, H), (kv * D, H), (kv * D, H), (H, heads * D), (H,), (inter, H),
              (inter, H), (H, inter)]
    w = [f.param(n, s) for n, s in zip(names, shapes)]
    h = hir.rms_norm(x, w[0])
    q = hir.rope(hir.linear(h, w[1]), D, positions=pos, theta=10000.0)
    k = hir.rope(hir.linear(h, w[2]), D, positions=pos, theta=10000.0)
    v = hir.linear(h, w[3])
    a = hir.attention(q, k, v, heads, kv, D, causal=True)
    n, s = hir.residual_rms_norm(hir.linear(a, w[4]), x, w[5])
    f.output("y", hir.swiglu(n, w[6], w[7], w[8]) + s)
    model = rlx.compile_cpu(f.build(), dims={"seq": S})

    rng = np.random.default_rng(3)
    vals = {n: ((1 + 0.1 * rng.standard_normal(s)) if len(s) == 1 else
                rng.standard_normal(s) / math.sqrt(s[-1])).astype(np.float32) for n, s in zip(names, shapes)}
    xs = rng.standard_normal((1, S, H)).astype(np.float32)
    out = model.run(x=xs, position_ids=np.arange(S), **vals)["y"]
    want, _, _ = ref.llama_layer(xs, np.arange(S), vals,
                                 {"heads": heads, "kv_heads": kv, "head_dim": D, "eps": 1e-5,
                                  "rope_theta": 10000.0}, prefix="")
    assert_close(out, want, rtol=1e-5)
def test_builder_decoder_layer_op_and_types():
    f = hir.Function()
    x = f.input("x", (1, 4, 32))
    p = f.input("pos", (4,), "i64")
    ws = [f.param(f"w{i}", s) for i, s in enumerate(
        [(32,), (32, 32), (16, 32), (16, 32), (32, 32), (32,), (48, 32), (48, 32), (32, 48)])]
    y, k, v = hir.decoder_layer(x, p, ws, num_heads=4, num_kv_heads=2, head_dim=8,
                                scaling={"rope_type": "linear", "factor": 2.0}, window=3)
    assert y.shape == (1, 4, 32) and k.shape == (1, 4, 16) and v.dtype == "f32"
    f.output("y", y)
    text = f.build().text()
    assert re.search(r"mask\s+sliding_window window = 3", text) and "rope_type = linear" in text


def test_bad_shapes_raise_with_the_python_line():
    f = hir.Function()
    x = f.input("x", (2, 8, 64))
    w = f.param("w", (32, 48))
    with pytest.raises(rlx.RlxError) as e:
        hir.linear(x, w)
    msg = str(e.value)
    assert "test_hir_builder.py:" in msg and "in_features=48" in msg and "last dim is 64" in msg
    with pytest.raises(rlx.RlxError, match="divisible by num_kv_heads"):
        hir.attention(x, x, x, num_heads=3, num_kv_heads=2, head_dim=16)
    with pytest.raises(rlx.RlxError, match="eps must be a finite value > 0, got -1"):
        hir.rms_norm(x, f.param("g", (64,)), eps=-1.0)
    other = hir.Function("other")
    with pytest.raises(ValueError, match="belongs to function"):
        hir.add(x, other.input("y", (2, 8, 64)))
    with pytest.raises(ValueError, match="no outputs"):
        f.build()
