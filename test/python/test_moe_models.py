"""Mixture-of-experts models from their Hugging Face configs and checkpoints
against transformers itself: MixtralForCausalLM, Qwen2MoeForCausalLM (shared
expert, a dense layer from mlp_only_layers), Qwen3MoeForCausalLM (a dense
layer from decoder_sparse_step, per-head q/k norms), OlmoeForCausalLM
(whole-projection q/k norms), GptOssForCausalLM (attention sinks, YaRN,
expert biases and the clamped SwiGLU) and DeepseekV3ForCausalLM (multi-head
latent attention with its latent KV cache, noaux_tc routing, shared experts,
a dense first layer) and Llama4ForCausalLM (chunked attention, NoPE layers
with the temperature tuning, per-head L2 norms, sigmoid router scores on the
experts' inputs, an always-on shared expert, dense layers between).

A small random-init model per family (every parameter seeded, so the routers
spread tokens over the experts) is written by `save_pretrained`, whose
per-expert names are the checkpoints' (`experts.<e>.w1` for Mixtral,
`experts.<e>.gate_proj` for the others); `rlx-gen` builds the same config and
`rlx-run --weights DIR` runs it on the CPU path and on the emulator
(`--device=emu`) from one test body. Logits must equal transformers' (f32,
rtol 1e-4); with `--stacked-experts` the model takes transformers 5's stacked
`experts.gate_up_proj`/`down_proj` (named_parameters()) instead; greedy
generation of 32 tokens must be the tokens of `generate(do_sample=False)`
(check_greedy_generation, run by test_moe_generation.py and
test_moe_generation_more.py for half the families each).
"""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from harness import ROOT, gen_model

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402  (seeded weights, tolerances)
from test_checkpoints import logits_with_weights  # noqa: E402

DEVICES = ["cpu", "emu"]
BASE = {"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_hidden_layers": 2, "vocab_size": hfm.VOCAB, "max_position_embeddings": 128,
        "intermediate_size": 24, "num_experts_per_tok": 2}
FAMILIES = {
    "mixtral": ("MixtralForCausalLM", {"num_local_experts": 4}),
    "qwen2_moe": ("Qwen2MoeForCausalLM", {"num_experts": 6, "moe_intermediate_size": 16,
                                          "shared_expert_intermediate_size": 20,
                                          "mlp_only_layers": [1]}),
    "qwen3_moe": ("Qwen3MoeForCausalLM", {"num_experts": 5, "moe_intermediate_size": 16,
                                          "num_experts_per_tok": 3, "norm_topk_prob": True,
                                          "decoder_sparse_step": 2, "head_dim": 16}),
    "olmoe": ("OlmoeForCausalLM", {"num_experts": 4}),
    # Attention sinks, YaRN (head_dim 8: two frequencies extrapolated, two
    # interpolated, cos/sin scaled by 0.1·ln 32 + 1), sliding and full
    # layers, experts with biases and the clamped SwiGLU (a small limit so
    # that the clamps bite), checkpoint experts stacked [E, H, 2I].
    "gpt_oss": ("GptOssForCausalLM", {"num_local_experts": 4, "head_dim": 8,
                                      "sliding_window": 4, "swiglu_limit": 0.5}),
    # MLA with a q LoRA, the rotary pairs interleaved, head dims 8 + 4 for
    # q·k and 16 for v, biases on q_a/kv_a/o; yarn
    # with mscale_all_dim (the softmax scale); sigmoid routing with a
    # correction bias over 4 groups of 2 experts, top 2 groups; one shared
    # expert; layer 0 dense.
    "deepseek_v3": ("DeepseekV3ForCausalLM", {
        "num_key_value_heads": 4, "n_routed_experts": 8, "n_group": 4, "topk_group": 2,
        "moe_intermediate_size": 16, "first_k_dense_replace": 1, "q_lora_rank": 16,
        "kv_lora_rank": 12, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 16,
        "attention_bias": True, "rope_parameters": {
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
            "mscale": 1.0, "mscale_all_dim": 0.8, "rope_theta": 10000.0}}),
}
FAMILIES["llama4_text"] = ("Llama4ForCausalLM", {
    # Layers 0-1 rotate (interleaved pairs) with chunked attention of 4 and
    # L2-normed q/k heads, layer 2 is NoPE with full attention and the
    # temperature tuning (floor_scale 2 so that it bites within the test's
    # positions); layer 1 is the MoE block (top-1 sigmoid on the input, a
    # shared expert), layers 0 and 2 dense MLPs of intermediate_size_mlp.
    "num_hidden_layers": 3, "head_dim": 8, "intermediate_size": 16,
    "intermediate_size_mlp": 24, "num_local_experts": 4, "num_experts_per_tok": 1,
    "interleave_moe_layer_step": 2, "no_rope_layer_interval": 3, "attention_chunk_size": 4,
    "floor_scale": 2, "attn_scale": 0.5})
