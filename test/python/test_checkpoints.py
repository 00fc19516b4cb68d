"""rlx-run --weights: Hugging Face checkpoints bound to a model's parameters by name.

A small random-init model per architecture is written by transformers'
`save_pretrained` (safetensors: one file, and sharded with an index), in f32
and in bf16; `rlx-gen` builds the same config, and `rlx-run --weights DIR`
runs it on the checkpoint, on the CPU path and on the GPU path's emulator
(`--device=emu`, the code `--device=cuda` runs), from one test body. The
logits must match transformers' own
(element-wise, f32 1e-4 relative as in test_hf_models.py; the bf16 checkpoint
is widened exactly, so it is compared with transformers running the same
bf16-rounded weights in f32). A missing, extra or mis-shaped tensor, a
malformed file and a name given twice are errors naming them.
"""
from __future__ import annotations

import copy
import json
import shutil
import struct
import re
import subprocess

import numpy as np
import pytest

from harness import RLX_RUN, gen_model, run_mlir

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (its config shrinking and seeded weights)

CASES = {c.name: c for c in hfm.CASES}
NAMES = [n for n in ("llama-3.2-1b", "qwen3-0.6b", "gpt2", "phi3-mini") if n in CASES]
# q|k|v (and Phi-3's gate|up) packed in the checkpoint already (GPT-2's
# c_attn, Phi-3's qkv_proj / gate_up_proj): nothing to pack (Phi-3's split
# and merged again folds back to the checkpoint's tensor).
PACKED_IN_CHECKPOINT = ("gpt2", "phi3-mini")


def logits_with_weights(text, ckpt, ids, tmp_path, extra=(), launcher=(), positions=True):
    np.save(tmp_path / "ids.npy", ids)
    pos = np.arange(ids.shape[1], dtype=np.int64)
    np.save(tmp_path / "pos.npy", pos)
    (tmp_path / "m.mlir").write_text(text)
    proc = subprocess.run([*launcher, str(RLX_RUN), str(tmp_path / "m.mlir"), "--weights", str(ckpt),
                           "--input", f"input_ids={tmp_path / 'ids.npy'}",
                           *(["--input", f"position_ids={tmp_path / 'pos.npy'}"] if positions else []),
                           "--dims", f"seq={ids.shape[1]}", "--output-dir", str(tmp_path / "out"),
                           *extra], capture_output=True, text=True, timeout=600)
    return proc


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("shards", ["one-file", "sharded"])
@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_logits_match_transformers(name, shards, dtype, device, tmp_path):
    hf = hfm.HFModel(CASES[name])
    model = hf.models["eager"]
    ckpt = tmp_path / "ckpt"
    if dtype == "bf16":
        # The reference runs the bf16-rounded weights in f32 (RLX widens them exactly).
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
        # A copy is cast (casting the model itself would round its RoPE buffer too).
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(
            ckpt, max_shard_size="20KB" if shards == "sharded" else "1GB")
    else:
        model.save_pretrained(ckpt, max_shard_size="20KB" if shards == "sharded" else "1GB")
    files = sorted(p.name for p in ckpt.glob("*.safetensors"))
    assert (len(files) > 1) == (shards == "sharded"), files
    assert (ckpt / "model.safetensors.index.json").exists() == (shards == "sharded")
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(hf.case.config, *hf.case.sets())
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    if device == "emu":
        # On the device too: a packed parameter is its packing function's
        # output buffer, and the originals are freed once packed.
        from safetensors import safe_open
        params = 0
        for f in ckpt.glob("*.safetensors"):
            with safe_open(str(f), "pt") as st:
                params += sum(4 * int(np.prod(st.get_slice(k).get_shape())) for k in st.keys())
        mem = re.search(r"device memory: (\d+) bytes, weights (\d+) of them \((\d+) bytes of "
                        r"packed originals released\)", proc.stdout)
        assert mem, proc.stdout
        if name not in PACKED_IN_CHECKPOINT:
            assert int(mem.group(3)) > 0, proc.stdout
        assert int(mem.group(2)) <= 1.01 * params, (proc.stdout, params)
    if device == "cpu":
        # Packing replaces: the merged q|k|v and gate|up tensors stand in for
        # the originals (read from the checkpoint straight into their slices,
        # or packed and then released), so the weights are held once (within
        # the few values packing derives anew; both copies would be about
        # 1.5x).
        bound = int(re.search(r"weights: (\d+) bytes", proc.stdout).group(1))
        held = re.search(r"weights held: (\d+) bytes after packing \((\d+) packed, (\d+) of "
                         r"the originals released, (\d+) read into", proc.stdout)
        if name in PACKED_IN_CHECKPOINT and held is None:
            pass  # nothing to pack (but the [K, N] forms of oneDNN's GEMM)
        else:
            # Read from the checkpoint straight into the packed layout
            # (rows, or columns of the [K, N] forms), never held twice.
            assert held and int(held.group(4)) > 0, proc.stdout
            assert int(held.group(1)) <= 1.01 * bound, proc.stdout
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), want, f"{name} {dtype} {shards} {device}")


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_bf16_model_from_a_bf16_checkpoint(device, tmp_path):
    """A bf16 model (rlx-gen --dtype bf16: bf16 weights and activations) on
    its bf16 checkpoint, on both paths: transformers' logits on the same
    bf16-rounded weights in f32, within bf16's 2e-2 of their largest."""
    hf = hfm.HFModel(CASES["llama-3.2-1b"])
    model = hf.models["eager"]
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    copy.deepcopy(model).to(torch.bfloat16).save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(hf.case.config, *hf.case.sets(), "--dtype", "bf16")
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    got = np.load(tmp_path / "out" / "logits.npy").astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-2 * np.abs(want).max())


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI's mpirun is not installed")
@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_checkpoint_at_tp2_matches_transformers(device, tmp_path):
    """`mpirun -np 2 rlx-run --tp 2 --weights CKPT`: each rank keeps its
    block of the checkpoint's whole tensors; rank 0's logits are
    transformers'."""
    hf = hfm.HFModel(CASES["llama-3.2-1b"])
    model = hf.models["eager"]
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(hf.case.config, *hf.case.sets())
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path,
                               ("--device", device, "--tp", "2"),
                               launcher=(shutil.which("mpirun"), "--allow-run-as-root",
                                         "--oversubscribe", "-np", "2"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tensor parallel: 2 ranks" in proc.stdout, proc.stdout
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), want, f"tp 2 {device}")


