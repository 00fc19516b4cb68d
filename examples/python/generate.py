#!/usr/bin/env python3
"""Greedy generation from a Hugging Face checkpoint with RLX's KV-cache step.

    python examples/python/generate.py CHECKPOINT_DIR --prompt 1,2,3 [--new-tokens 32]
                                       [--device cpu|emu|cuda|auto]

CHECKPOINT_DIR is what ``save_pretrained`` writes: ``config.json`` and the
safetensors weights (one file or shards). The model is built from the config
(``rlx.models.from_hf_config`` with ``kv_cache=True``), the weights bound by
name (``rlx.load_weights``); the prompt runs once as a prefill (an empty
history, ``past_seq = 0``), then one decode step per new token feeds the
previous step's present K/V back as the history. Token ids in, token ids out
(no tokenizer); greedy: the arg-max of the last position's logits, as
``transformers``' ``generate(do_sample=False)``. ``--device`` compiles each
step for this CPU (``rlx.compile_cpu``, the default) or for the GPU path
(``rlx.gpu.compile``: ``emu`` runs the GPU kernels on the emulator).

RLX specializes symbolic dims at compile time, so every decode step (a new
history length) is a compilation: about a second for the small models of
the test, whose packed weights are computed once per compiled step. Only the
step in use is kept (each holds its own packed weights). Needs the rlx package (``pip install ./python``, or
``PYTHONPATH=build/python_packages`` after a CMake build).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

import rlx
from rlx.models import from_hf_config


class Generator:
    """Prefill and decode steps of one checkpoint, compiled on demand."""

    def __init__(self, checkpoint: str | pathlib.Path, device: str = "cpu"):
        checkpoint = pathlib.Path(checkpoint)
        self.device = device
        self.config = json.loads((checkpoint / "config.json").read_text())
        self.module = from_hf_config(self.config, kv_cache=True)
        self.checkpoint = checkpoint
        self.weights: dict[str, np.ndarray] | None = None
        self.layers = self.config.get("num_hidden_layers", self.config.get("n_layer"))
        self.current: tuple[tuple[int, int], rlx.CompiledModel] | None = None
        self.compiled = 0
        self.compile_s = 0.0

    def step(self, ids: np.ndarray, past: int, cache: dict[str, np.ndarray]):
        """Logits of the last position and the present K/V, for `ids` [1, S]
        after `past` cached positions."""
        key = (ids.shape[1], past)
        if self.current is None or self.current[0] != key:
            self.current = None  # the previous step's model (and packed weights) go first
            t0 = time.perf_counter()
            dims = {"seq": ids.shape[1], "past_seq": past}
            if self.device == "cpu":
                model = rlx.compile_cpu(self.module, dims=dims)
            else:
                from rlx import gpu

                model = gpu.compile(self.module, device=self.device, dims=dims)
            self.compile_s += time.perf_counter() - t0
            self.compiled += 1
            if self.weights is None:
                # Names and shapes checked against the model's parameters.
                self.weights = rlx.load_weights(self.checkpoint, model)
            self.current = (key, model)
        model = self.current[1]
        inputs = {"input_ids": ids, "position_ids": np.arange(past, past + ids.shape[1])}
        for i in range(self.layers):
            for kind in ("key", "value"):
                inputs[f"past_key_values.{i}.{kind}"] = cache[f"present.{i}.{kind}"]
        out = model.run({**self.weights, **inputs})
        present = {k: v for k, v in out.items() if k.startswith("present.")}
        return out["logits"][0, -1], present

    def generate(self, prompt: list[int], new_tokens: int) -> list[int]:
        ids = np.asarray([prompt], dtype=np.int64)
        width = self._kv_width()
        empty = np.zeros((1, 0, width), np.float32)
        cache = {f"present.{i}.{k}": empty for i in range(self.layers) for k in ("key", "value")}
        logits, cache = self.step(ids, 0, cache)
        out = [int(np.argmax(logits))]
        for _ in range(new_tokens - 1):
            past = len(prompt) + len(out) - 1
            logits, cache = self.step(np.asarray([[out[-1]]], dtype=np.int64), past, cache)
            out.append(int(np.argmax(logits)))
        return out

    def _kv_width(self) -> int:
        c = self.config
        heads = c.get("num_attention_heads", c.get("n_head"))
        kv = c.get("num_key_value_heads", heads)
        hidden = c.get("hidden_size", c.get("n_embd"))
        return kv * c.get("head_dim", hidden // heads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", type=pathlib.Path)
    ap.add_argument("--prompt", required=True, help="comma-separated token ids")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--device", default="cpu", help="cpu (default), emu, cuda or auto")
    a = ap.parse_args()
    gen = Generator(a.checkpoint, a.device)
    t0 = time.perf_counter()
    tokens = gen.generate([int(t) for t in a.prompt.split(",")], a.new_tokens)
    total = time.perf_counter() - t0
    print(",".join(map(str, tokens)))
    print(f"{a.new_tokens} tokens in {total:.2f} s ({gen.compile_s:.2f} s compiling "
          f"{gen.compiled} steps)")


if __name__ == "__main__":
    main()
