"""PEFT LoRA adapters on Hugging Face models: `rlx-gen --lora ADAPTER_DIR`
(applied with rlx_mir.lora_matmul, or with `--lora-merge` merged into the
weights once at load) and `rlx-run --weights BASE --weights
ADAPTER/adapter_model.safetensors`, on the CPU path and the emulator from one
test body, against `peft`'s own PeftModel (random-init adapters, both A and
B nonzero, so a missing or mis-scaled delta shows), unmerged and merged;
rsLoRA, rank_pattern / alpha_pattern and "all-linear"; what the generator
refuses, named."""
from __future__ import annotations

import copy
import json
import re
import subprocess

import numpy as np
import pytest

from harness import RLX_GEN, gen_model

torch = pytest.importorskip("torch")
peft = pytest.importorskip("peft")
import test_hf_models as hfm  # noqa: E402
from test_checkpoints import CASES, logits_with_weights  # noqa: E402

ADAPTERS = {
    # q/v/down with a smaller rank and another alpha for down_proj.
    "llama-patterns": ("llama-3.2-1b", dict(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj",
                                                                                   "down_proj"],
                                            rank_pattern={"down_proj": 4},
                                            alpha_pattern={"down_proj": 2})),
    "llama-rslora": ("llama-3.2-1b", dict(r=4, lora_alpha=8, use_rslora=True,
                                          target_modules=["k_proj", "o_proj", "gate_proj", "up_proj"])),
    # Qwen2's q/k/v biases come before the delta (PEFT adds it to the base
    # layer's output, bias included).
    "qwen2-all-linear": ("qwen2", dict(r=4, lora_alpha=4, target_modules="all-linear")),
}


def make_adapter(model, kwargs, path, seed=7):
    """A PEFT model with random A and B, saved; returns it."""
    torch.manual_seed(seed)
    cfg = peft.LoraConfig(lora_dropout=0.0, init_lora_weights=False, **kwargs)
    pm = peft.get_peft_model(copy.deepcopy(model), cfg)
    with torch.no_grad():
        for name, p in pm.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn_like(p) * 0.2)
    pm.eval()
    pm.save_pretrained(path)
    return pm


