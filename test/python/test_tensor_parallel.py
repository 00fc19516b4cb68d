"""Tensor parallelism on the CPU: `mpirun -np N rlx-run --tp N` gives the
single-process result.

Every rank compiles the model's rank-local program (rlx-mir-shard, then
upstream sharding-propagation and shard-partition, then the usual fusion and
arena plan), makes the seeded whole weights and inputs and keeps its block
(tensorParallelSplit of each name), and runs with Open MPI all-reduces over
loopback; rank 0 writes the outputs, the KV caches gathered from every rank.
The reference is the plain `rlx-run` of the same module and seed; outputs
are compared element-wise (rtol 1e-5, atol 1e-5).
"""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from harness import RLX_GEN, RLX_RUN, assert_close, shared_dir

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(
    MPIRUN is None, reason="Open MPI's mpirun is not installed (scripts/setup.sh installs it)")
SHARED = shared_dir()
LLAMA_1B = SHARED / "models" / "llama-3.2-1b.json" if SHARED else None
# A small Llama with a vocab-parallel LM head (untied) and 8 heads / 4 KV
# heads, so that tp = 4 splits KV heads too.
SMALL = ["--set", "hidden_size=128", "--set", "num_attention_heads=8",
         "--set", "num_key_value_heads=4", "--set", "head_dim=16",
         "--set", "intermediate_size=256", "--set", "vocab_size=96",
         "--set", "tie_word_embeddings=false"]


def generate(tmp: pathlib.Path, name: str, *args: str) -> pathlib.Path:
    if LLAMA_1B is None:
        pytest.skip("the shared model configs are not here")
    path = tmp / f"{name}.mlir"
    subprocess.run([str(RLX_GEN), str(LLAMA_1B), *args, "-o", str(path)], check=True)
    return path


def rlx_run(model: pathlib.Path, out: pathlib.Path, tp: int | None = None,
            extra: tuple = ()) -> tuple[dict[str, np.ndarray], str]:
    cmd = [str(RLX_RUN), str(model), "--output-dir", str(out), *extra]
    if tp is not None:
        cmd = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(tp), *cmd,
               "--tp", str(tp)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {p.stem: np.load(p) for p in out.glob("*.npy")}, proc.stdout


def assert_same_outputs(ref: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> None:
    assert sorted(got) == sorted(ref)
    for name, value in ref.items():
        assert got[name].shape == value.shape, name
        assert_close(got[name], value, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def layer_1b(tmp_path_factory):
    """A Llama-3.2-1B decoder layer (32 heads, 8 KV heads, intermediate 8192)
    over 8 tokens, and its single-process outputs."""
    tmp = tmp_path_factory.mktemp("layer")
    model = generate(tmp, "layer", "--layer-only", "--seq=8")
    ref, stdout = rlx_run(model, tmp / "ref")
    return model, ref, weight_bytes(stdout)[0]


def weight_bytes(stdout: str) -> tuple[int, int | None]:
    """(parameter bytes this process holds, of them replicated) from rlx-run."""
    m = re.search(r"^weights: (\d+) bytes(?: on this rank \(split \d+, replicated (\d+)\))?$",
                  stdout, re.M)
    assert m, stdout
    return int(m.group(1)), (int(m.group(2)) if m.group(2) else None)


@pytest.mark.parametrize("tp", [2, 4])
def test_llama_3_2_1b_layer(layer_1b, tmp_path, tp):
    model, ref, whole = layer_1b
    got, stdout = rlx_run(model, tmp_path / "out", tp)
    assert f"tensor parallel: {tp} ranks (Open MPI)" in stdout
    assert_same_outputs(ref, got)
    # Each rank holds 1/tp of the split weights and all of the replicated
    # ones (the two RMSNorm weights, 2 x 2048 f32).
    rank, replicated = weight_bytes(stdout)
    assert replicated == 2 * 2048 * 4
    assert rank == replicated + (whole - replicated) // tp
    # Two all-reduces per layer (after o_proj and down_proj), each of the
    # layer's activations (8 tokens x 2048 f32): the Megatron minimum.
    assert "collectives per step: 2 all-reduce(s), 131072 bytes reduced" in stdout


@pytest.fixture(scope="module")
def two_layers(tmp_path_factory):
    """A 2-layer model: prefill of 5 tokens (logits) and one decode step on a
    7-token KV cache (logits and the present K/V of both layers)."""
    tmp = tmp_path_factory.mktemp("model")
    prefill = generate(tmp, "prefill", "--layers=2", "--seq=5", *SMALL)
    decode = generate(tmp, "decode", "--layers=2", "--kv-cache", "--seq=1", "--past=7", *SMALL)
    return {m.stem: (m, rlx_run(m, tmp / f"ref-{m.stem}")[0]) for m in (prefill, decode)}


@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("step", ["prefill", "decode"])
def test_two_layer_model(two_layers, tmp_path, tp, step):
    model, ref = two_layers[step]
    got, _ = rlx_run(model, tmp_path / "out", tp)
    if step == "decode":
        # The present caches hold the 7 past positions and the new one.
        assert got["present.1.key"].shape == (1, 8, 64)
    assert_same_outputs(ref, got)


def test_tp_needs_as_many_processes(tmp_path):
    model = generate(tmp_path, "layer", "--layer-only", "--seq=2", *SMALL)
    proc = subprocess.run([str(RLX_RUN), str(model), "--tp", "2"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "--tp 2 needs 2 MPI processes (mpirun -np 2 rlx-run ...), this job has 1" in proc.stderr


def test_tp_not_dividing_heads_is_a_diagnostic(tmp_path):
    model = generate(tmp_path, "layer", "--layer-only", "--seq=2", *SMALL)
    proc = subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "3",
                           str(RLX_RUN), str(model), "--tp", "3"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert ("error: rlx-mir-shard: tp = 3 does not divide the 8 heads of "
            "'model.layers.0.self_attn.q_proj.weight'") in proc.stderr


@pytest.mark.parametrize("tp", [2, 4])
def test_vocab_parallel_embedding_and_tied_head(tmp_path, tp):
    """Tied embeddings: the table is split by vocabulary rows for the lookup
    (masked local gather and an all-reduce) and for the LM head (logits
    gathered). An id past the vocabulary is clamped, as without tp."""
    model = generate(tmp_path, "tied", "--layers=2", "--seq=5",
                     *SMALL[:-2], "--set", "tie_word_embeddings=true")
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array([[3, 95, 120, 0, 50]], dtype=np.int64))
    extra = ("--input", f"input_ids={ids}")
    ref, _ = rlx_run(model, tmp_path / "ref", extra=extra)
    got, stdout = rlx_run(model, tmp_path / "out", tp, extra=extra)
    assert_same_outputs(ref, got)
    # The embedding's all-reduce, two per layer, and the logits' gather.
    assert "collectives per step: 6 all-reduce(s)" in stdout
