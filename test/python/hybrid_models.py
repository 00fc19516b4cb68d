"""What the hybrid models' tests share (test_qwen3_next.py,
test_bamba_models.py): the model families, the f64 reference, and the test
bodies. The models, from their Hugging Face configs and checkpoints,
against transformers itself:

- Qwen3NextForCausalLM: Gated DeltaNet layers and gated attention layers
  (RoPE on part of each head), the sparse MoE block with its gated shared
  expert, norms scaling by 1 + weight. `qwen3_next`: three linear layers
  then a full one, two key heads serving four value heads, RoPE on a
  quarter; `qwen3_next_dense`: dense MLPs, attention biases,
  full_attention_interval 2, one value head per key head, RoPE on half.
- BambaForCausalLM: Mamba-2 mixer layers and Llama attention at
  attn_layer_indices (RoPE on half of each head). `bamba`: mixer,
  attention, mixer with 8 heads in 2 groups, chunks of 4 over the 11-token
  prefill; `bamba_biases`: biases everywhere, no conv bias, one group, a
  time_step_limit that binds, attention on layers 0 and 2.

A small random-init model per family (every parameter seeded) is written
by `save_pretrained` (Qwen3-Next's with the multi-token-prediction tensors
its real checkpoints carry, which the loaders skip); `rlx-gen` builds its
config and `rlx-run --weights DIR` runs it on the CPU path and on the
emulator (`--device=emu`) from one test body: logits must equal
transformers' computed in f64 (f32, rtol 1e-4, atol scaled to the logits),
its mixers on their PyTorch paths (no CUDA kernels). Generation goes
through examples/python/generate.py (the attention layers' K/V left-padded
to a capacity and masked, the recurrent layers' conv and SSM states carried
as they are): 32 greedy tokens must be transformers' generate(do_sample=
False); a prefill split into pieces must give the one prefill's logits and
states; a left-padded prompt (attention_mask) the unpadded prompt's logits.
"""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from harness import gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (seeded weights, token ids)
from test_checkpoints import logits_with_weights  # noqa: E402
from test_moe_models import generate  # noqa: E402

DEVICES = ["cpu", "emu"]
QWEN3_NEXT = {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "vocab_size": hfm.VOCAB,
              "intermediate_size": 96, "moe_intermediate_size": 32,
              "shared_expert_intermediate_size": 48, "num_experts": 4, "num_experts_per_tok": 2,
              "linear_key_head_dim": 16, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
              "linear_num_value_heads": 4, "linear_conv_kernel_dim": 4, "rms_norm_eps": 1e-5,
              "mlp_only_layers": [1]}
BAMBA = {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": hfm.VOCAB,
         "attn_layer_indices": [1], "mamba_n_heads": 8, "mamba_n_groups": 2,
         "mamba_d_state": 8, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 4}
FAMILIES = {
    "qwen3_next": ("Qwen3NextForCausalLM", QWEN3_NEXT),
    "qwen3_next_dense": ("Qwen3NextForCausalLM", QWEN3_NEXT | {
        "num_experts": 0, "attention_bias": True, "full_attention_interval": 2,
        "linear_num_value_heads": 2, "linear_value_head_dim": 16,
        "rope_parameters": {"rope_type": "default", "rope_theta": 5000.0,
                            "partial_rotary_factor": 0.5}}),
    "bamba": ("BambaForCausalLM", BAMBA),
    "bamba_biases": ("BambaForCausalLM", BAMBA | {
        "attention_bias": True, "mlp_bias": True, "mamba_proj_bias": True,
        "mamba_conv_bias": False, "mamba_n_groups": 1, "time_step_limit": (0.05, 0.6),
        "attn_layer_indices": [0, 2]}),
}
# What each family's IR must hold: its scan and its RoPE's rotated dims.
MARKERS = {"qwen3_next": ("rlx_mir.gated_delta_rule", "rotary_dim = 4"),
           "qwen3_next_dense": ("rlx_mir.gated_delta_rule", "rotary_dim = 8"),
           "bamba": ("rlx_mir.ssd_scan", "rotary_dim = 8"),
           "bamba_biases": ("rlx_mir.ssd_scan", "rotary_dim = 8")}


