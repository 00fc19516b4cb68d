"""Whole models against Hugging Face `transformers`, weight for weight.

For every config in ../shared/models (and a few variants that switch on the
parts of the architectures those configs leave off: Llama's attention/MLP
biases, Qwen2, Qwen3's attention bias, sliding-window layers and default
head_dim, other activations, linear RoPE scaling, transformers 5's
rope_parameters, GPT-2 untied and with its attention scaling options) the
test shrinks the config with overrides that keep its structure (GQA ratio,
explicit or derived head_dim, tied or untied head, window, RoPE scaling),
then

  * builds the model with transformers from that config (the class named in
    `architectures`, f32, eval mode, attn_implementation "eager" and "sdpa"),
    with every parameter drawn from a seeded torch generator (HF's own init
    zeroes biases and sets norms to one, which would hide a bias or norm
    weight that RLX reads wrongly or not at all);
  * generates the same model with rlx-gen (the same overrides as --set) and
    runs it with rlx-run, passing the HF model's parameters by name: every
    argument carries `rlx.param = "<HF parameter name>"`, and the names (and
    shapes) must match HF's named_parameters() one to one;
  * compares logits for a prefill, logits and present K/V for one decode
    step on HF's own KV cache (--kv-cache --past N), and for a layer-only
    build the hidden states leaving decoder layer 0, with
    np.testing.assert_allclose(rtol=1e-4, atol=ATOL), element by element.

transformers is the reference here, not a re-derivation of its modeling
code: the configs go through transformers' config classes, so its defaults
(Qwen3's head_dim 128, Mistral's window, Qwen2's implied biases) are the
ones RLX has to reproduce.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import pathlib

import numpy as np
import pytest

from harness import ROOT, gen_model, run_mlir, shared_dir, signature

try:
    import torch
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
except ImportError as e:  # CI installs them: a missing one is a failure, not a skip.
    raise ImportError(f"{e}: install python/requirements-dev.txt (torch, transformers)") from e

transformers.logging.set_verbosity_error()  # the shrunk configs trip token-id warnings
SHARED = shared_dir()
pytestmark = pytest.mark.skipif(SHARED is None, reason="../shared/models not found (set RLX_SHARED_DIR)")

# f32 on both sides; the logits are O(1) (seeded weights below), so atol only
# matters near zero crossings.
RTOL, ATOL = 1e-4, 1e-5
PREFILL = 11          # tokens of the prefill
BATCH = 2             # sequences of the prefill
PAST = 10             # cached tokens before the decode step
VOCAB = 128
ARCH_TO_MODEL_TYPE = {cls: mt for mt, cls in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items()}


def small_overrides(cfg: dict) -> dict:
    """Small sizes with the config's structure (GQA ratio, head_dim rule, window)."""
    if cfg["architectures"][0].startswith("GPT2"):
        return {"n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": VOCAB, "n_positions": 32}
    ratio = cfg["num_attention_heads"] // cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    heads, kv, head_dim = 2 * ratio, 2, 16
    o = {"num_attention_heads": heads, "num_key_value_heads": kv, "hidden_size": heads * head_dim,
         "intermediate_size": 96, "num_hidden_layers": 2, "vocab_size": VOCAB}
    if cfg.get("head_dim"):
        # A q width that differs from the hidden size (Qwen3) stays different.
        differs = cfg["head_dim"] * cfg["num_attention_heads"] != cfg["hidden_size"]
        o |= {"head_dim": head_dim, "hidden_size": 48 if differs else heads * head_dim}
    if cfg.get("sliding_window"):
        o["sliding_window"] = 6  # shorter than the prefill and the decode history
    return o


