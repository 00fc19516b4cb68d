"""Qwen3NextForCausalLM (the hybrid of Gated DeltaNet and gated attention
layers, with the sparse MoE block and its gated shared expert) from its
Hugging Face config and checkpoint, against transformers itself.

A small random-init model (every parameter seeded; three Gated DeltaNet
layers then a full-attention one, two key heads serving four value heads,
RoPE on a quarter of each head) is written by `save_pretrained`; `rlx-gen`
builds its config and `rlx-run --weights DIR` runs it on the CPU path and
on the emulator (`--device=emu`) from one test body: logits must equal
transformers' (f32, rtol 1e-4), whose Qwen3NextGatedDeltaNet runs its
PyTorch chunked form here (no CUDA kernels). Generation goes through
examples/python/generate.py: the decode step carries the attention
layers' K/V (left-padded to a capacity, masked) and the linear layers'
conv and recurrent states; 32 greedy tokens must be transformers'
generate(do_sample=False). A prefill split into pieces must give the one
prefill's logits and states, and a left-padded prompt (attention_mask)
the unpadded prompt's logits.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from harness import gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (seeded weights, tolerances)
from test_checkpoints import logits_with_weights  # noqa: E402
from test_moe_models import generate, greedy_generation_matches  # noqa: E402

DEVICES = ["cpu", "emu"]
CONFIG = {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "vocab_size": hfm.VOCAB,
          "intermediate_size": 96, "moe_intermediate_size": 32,
          "shared_expert_intermediate_size": 48, "num_experts": 4, "num_experts_per_tok": 2,
          "linear_key_head_dim": 16, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
          "linear_num_value_heads": 4, "linear_conv_kernel_dim": 4, "rms_norm_eps": 1e-5,
          "mlp_only_layers": [1]}
VARIANTS = {
    "moe": {},
    # Dense MLPs, a bias on the attention, full_attention_interval's rule
    # with two full layers, one value head per key head, RoPE on half.
    "dense": {"num_experts": 0, "attention_bias": True, "full_attention_interval": 2,
              "linear_num_value_heads": 2, "linear_value_head_dim": 16,
              "rope_parameters": {"rope_type": "default", "rope_theta": 5000.0,
                                  "partial_rotary_factor": 0.5}},
}


def hf_model(variant="moe"):
    import transformers
    cfg = transformers.Qwen3NextConfig(**(CONFIG | VARIANTS[variant]),
                                       architectures=["Qwen3NextForCausalLM"],
                                       pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = transformers.Qwen3NextForCausalLM(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    with torch.no_grad():  # decays spread over (0, 1), as trained models have them
        for layer in model.model.layers:
            if hasattr(layer, "linear_attn"):
                layer.linear_attn.A_log.uniform_(-2.0, 1.0)
    return model


def reference_logits(model, ids):
    """transformers' logits computed in f64 (its f32 forward is itself about
    3e-6 · max |logit| off them: the chunked delta rule's sums)."""
    import copy
    wide = copy.deepcopy(model).double()
    wide.set_experts_implementation("eager")  # grouped_mm has no f64 kernel
    with torch.no_grad():
        return wide(input_ids=torch.from_numpy(ids)).logits.numpy()