def hf_model(family):
    import transformers
    arch, config = FAMILIES[family]
    cfg = getattr(transformers, arch.replace("ForCausalLM", "Config"))(
        **config, architectures=[arch], pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = getattr(transformers, arch)(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    with torch.no_grad():  # decays spread over (0, 1), as trained models have them
        for layer in model.model.layers:
            if hasattr(layer, "linear_attn"):
                layer.linear_attn.A_log.uniform_(-2.0, 1.0)
    return model


def save(model, path):
    """save_pretrained, plus the multi-token-prediction head Qwen3-Next's
    checkpoints carry (transformers and RLX's loaders skip it)."""
    from safetensors.torch import load_file, save_file
    model.save_pretrained(path)
    if model.config.model_type == "qwen3_next":
        tensors = load_file(path / "model.safetensors")
        tensors["mtp.fc.weight"] = torch.ones(64, 128)
        tensors["mtp.norm.weight"] = torch.ones(64)
        save_file(tensors, path / "model.safetensors", metadata={"format": "pt"})
    return path


def reference_logits(model, ids):
    """transformers' logits computed in f64 (its f32 forward is itself about
    3e-6 · max |logit| off them: the chunked scans' sums)."""
    wide = copy.deepcopy(model).double()
    if hasattr(wide, "set_experts_implementation"):
        wide.set_experts_implementation("eager")  # grouped_mm has no f64 kernel
    with torch.no_grad():
        return wide(input_ids=torch.from_numpy(ids)).logits.numpy()


def close(got, want, what):
    """f32 against the f64 reference: rtol 1e-4, atol scaled to the logits."""
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max(),
                               err_msg=what)


def saved(family, tmp_path_factory):
    """A module-scoped fixture's value: (family, model, checkpoint)."""
    model = hf_model(family)
    return family, model, save(model, tmp_path_factory.mktemp(family))


def check_checkpoint_logits(saved, device, tmp_path):
    family, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(ckpt / "config.json")
    for marker in MARKERS[family] + ("rlx_mir.causal_conv1d", "rlx_hir.attention"):
        assert marker in text, marker
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
          f"{family} {device}")


def check_split_prefill(saved, device):
    """Prefill 6 tokens, then 4 more with the caches carried, then decode 1:
    each piece's last logits are the one 11-token prefill's at that
    position, and the recurrent layers' states after all of it equal the
    one prefill's (rlx.load_weights skips Qwen3-Next's mtp.* tensors)."""
    _, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    want = reference_logits(model, ids)[0]
    gen = generate.Generator(ckpt, device)
    whole_logits, whole_state = gen.step(ids, 0, None)
    close(whole_logits, want[-1], f"{device} one prefill")
    state, at = None, 0
    for n in (6, 4, 1):
        logits, state = gen.step(np.ascontiguousarray(ids[:, at:at + n]), at, state)
        at += n
        close(logits, want[at - 1], f"{device} piece ending at {at}")
    kinds = model.config.layer_types  # linear_attention or full_attention (Bamba: an alias)
    recurrent = [f"present.{i}.{k}" for i, t in enumerate(kinds) if t != "full_attention"
                 for k in ("conv", "ssm")]
    history = [f"present.{i}.{k}" for i, t in enumerate(kinds) if t == "full_attention"
               for k in ("key", "value")]
    assert sorted(recurrent + history) == sorted(state)
    for name in recurrent:
        np.testing.assert_allclose(state[name], whole_state[name], rtol=1e-4,
                                   atol=1e-5 * np.abs(whole_state[name]).max(), err_msg=name)


def check_left_padded(family, device, tmp_path):
    """--attention-mask: a prompt left-padded by three tokens gives, at its
    real positions, the prompt's own logits: the attention layers mask the
    padding off and the recurrent layers zero it (Bamba's mixer also after
    its conv, whose bias would otherwise feed the state), so their states
    start as the unpadded prompt's."""
    model = hf_model(family)
    ckpt = save(model, tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=5)
    want = reference_logits(model, ids)
    pad = 3
    padded = np.concatenate([np.full((1, pad), 5, np.int64), ids], axis=1)
    np.save(tmp_path / "pos.npy", np.concatenate([np.zeros(pad, np.int64),
                                                  np.arange(ids.shape[1])]))
    mask = np.ones(padded.shape, np.int64)
    mask[:, :pad] = 0
    np.save(tmp_path / "mask.npy", mask)
    text = gen_model(ckpt / "config.json", "--attention-mask")
    proc = logits_with_weights(text, ckpt, padded, tmp_path,
                               ("--device", device, "--input", f"position_ids={tmp_path / 'pos.npy'}",
                                "--input", f"attention_mask={tmp_path / 'mask.npy'}"),
                               positions=False)
    assert proc.returncode == 0, proc.stderr
    close(np.load(tmp_path / "out" / "logits.npy")[:, pad:], want, f"{family} {device} left-padded")


