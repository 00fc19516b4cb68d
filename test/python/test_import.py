"""Import of exporter-style TOSA and linalg (rlx-import-to-mir): a Llama
decoder layer written as TorchToTosa writes it is raised and recognized, fuses
to the same kernel count as RLX's own HIR of the layer, and computes what
numpy computes and what upstream's own lowering of the original IR computes
(mlir-opt-22 → mlir-runner, without RLX)."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import rlx
from exported_forms import dense, linalg_llama_layer, numpy_llama_layer, tosa_llama_layer, ty
from harness import BUILD, assert_close, run_mlir, run_single, run_upstream

RLX_OPT = BUILD / "bin" / "rlx-opt"
S, D, H, KV, HD, F = 6, 32, 4, 2, 8, 48
NAMES = ["input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
         "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
         "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"]
SHAPES = [(D,), (H * HD, D), (KV * HD, D), (KV * HD, D), (D, H * HD), (D,), (F, D), (F, D), (D, F)]


def weights(seed=0):
    rng = np.random.default_rng(seed)
    w = {}
    for n, s in zip(NAMES, SHAPES):
        w[n] = ((1 + 0.1 * rng.standard_normal(s)) if len(s) == 1 else
                rng.standard_normal(s) / np.sqrt(s[1])).astype(np.float32)
    x = rng.standard_normal((1, S, D)).astype(np.float32)
    return x, w


def compute_ops_after_fusion(text: str, passes: str) -> int:
    proc = subprocess.run([str(RLX_OPT), "-", f"--pass-pipeline=builtin.module({passes})",
                           "-o", os.devnull], input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"compute ops (\d+) -> (\d+)", proc.stderr)
    assert m, proc.stderr
    return int(m.group(2))


FORMS = {"tosa": tosa_llama_layer, "linalg": linalg_llama_layer}


@pytest.mark.parametrize("form", list(FORMS))
def test_layer_is_raised_into_blocks(form):
    m = rlx.parse(FORMS[form](S, D, H, KV, HD, F))
    m.run_pipeline("rlx-import-to-mir")
    text = m.text()
    assert "tosa." not in text and "linalg." not in text
    for op in ["rms_norm", "rope", "causal_mask", "softmax", "silu"]:
        assert f"rlx_mir.{op}" in text, op
    m.run_pipeline("rlx-mir-fuse")
    fused = m.text()
    assert "rlx_mir.attention" in fused and "kv_heads = 2" in fused and "causal" in fused
    assert "glu" in fused  # SwiGLU: gate|up merged, silu gating in the epilogue


@pytest.mark.parametrize("form", list(FORMS))
def test_layer_fuses_to_the_kernel_count_of_our_own_hir(form):
    params = ", ".join(f'%{v}: {ty(s)} {{rlx.param = "{n}"}}' for v, n, s in
                       zip(["n1", "wq", "wk", "wv", "wo", "n2", "wg", "wu", "wd"], NAMES, SHAPES))
    hir = f"""