@dataclasses.dataclass
class Case:
    name: str
    config: pathlib.Path
    overrides: dict          # on top of small_overrides; None deletes a key
    layer_test: bool = True  # also compare a layer-only build (variants: logits suffice)

    def hf_dict(self) -> dict:
        cfg = json.loads(self.config.read_text())
        cfg.pop("note", None)
        d = cfg | small_overrides(cfg) | self.overrides
        return {k: v for k, v in d.items() if v is not None}

    def sets(self) -> list[str]:
        cfg = json.loads(self.config.read_text())
        return [f"--set={k}={json.dumps(v)}" for k, v in (small_overrides(cfg) | self.overrides).items()]


def cases() -> list[Case]:
    if SHARED is None:
        return []
    models = SHARED / "models"
    out = [Case(p.stem, p, {}) for p in sorted(models.glob("*.json"))]
    m = lambda n: models / f"{n}.json"  # noqa: E731
    out += [
        # HF Llama: attention_bias covers q, k, v and o; mlp_bias gate, up and down.
        Case("llama-biases", m("llama-3.2-1b"), {"attention_bias": True, "mlp_bias": True}),
        Case("llama-mlp-bias", m("tinyllama-1.1b"), {"mlp_bias": True}, layer_test=False),
        Case("llama-gelu-tanh", m("tinyllama-1.1b"), {"hidden_act": "gelu_pytorch_tanh"}, layer_test=False),
        Case("llama-rope-linear", m("tinyllama-1.1b"),
             {"rope_scaling": {"rope_type": "linear", "factor": 4.0}}, layer_test=False),
        # The config.json format of transformers >= 5: theta inside rope_parameters.
        Case("llama-rope-parameters", m("llama-3.1-8b"),
             {"rope_theta": None, "rope_scaling": None,
              "rope_parameters": {"rope_type": "llama3", "rope_theta": 20000.0, "factor": 16.0,
                                  "low_freq_factor": 2.0, "high_freq_factor": 8.0,
                                  "original_max_position_embeddings": 4096}}, layer_test=False),
        # Qwen2: q/k/v biases implied by the architecture, none on o; HF's
        # Qwen2 ignores attention_bias.
        Case("qwen2", ROOT / "test" / "Models" / "Inputs" / "qwen2-tiny.json",
             {"num_hidden_layers": 2, "vocab_size": VOCAB, "attention_bias": False}),
        # Qwen3's attention_bias puts biases on q, k, v and o.
        Case("qwen3-attention-bias", m("qwen3-0.6b"), {"attention_bias": True}, layer_test=False),
        # Qwen3 without head_dim gets transformers' default (128), not H / heads.
        Case("qwen3-default-head-dim", m("qwen3-0.6b"), {"head_dim": None}, layer_test=False),
        # Qwen3 sliding window: only layers >= max_window_layers, only when enabled.
        Case("qwen3-sliding-layer-1", m("qwen3-0.6b"),
             {"use_sliding_window": True, "sliding_window": 4, "max_window_layers": 1}, layer_test=False),
        # Phi-3: packed qkv_proj and gate_up_proj bound by the checkpoint's
        # names, a sliding window; with GQA too.
        Case("phi3-mini", ROOT / "test" / "Models" / "Inputs" / "phi3-mini-4k.json", {},
             layer_test=False),
        Case("phi3-gqa", ROOT / "test" / "Models" / "Inputs" / "phi3-mini-4k.json",
             {"num_key_value_heads": 1, "sliding_window": None}, layer_test=False),
        Case("gpt2-gelu-erf-untied", m("gpt2"),
             {"activation_function": "gelu", "tie_word_embeddings": False, "n_inner": 80},
             layer_test=False),
        Case("gpt2-attn-scaling", m("gpt2"),
             {"scale_attn_by_inverse_layer_idx": True, "activation_function": "relu"}, layer_test=False),
    ]
    return out


CASES = cases()
LAYER_CASES = [c for c in CASES if c.layer_test]


# --- the Hugging Face side -------------------------------------------------------------