CONFIG_ERRORS = {
    "qwen3_next": [
        ({"linear_num_value_heads": 3}, "must be a multiple of linear_num_key_heads"),
        ({"linear_key_head_dim": 0}, "linear heads and head dims must be positive"),
        ({"layer_types": ["linear_attention"] * 3}, "names 3 layers, fewer than 4"),
        ({"layer_types": ["sliding_attention"] * 4},
         "entries must be 'linear_attention' or 'full_attention'"),
        ({"full_attention_interval": 0}, "full_attention_interval must be positive"),
        ({"partial_rotary_factor": 0.1}, "must rotate an even, positive number of dims"),
        ({"linear_num_value_heads": 1 << 40, "linear_num_key_heads": 1}, "at most 4096"),
        ({"hidden_act": "gelu"}, "its Gated DeltaNet conv1d supports silu"),
        ({"linear_num_value_heads": 4096, "linear_value_head_dim": 4096, "hidden_size": 1 << 22},
         "in_proj_qkvz's v and z .* more than 2\\^48 bytes")],
    "bamba": [
        ({"mamba_n_groups": 3}, "must be a multiple of mamba_n_groups"),
        ({"mamba_d_head": 8}, "mamba_n_heads \\* mamba_d_head must equal mamba_expand"),
        ({"mamba_d_head": "big"}, "'mamba_d_head' must be an integer or \"auto\""),
        ({"mamba_d_state": 0}, "must be positive"),
        ({"mamba_d_conv": 1 << 20}, "mamba_d_conv \\(at most 1024\\)"),
        ({"hidden_act": "gelu"}, "its causal conv1d supports silu"),
        ({"time_step_limit": [1.0, 0.5]}, "time_step_limit must be \\[min, max\\]"),
        ({"hidden_size": 1 << 20, "mamba_n_heads": 1 << 16, "mamba_expand": 64},
         "a mixer weight or state of this config would take more than 2\\^48 bytes")],
}


def check_config_errors(family, tmp_path):
    """Configs RLX cannot build exactly are diagnostics naming the key."""
    arch, config = FAMILIES[family]
    base = {"architectures": [arch], "model_type": family, **config}
    cfg = tmp_path / "config.json"
    for change, message in CONFIG_ERRORS[family]:
        cfg.write_text(json.dumps({**base, **change}))
        with pytest.raises(RuntimeError, match=message):
            gen_model(cfg)
    if family == "qwen3_next":  # another family's partial_rotary_factor is still refused
        cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                   **config, "partial_rotary_factor": 0.5}))
        with pytest.raises(RuntimeError, match="partial_rotary_factor 0.5.* is not supported"):
            gen_model(cfg)


def make_tests(families, split):
    """The tests of one architecture's `families` (the first is the main
    one; `split` gets the split prefill), for a test module to take into
    its namespace: `globals().update(make_tests(...))`."""
    from test_moe_models import greedy_generation_matches

    @pytest.fixture(scope="module", params=families, name="saved")
    def saved_fixture(request, tmp_path_factory):
        return saved(request.param, tmp_path_factory)

    @pytest.mark.parametrize("device", DEVICES)
    def test_checkpoint_logits_match_transformers(saved, device, tmp_path):
        check_checkpoint_logits(saved, device, tmp_path)

    @pytest.mark.parametrize("device", DEVICES)
    def test_greedy_generation_matches_transformers(device, tmp_path):
        """32 greedy tokens: the prefill and a decode step per history capacity."""
        greedy_generation_matches(hf_model(families[0]), device, tmp_path)

    @pytest.mark.parametrize("device", DEVICES)
    def test_split_prefill_equals_one_prefill(device, tmp_path_factory):
        check_split_prefill(saved(split, tmp_path_factory), device)

    @pytest.mark.parametrize("device", DEVICES)
    def test_left_padded_prompt_gives_the_unpadded_logits(device, tmp_path):
        check_left_padded(families[0], device, tmp_path)

    def test_config_errors(tmp_path):
        check_config_errors(families[0], tmp_path)

    return {name: f for name, f in locals().items()
            if name.startswith("test_") or name == "saved_fixture"}