@pytest.fixture(scope="module", params=list(ADAPTERS))
def adapted(request, tmp_path_factory):
    case, kwargs = ADAPTERS[request.param]
    if case not in CASES:
        pytest.skip(f"{case} is not among the shared model configs")
    hf = hfm.HFModel(CASES[case])
    model = hf.models["eager"]
    tmp = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(tmp / "base")
    pm = make_adapter(model, kwargs, tmp / "adapter")
    if kwargs["target_modules"] == "all-linear":
        # PEFT saves the names "all-linear" resolved to; the file as a user
        # writes it keeps the keyword, which RLX resolves itself.
        cfg_path = tmp / "adapter" / "adapter_config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg["target_modules"] = "all-linear"
        cfg_path.write_text(json.dumps(cfg))
    ids = hfm.token_ids(hfm.PREFILL)
    with torch.no_grad():
        want = pm(input_ids=torch.from_numpy(ids)).logits.numpy()
        base = model(input_ids=torch.from_numpy(ids)).logits.numpy()
        merged = copy.deepcopy(pm).merge_and_unload()(input_ids=torch.from_numpy(ids)).logits.numpy()
    # The adapter changes the logits well beyond the tolerance.
    assert np.abs(want - base).max() > 100 * (hfm.ATOL + hfm.RTOL * np.abs(want).max())
    return hf, tmp, ids, want, merged


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("merge", [False, True])
def test_adapter_logits_match_peft(adapted, merge, device, tmp_path):
    hf, tmp, ids, want, merged = adapted
    extra = ("--lora", str(tmp / "adapter")) + (("--lora-merge",) if merge else ())
    text = gen_model(hf.case.config, *hf.case.sets(), *extra)
    assert ("rlx_mir.lora_matmul" in text) != merge
    proc = logits_with_weights(text, tmp / "base", ids, tmp_path,
                               ("--weights", str(tmp / "adapter" / "adapter_model.safetensors"),
                                "--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every parameter bound
    got = np.load(tmp_path / "out" / "logits.npy")
    hfm.close(got, want, f"PeftModel, merge={merge}, {device}")
    if merge:
        hfm.close(got, merged, f"merge_and_unload, {device}")


def write_config(path, **overrides):
    cfg = {"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj"],
           "bias": "none"}
    cfg.update(overrides)
    path.mkdir(parents=True, exist_ok=True)
    (path / "adapter_config.json").write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize("overrides,message", [
    ({"use_dora": True}, "DoRA adapters are not supported"),
    ({"bias": "all"}, "LoRA bias parameters are not supported"),
    ({"modules_to_save": ["lm_head"]}, "modules_to_save is not supported"),
    ({"peft_type": "IA3"}, 'peft_type must be "LORA"'),
    ({"target_modules": ["lm_head"]}, "it targets 'lm_head'"),
    ({"target_modules": ["embed_tokens", "q_proj"]}, "it targets 'model.embed_tokens'"),
    ({"target_modules": ["no_such_proj"]}, "match none of the model's linear layers"),
    ({"target_modules": "model\\.layers\\.[0-9]+\\.self_attn\\.(q|v)_proj(",
      }, "is not a regular expression"),
    ({"rank_pattern": {"q_proj": 2, "self_attn\\..*": 3}}, "both match"),
    ({"alora_invocation_tokens": [1, 2]}, "alora_invocation_tokens is not supported"),
    ({"use_bdlora": {"blocks": 2}}, "use_bdlora is not supported"),
    ({"lora_bias": True}, "lora_bias: LoRA bias parameters are not supported"),
    ({"fan_in_fan_out": True}, "fan_in_fan_out"),
    ({"lora_alpha": "16"}, "lora_alpha must be a finite number"),
    ({"r": 4.5}, "r must be an integer"),
    ({"use_rslora": "true"}, "use_rslora must be true or false"),
    ({"alpha_pattern": {"layers\\.\\b0\\.q_proj": 2}}, "the escape '\\b' is not supported"),
])
def test_refused_adapters_are_named(overrides, message, tmp_path):
    case = CASES.get("llama-3.2-1b")
    if case is None:
        pytest.skip("no shared llama config")
    cfg = write_config(tmp_path / "adapter", **overrides)
    proc = subprocess.run([str(RLX_GEN), str(case.config), *case.sets(), "--lora", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert "Stack dump" not in proc.stderr


@pytest.mark.parametrize("target,layers", [
    ("model\\.layers\\.\\d+\\.self_attn\\.q_proj", [0, 1]),  # Python's \d
    (".*layers\\.1\\..*q_proj.*", [1]),  # also matches its own lora_A: not a target
])
def test_python_regex_targets(tmp_path, target, layers):
    case = CASES.get("llama-3.2-1b")
    if case is None:
        pytest.skip("no shared llama config")
    cfg = write_config(tmp_path / "adapter", target_modules=target)
    text = gen_model(case.config, *case.sets(), "--set=num_hidden_layers=2", "--lora", str(cfg))
    names = re.findall(r'"(base_model\.[^"]*)"', text)
    assert sorted(names) == [f"base_model.model.model.layers.{i}.self_attn.q_proj.lora_{m}.weight"
                             for i in layers for m in "AB"]


def test_regex_targets_follow_peft(tmp_path):
    """A string target_modules is a full match on the module name: layer 0's
    q_proj only, so its adapter's two parameters and no others."""
    case = CASES.get("llama-3.2-1b")
    if case is None:
        pytest.skip("no shared llama config")
    cfg = write_config(tmp_path / "adapter", target_modules="model\\.layers\\.0\\.self_attn\\.q_proj")
    text = gen_model(case.config, *case.sets(), "--lora", str(cfg))
    names = re.findall(r'"(base_model\.[^"]*)"', text)
    assert sorted(names) == ["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
                             "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_two_adapters_in_one_batch_match_peft_mixed_batch(device, tmp_path):
    """PEFT's mixed-batch inference (`adapter_names` per sample, "__base__"
    for none) against `rlx-gen --lora a=DIR --lora b=DIR` with
    adapter_ids [0, 1, -1]: adapters of different ranks and targets (each
    stacked and zero-padded once at load), three sequences in one batch."""
    case = CASES.get("llama-3.2-1b")
    if case is None:
        pytest.skip("no shared llama config")
    hf = hfm.HFModel(case)
    model = hf.models["eager"]
    model.save_pretrained(tmp_path / "base")
    torch.manual_seed(11)
    pm = peft.get_peft_model(copy.deepcopy(model), peft.LoraConfig(
        r=8, lora_alpha=16, lora_dropout=0.0, init_lora_weights=False,
        target_modules=["q_proj", "v_proj", "down_proj"]), adapter_name="a")
    pm.add_adapter("b", peft.LoraConfig(r=4, lora_alpha=8, use_rslora=True, lora_dropout=0.0,
                                        init_lora_weights=False,
                                        target_modules=["q_proj", "o_proj", "up_proj"]))
    with torch.no_grad():
        for name, p in pm.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn_like(p) * 0.2)
    pm.eval()
    pm.save_pretrained(tmp_path / "adapters")
    ids = hfm.token_ids(hfm.PREFILL, batch=3)
    with torch.no_grad():
        want = pm(input_ids=torch.from_numpy(ids), adapter_names=["a", "b", "__base__"]).logits.numpy()
        base = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    text = gen_model(hf.case.config, *hf.case.sets(), "--batch", "3",
                     "--lora", f"a={tmp_path / 'adapters' / 'a'}",
                     "--lora", f"b={tmp_path / 'adapters' / 'b'}")
    np.save(tmp_path / "adapter_ids.npy", np.array([0, 1, -1], np.int64))
    proc = logits_with_weights(
        text, tmp_path / "base", ids, tmp_path,
        ("--weights", f"a={tmp_path / 'adapters' / 'a' / 'adapter_model.safetensors'}",
         "--weights", f"b={tmp_path / 'adapters' / 'b' / 'adapter_model.safetensors'}",
         "--input", f"adapter_ids={tmp_path / 'adapter_ids.npy'}", "--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout
    got = np.load(tmp_path / "out" / "logits.npy")
    for row in range(3):
        hfm.close(got[row], want[row], f"sequence {row}, {device}")
    # Each adapter changes its sequence; the third is the base model's.
    assert np.abs(want[0] - base[0]).max() > 0.1 and np.abs(want[1] - base[1]).max() > 0.1
    hfm.close(got[2], base[2], f"base sequence, {device}")


@pytest.mark.parametrize("flags,message", [
    (["--lora", "{a}", "--lora", "{b}"], "several adapters are given as NAME=DIR"),
    (["--lora", "x={a}", "--lora", "x={b}"], "adapter name 'x' given twice"),
    (["--lora", "x={a}", "--lora", "y={b}", "--lora-merge"], "--lora-merge needs one --lora DIR"),
    (["--lora", "x={a}", "--lora", "y={b}", "--layer-only"], "not with a layer alone"),
])
def test_several_adapters_refusals(flags, message, tmp_path):
    case = CASES.get("llama-3.2-1b")
    if case is None:
        pytest.skip("no shared llama config")
    a, b = write_config(tmp_path / "a"), write_config(tmp_path / "b")
    args = [f.format(a=a, b=b) for f in flags]
    proc = subprocess.run([str(RLX_GEN), str(case.config), *case.sets(), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


@pytest.mark.skipif(__import__("shutil").which("mpirun") is None,
                    reason="Open MPI's mpirun is not installed")
def test_adapter_at_tp2_matches_peft(adapted, tmp_path):
    """`mpirun -np 2 rlx-run --tp 2` with the adapter: the lora_A/lora_B
    parameters stay whole on each rank and sharding propagation splits the
    deltas with their layers; rank 0's logits are PeftModel's."""
    import shutil
    hf, tmp, ids, want, merged = adapted
    text = gen_model(hf.case.config, *hf.case.sets(), "--lora", str(tmp / "adapter"))
    proc = logits_with_weights(text, tmp / "base", ids, tmp_path,
                               ("--weights", str(tmp / "adapter" / "adapter_model.safetensors"),
                                "--tp", "2"),
                               launcher=(shutil.which("mpirun"), "--allow-run-as-root",
                                         "--oversubscribe", "-np", "2"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tensor parallel: 2 ranks" in proc.stdout, proc.stdout
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), want, "tp 2")