def seeded_parameters(model: torch.nn.Module, seed: int = 0) -> None:
    """Every parameter from one seeded generator, at O(1) activation scale."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if p.ndim == 1:
                p.copy_(1.0 + 0.2 * r if name.endswith(".weight") else 0.2 * r)
            else:
                p.copy_(r / min(p.shape) ** 0.5)


class HFModel:
    """The transformers model for a case, in both attention implementations."""

    def __init__(self, case: Case):
        self.case = case
        d = case.hf_dict()
        arch = d["architectures"][0]
        self.config = transformers.AutoConfig.for_model(ARCH_TO_MODEL_TYPE[arch], **d)
        cls = getattr(transformers, arch)
        torch.manual_seed(0)
        self.models = {}
        for impl in ("eager", "sdpa"):
            cfg = copy.deepcopy(self.config)
            cfg._attn_implementation = impl
            model = cls(cfg).to(torch.float32).eval()
            if impl == "eager":
                seeded_parameters(model)
                state = model.state_dict()
            else:
                model.load_state_dict(state)
            assert model.config._attn_implementation == impl
            self.models[impl] = model
        self.params = {n: p.detach().numpy().copy()
                       for n, p in self.models["eager"].named_parameters()}
        self.layers = (self.models["eager"].transformer.h if arch.startswith("GPT2")
                       else self.models["eager"].model.layers)

    def each(self):
        return self.models.items()


def kv_to_rlx(t: torch.Tensor) -> np.ndarray:
    """HF cache [B, Hkv, S, D] -> RLX packed [B, S, Hkv*D]."""
    b, h, s, d = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d).numpy().copy()


# --- the RLX side -----------------------------------------------------------------------


def bind(text: str, params: dict[str, np.ndarray], inputs: dict[str, np.ndarray],
         prefix: str = "") -> dict[str, np.ndarray]:
    """RLX's arguments by name from HF's parameters (those under `prefix`) and
    the given inputs; any name on one side only, or a shape that differs, fails."""
    want = {n: v for n, v in params.items() if n.startswith(prefix)}
    sig = signature(text)
    rlx_params = {a["name"]: a for a in sig if a["param"]}
    rlx_inputs = {a["name"] for a in sig if not a["param"]}
    missing = sorted(set(want) - set(rlx_params))
    unmatched = sorted(set(rlx_params) - set(want))
    assert not missing and not unmatched, (
        f"parameter names differ from Hugging Face's: HF only {missing}, RLX only {unmatched}")
    assert rlx_inputs == set(inputs), f"inputs: RLX {sorted(rlx_inputs)}, given {sorted(inputs)}"
    for n, a in rlx_params.items():
        assert tuple(a["shape"]) == want[n].shape, f"{n}: RLX {a['shape']}, HF {want[n].shape}"
    return {**{n: want[n] for n in rlx_params}, **inputs}


def close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


# --- tests ------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=CASES, ids=[c.name for c in CASES])
def hf(request) -> HFModel:
    return HFModel(request.param)


def token_ids(n: int, seed: int = 1, batch: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, size=(batch, n), dtype=np.int64)


def test_prefill_logits(hf):
    ids = token_ids(PREFILL, batch=BATCH)
    pos = np.arange(PREFILL, dtype=np.int64)
    text = gen_model(hf.case.config, *hf.case.sets(), "--batch", str(BATCH))
    out = run_mlir(text, bind(text, hf.params, {"input_ids": ids, "position_ids": pos}),
                   dims={"seq": PREFILL})
    for impl, model in hf.each():
        with torch.no_grad():
            want = model(input_ids=torch.from_numpy(ids),
                         position_ids=torch.from_numpy(pos)[None].expand(BATCH, -1)).logits
        close(out["logits"], want.numpy(), f"{hf.case.name} prefill logits vs HF {impl}")


def test_decode_step_on_hf_cache(hf):
    """One token after PAST cached ones. RLX's cache holds every past
    position and the sliding-window mask picks the visible ones; HF's default
    cache for sliding layers keeps only the last window - 1 positions. So the
    K/V fed to RLX come from a full DynamicCache (same K/V, nothing dropped),
    and the logits must also match HF's decode on its default cache."""
    ids = token_ids(PAST + 1)
    text = gen_model(hf.case.config, *hf.case.sets(), "--kv-cache", "--past", str(PAST), "--seq", "1")
    n_layers = len(hf.layers)
    for impl, model in hf.each():
        with torch.no_grad():
            prefix, last = torch.from_numpy(ids[:, :PAST]), torch.from_numpy(ids[:, PAST:])
            cache = model(input_ids=prefix, cache=transformers.DynamicCache(), use_cache=True).cache
            past = {}
            for i, layer in enumerate(cache.layers):
                assert layer.keys.shape[2] == PAST
                past[f"past_key_values.{i}.key"] = kv_to_rlx(layer.keys)
                past[f"past_key_values.{i}.value"] = kv_to_rlx(layer.values)
            step = model(input_ids=last, cache=cache, use_cache=True, position_ids=torch.tensor([[PAST]]))
            own = model(input_ids=prefix, use_cache=True).cache  # HF's default cache for the config
            own_step = model(input_ids=last, cache=own, use_cache=True, position_ids=torch.tensor([[PAST]]))
        assert len(cache.layers) == n_layers
        inputs = {"input_ids": ids[:, PAST:], "position_ids": np.array([PAST], np.int64), **past}
        out = run_mlir(text, bind(text, hf.params, inputs))
        close(out["logits"], step.logits.numpy(), f"{hf.case.name} decode logits vs HF {impl}")
        close(out["logits"], own_step.logits.numpy(),
              f"{hf.case.name} decode logits vs HF {impl} on its default cache")
        for i, layer in enumerate(step.cache.layers):
            close(out[f"present.{i}.key"], kv_to_rlx(layer.keys), f"present.{i}.key vs HF {impl}")
            close(out[f"present.{i}.value"], kv_to_rlx(layer.values), f"present.{i}.value vs HF {impl}")


