"""rlx.export_torch / rlx.from_torch: PyTorch modules through torch-mlir into RLX.

Small random-init Hugging Face decoder layers (Llama, Qwen2 with q/k/v bias,
Qwen3 with q/k norms, Mistral, Phi-3 with fused qkv and gate|up, GPT-2's
block), built from configs by transformers with eager and SDPA attention,
are exported by torch-mlir's FX importer as TOSA and as linalg on tensors,
with the weights frozen into the module and as arguments (``rlx.param`` with
the state_dict names); RLX imports (rlx-import-to-mir), fuses and compiles
each on the CPU and on the GPU path's emulator (`device="emu"`, the
code `device="cuda"` runs), and its output must match the PyTorch module's own
element-wise. The kernel count after fusion (compute ops, rlx-mir-fuse's
report) must equal that of RLX's own HIR of the layer (OWN_HIR_KERNELS). A
whole LlamaForCausalLM goes through from_torch on input_ids alone (logits
against transformers').
"""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import rlx
from harness import BUILD, ROOT, assert_close

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("torch_mlir")

RLX_OPT = BUILD / "bin" / "rlx-opt"
S = 6
SMALL = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
             intermediate_size=48, vocab_size=64, num_hidden_layers=1, pad_token_id=0,
             bos_token_id=1, eos_token_id=2)

# transformers.models.<name>.modeling_<name>: its config, decoder layer and
# rotary embedding classes.
DECODERS = {
    "llama": ("LlamaConfig", "LlamaDecoderLayer", "LlamaRotaryEmbedding"),
    "qwen2": ("Qwen2Config", "Qwen2DecoderLayer", "Qwen2RotaryEmbedding"),
    "qwen3": ("Qwen3Config", "Qwen3DecoderLayer", "Qwen3RotaryEmbedding"),
    "mistral": ("MistralConfig", "MistralDecoderLayer", "MistralRotaryEmbedding"),
    "phi3": ("Phi3Config", "Phi3DecoderLayer", "Phi3RotaryEmbedding"),
}
LAYERS = [*DECODERS, "gpt2"]
OUTPUTS = ["tosa", "linalg"]
ATTNS = ["eager", "sdpa"]
WEIGHTS = ["frozen", "args"]

# Compute ops (one kernel each at LIR) after rlx-import-to-mir + rlx-mir-fuse
# {report} must be those of RLX's own HIR of the same layer (rlx-gen
# --layer-only, bench/README.md's fusion table), in every export form.
OWN_HIR_KERNELS = {"llama": 6, "qwen2": 6, "qwen3": 6, "mistral": 6, "phi3": 6, "gpt2": 5}


class DecoderLayer(torch.nn.Module):
    """One decoder layer on (hidden_states, position_ids, attention_mask) with
    its model's RoPE, as the model's forward calls it."""

    def __init__(self, layer, rotary_emb):
        super().__init__()
        self.layer = layer
        self.rotary_emb = rotary_emb

    def forward(self, hidden_states, position_ids, attention_mask):
        cos, sin = self.rotary_emb(hidden_states, position_ids)
        out = self.layer(hidden_states, attention_mask=attention_mask,
                         position_embeddings=(cos, sin))
        return out[0] if isinstance(out, tuple) else out


class Block(torch.nn.Module):
    """GPT-2's block on (hidden_states, attention_mask)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, hidden_states, attention_mask):
        out = self.block(hidden_states, attention_mask=attention_mask)
        return out[0] if isinstance(out, tuple) else out


def randomize_vectors(module):
    """Norm weights 1 + 0.1·N(0,1) and biases 0.1·N(0,1) (initialized to 1 and
    0, where a wrong norm or a dropped bias would go unnoticed)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1:
                p.copy_(0.1 * torch.randn_like(p) + (1.0 if name.endswith("weight") else 0.0))


def build(layer: str, attn: str):
    """(module, example inputs as torch tensors), seeded."""
    torch.manual_seed(0)
    if layer == "gpt2":
        cfg = transformers.GPT2Config(n_embd=32, n_head=4, n_inner=48, n_layer=1, n_positions=16,
                                      vocab_size=64, bos_token_id=1, eos_token_id=2)
        cfg._attn_implementation = attn
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        module = Block(GPT2Block(cfg, layer_idx=0))
    else:
        config_cls, layer_cls, rope_cls = DECODERS[layer]
        modeling = importlib.import_module(f"transformers.models.{layer}.modeling_{layer}")
        cfg = getattr(transformers, config_cls)(**SMALL)
        cfg._attn_implementation = attn
        module = DecoderLayer(getattr(modeling, layer_cls)(cfg, 0),
                              getattr(modeling, rope_cls)(cfg))
    randomize_vectors(module)
    module.eval()
    x = torch.randn(1, S, 32)
    mask = torch.full((S, S), float("-inf")).triu(1)[None, None]
    if layer == "gpt2":
        return module, (x, mask)
    return module, (x, torch.arange(S)[None], mask)


