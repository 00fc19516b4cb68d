"""BambaForCausalLM (Mamba-2 mixer layers, Llama attention at
attn_layer_indices) against transformers: logits of two variants, greedy
generation, a prefill split into pieces (the variant with biases), a
left-padded prompt and config errors, on cpu and emu. The bodies are
hybrid_models.py's (shared with test_qwen3_next.py)."""
import pytest

pytest.importorskip("torch")
from hybrid_models import make_tests  # noqa: E402

globals().update(make_tests(["bamba", "bamba_biases"], split="bamba_biases"))