def close(got, want, what):
    """f32 against the f64 reference: rtol 1e-4, atol scaled to the logits."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max(),
                               err_msg=what)


@pytest.fixture(scope="module", params=list(VARIANTS))
def saved(request, tmp_path_factory):
    from safetensors.torch import load_file, save_file
    model = hf_model(request.param)
    ckpt = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(ckpt)
    # Qwen3-Next's checkpoints carry a multi-token-prediction head that the
    # causal LM does not read (transformers ignores it too).
    tensors = load_file(ckpt / "model.safetensors")
    tensors["mtp.fc.weight"] = torch.ones(64, 128)
    tensors["mtp.norm.weight"] = torch.ones(64)
    save_file(tensors, ckpt / "model.safetensors", metadata={"format": "pt"})
    return request.param, model, ckpt


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_logits_match_transformers(saved, device, tmp_path):
    variant, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(ckpt / "config.json")
    assert "rlx_mir.gated_delta_rule" in text and "rlx_mir.causal_conv1d" in text
    assert "rotary_dim = " + str(16 // (2 if variant == "dense" else 4)) in text
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
              f"qwen3_next {variant} {device}")


@pytest.mark.parametrize("device", DEVICES)
def test_greedy_generation_matches_transformers(device, tmp_path):
    """32 greedy tokens: the prefill and a decode step per history capacity."""
    greedy_generation_matches(hf_model(), device, tmp_path)


@pytest.mark.parametrize("device", DEVICES)
def test_split_prefill_equals_one_prefill(saved, device):
    """Prefill 6 tokens, then 4 more with the caches carried, then decode 1:
    each piece's last logits are the one 11-token prefill's at that
    position, and the linear layers' states after all of it equal the one
    prefill's."""
    _, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    want = reference_logits(model, ids)[0]
    gen = generate.Generator(ckpt, device)  # rlx.load_weights skips the mtp.* tensors
    whole_logits, whole_state = gen.step(ids, 0, None)
    close(whole_logits, want[-1], f"{device} one prefill")
    state, at = None, 0
    for n in (6, 4, 1):
        logits, state = gen.step(np.ascontiguousarray(ids[:, at:at + n]), at, state)
        at += n
        close(logits, want[at - 1], f"{device} piece ending at {at}")
    kinds = model.config.layer_types
    names = [f"present.{i}.{k}" for i, t in enumerate(kinds) if t == "linear_attention"
             for k in ("conv", "ssm")]
    history = [f"present.{i}.{k}" for i, t in enumerate(kinds) if t == "full_attention"
               for k in ("key", "value")]
    assert sorted(names + history) == sorted(state)
    for name in names:
        np.testing.assert_allclose(state[name], whole_state[name], rtol=1e-4,
                                   atol=1e-5 * np.abs(whole_state[name]).max(), err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_left_padded_prompt_gives_the_unpadded_logits(device, tmp_path):
    """--attention-mask: a prompt left-padded by three tokens gives, at its
    real positions, the prompt's own logits: the attention layers mask the
    padding off and the linear layers zero it, so their states start as the
    unpadded prompt's."""
    model = hf_model()
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=5)
    want = reference_logits(model, ids)
    pad = 3
    padded = np.concatenate([np.full((1, pad), 5, np.int64), ids], axis=1)
    np.save(tmp_path / "pos.npy", np.concatenate([np.zeros(pad, np.int64),
                                                  np.arange(ids.shape[1])]))
    mask = np.ones(padded.shape, np.int64)
    mask[:, :pad] = 0
    np.save(tmp_path / "mask.npy", mask)
    text = gen_model(tmp_path / "ckpt" / "config.json", "--attention-mask")
    proc = logits_with_weights(text, tmp_path / "ckpt", padded, tmp_path,
                               ("--device", device, "--input", f"position_ids={tmp_path / 'pos.npy'}",
                                "--input", f"attention_mask={tmp_path / 'mask.npy'}"),
                               positions=False)
    assert proc.returncode == 0, proc.stderr
    close(np.load(tmp_path / "out" / "logits.npy")[:, pad:], want, f"{device} left-padded")


def test_config_errors(tmp_path):
    """Configs RLX cannot build exactly are diagnostics naming the key."""
    base = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", **CONFIG}
    for change, message in [
            ({"linear_num_value_heads": 3}, "must be a multiple of linear_num_key_heads"),
            ({"linear_key_head_dim": 0}, "linear heads and head dims must be positive"),
            ({"layer_types": ["linear_attention"] * 3}, "names 3 layers, fewer than 4"),
            ({"layer_types": ["sliding_attention"] * 4},
             "entries must be 'linear_attention' or 'full_attention'"),
            ({"full_attention_interval": 0}, "full_attention_interval must be positive"),
            ({"partial_rotary_factor": 0.1}, "must rotate an even, positive number of dims"),
            ({"linear_num_value_heads": 1 << 40, "linear_num_key_heads": 1}, "at most 4096"),
            ({"hidden_act": "gelu"}, "its Gated DeltaNet conv1d supports silu"),
            ({"linear_num_value_heads": 4096, "linear_value_head_dim": 4096,
              "hidden_size": 1 << 22}, "in_proj_qkvz's v and z .* more than 2\\^48 bytes")]:
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps({**base, **change}))
        with pytest.raises(RuntimeError, match=message):
            gen_model(cfg)
    # Another family's partial_rotary_factor is still refused.
    cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                               **CONFIG, "partial_rotary_factor": 0.5}))
    with pytest.raises(RuntimeError, match="partial_rotary_factor 0.5.* is not supported"):
        gen_model(cfg)