@pytest.fixture(scope="module")
def llama():
    hf = hfm.HFModel(CASES["llama-3.2-1b"])
    return hf, gen_model(hf.case.config, *hf.case.sets())


def write_safetensors(path, tensors, header_extra=None, corrupt=None):
    """A .safetensors file written here (not by the library), so malformed
    ones can be made too."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        dt = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[a.dtype]
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    header |= header_extra or {}
    if corrupt:
        corrupt(header)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


@pytest.mark.parametrize("case,message", [
    ("missing", "parameter 'model.norm.weight' is not in the checkpoint"),
    ("extra", "checkpoint tensor 'model.unused.weight' is not a parameter of the model"),
    ("shape", "checkpoint tensor 'model.norm.weight' has shape [3], the model's parameter [{H}]"),
    ("dtype", "checkpoint tensor 'model.norm.weight' is i64, the model's parameter f32"),
    ("offsets", "'model.norm.weight': data_offsets outside the file's data"),
    ("size", "'model.norm.weight': 4 bytes of data, its F32 shape needs {B}"),
    ("header", "header length"),
])
@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_bad_checkpoints_are_errors_naming_the_tensor(llama, tmp_path, case, message, device):
    hf, text = llama
    params = {n: v for n, v in hf.params.items()}
    hidden = params["model.norm.weight"].shape[0]
    message = message.format(H=hidden, B=4 * hidden)
    f = tmp_path / "model.safetensors"
    corrupt = None
    if case == "missing":
        params.pop("model.norm.weight")
    elif case == "extra":
        params["model.unused.weight"] = np.zeros(2, np.float32)
    elif case == "shape":
        params["model.norm.weight"] = np.zeros(3, np.float32)
    elif case == "dtype":
        params["model.norm.weight"] = np.zeros(hidden, np.int64)
    elif case == "offsets":
        corrupt = lambda h: h["model.norm.weight"].update(data_offsets=[0, 1 << 40])  # noqa: E731
    elif case == "size":
        corrupt = lambda h: h["model.norm.weight"].update(  # noqa: E731
            data_offsets=[h["model.norm.weight"]["data_offsets"][0],
                          h["model.norm.weight"]["data_offsets"][0] + 4])
    write_safetensors(f, params, corrupt=corrupt)
    if case == "header":
        f.write_bytes(struct.pack("<Q", 1 << 50) + b"{}")
    proc = logits_with_weights(text, f, hfm.token_ids(4), tmp_path, ("--device", device))
    assert proc.returncode == 1, proc.stdout
    assert message in proc.stderr, proc.stderr
    assert "--weights" in proc.stderr, proc.stderr


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_a_parameter_given_twice_is_an_error(llama, tmp_path, device):
    hf, text = llama
    write_safetensors(tmp_path / "model.safetensors", hf.params)
    np.save(tmp_path / "norm.npy", hf.params["model.norm.weight"])
    proc = logits_with_weights(text, tmp_path / "model.safetensors", hfm.token_ids(4), tmp_path,
                               extra=("--input", f"model.norm.weight={tmp_path / 'norm.npy'}",
                                      "--device", device))
    assert proc.returncode == 1
    assert "'model.norm.weight' is given by --input and by --weights" in proc.stderr, proc.stderr


def test_checkpoint_equals_passing_each_weight(llama, tmp_path):
    """The same numbers as binding the weights one by one with --input."""
    hf, text = llama
    write_safetensors(tmp_path / "model.safetensors", hf.params)
    ids = hfm.token_ids(5)
    proc = logits_with_weights(text, tmp_path / "model.safetensors", ids, tmp_path)
    assert proc.returncode == 0, proc.stderr
    pos = np.arange(5, dtype=np.int64)
    direct = run_mlir(text, hfm.bind(text, hf.params, {"input_ids": ids, "position_ids": pos}),
                      dims={"seq": 5})
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "logits.npy"), direct["logits"])


def test_python_load_weights(llama, tmp_path):
    """rlx.load_weights: the same tensors by name; with a model, the names and
    shapes are checked against its parameters."""
    import rlx
    from rlx.models import from_hf_config
    hf, _ = llama
    hf.models["eager"].save_pretrained(tmp_path / "ckpt", max_shard_size="20KB")
    weights = rlx.load_weights(tmp_path / "ckpt")
    assert sorted(weights) == sorted(hf.params)
    for name, value in hf.params.items():
        np.testing.assert_array_equal(weights[name], value)
    model = rlx.compile_cpu(from_hf_config(hf.case.hf_dict()), dims={"seq": 3})
    assert sorted(rlx.load_weights(tmp_path / "ckpt", model)) == sorted(hf.params)
    write_safetensors(tmp_path / "less.safetensors",
                      {n: v for n, v in hf.params.items() if n != "model.norm.weight"})
    with pytest.raises(rlx.RlxError, match="parameter 'model.norm.weight' is not in the checkpoint"):
        rlx.load_weights(tmp_path / "less.safetensors", model)
    (tmp_path / "bad.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
    with pytest.raises(rlx.RlxError, match="bad JSON header"):
        rlx.load_weights(tmp_path / "bad.safetensors")


def test_python_packed_sources_are_dropped_after_packing(llama):
    """CompiledModel.packed_sources: the parameters packing merges (q/k/v,
    gate/up) are needed by the first run only; later runs without them give
    the same logits, and repacking without them is an error naming one."""
    import rlx
    from rlx.models import from_hf_config
    hf, _ = llama
    model = rlx.compile_cpu(from_hf_config(hf.case.hf_dict()), dims={"seq": 3})
    sources = model.packed_sources
    assert any(n.endswith("q_proj.weight") for n in sources), sources
    assert any(n.endswith("up_proj.weight") for n in sources), sources
    assert not any(n.endswith("norm.weight") for n in sources), sources
    ids = hfm.token_ids(3)
    inputs = {"input_ids": ids, "position_ids": np.arange(3, dtype=np.int64)}
    first = model.run({**hf.params, **inputs})
    weights = {n: v for n, v in hf.params.items() if n not in sources}
    again = model.run({**weights, **inputs})
    for name in first:
        np.testing.assert_array_equal(again[name], first[name])
    model.invalidate_packed_params()
    with pytest.raises(rlx.RlxError, match=r"no value for argument '.*_proj\.weight' \(the "
                                           r"originals of packed parameters"):
        model.run({**weights, **inputs})


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_python_model_loads_its_weights_once(llama, dtype, tmp_path):
    """CompiledModel.load_weights: the model reads its checkpoint (f32, or
    bf16 widened) into itself, merged q|k|v and gate|up straight into their
    packed slices, and runs on the inputs alone; the logits are
    transformers' on the same weights, the bytes held are the parameters'
    once (the originals of packed weights are not kept), and a tensor the
    checkpoint lacks is an error naming it."""
    import rlx
    import torch
    from rlx.models import from_hf_config
    hf, _ = llama
    model = hf.models["eager"]
    if dtype == "bf16":
        model = copy.deepcopy(model)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(tmp_path / "ckpt")
    else:
        model.save_pretrained(tmp_path / "ckpt")
    compiled = rlx.compile_cpu(from_hf_config(hf.case.hf_dict()), dims={"seq": 5})
    held = compiled.load_weights(tmp_path / "ckpt")
    params = sum(int(np.prod(a["shape"])) * 4 for a in compiled.arguments if a["is_param"])
    assert 0.99 * params <= held <= 1.01 * params, (held, params)
    ids = hfm.token_ids(5)
    got = compiled.run(input_ids=ids, position_ids=np.arange(5, dtype=np.int64))
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    hfm.close(next(iter(got.values())), want, f"load_weights {dtype}")
    # A parameter given to run wins over the loaded one.
    emb = next(a["name"] for a in compiled.arguments if a["name"].endswith("embed_tokens.weight"))
    zero = compiled.run(input_ids=ids, position_ids=np.arange(5, dtype=np.int64),
                        **{emb: np.zeros(next(a["shape"] for a in compiled.arguments
                                              if a["name"] == emb), np.float32)})
    assert not np.allclose(next(iter(zero.values())), next(iter(got.values())))
    from safetensors.numpy import save_file
    save_file({"x": np.zeros(2, np.float32)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(rlx.RlxError, match="is not in the checkpoint"):
        compiled.load_weights(tmp_path / "other.safetensors")


def test_rlx_gpu_run_takes_checkpoint_names_and_packs(tmp_path):
    """An artifact of a model with merged q/k/v and gate|up (packed
    parameters): rlx-gpu-run takes the checkpoint's tensors by their names
    (--inputs-dir of NAME.npy) and the runtime packs them before the run;
    the logits are transformers'."""
    from harness import BUILD
    hf = hfm.HFModel(CASES["llama-3.2-1b"])
    model = hf.models["eager"]
    ids = hfm.token_ids(hfm.PREFILL)
    (tmp_path / "m.mlir").write_text(gen_model(hf.case.config, *hf.case.sets()))
    art = tmp_path / "artifact"
    subprocess.run([str(BUILD / "bin" / "rlx-compile"), str(tmp_path / "m.mlir"), "-o", str(art),
                    "--dims", f"seq={ids.shape[1]}", "--no-cubin"], check=True, timeout=600)
    manifest = json.loads((art / "manifest.json").read_text())
    entry = next(f for f in manifest["functions"] if f["name"] == manifest["entry"])
    assert any("packed_by" in b for b in entry["buffers"])  # the case this is about
    data = tmp_path / "data"
    data.mkdir()
    for name, value in hf.params.items():
        np.save(data / f"{name}.npy", value)
    np.save(data / "input_ids.npy", ids)
    np.save(data / "position_ids.npy", np.arange(ids.shape[1], dtype=np.int64))
    proc = subprocess.run([str(BUILD / "bin" / "rlx-gpu-run"), str(art), "--device", "emu",
                           "--inputs-dir", str(data), "--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), want, "rlx-gpu-run")
