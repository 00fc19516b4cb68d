"""RLX JSON interop: graphs in the original RLX's format (../shared/rlx-json.md)
are imported with rlx-translate, compiled and run, and checked against numpy
written here; our own modules exported to the format and imported back compute
the same values."""
from __future__ import annotations

import json
import re
import pathlib
import struct
import subprocess

import numpy as np
import pytest

import reference as ref
from harness import BUILD, ROOT, rel_err, run_mlir

RLX_TRANSLATE = BUILD / "bin" / "rlx-translate"
F32_TOL = 1e-4  # relative, f32 end to end


def translate(args: list[str], stdin: str) -> str:
    proc = subprocess.run([str(RLX_TRANSLATE), *args], input=stdin, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def shape(*dims, dtype="F32"):
    return {"dims": [{"Static": d} if d >= 0 else {"Dynamic": -d} for d in dims], "dtype": dtype}


class Graph:
    """Writes an RLX HIR module the way the Rust serde encoding does."""

    def __init__(self):
        self.nodes = []

    def node(self, op, inputs, shp, name=None):
        self.nodes.append({"id": len(self.nodes), "op": op, "inputs": list(inputs),
                           "shape": shp, "name": name})
        return len(self.nodes) - 1

    def module(self, outputs, name="block"):
        return json.dumps({"name": name, "fusion_policy": "Direct", "outputs": outputs,
                           "nodes": self.nodes})


def test_llama_block_from_rlx_json():
    rng = np.random.default_rng(7)
    S, D, H, KV, HD, F, eps = 6, 32, 4, 2, 8, 48, 1e-5
    g = Graph()
    x = g.node({"Input": {"name": "x"}}, [], shape(1, S, D))
    cos = g.node({"Input": {"name": "cos"}}, [], shape(S, HD // 2))
    sin = g.node({"Input": {"name": "sin"}}, [], shape(S, HD // 2))
    p = {}
    for name, shp in [("g1", (D,)), ("wq", (D, H * HD)), ("wk", (D, KV * HD)),
                      ("wv", (D, KV * HD)), ("wo", (H * HD, D)), ("g2", (D,)),
                      ("up", (D, F)), ("gate", (D, F)), ("down", (F, D))]:
        p[name] = g.node({"Param": {"name": name}}, [], shape(*shp))
    n1 = g.node({"RmsNorm": {"eps": eps}}, [x, p["g1"]], shape(1, S, D))
    lin = {"Linear": {"activation": "None", "has_bias": False}}
    q = g.node(lin, [n1, p["wq"]], shape(1, S, H * HD))
    k = g.node(lin, [n1, p["wk"]], shape(1, S, KV * HD))
    v = g.node(lin, [n1, p["wv"]], shape(1, S, KV * HD))
    rope = {"RoPE": {"head_dim": HD, "n_rot": HD}}
    qr = g.node(rope, [q, cos, sin], shape(1, S, H * HD))
    kr = g.node(rope, [k, cos, sin], shape(1, S, KV * HD))
    att = g.node({"Attention": {"num_heads": H, "head_dim": HD, "mask": "Causal"}},
                 [qr, kr, v], shape(1, S, H * HD))
    o = g.node(lin, [att, p["wo"]], shape(1, S, D))
    n2 = g.node({"ResidualRmsNorm": {"eps": eps}}, [o, x, p["g2"]], shape(1, S, D))
    mlp = g.node("SwiGLU", [n2, p["up"], p["gate"], p["down"]], shape(1, S, D))
    h = g.node({"Mir": {"Binary": "Add"}}, [o, x], shape(1, S, D))
    y = g.node({"Mir": {"Binary": "Add"}}, [mlp, h], shape(1, S, D))
    # A constant added at the end: little-endian f32 bytes, as serde writes Vec<u8>.
    bias = np.linspace(-1, 1, D, dtype=np.float32)
    c = g.node({"Constant": {"data": list(struct.pack(f"<{D}f", *bias))}}, [], shape(D))
    out = g.node({"Mir": {"Binary": "Add"}}, [y, c], shape(1, S, D), name="out")

    mlir = translate(["--import-rlx-json"], g.module([out]))
    assert "rlx_hir.attention" in mlir and "rlx_hir.swiglu" in mlir and "layout  in_out" in mlir

    w = {n: (rng.standard_normal(s) * (0.3 if len(s) == 2 else 1.0)).astype(np.float32)
         for n, s in [("g1", (D,)), ("wq", (D, H * HD)), ("wk", (D, KV * HD)),
                      ("wv", (D, KV * HD)), ("wo", (H * HD, D)), ("g2", (D,)),
                      ("up", (D, F)), ("gate", (D, F)), ("down", (F, D))]}
    xs = rng.standard_normal((1, S, D)).astype(np.float32)
    c_tab, s_tab = ref.rope_tables(np.arange(S), HD, 10000.0)
    got = run_mlir(mlir, {"x": xs, "cos": c_tab, "sin": s_tab, **w})["out"]

    # numpy, with RLX's [in, out] weights (y = x @ W).
    a = ref.rms_norm(xs, w["g1"], eps)
    qq = ref.rope(a @ w["wq"], c_tab, s_tab, HD)
    kk = ref.rope(a @ w["wk"], c_tab, s_tab, HD)
    att_ref = ref.attention(qq, kk, a @ w["wv"], H, KV, HD, mask_kind="causal")
    hh = xs + att_ref @ w["wo"]
    m = ref.rms_norm(hh, w["g2"], eps)
    want = hh + (ref.silu(m @ w["gate"]) * (m @ w["up"])) @ w["down"] + bias
    assert rel_err(got, want) < F32_TOL


def test_exported_example_layer_computes_the_same():
    """Our example layer (PyTorch [out, in] weights, RoPE from positions) →
    RLX JSON → import: transposes and Mlir escapes, same values."""
    example = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()
    # Small copy of the example: same ops, smaller dims.
    text = (example.replace("2048x2048", "64x64").replace("512x2048", "32x64")
            .replace("8192x2048", "96x64").replace("2048x8192", "64x96")
            .replace("x2048x", "x64x").replace("<2048x", "<64x").replace("x512x", "x32x")
            .replace("tensor<2048xf32>", "tensor<64xf32>")
            .replace("heads = 32, kv_heads = 8, head_dim = 64", "heads = 4, kv_heads = 2, head_dim = 16")
            .replace("head_dim = 64", "head_dim = 16"))
    exported = translate(["--export-rlx-hir-json"], text)
    graph = json.loads(exported)
    kinds = [n["op"] if isinstance(n["op"], str) else next(iter(n["op"])) for n in graph["nodes"]]
    assert kinds.count("Linear") == 4 and "SwiGLU" in kinds and "Attention" in kinds
    assert "ResidualRmsNorm" in kinds and "RmsNorm" in kinds
    imported = translate(["--import-rlx-json"], exported)
    # Exporting the import again gives the same JSON (a fixed point).
    assert json.loads(translate(["--export-rlx-hir-json"], imported)) == graph

    rng = np.random.default_rng(3)
    inputs = {"hidden_states": rng.standard_normal((1, 5, 64)).astype(np.float32),
              "position_ids": np.arange(5, dtype=np.int64)}
    for m in re.finditer(r'tensor<([0-9x]+)xf32> \{rlx.param = "([^"]+)"\}', text):
        dims = tuple(int(d) for d in m.group(1).split("x"))
        inputs[m.group(2)] = (rng.standard_normal(dims) * 0.2).astype(np.float32)
    a = run_mlir(text, inputs, dims={"seq": 5})
    b = run_mlir(imported, inputs, dims={"seq": 5})
    (va,), (vb,) = a.values(), b.values()
    assert rel_err(vb, va) < F32_TOL





@pytest.mark.parametrize("bad, message", [
    ('{"name": "m", "outputs": [1], "nodes": [{"id": 0, "op": {"Input": {"name": "x"}}, '
     '"inputs": [], "name": null, "shape": {"dims": [{"Static": 2}], "dtype": "F32"}}, '
     '{"id": 1, "op": {"Mir": {"Binary": "Add"}}, "inputs": [0, 5], "name": null, '
     '"shape": {"dims": [{"Static": 2}], "dtype": "F32"}}]}',
     "node:1:0: error: input 5 is not an earlier node"),
    ('{"name": "m", "outputs": [1], "nodes": [{"id": 0, "op": {"Input": {"name": "x"}}, '
     '"inputs": [], "name": null, "shape": {"dims": [{"Static": 2}], "dtype": "F32"}}, '
     '{"id": 1, "op": {"Mir": {"Binary": "Add"}}, "inputs": [0, 0], "name": null, '
     '"shape": {"dims": [{"Static": 3}], "dtype": "F32"}}]}',
     "the RLX module says node 1 is tensor<3xf32>, the op computes tensor<2xf32>"),
])
def test_bad_json_is_a_located_diagnostic(bad, message):
    proc = subprocess.run([str(RLX_TRANSLATE), "--import-rlx-json"], input=bad,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