# The other MLA form: q_proj (q_lora_rank null), v narrower than q·k,
# rotate_half pairs, no rope scaling, no biases; a large rms_norm_eps, which
# kv_a_layernorm does not take (DeepseekV3RMSNorm's own 1e-6).
DEEPSEEK_Q_PROJ = {"q_lora_rank": None, "qk_nope_head_dim": 12, "v_head_dim": 8,
                   "rope_interleave": False, "attention_bias": False, "rope_parameters": None,
                   "rms_norm_eps": 0.05}


def hf_model(family, **changes):
    arch, extra = FAMILIES[family]
    import transformers
    extra = {k: v for k, v in (extra | changes).items() if v is not None or k == "q_lora_rank"}
    cfg = transformers.AutoConfig.for_model(family, **(BASE | extra), architectures=[arch],
                                            pad_token_id=0, bos_token_id=1, eos_token_id=2)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, arch)(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    # DeepSeek-V3's correction bias is a buffer: seeded so that it changes
    # which experts are chosen.
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, buf in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                buf.copy_(0.3 * torch.randn(buf.shape, generator=g))
    return model


def saved_parameters(model):
    """named_parameters() and the persistent buffers a checkpoint holds
    (DeepSeek-V3's e_score_correction_bias)."""
    params = {n: p.detach().contiguous() for n, p in model.named_parameters()}
    state = model.state_dict()
    params |= {n: b.detach().contiguous() for n, b in model.named_buffers() if n in state}
    return params


@pytest.fixture(scope="module", params=list(FAMILIES))
def saved(request, tmp_path_factory):
    model = hf_model(request.param)
    ckpt = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(ckpt)
    return request.param, model, ckpt


def reference_logits(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.from_numpy(ids)).logits.numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_checkpoint_logits_match_transformers(saved, device, tmp_path):
    family, model, ckpt = saved
    names = json.loads((ckpt / "model.safetensors.index.json").read_text())["weight_map"] \
        if (ckpt / "model.safetensors.index.json").exists() else None
    ids = hfm.token_ids(hfm.PREFILL)
    text = gen_model(ckpt / "config.json")
    proc = logits_with_weights(text, ckpt, ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout  # every weight from the checkpoint
    assert names is None or any(".experts.0." in n for n in names)
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
              f"{family} {device}")


@pytest.mark.parametrize("device", DEVICES)
def test_stacked_expert_names(saved, device, tmp_path):
    """--stacked-experts: the parameters as transformers 5 holds them."""
    from safetensors.torch import save_file
    family, model, _ = saved
    params = saved_parameters(model)
    assert any(n.endswith("experts.gate_up_proj") for n in params)
    (tmp_path / "w").mkdir()
    save_file(params, tmp_path / "w" / "model.safetensors")
    ids = hfm.token_ids(hfm.PREFILL, seed=4)
    cfg = tmp_path / "config.json"
    cfg.write_text(model.config.to_json_string())
    text = gen_model(cfg, "--stacked-experts")
    proc = logits_with_weights(text, tmp_path / "w", ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
              f"{family} stacked {device}")


spec = importlib.util.spec_from_file_location("generate", ROOT / "examples" / "python" / "generate.py")
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)


def check_greedy_generation(family, device, tmp_path):
    """32 greedy tokens of examples/python/generate.py (a compiled prefill and
    a decode step per history capacity) equal to transformers'
    generate(do_sample=False). The
    test body of test_moe_generation*.py, which split the families in two
    so that the suite's two workers share them."""
    greedy_generation_matches(hf_model(family), device, tmp_path)


def greedy_generation_matches(model, device, tmp_path):
    """check_greedy_generation's body for any transformers model: returns
    the Generator (how many steps it compiled)."""
    model.save_pretrained(tmp_path / "ckpt")
    prompt = hfm.token_ids(7, seed=3)
    with torch.no_grad():
        want = model.generate(torch.from_numpy(prompt), max_new_tokens=32, min_new_tokens=32,
                              do_sample=False, pad_token_id=0, eos_token_id=None)
    want = want[0, prompt.shape[1]:].tolist()
    gen = generate.Generator(tmp_path / "ckpt", device)
    got = gen.generate(prompt[0].tolist(), 32)
    assert got == want, f"RLX {got}\nHF  {want}"
    assert len(set(want)) > 1, "a constant sequence would not test the decode steps"
    # A prefill and one decode step per history capacity (32, 64 slots; a
    # state-space model's one decode step), not one per token.
    assert gen.compiled <= 3, gen.compiled
    return gen


