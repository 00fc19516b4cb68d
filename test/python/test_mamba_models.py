"""State-space language models from their Hugging Face configs and
checkpoints against transformers itself: MambaForCausalLM (with and without
the in/out projection biases and the conv bias, an explicit time_step_rank),
FalconMambaForCausalLM (weightless RMSNorms on dt, B and C) and
Mamba2ForCausalLM (the SSD scan over heads with grouped B and C, chunks of
4 over the 11-token prefill; with biases, one group, the default chunk and
a time_step_limit that binds).

A small random-init model per family (every parameter seeded) is written by
`save_pretrained`; `rlx-gen` builds its config and `rlx-run --weights DIR`
runs it on the CPU path and on the emulator (`--device=emu`) from one test
body: logits must equal transformers' (f32, rtol 1e-4), whose MambaMixer
runs its PyTorch path here (no CUDA kernels). Generation goes through
examples/python/generate.py: one prefill, then one compiled decode step
(seq = 1) fed each layer's conv and SSM states; 32 greedy tokens must be
transformers' generate(do_sample=False), and a prefill split into a shorter
prefill and decode steps must give the one prefill's logits.
"""
from __future__ import annotations

import numpy as np
import pytest

from harness import gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (seeded weights, tolerances)
from test_checkpoints import logits_with_weights  # noqa: E402
from test_moe_models import (generate, greedy_generation_matches,  # noqa: E402
                             reference_logits)

DEVICES = ["cpu", "emu"]
BASE = {"hidden_size": 32, "state_size": 8, "num_hidden_layers": 2, "vocab_size": hfm.VOCAB,
        "expand": 2, "conv_kernel": 4}
FAMILIES = {
    "mamba": ("mamba", "MambaForCausalLM", {}),
    "mamba_biases": ("mamba", "MambaForCausalLM", {"use_bias": True, "use_conv_bias": False,
                                                   "time_step_rank": 3, "conv_kernel": 3,
                                                   "layer_norm_epsilon": 1e-3}),
    "falcon_mamba": ("falcon_mamba", "FalconMambaForCausalLM", {"mixer_rms_eps": 1e-3}),
    "mamba2": ("mamba2", "Mamba2ForCausalLM", {"num_heads": 8, "head_dim": 8, "n_groups": 2,
                                               "chunk_size": 4}),
    "mamba2_biases": ("mamba2", "Mamba2ForCausalLM", {
        "num_heads": 4, "head_dim": 16, "n_groups": 1, "use_bias": True, "use_conv_bias": False,
        "time_step_limit": (0.05, 0.6), "layer_norm_epsilon": 1e-3, "tie_word_embeddings": True}),
}
SCAN = {"mamba2": "rlx_mir.ssd_scan"}


def hf_model(family):
    import transformers
    model_type, arch, extra = FAMILIES[family]
    cfg = transformers.AutoConfig.for_model(model_type, **(BASE | extra), architectures=[arch],
                                            pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = getattr(transformers, arch)(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    return model


@pytest.fixture(scope="module", params=list(FAMILIES))
def saved(request, tmp_path_factory):
    model = hf_model(request.param)
    ckpt = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(ckpt)
    return request.param, model, ckpt


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_logits_match_transformers(saved, device, tmp_path):
    family, model, ckpt = saved
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(ckpt / "config.json")
    assert SCAN.get(FAMILIES[family][0], "rlx_mir.selective_scan") in text
    assert "rlx_mir.causal_conv1d" in text
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device), positions=False)
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
              f"{family} {device}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["mamba", "falcon_mamba", "mamba2"])
def test_greedy_generation_matches_transformers(family, device, tmp_path):
    """32 greedy tokens: one prefill and one compiled decode step."""
    gen = greedy_generation_matches(hf_model(family), device, tmp_path)
    assert gen.compiled == 2, gen.compiled  # the prefill and the one decode step


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["mamba_biases", "mamba2"])
def test_split_prefill_equals_one_prefill(family, device, tmp_path):
    """Prefill 6 tokens, then 4 more with the states carried, then decode 1:
    each piece's last logits are the one 11-token prefill's at that position,
    and the states after all of it equal the one prefill's."""
    model = hf_model(family)
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    want = reference_logits(model, ids)[0]
    gen = generate.Generator(tmp_path / "ckpt", device)
    whole_logits, whole_state = gen.step(ids, 0, None)
    hfm.close(whole_logits, want[-1], f"{device} one prefill")
    state, at = None, 0
    for n in (6, 4, 1):
        logits, state = gen.step(np.ascontiguousarray(ids[:, at:at + n]), at, state)
        at += n
        hfm.close(logits, want[at - 1], f"{device} piece ending at {at}")
    assert sorted(state) == sorted(whole_state) == [f"present.{i}.{k}" for i in range(2)
                                                     for k in ("conv", "ssm")]
    for name in state:
        np.testing.assert_allclose(state[name], whole_state[name], rtol=1e-4,
                                   atol=1e-5 * np.abs(whole_state[name]).max(), err_msg=name)


def test_config_errors(tmp_path):
    """Configs RLX cannot build exactly are diagnostics naming the key."""
    import json
    for change, message in [({"hidden_act": "gelu"}, "its causal conv1d supports silu"),
                            ({"time_step_rank": "big"}, "'time_step_rank' must be an integer"),
                            ({"state_size": 0}, "sizes must be positive"),
                            ({"conv_kernel": 1 << 40}, "conv_kernel .* out of range"),
                            ({"hidden_size": 1, "expand": 1, "state_size": 1 << 62},
                             "out of range"),
                            ({"vocab_size": 1 << 44}, "more than 2\\^48 bytes"),
                            ({"quantization_config": {"quant_method": "gptq"}},
                             "quant_method 'gptq' is not supported")]:
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps({"architectures": ["MambaForCausalLM"], "model_type": "mamba",
                                   **BASE, **change}))
        with pytest.raises(RuntimeError, match=message):
            gen_model(cfg)
    mamba2 = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", **BASE,
              **FAMILIES["mamba2"][2]}
    for change, message in [({"num_heads": 6}, "num_heads \\* head_dim must equal expand"),
                            ({"n_groups": 3}, "must be a multiple of n_groups"),
                            ({"time_step_limit": [1.0, 0.5]}, "time_step_limit must be \\[min, max\\]"),
                            ({"chunk_size": 0}, "must be positive")]:
        cfg = tmp_path / "config.json"
        cfg.write_text(json.dumps({**mamba2, **change}))
        with pytest.raises(RuntimeError, match=message):
            gen_model(cfg)
    # Python's json writes time_step_limit's infinity as the bare token
    # Infinity (transformers 5 as {"__float__": "Infinity"}, which the
    # checkpoints above use); --set takes it too. Elsewhere a non-finite
    # number is an error naming the key.
    text = json.dumps({**mamba2, "time_step_limit": [0.0, float("inf")]})
    assert "Infinity" in text
    cfg.write_text(text)
    assert "rlx_mir.ssd_scan" in gen_model(cfg)
    assert "dt_max = 2.000000e+00" in gen_model(cfg, "--set=time_step_limit=[-Infinity,2.0]")
    cfg.write_text(json.dumps({**mamba2, "layer_norm_epsilon": float("nan")}))
    with pytest.raises(RuntimeError, match="'layer_norm_epsilon' must be a finite number"):
        gen_model(cfg)