def kernels_after_fusion(text: str) -> int:
    proc = subprocess.run([str(RLX_OPT), "-",
                           "--pass-pipeline=builtin.module(rlx-import-to-mir,rlx-mir-fuse{report})",
                           "-o", os.devnull], input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = re.search(r"compute ops (\d+) -> (\d+)", proc.stderr)
    assert m, proc.stderr[-3000:]
    return int(m.group(2))


@pytest.mark.parametrize("device", ["cpu", "emu", "emu-sm_80"])
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("attn", ATTNS)
@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("layer", LAYERS)
def test_layer_matches_pytorch(layer, output, attn, weights, device):
    module, args = build(layer, attn)
    device, _, chip = device.partition("-")
    model = rlx.from_torch(module, *args, output=output, weights=weights, device=device,
                           **({"chip": chip} if chip else {}))
    with torch.no_grad():
        want = module(*args).numpy()
    got = model(*[a.numpy() for a in args])
    assert isinstance(got, np.ndarray)
    assert_close(got, want, rtol=1e-5, atol=1e-5)

    # Names: the forward's parameters, and state_dict names for weights="args".
    assert model.input_names == (["hidden_states", "attention_mask"] if layer == "gpt2" else
                                 ["hidden_states", "position_ids", "attention_mask"])
    if weights == "args":
        assert model.param_names == [n for n, _ in module.named_parameters()]
        params = [a["name"] for a in model.compiled.arguments if a["is_param"]]
        assert sorted(params) == sorted(model.param_names)
        assert 'rlx.param = "' + model.param_names[0] + '"' in model.mlir
    else:
        assert model.param_names == []
        assert not any(a["is_param"] for a in model.compiled.arguments)

    kernels = kernels_after_fusion(model.mlir)
    key = (layer, output, attn, weights)
    assert kernels == OWN_HIR_KERNELS[layer], (key, kernels)


class MishMlp(torch.nn.Module):
    """Linear → Mish → Linear: Mish (x·tanh(softplus(x))) is no block RLX
    knows, so its primitives stay unfused (the rest still fuses)."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 24)
        self.down = torch.nn.Linear(24, 16)

    def forward(self, x):
        return self.down(torch.nn.functional.mish(self.up(x)))


@pytest.mark.parametrize("output", OUTPUTS)
def test_unfused_model_runs_and_the_report_names_what_did_not_fuse(output):
    torch.manual_seed(0)
    module, x = MishMlp().eval(), torch.randn(2, 5, 16)
    model = rlx.from_torch(module, x, output=output)
    with torch.no_grad():
        want = module(x).numpy()
    assert_close(model(x.numpy()), want, rtol=1e-5, atol=1e-5)

    proc = subprocess.run([str(RLX_OPT), "-", "--pass-pipeline=builtin.module("
                           "rlx-import-to-mir{report},rlx-mir-fuse{report})", "-o", os.devnull],
                          input=model.mlir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Mish's exp and tanh are named as primitives outside any block, and the
    # comparison softplus makes (x > threshold) as an op left in its dialect,
    # which the fusion count includes.
    assert "'rlx_mir.exp' is not part of a recognized block" in proc.stderr, proc.stderr
    assert "'rlx_mir.tanh' is not part of a recognized block" in proc.stderr, proc.stderr
    left = {"tosa": "'tosa.greater'", "linalg": "'linalg.generic'"}[output]
    assert f"{left} was not raised to rlx_mir" in proc.stderr, proc.stderr
    assert re.search(r"compute ops \d+ -> \d+ \(not rlx_mir: " + left, proc.stderr), proc.stderr


def test_export_keeps_each_submodules_training_flag():
    module = MishMlp()
    module.train()
    module.up.eval()
    rlx.export_torch(module, torch.randn(1, 2, 16))
    assert module.training and module.down.training and not module.up.training


def test_torch_tensors_in_and_out():
    module, args = build("llama", "sdpa")
    model = rlx.from_torch(module, *args)
    got = model(*args)
    assert isinstance(got, torch.Tensor)
    with torch.no_grad():
        assert_close(got.numpy(), module(*args).numpy(), rtol=1e-5, atol=1e-5)
    # New parameter values are read by refresh_params (they are cached).
    with torch.no_grad():
        module.layer.mlp.down_proj.weight.mul_(2)
        want = module(*args).numpy()
    assert np.abs(model(*args).numpy() - want).max() > 1e-3
    model.refresh_params()
    assert_close(model(*args).numpy(), want, rtol=1e-5, atol=1e-5)


def test_held_weights_are_what_runs_read():
    """from_torch's CPU model holds the parameters (hold_weights: copied
    once, not per call): runs take the inputs alone, a parameter given to
    run wins, and a wrong name or shape is an error naming it."""
    module, args = build("llama", "sdpa")
    model = rlx.from_torch(module, *args)
    compiled = model.compiled
    x = {n: a.numpy() for n, a in zip(model.input_names, args)}
    held = compiled.run(x)["result0"]
    with torch.no_grad():
        assert_close(held, module(*args).numpy(), rtol=1e-5, atol=1e-5)
    # Packed parameters (every projection where oneDNN takes [K, N]
    # weights, AVX-512 machines) keep their first run's packing until
    # invalidate_packed_params: the override is a parameter that is not.
    params = dict(module.named_parameters())
    name = next(n for n in params if n.endswith("norm.weight") and n not in compiled.packed_sources)
    w = params[name].detach().numpy()
    doubled = compiled.run(dict(x, **{name: 2 * w}))["result0"]
    assert np.abs(doubled - held).max() > 1e-3
    with pytest.raises(rlx.RlxError, match="'nope' is not a parameter"):
        compiled.hold_weights({"nope": w})
    with pytest.raises(rlx.RlxError, match=f"parameter '{name}' has another shape"):
        compiled.hold_weights({name: w[:1]})


def test_export_names_the_arguments():
    module, args = build("qwen3", "eager")
    text, inputs, params = rlx.export_torch(module, *args, output="tosa", weights="args")
    assert inputs == ["hidden_states", "position_ids", "attention_mask"]
    assert params == [n for n, _ in module.named_parameters()]
    assert "layer.self_attn.q_norm.weight" in params
    for n in inputs:
        assert f'rlx.input = "{n}"' in text
    for n in params:
        assert f'rlx.param = "{n}"' in text
    frozen, _, none = rlx.export_torch(module, *args, output="linalg", weights="frozen")
    assert none == [] and "rlx.param" not in frozen and "dense_resource" in frozen


def llama_for_causal_lm(tie: bool):
    cfg = transformers.LlamaConfig(**dict(SMALL, num_hidden_layers=2, tie_word_embeddings=tie))
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg)
    randomize_vectors(model)
    return model.eval()


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("output", OUTPUTS)
def test_whole_llama_for_causal_lm(output, weights, device):
    """from_torch on the model itself, with input_ids only: RoPE's
    non-persistent inv_freq buffer is frozen, use_cache=False and the causal
    4-D attention_mask are passed (no DynamicCache output, no packed-sequence
    cumsum, which linalg would keep as tm_tensor.scan)."""
    model = llama_for_causal_lm(tie=False)
    ids = torch.randint(0, 64, (1, S), generator=torch.Generator().manual_seed(1))
    rlx_model = rlx.from_torch(model, ids, output=output, weights=weights, device=device)
    assert "tm_tensor" not in rlx_model.mlir
    with torch.no_grad():
        want = model(input_ids=ids).logits.numpy()
    got = rlx_model(ids.numpy())
    assert got.shape == (1, S, 64)
    assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_whole_llama_tied_embeddings_and_padding_mask(device):
    """A tied LM head is one parameter; an attention_mask given as an input is
    used as transformers uses it (left padding)."""
    model = llama_for_causal_lm(tie=True)
    ids = torch.randint(0, 64, (1, S), generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[0, 0, 1, 1, 1, 1]])
    rlx_model = rlx.from_torch(model, ids, mask, device=device)
    assert rlx_model.input_names == ["input_ids", "attention_mask"]
    assert "lm_head.weight" not in rlx_model.param_names
    assert "model.embed_tokens.weight" in rlx_model.param_names
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).logits.numpy()
    assert_close(rlx_model(ids, mask).numpy(), want, rtol=1e-5, atol=1e-5)


def test_missing_torch_mlir_names_the_package(monkeypatch):
    for name in [m for m in sys.modules if m == "torch_mlir" or m.startswith("torch_mlir.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torch_mlir", None)  # import torch_mlir raises ImportError
    module, args = build("llama", "eager")
    with pytest.raises(ImportError, match=r"pip install torch-mlir==20261001"):
        rlx.export_torch(module, *args)


def test_import_rlx_does_not_import_torch():
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python_packages"))
    code = ("import sys, rlx; assert callable(rlx.from_torch) and callable(rlx.export_torch); "
            "bad = [m for m in ('torch', 'torch_mlir', 'transformers') if m in sys.modules]; "
            "assert not bad, bad")
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