@pytest.mark.parametrize("device", DEVICES)
def test_deepseek_v3_q_proj_form(device, tmp_path):
    """MLA's other form (DEEPSEEK_Q_PROJ) against transformers; and the same
    checkpoint built with the rotary pairing flipped (--set
    rope_interleave=true) must move the logits: the pairing is read, not
    assumed."""
    model = hf_model("deepseek_v3", **DEEPSEEK_Q_PROJ)
    assert model.model.layers[0].self_attn.q_proj is not None
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=8)
    want = reference_logits(model, ids)
    text = gen_model(tmp_path / "ckpt" / "config.json")
    proc = logits_with_weights(text, tmp_path / "ckpt", ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), want, f"deepseek_v3 q_proj {device}")
    flipped = gen_model(tmp_path / "ckpt" / "config.json", "--set=rope_interleave=true")
    (tmp_path / "f").mkdir()
    proc = logits_with_weights(flipped, tmp_path / "ckpt", ids, tmp_path / "f",
                               ("--device", device))
    assert proc.returncode == 0, proc.stderr
    moved = np.abs(np.load(tmp_path / "f" / "out" / "logits.npy") - want).max()
    assert moved > 0.05 * np.abs(want).max(), moved


@pytest.mark.parametrize("device", DEVICES)
def test_llama4_features_move_the_logits(device, tmp_path):
    """Each Llama-4 feature the family test checks is read from the config:
    building the same checkpoint without it gives other logits."""
    model, ckpt = hf_model("llama4_text"), tmp_path / "ckpt"
    model.save_pretrained(ckpt)
    ids = hfm.token_ids(hfm.PREFILL, seed=9)
    want = reference_logits(model, ids)
    for n, off in enumerate([("--set=attention_chunk_size=null", "--set=layer_types=null"),
                             ("--set=attn_temperature_tuning=false",),
                             ("--set=use_qk_norm=false",)]):
        (tmp_path / str(n)).mkdir()
        proc = logits_with_weights(gen_model(ckpt / "config.json", *off), ckpt, ids,
                                   tmp_path / str(n), ("--device", device))
        assert proc.returncode == 0, proc.stderr
        moved = np.abs(np.load(tmp_path / str(n) / "out" / "logits.npy") - want).max()
        assert moved > 0.02 * np.abs(want).max(), (off, moved)


@pytest.mark.parametrize("device", DEVICES)
def test_gpt_oss_mxfp4_checkpoint(device, tmp_path):
    """gpt-oss as the hub ships it: the experts' projections as MXFP4
    `*_blocks` [E, R, K/32, 16] / `*_scales` [E, R, K/32] bytes and
    `quantization_config: {quant_method: mxfp4}` in config.json. The
    reference is transformers with those tensors dequantized by its own
    `convert_moe_packed_tensors` (what loading with Mxfp4Config(dequantize=True)
    does)."""
    from safetensors.torch import save_file
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors
    arch, extra = FAMILIES["gpt_oss"]
    import transformers
    cfg = transformers.AutoConfig.for_model("gpt_oss", **(BASE | extra | {"intermediate_size": 32}),
                                            architectures=[arch], pad_token_id=0, bos_token_id=1,
                                            eos_token_id=2)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, arch)(cfg).to(torch.float32).eval()
    hfm.seeded_parameters(model)
    g = torch.Generator().manual_seed(5)
    params = {n: p.detach().clone().contiguous() for n, p in model.named_parameters()}
    for name, p in list(params.items()):
        if not name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            continue
        e, k, rows = p.shape                                   # [E, K, R]
        blocks = torch.randint(0, 256, (e, rows, k // 32, 16), generator=g, dtype=torch.uint8)
        # Scales around 2^-3 (0.3 × the E2M1 values: the experts' weights' size).
        scales = torch.randint(121, 126, (e, rows, k // 32), generator=g, dtype=torch.uint8)
        del params[name]
        params[name + "_blocks"], params[name + "_scales"] = blocks, scales
        with torch.no_grad():
            dict(model.named_parameters())[name].copy_(
                convert_moe_packed_tensors(blocks, scales, dtype=torch.float32))
    (tmp_path / "w").mkdir()
    save_file(params, tmp_path / "w" / "model.safetensors")
    config = json.loads(model.config.to_json_string())
    config["quantization_config"] = {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    text = gen_model(tmp_path / "config.json")
    assert "rlx_mir.mxfp4_dequantize" in text
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    proc = logits_with_weights(text, tmp_path / "w", ids, tmp_path, ("--device", device))
    assert proc.returncode == 0, proc.stderr
    assert "generated" not in proc.stdout, proc.stdout
    hfm.close(np.load(tmp_path / "out" / "logits.npy"), reference_logits(model, ids),
              f"gpt_oss mxfp4 {device}")
