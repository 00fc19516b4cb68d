"""A decoder layer of every config in ../shared/models, at small sizes, on the CPU.

rlx-gen builds the layer from the config (with the sizes below overriding
the published ones, heads/kv-heads ratio kept), rlx-run compiles it
(HIR → MIR → fusion → CPU) and fills every argument with its seeded values;
the reference rebuilds the same values with rlx.random and runs the layer
in float64 NumPy (reference.llama_layer / gpt2_layer, written from the HF
modeling code). Two shapes per config: prefill of 16 tokens, and one decode
token after a KV history of 16.

Tolerances (max |got - ref| / max |ref|): f32 1e-5; bf16 2e-2 (weights and
activations rounded to bf16 between ops, f32 accumulation).
"""
import json

import ml_dtypes
import numpy as np
import pytest

import reference as ref
from harness import gen_model, assert_close, run_mlir, shared_dir, signature
from rlx.random import argument_values

SHARED = shared_dir()
CONFIGS = sorted(p.stem for p in (SHARED / "models").glob("*.json")) if SHARED else []
# Whole layers and models accumulate rounding over many ops whose values are
# O(1): the absolute parts are those errors (f32 ~1e-6 per layer, bf16 about
# one bf16 ulp of the largest intermediates); every element is checked.
TOL = {"f32": (1e-5, 1e-5), "bf16": (2e-2, 1e-2)}


def close(got, want, dtype):
    rtol, atol = TOL[dtype]
    assert_close(got, want, rtol=rtol, atol=atol)


def family(cfg: dict) -> str:
    """gpt2, qwen3 or llama (Llama, Mistral, TinyLlama) from HF's `architectures`."""
    arch = cfg.get("architectures", [""])[0].lower()
    return next((f for f in ("gpt2", "qwen3") if arch.startswith(f)), "llama")


def small_overrides(cfg: dict) -> dict:
    """Small dims with the config's structure: GQA ratio, explicit head_dim, window."""
    if family(cfg) == "gpt2":
        return {"n_embd": 64, "n_head": 4}
    ratio = cfg["num_attention_heads"] // cfg["num_key_value_heads"]
    heads, kv, head_dim = 2 * ratio, 2, 16
    o = {"num_attention_heads": heads, "num_key_value_heads": kv, "intermediate_size": 96,
         "hidden_size": heads * head_dim}
    if "head_dim" in cfg:
        # Keep configs whose q width differs from the hidden size (Qwen3) that way.
        differs = cfg["head_dim"] * cfg["num_attention_heads"] != cfg["hidden_size"]
        o |= {"head_dim": head_dim, "hidden_size": 48 if differs else heads * head_dim}
    if cfg.get("sliding_window"):
        o["sliding_window"] = 8
    return o


def ref_config(cfg: dict) -> dict:
    if family(cfg) == "gpt2":
        return {"heads": cfg["n_head"], "eps": cfg.get("layer_norm_epsilon", 1e-5), "act": "gelu_tanh"}
    heads = cfg["num_attention_heads"]
    return {"heads": heads, "kv_heads": cfg["num_key_value_heads"],
            "head_dim": cfg.get("head_dim", cfg["hidden_size"] // heads), "eps": cfg["rms_norm_eps"],
            "rope_theta": cfg.get("rope_theta", 10000.0), "rope_scaling": cfg.get("rope_scaling"),
            "qk_norm": family(cfg) == "qwen3",
            "attention_bias": cfg.get("attention_bias", False),
            "sliding_window": cfg.get("sliding_window") if cfg.get("use_sliding_window", True) else None,
            "act": {"silu": "silu", "gelu_pytorch_tanh": "gelu_tanh"}.get(cfg.get("hidden_act"), "silu")}


def seeded_arguments(text: str, dims: dict, dtype: str) -> dict[str, np.ndarray]:
    """The values rlx-run generates for every argument (rounded as the runner rounds)."""
    values = {}
    for a in signature(text):
        shape = [dims[d] if isinstance(d, str) else d for d in a["shape"]]
        is_int = a["dtype"].startswith("i")
        v = argument_values(a["name"], shape, np.int64 if is_int else np.float32, a["param"],
                            seed=0, position_offset=dims.get("past_seq", 0))
        if a["dtype"] == "bf16":
            v = v.astype(ml_dtypes.bfloat16).astype(np.float32)
        values[a["name"]] = v
    return values


@pytest.mark.skipif(not SHARED, reason="../shared/models not found (set RLX_SHARED_DIR)")
@pytest.mark.parametrize("decode", [False, True], ids=["prefill16", "decode1_past16"])
@pytest.mark.parametrize("config", CONFIGS)
def test_decoder_layer(config, decode, dtype="f32"):
    path = SHARED / "models" / f"{config}.json"
    cfg = json.loads(path.read_text())
    small = small_overrides(cfg)
    args = ["--layer-only", "--dtype", dtype] + [f"--set={k}={v}" for k, v in small.items()]
    if decode:
        args.append("--kv-cache")
    text = gen_model(path, *args)
    dims = {"seq": 1, "past_seq": 16} if decode else {"seq": 16}
    out = run_mlir(text, {}, dims=dims)
    v = seeded_arguments(text, dims, dtype)
    rc = ref_config(cfg | small)
    past = (v["past_key_values.0.key"], v["past_key_values.0.value"]) if decode else None
    # A bf16 layer keeps its activations in bf16 (HF's modules in bf16; the
    # fused kernels round where the ops they replace would).
    rnd = (lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float64)) if dtype == "bf16" else None
    if family(cfg) == "gpt2":
        want, k, vv = ref.gpt2_layer(v["hidden_states"], v, rc, past=past, rnd=rnd)
    else:
        want, k, vv = ref.llama_layer(v["hidden_states"], v["position_ids"], v, rc, past=past,
                                      rnd=rnd)
    close(out["hidden_states"], want, dtype)
    if decode:
        close(out["present.0.key"], k, dtype)
        close(out["present.0.value"], vv, dtype)
