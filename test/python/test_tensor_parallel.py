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
def gpt2_block(tmp_path_factory):
    """A GPT-2 block (12 heads, packed c_attn, Conv1D weights, LayerNorms
    with biases) over 8 tokens, and its single-process outputs."""
    gpt2 = SHARED / "models" / "gpt2.json" if SHARED else None
    if gpt2 is None:
        pytest.skip("the shared model configs are not here")
    tmp = tmp_path_factory.mktemp("gpt2")
    model = tmp / "block.mlir"
    subprocess.run([str(RLX_GEN), str(gpt2), "--layer-only", "--seq=8", "-o", str(model)],
                   check=True)
    ref, stdout = rlx_run(model, tmp / "ref")
    return model, ref, weight_bytes(stdout)[0]


@pytest.mark.parametrize("tp", [2, 4])
def test_gpt2_block(gpt2_block, tmp_path, tp):
    """c_attn packs q|k|v: each rank holds its heads of all three (block r of
    every part) and slices them from its own columns."""
    model, ref, whole = gpt2_block
    got, stdout = rlx_run(model, tmp_path / "out", tp)
    assert_same_outputs(ref, got)
    # Replicated: ln_1 and ln_2 (weight and bias) and the row-parallel
    # biases of attn.c_proj and mlp.c_proj, 6 x 768 f32.
    rank, replicated = weight_bytes(stdout)
    assert replicated == 6 * 768 * 4
    assert rank == replicated + (whole - replicated) // tp
    assert "collectives per step: 2 all-reduce(s), 49152 bytes reduced" in stdout


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
    gathered). Ids at both ends of the vocabulary; one past it is an error
    naming it under tp as without (it was clamped)."""
    model = generate(tmp_path, "tied", "--layers=2", "--seq=5",
                     *SMALL[:-2], "--set", "tie_word_embeddings=true")
    bad = tmp_path / "bad.npy"
    np.save(bad, np.array([[3, 95, 120, 0, 50]], dtype=np.int64))
    proc = subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(tp),
                           str(RLX_RUN), str(model), "--tp", str(tp), "--input", f"input_ids={bad}"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "'input_ids' element 2 is 120, outside [0, 96)" in proc.stderr + proc.stdout
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array([[3, 95, 17, 0, 50]], dtype=np.int64))
    extra = ("--input", f"input_ids={ids}")
    ref, _ = rlx_run(model, tmp_path / "ref", extra=extra)
    got, stdout = rlx_run(model, tmp_path / "out", tp, extra=extra)
    assert_same_outputs(ref, got)
    # The embedding's all-reduce, two per layer, and the logits' gather.
    assert "collectives per step: 6 all-reduce(s)" in stdout


# The GPU path: `rlx-run --device emu --tp N` compiles the per-rank GPU
# artifact (the same kernels as for a GPU) whose all-reduces are collective
# steps of the plan; the GPU emulator runs the kernels and the runtime's
# communicator the all-reduces (MPI here; NCCL on a GPU).
SMALL_LAYER = SMALL[:-4]  # a layer has no vocabulary


@pytest.fixture(scope="module")
def small_layers(tmp_path_factory):
    """A small Llama layer over 8 tokens, and its decode step on a 7-token
    KV cache (present K/V outputs split by KV head), with CPU references."""
    tmp = tmp_path_factory.mktemp("gpu")
    prefill = generate(tmp, "layer", "--layer-only", "--seq=8", *SMALL_LAYER)
    decode = generate(tmp, "decode", "--layer-only", "--kv-cache", "--seq=1", "--past=7",
                      *SMALL_LAYER)
    return {m.stem: (m, rlx_run(m, tmp / f"ref-{m.stem}")[0]) for m in (prefill, decode)}


@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("step", ["layer", "decode"])
def test_gpu_emulator(small_layers, tmp_path, tp, step):
    model, ref = small_layers[step]
    got, stdout = rlx_run(model, tmp_path / "out", tp, extra=("--device", "emu"))
    assert f"tensor parallel: {tp} ranks (Open MPI)" in stdout
    # o_proj's and down_proj's all-reduces of the layer's activations.
    tokens = 8 if step == "layer" else 1
    assert f"collectives per step: 2 all-reduce(s), {2 * tokens * 128 * 4} bytes reduced" in stdout
    assert_same_outputs(ref, got)


def test_gpu_emulator_gpt2_block(gpt2_block, tmp_path):
    model, ref, _ = gpt2_block
    got, _ = rlx_run(model, tmp_path / "out", 2, extra=("--device", "emu"))
    assert_same_outputs(ref, got)


@pytest.mark.parametrize("tp", [2, 4])
@pytest.mark.parametrize("step", ["prefill", "decode"])
def test_gpu_emulator_two_layer_model(two_layers, tmp_path, tp, step):
    """The whole model on the GPU path: each rank's artifact is compiled for
    its rank (the vocab-parallel embedding looks up its own rows); the
    logits are all-gathered (contiguous blocks, then a transpose kernel)."""
    model, ref = two_layers[step]
    got, stdout = rlx_run(model, tmp_path / "out", tp, extra=("--device", "emu"))
    assert "1 all-gather(s)" in stdout
    assert_same_outputs(ref, got)


def test_gpu_artifact_for_several_ranks_needs_them(tmp_path):
    """A tensor-parallel artifact run as one process is an error, not a
    partial result; one that looks up by rank needs --rank."""
    layer = generate(tmp_path, "layer", "--layer-only", "--seq=3", *SMALL_LAYER)
    art = tmp_path / "art"
    subprocess.run([str(RLX_RUN.parent / "rlx-compile"), str(layer), "-o", str(art), "--tp", "2",
                    "--no-cubin"], check=True)
    manifest = (art / "manifest.json").read_text()
    assert manifest.count('"collective": "all_reduce"') == 2
    proc = subprocess.run([str(RLX_RUN.parent / "rlx-gpu-run"), str(art), "--device", "emu",
                           "--zero-missing"], capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "the plan is for 2 ranks, the communicator has 1" in proc.stderr
    model = generate(tmp_path, "model", "--layers=1", "--seq=3", *SMALL)
    proc = subprocess.run([str(RLX_RUN.parent / "rlx-compile"), str(model), "-o",
                           str(tmp_path / "art2"), "--tp", "2", "--no-cubin"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "compile it for one rank (rank=R, `rlx-compile --tp N --rank R`)" in proc.stderr
    subprocess.run([str(RLX_RUN.parent / "rlx-compile"), str(model), "-o", str(tmp_path / "art3"),
                    "--tp", "2", "--rank", "1", "--no-cubin"], check=True)
    assert '"rank": 1' in (tmp_path / "art3" / "manifest.json").read_text()


# KV heads replicated (tp > num_kv_heads): 8 query heads, 2 KV heads, tp 4.
# Every rank computes both KV heads (k/v projections and caches whole) and
# keeps the copy its 2 query heads read (an all_slice, static per rank).
KV2 = ["--set", "hidden_size=128", "--set", "num_attention_heads=8",
       "--set", "num_key_value_heads=2", "--set", "head_dim=16",
       "--set", "intermediate_size=256", "--set", "vocab_size=96",
       "--set", "tie_word_embeddings=false"]


@pytest.fixture(scope="module")
def replicated_kv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kv2")
    layer = generate(tmp, "layer", "--layer-only", "--seq=8", *KV2[:-4])
    decode = generate(tmp, "decode", "--layers=2", "--kv-cache", "--seq=1", "--past=7", *KV2)
    return {m.stem: (m, rlx_run(m, tmp / f"ref-{m.stem}")) for m in (layer, decode)}


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("step", ["layer", "decode"])
def test_replicated_kv_heads(replicated_kv, tmp_path, step, device):
    model, (ref, ref_stdout) = replicated_kv[step]
    got, stdout = rlx_run(model, tmp_path / "out", 4, extra=("--device", device))
    assert_same_outputs(ref, got)
    if device == "cpu" and step == "layer":
        # Replicated: both norms and the whole k/v projections (2 x 32 x 128
        # f32); the rest (q, o, gate, up, down) is split 4 ways.
        whole, _ = weight_bytes(ref_stdout)
        rank, replicated = weight_bytes(stdout)
        assert replicated == 2 * 128 * 4 + 2 * 32 * 128 * 4
        assert rank == replicated + (whole - replicated) // 4


def test_kv_heads_tp_must_divide(tmp_path):
    """tp = 3 divides neither the 8 heads nor the 2 KV heads."""
    layer = generate(tmp_path, "layer", "--layer-only", "--seq=4", *KV2[:-4])
    proc = subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "3",
                           str(RLX_RUN), str(layer), "--tp", "3"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "rlx-mir-shard: tp = 3 does not divide" in proc.stderr
