"""Qwen3NextForCausalLM (Gated DeltaNet and gated attention layers, the MoE
block with its gated shared expert) against transformers: logits of two
variants, greedy generation, a prefill split into pieces (the dense
variant), a left-padded prompt and config errors, on cpu and emu. The
bodies are hybrid_models.py's (shared with test_bamba_models.py)."""
import pytest

pytest.importorskip("torch")
from hybrid_models import make_tests  # noqa: E402

globals().update(make_tests(["qwen3_next", "qwen3_next_dense"], split="qwen3_next_dense"))