@pytest.mark.skipif(not SHARED, reason="../shared/models not found")
@pytest.mark.parametrize("config", ["llama-3.2-1b", "qwen3-0.6b"])
def test_decoder_layer_bf16(config):
    test_decoder_layer(config, decode=False, dtype="bf16")


@pytest.mark.skipif(not SHARED, reason="../shared/models not found")
def test_two_layer_model_with_embedding_and_tied_head():
    """Llama-3.2-1B structure end to end at small size: embedding, 2 layers,
    final norm and the (tied) LM head, logits compared."""
    path = SHARED / "models" / "llama-3.2-1b.json"
    cfg = json.loads(path.read_text())
    small = small_overrides(cfg) | {"vocab_size": 300}
    text = gen_model(path, "--layers", "2", *[f"--set={k}={v}" for k, v in small.items()])
    dims = {"seq": 12}
    out = run_mlir(text, {}, dims=dims)
    v = seeded_arguments(text, dims, "f32")
    ids_name = next(n for n in v if "input_ids" in n)
    ids = v[ids_name] % 300
    out = run_mlir(text, {ids_name: ids}, dims=dims)
    rc = ref_config(cfg | small)
    h = v["model.embed_tokens.weight"][ids]
    pos = v["position_ids"]
    for layer in range(2):
        h, _, _ = ref.llama_layer(h, pos, v, rc, prefix=f"model.layers.{layer}.")
    logits = ref.rms_norm(h, v["model.norm.weight"], rc["eps"]) @ v["model.embed_tokens.weight"].T
    (name, got), = out.items()
    close(got, logits, "f32")
def test_seeded_values_match_python_generator():
    """rlx-run's generated arguments are bit-for-bit rlx.random's."""
    text = """func.func @main(%w: tensor<7x33xf32> {rlx.param = "mlp.up_proj.weight"},
                     %n: tensor<33xf32> {rlx.param = "input_layernorm.weight"},
                     %x: tensor<3x5xf32> {rlx.input = "hidden_states"},
                     %p: tensor<5xi64> {rlx.input = "position_ids"},
                     %i: tensor<6xi64> {rlx.input = "input_ids"})
    -> (tensor<7x33xf32>, tensor<33xf32>, tensor<3x5xf32>, tensor<5xi64>, tensor<6xi64>) {
  return %w, %n, %x, %p, %i : tensor<7x33xf32>, tensor<33xf32>, tensor<3x5xf32>, tensor<5xi64>, tensor<6xi64>
}
"""
    out = run_mlir(text, {}, extra=("--seed", "42"))
    want = [("mlp.up_proj.weight", (7, 33), np.float32, True),
            ("input_layernorm.weight", (33,), np.float32, True),
            ("hidden_states", (3, 5), np.float32, False),
            ("position_ids", (5,), np.int64, False),
            ("input_ids", (6,), np.int64, False)]
    for i, (name, shape, dtype, param) in enumerate(want):
        np.testing.assert_array_equal(out[f"result{i}"],
                                      argument_values(name, shape, dtype, param, seed=42))
