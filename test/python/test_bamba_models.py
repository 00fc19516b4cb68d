"""BambaForCausalLM (Mamba-2 mixer layers with attention layers at
attn_layer_indices) from its Hugging Face config and checkpoint, against
transformers itself.

A small random-init model (every parameter seeded; mixer, attention,
mixer; 8 heads of the mixer in 2 groups, chunks of 4 over the 11-token
prefill, RoPE on half of each head as BambaConfig fixes it) is written by
`save_pretrained`; `rlx-gen` builds its config and `rlx-run --weights DIR`
runs it on the CPU path and on the emulator (`--device=emu`) from one test
body: logits must equal transformers' computed in f64 (f32, rtol 1e-4),
whose BambaMixer runs its PyTorch path here. Generation goes through
examples/python/generate.py (the attention layers' K/V padded to a
capacity, the mixers' conv and SSM states carried): 32 greedy tokens must
be transformers' generate(do_sample=False); a prefill split into pieces
gives the one prefill's logits and states; a left-padded prompt
(attention_mask) gives the unpadded prompt's logits.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from harness import gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (seeded weights, token ids)
from test_checkpoints import logits_with_weights  # noqa: E402
from test_moe_models import generate, greedy_generation_matches  # noqa: E402
from test_qwen3_next import close, reference_logits  # noqa: E402

DEVICES = ["cpu", "emu"]
CONFIG = {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": hfm.VOCAB,
          "attn_layer_indices": [1], "mamba_n_heads": 8, "mamba_n_groups": 2,
          "mamba_d_state": 8, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 4}
VARIANTS = {
    "bamba": {},
    # Biases everywhere, one group, no conv bias, a time_step_limit that binds.
    "bamba_biases": {"attention_bias": True, "mlp_bias": True, "mamba_proj_bias": True,
                     "mamba_conv_bias": False, "mamba_n_groups": 1,
                     "time_step_limit": (0.05, 0.6), "attn_layer_indices": [0, 2]},
}


def hf_model(variant="bamba"):
    import transformers
    cfg = transformers.BambaConfig(**(CONFIG | VARIANTS[variant]),
                                   architectures=["BambaForCausalLM"],
                                   pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = transformers.BambaForCausalLM(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    return model


@pytest.fixture(scope="module", params=list(VARIANTS))
def saved(request, tmp_path_factory):
    model = hf_model(request.param)
    ckpt = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(ckpt)
    return request.param, model, ckpt


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_logits_match_transformers(saved, device, tmp_path):
    variant, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(ckpt / "config.json")
    assert "rlx_mir.ssd_scan" in text and "rlx_hir.attention" in text
    assert "rotary_dim = 8" in text  # half of head_dim 16
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
          f"{variant} {device}")


@pytest.mark.parametrize("device", DEVICES)
def test_greedy_generation_matches_transformers(device, tmp_path):
    """32 greedy tokens: the prefill and a decode step per history capacity."""
    greedy_generation_matches(hf_model(), device, tmp_path)


@pytest.mark.parametrize("device", DEVICES)
def test_split_prefill_equals_one_prefill(saved, device):
    """Prefill 6 tokens, then 4 more with the caches carried, then decode 1:
    each piece's last logits are the one 11-token prefill's at that
    position, and the mixers' states after all of it equal the one
    prefill's."""
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
    attention = model.config.attn_layer_indices
    names = [f"present.{i}.{k}" for i in range(3) if i not in attention for k in ("conv", "ssm")]
    history = [f"present.{i}.{k}" for i in attention for k in ("key", "value")]
    assert sorted(names + history) == sorted(state)
    for name in names:
        np.testing.assert_allclose(state[name], whole_state[name], rtol=1e-4,
                                   atol=1e-5 * np.abs(whole_state[name]).max(), err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_left_padded_prompt_gives_the_unpadded_logits(device, tmp_path):
    """--attention-mask: a prompt left-padded by three tokens gives, at its
    real positions, the prompt's own logits: the attention layers mask the
    padding off and the mixers zero it before in_proj and after the conv
    (whose bias would otherwise feed the state)."""
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
    base = {"architectures": ["BambaForCausalLM"], "model_type": "bamba", **CONFIG}
    for change, message in [
            ({"mamba_n_groups": 3}, "must be a multiple of mamba_n_groups"),
            ({"mamba_d_head": 8}, "mamba_n_heads \\* mamba_d_head must equal mamba_expand"),
            ({"mamba_d_head": "big"}, "'mamba_d_head' must be an integer or \"auto\""),
            ({"mamba_d_state": 0}, "must be positive"),
            ({"mamba_d_conv": 1 << 20}, "mamba_d_conv \\(at most 1024\\)"),
            ({"hidden_act": "gelu"}, "its causal conv1d supports silu"),
            ({"time_step_limit": [1.0, 0.5]}, "time_step_limit must be \\[min, max\\]"),
            ({"hidden_size": 1 << 20, "mamba_n_heads": 1 << 16, "mamba_expand": 64},
             "a mixer weight or state of this config would take more than 2\\^48 bytes")]:
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps({**base, **change}))
        with pytest.raises(RuntimeError, match=message):
            gen_model(cfg)
