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
from harness import BUILD, ROOT, assert_close, run_mlir

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
    assert "rlx_hir.attention" in mlir and "rlx_hir.swiglu" in mlir and "layout in_out" in mlir

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
    assert_close(got, want, rtol=F32_TOL)
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
    assert_close(vb, va, rtol=F32_TOL)
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


def a3_graph(window_json, kind="HIR"):
    """Case A3's attention (one head, D = 2) as an RLX JSON graph whose mask is
    the original's SlidingWindow(window_json): w + 1 keys by its definition."""
    g = Graph()
    q = g.node({"Input": {"name": "q"}}, [], shape(1, 3, 2))
    k = g.node({"Input": {"name": "k"}}, [], shape(1, 3, 2))
    v = g.node({"Input": {"name": "v"}}, [], shape(1, 3, 2))
    mask = {"SlidingWindow": window_json}
    if kind == "HIR":
        op = {"Attention": {"num_heads": 1, "head_dim": 2, "mask": mask}}
    else:
        op = {"Mir": {"Attention": {"num_heads": 1, "head_dim": 2, "mask_kind": mask,
                                    "score_scale": None, "attn_logit_softcap": None}}}
    a = g.node(op, [q, k, v], shape(1, 3, 2))
    return g.module([a], name="a3")


def original_window_reference(q, k, v, w):
    """The original RLX's definition: key j visible to query i iff i - w <= j <= i."""
    s = q @ k.T / np.sqrt(q.shape[1])
    i, j = np.arange(3)[:, None], np.arange(3)[None, :]
    s = np.where((j <= i) & (j >= i - w), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


@pytest.mark.parametrize("kind", ["HIR", "MIR"])
@pytest.mark.parametrize("original_w, expected", [
    # A3 with our w = 2 (self and the key before), written as the original's w = 1.
    (1, [[1, 2], [2.3395231, 3.3395231], [4.3395231, 5.3395231]]),
    # Our w = 1 (only the query's own key), the original's w = 0.
    (0, [[1, 2], [3, 4], [5, 6]]),
])
def test_sliding_window_import_follows_the_original(original_w, expected, kind):
    q = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    v = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    imported = translate(["--import-rlx-json"], a3_graph(original_w, kind))
    assert f"window = {original_w + 1}" in imported, imported
    out = run_mlir(imported, {"q": q[None], "k": q[None], "v": v[None]})
    (got,) = out.values()
    want = original_window_reference(q.astype(np.float64), q.astype(np.float64), v, original_w)
    np.testing.assert_allclose(want, expected, rtol=1e-6)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)


def test_sliding_window_export_subtracts_one():
    text = """
func.func @a(%q: tensor<1x3x2xf32> {rlx.input = "q"}, %k: tensor<1x3x2xf32> {rlx.input = "k"},
             %v: tensor<1x3x2xf32> {rlx.input = "v"}) -> tensor<1x3x2xf32> {
  %0 = rlx_hir.attention %q, %k, %v heads = 1, kv_heads = 1, head_dim = 2 sliding_window window = 2
      : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}
"""
    graph = json.loads(translate(["--export-rlx-hir-json"], text))
    masks = [n["op"]["Attention"]["mask"] for n in graph["nodes"]
             if isinstance(n["op"], dict) and "Attention" in n["op"]]
    assert masks == [{"SlidingWindow": 1}]
    # And back: the same window as before.
    assert "window = 2" in translate(["--import-rlx-json"], json.dumps(graph))


def test_fusion_policy_field_is_checked():
    graph = json.loads(a3_graph(1))
    graph["fusion_policy"] = "Bogus"
    proc = subprocess.run([str(RLX_TRANSLATE), "--import-rlx-json"], input=json.dumps(graph),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert 'fusion_policy must be "Direct" or "Fusable", got "Bogus"' in proc.stderr, proc.stderr
    graph["fusion_policy"] = "Fusable"
    assert 'rlx.fusion_policy = "fusable"' in translate(["--import-rlx-json"], json.dumps(graph))


def test_lir_export_of_the_example_round_trips():
    """README: the planned LIR of the bundled example exports (it failed: "a
    view of a buffer no node produced"), imports back into a plan that
    rlx-lir-verify-plan accepts, and computes the same values: the RoPE
    table kernel (two outputs, an inlined constant) as a kernel escape, the
    q/k/v slices of the merged projection as strided slice aliases, the
    positions' reshape as a view of an input buffer."""
    example = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()
    planned = subprocess.run(
        [str(BUILD / "bin" / "rlx-opt"), "-", "--convert-rlx-hir-to-mir", "--rlx-mir-fuse",
         "--rlx-mir-specialize=dims=seq=5", "--convert-rlx-mir-to-lir", "--rlx-lir-bufferize",
         "--rlx-lir-plan-buffers"], input=example, capture_output=True, text=True, timeout=120)
    assert planned.returncode == 0, planned.stderr
    exported = translate(["--export-rlx-lir-json"], planned.stdout)
    aliases = json.loads(exported)["buffers"]["view_aliases"]
    assert sum("slice" in a for a in aliases.values()) == 3
    imported = translate(["--import-rlx-json"], exported)
    check = subprocess.run([str(BUILD / "bin" / "rlx-opt"), "-", "--rlx-lir-verify-plan",
                            "-o", "/dev/null"], input=imported, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    rng = np.random.default_rng(11)
    inputs = {}
    for m in re.finditer(r'memref<([0-9x]+)x(f32|i64)> \{rlx\.(?:input|param) = "([^"]+)"\}',
                         imported):
        dims = tuple(int(d) for d in m.group(1).split("x"))
        if m.group(2) == "i64":
            inputs[m.group(3)] = np.arange(int(np.prod(dims)), dtype=np.int64).reshape(dims)
        else:
            inputs[m.group(3)] = (rng.standard_normal(dims) * 0.05).astype(np.float32)
    assert len(inputs) == 8, inputs.keys()
    (a,), (b,) = run_mlir(planned.stdout, inputs).values(), run_mlir(imported, inputs).values()
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