@pytest.mark.parametrize("hf", LAYER_CASES, ids=[c.name for c in LAYER_CASES], indirect=True)
def test_layer_hidden_states(hf):
    """A layer-only build against the hidden states HF's decoder layer 0
    returns when it is handed the same input (hooks on the module, so HF's
    own mask and RoPE feed it)."""
    d = hf.config.hidden_size
    h = np.random.default_rng(2).standard_normal((1, PREFILL, d)).astype(np.float32)
    pos = np.arange(PREFILL, dtype=np.int64)
    text = gen_model(hf.case.config, *hf.case.sets(), "--layer-only")
    prefix = "transformer.h.0." if hf.case.hf_dict()["architectures"][0].startswith("GPT2") \
        else "model.layers.0."
    out = run_mlir(text, bind(text, hf.params, {"hidden_states": h, "position_ids": pos}, prefix),
                   dims={"seq": PREFILL})
    for impl, model in hf.each():
        layer = (model.transformer.h if hasattr(model, "transformer") else model.model.layers)[0]
        seen = {}

        def swap_input(module, args, kwargs):
            return (torch.from_numpy(h), *args[1:]), kwargs

        def keep_output(module, args, kwargs, output):
            seen["h"] = output[0] if isinstance(output, tuple) else output

        hooks = [layer.register_forward_pre_hook(swap_input, with_kwargs=True),
                 layer.register_forward_hook(keep_output, with_kwargs=True)]
        try:
            with torch.no_grad():
                model(input_ids=torch.from_numpy(token_ids(PREFILL)),
                      position_ids=torch.from_numpy(pos)[None])
        finally:
            for hk in hooks:
                hk.remove()
        close(out["hidden_states"], seen["h"].numpy(), f"{hf.case.name} layer 0 vs HF {impl}")
