"""Models from Hugging Face ``config.json`` files.

The same C++ generator as the ``rlx-gen`` tool (lib/ModelGen):
LlamaForCausalLM (TinyLlama too), MistralForCausalLM, Qwen2ForCausalLM,
Qwen3ForCausalLM, Phi3ForCausalLM, GPT2LMHeadModel and the mixtures of
experts MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM,
OlmoeForCausalLM, GptOssForCausalLM, DeepseekV3ForCausalLM (multi-head
latent attention) and Llama4ForCausalLM (chunked attention, NoPE layers),
the state-space models MambaForCausalLM, FalconMambaForCausalLM and
Mamba2ForCausalLM
(``kv_cache=True``: each layer's conv and SSM states in and out instead of
K/V) and the hybrid Qwen3NextForCausalLM (Gated DeltaNet layers with conv
and recurrent states, gated attention layers with K/V), and
WhisperForConditionalGeneration (one module of ``encoder`` and ``decoder``;
with ``kv_cache=True`` the encoder also returns each decoder layer's
cross-attention K/V, see examples/python/transcribe.py), with
transformers' defaults, HF
parameter names on the arguments (``rlx.param``), symbolic
``seq``/``past_seq`` dims unless given. Another architecture, an activation
or RoPE type RLX does not compute exactly raises RlxError listing the
supported ones.
"""
from __future__ import annotations

import json
import os
from typing import Mapping, Optional, Sequence, Union

from . import Context, Module, _rlx, default_context


def from_hf_config(config: Union[str, os.PathLike, Mapping], num_layers: Optional[int] = None, *,
                   dtype: str = "f32", seq: Optional[int] = None, kv_cache: bool = False,
                   past: Optional[int] = None, layer_only: bool = False, batch: int = 1,
                   overrides: Optional[Mapping[str, object]] = None, func_name: str = "forward",
                   nvfp4_weights: bool = False, stacked_experts: bool = False,
                   attention_mask: bool = False, context: Optional[Context] = None) -> Module:
    """The model a config.json describes, in rlx_hir.

    `config`: a path to config.json, or its contents as a dict. `num_layers`
    overrides ``num_hidden_layers``; `dtype` is ``"f32"``, ``"bf16"`` or
    ``"f16"``; `seq`/`past` make the sequence / KV-history length static;
    `kv_cache` adds past K/V inputs and present K/V outputs; `layer_only`
    builds one decoder layer on hidden states; `overrides` sets config keys
    (e.g. ``{"hidden_size": 128}``); `nvfp4_weights` stores every
    decoder-layer linear weight as NVFP4 (``<name>.weight`` int8 [N, K/2],
    ``<name>.weight_scale`` float8_e4m3fn [N, K/16], ``<name>.weight_scale_2``
    float32, ModelOpt's names); embeddings, norms and the LM head stay in
    `dtype`. Mixture-of-experts models (Mixtral, Qwen2-MoE, Qwen3-MoE,
    OLMoE) take their experts under the checkpoint's per-expert names, or
    with `stacked_experts` under transformers 5's stacked parameters
    (``experts.gate_up_proj`` [E, 2I, H], ``experts.down_proj`` [E, H, I])
    as ``model.named_parameters()`` gives them. `attention_mask` adds
    transformers' padding mask as an input ``attention_mask`` [batch,
    past_seq + seq] (i64, 1: attend, 0: padding; with `kv_cache` its length
    is the dim ``total_seq``): attention stays causal by cache slot and
    RoPE reads ``position_ids``, so a left-padded history gives the
    unpadded logits (a decode step compiled once for a history of fixed
    capacity; see examples/python/generate.py); Qwen3-Next's linear
    layers zero the padded tokens' inputs. Not for the state-space
    models."""
    if isinstance(config, Mapping):
        text = json.dumps(dict(config))
    else:
        with open(config, encoding="utf-8") as f:
            text = f.read()
    sets = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in (overrides or {}).items()]
    return _rlx.generate_model(context or default_context(), text, sets, num_layers, dtype, seq,
                               kv_cache, past, layer_only, batch, func_name, nvfp4_weights,
                               stacked_experts, attention_mask)


__all__ = ["from_hf_config"]
