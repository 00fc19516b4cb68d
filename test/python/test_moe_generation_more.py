"""Greedy generation of 32 tokens from gpt-oss, DeepSeek-V3 and Llama-4 checkpoints against
transformers' generate(do_sample=False), on the CPU path and the emulator
(test_moe_models.check_greedy_generation; the families are split over two
files so that the suite's two pytest workers share them)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
from test_moe_models import DEVICES, check_greedy_generation  # noqa: E402


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family", ["gpt_oss", "deepseek_v3", "llama4_text"])
def test_greedy_generation_matches_transformers(family, device, tmp_path):
    check_greedy_generation(family, device, tmp_path)
