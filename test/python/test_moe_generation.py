"""Greedy generation of 32 tokens from Mixtral, Qwen2-MoE, Qwen3-MoE and OLMoE checkpoints against
transformers' generate(do_sample=False), on the CPU path and the emulator
(test_moe_models.check_greedy_generation; the families are split over two
files so that the suite's two pytest workers share the compile-per-step
cost)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
from test_moe_models import DEVICES, check_greedy_generation  # noqa: E402


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["mixtral", "qwen2_moe", "qwen3_moe", "olmoe"])
def test_greedy_generation_matches_transformers(family, device, tmp_path):
    check_greedy_generation(family, device, tmp_path)