func.func @layer(%x: {ty((1, S, D))}, %pos: tensor<{S}xi64>, {params}) -> {ty((1, S, D))} {{
  %y:3 = rlx_hir.decoder_layer %x positions(%pos : tensor<{S}xi64>)
      weights(%n1, %wq, %wk, %wv, %wo, %n2, %wg, %wu, %wd : {ty((D,))}, {ty((H * HD, D))},
              {ty((KV * HD, D))}, {ty((KV * HD, D))}, {ty((D, H * HD))}, {ty((D,))},
              {ty((F, D))}, {ty((F, D))}, {ty((D, F))})
      heads = {H}, kv_heads = {KV}, head_dim = {HD} eps = 1.0e-05 theta = 10000.0 : {ty((1, S, D))}
  return %y#0 : {ty((1, S, D))}
}}"""
    ours = compute_ops_after_fusion(hir, "convert-rlx-hir-to-mir,rlx-mir-fuse{report}")
    imported = compute_ops_after_fusion(FORMS[form](S, D, H, KV, HD, F),
                                        "rlx-import-to-mir,rlx-mir-fuse{report}")
    assert imported == ours == 6


@pytest.mark.parametrize("form", list(FORMS))
def test_layer_numerics_match_numpy(form):
    x, w = weights(1)
    pos = np.arange(S, dtype=np.int64)[None]
    out = run_mlir(FORMS[form](S, D, H, KV, HD, F),
                   {"hidden_states": x, "position_ids": pos, **w})["output"]
    assert_close(out, numpy_llama_layer(x, pos, w, H, KV, HD), rtol=1e-5)
def upstream_run(layer_text: str, x, pos, w) -> np.ndarray:
    """The original IR through upstream mlir-opt-22 and mlir-runner only."""
    args = [f'%a0 = "tosa.const"() <{{values = {dense(x)} : {ty(x.shape)}}}> : () -> {ty(x.shape)}',
            f'%a1 = "tosa.const"() <{{values = dense<{pos.tolist()}> : {ty(pos.shape, "i64")}}}> '
            f': () -> {ty(pos.shape, "i64")}']
    types = [ty(x.shape), ty(pos.shape, "i64")]
    for i, n in enumerate(NAMES):
        args.append(f'%a{i + 2} = "tosa.const"() <{{values = {dense(w[n])} : {ty(w[n].shape)}}}> '
                    f': () -> {ty(w[n].shape)}')
        types.append(ty(w[n].shape))
    call = ", ".join(f"%a{i}" for i in range(len(types)))
    main = (f"func.func private @printMemrefF32(tensor<*xf32>)\n"
            f"func.func @main() {{\n  " + "\n  ".join(args) + "\n"
            f"  %y = call @layer({call}) : ({', '.join(types)}) -> {ty((1, S, D))}\n"
            f"  %u = tensor.cast %y : {ty((1, S, D))} to tensor<*xf32>\n"
            f"  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()\n  return\n}}\n")
    # Upstream knows nothing of rlx.* argument attributes: drop them.
    plain = re.sub(r" \{rlx\.[a-z]+ = \"[^\"]*\"\}", "", layer_text)
    return run_upstream(plain + main).reshape(1, S, D)


@pytest.mark.parametrize("form", list(FORMS))
def test_layer_matches_upstream_lowering_of_the_original(form):
    x, w = weights(2)
    pos = np.arange(S, dtype=np.int64)[None]
    text = FORMS[form](S, D, H, KV, HD, F)
    ours = run_mlir(text, {"hidden_states": x, "position_ids": pos, **w})["output"]
    upstream = upstream_run(text, x, pos, w)
    assert_close(ours, upstream, rtol=1e-5)

def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_tosa_reductions_with_a_dynamic_result_dim_run(device):
    """Reproducers feb2740d and 74eff4b7 (stack overflows in upstream's
    tosa-to-linalg) run and compute numpy's values."""
    path = pathlib.Path(__file__).resolve().parents[1] / "Conversion" / "ImportToMIR" / \
        "tosa-dynamic-reduce.mlir"
    softmax, guard = [c for c in path.read_text().split("// -----")]
    rng = np.random.default_rng(3)
    s = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    got = run_single(softmax, {"arg0": s}, extra=("--device", device))
    assert_close(got, _softmax(s), rtol=1e-5, atol=1e-6)
    s = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    s[0, 1, 2, :] = -np.inf  # the one row the guard keeps
    got = run_single(guard, {"arg0": s}, extra=("--device", device))
    # The raised softmax is rlx_mir.softmax: a row of -inf gives 0 where the
    # TOSA arithmetic gives NaN (torch's _safe_softmax, which this guard is
    # the export of with its select arms swapped by the mutation).
    with np.errstate(invalid="ignore"):
        want = np.where(np.all(s == -np.inf, axis=-1, keepdims=True),
                        np.nan_to_num(_softmax(s), nan=0.0), 0.0)
    assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_rlx_run_counts_the_kernels_nothing_raised(tmp_path):
    """rlx-run's "compute ops (kernels)" line counts what runs, also the ops
    the import left in their own dialect (it printed 21 where 28 ran): the
    same count as rlx-mir-fuse{report}, one function (countOps)."""
    src = tmp_path / "m.mlir"
    src.write_text("""
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tosa.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tosa.reverse %e {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}""")
    proc = subprocess.run([str(BUILD / "bin" / "rlx-run"), str(src)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "compute ops (kernels) 2 -> 2" in proc.stdout + proc.stderr
    report = subprocess.run([str(RLX_OPT), str(src), "--rlx-import-to-mir",
                             "--rlx-mir-fuse=report=true", "-o", os.devnull],
                            capture_output=True, text=True)
    assert "compute ops 2 -> 2 (not rlx_mir: 'tosa.reverse' x1)" in report.stderr


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_math_on_whole_tensors_runs(device):
    """math.exp / math.cos / arith.addf applied to whole tensors (as
    buddy-mlir's kernels write them) stopped the CPU path with "op was not
    bufferized"; the import runs convert-elementwise-to-linalg first."""
    text = """
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = math.exp %x : tensor<4x8xf32>
  %c = math.cos %e : tensor<4x8xf32>
  %s = arith.addf %c, %x : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}"""
    x = np.random.default_rng(5).standard_normal((4, 8)).astype(np.float32)
    got = run_single(text, {"arg0": x}, extra=("--device", device))
    assert_close(got, np.cos(np.exp(x)) + x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_bool_casts_are_one_not_minus_one(device):
    """tosa.cast of i1 true is 1 (upstream's folder makes a constant one
    -1.0: it read the 1-bit integer as signed). Constant and computed
    booleans, to float and to int."""
    text = """
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) {
  %t = "tosa.const"() <{values = dense<[[true, false, true], [false, true, true]]> : tensor<2x3xi1>}> : () -> tensor<2x3xi1>
  %cf = tosa.cast %t : (tensor<2x3xi1>) -> tensor<2x3xf32>
  %ci = tosa.cast %t : (tensor<2x3xi1>) -> tensor<2x3xi32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %m = tosa.greater %x, %z : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %cm = tosa.cast %m : (tensor<2x3xi1>) -> tensor<2x3xf32>
  return %cf, %ci, %cm : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>
}"""
    x = np.array([[1, -1, 2], [-3, 0, 5]], np.float32)
    out = run_mlir(text, {"arg0": x}, extra=("--device", device))
    t = np.array([[1, 0, 1], [0, 1, 1]])
    np.testing.assert_array_equal(out["result0"], t.astype(np.float32))
    np.testing.assert_array_equal(out["result1"], t.astype(np.int32))
    np.testing.assert_array_equal(out["result2"], (x > 0).astype(np.float32))
