#!/usr/bin/env python3
"""Generation from a Hugging Face checkpoint with RLX's KV-cache step, greedy or sampled.

    python examples/python/generate.py CHECKPOINT_DIR --prompt 1,2,3 [--new-tokens 32]
                                       [--device cpu|emu|cuda|auto]
                                       [--temperature T --top-k K --top-p P --min-p M --seed S]
                                       [--repetition-penalty R] [--stop ID,...]

CHECKPOINT_DIR is what ``save_pretrained`` writes: ``config.json`` and the
safetensors weights (one file or shards). The model is built from the config
(``rlx.models.from_hf_config`` with ``kv_cache=True``), the weights bound by
name (``rlx.load_weights``); the prompt runs once as a prefill (an empty
history, ``past_seq = 0``), then one decode step per new token feeds the
previous step's present K/V back as the history. Token ids in, token ids out
(no tokenizer); greedy: the arg-max of the last position's logits, as
``transformers``' ``generate(do_sample=False)``. With ``--temperature`` (or
any of ``--top-k``, ``--top-p``, ``--min-p``) it samples instead: a compiled
sampler (``rlx_mir.random_uniform``, Philox-4x32 numbers keyed by ``--seed``
and the step, then ``rlx_mir.sample``: transformers' temperature, top-k,
top-p and min-p warpers and an inverse CDF): the same numbers on every
device, so the same tokens wherever the devices' logits agree. The sampler's
sort and sums are quadratic in the vocabulary on today's generic lowerings:
fine for small vocabularies, slow for a real one.
``--device`` compiles each
step for this CPU (``rlx.compile_cpu``, the default) or for the GPU path
(``rlx.gpu.compile``: ``emu`` runs the GPU kernels on the emulator).

RLX specializes symbolic dims at compile time. So that one compiled decode
step serves many tokens, an attention model's decode step is built with
transformers' padding mask (``attention_mask=True``) and the history is
kept left-padded to a capacity (a power of two, at least 32 positions):
the step attends to the capacity's slots with the padding masked off, RoPE
reads the true ``position_ids``, and the last ``past`` positions of its
present K/V are the next step's history, left-padded again (to a doubled
capacity once they outgrow it). The prefill has no padding and is built
without the mask. So a generation compiles the prefill and one decode step
per capacity it reaches (32 tokens after a 7-token prompt: three), each
about a second for the small models of the tests. State-space models (MambaForCausalLM, FalconMambaForCausalLM,
Mamba2ForCausalLM) carry a fixed-size conv and SSM state per layer instead
of K/V: their prefill and their decode step are one compilation each.
Hybrids (Qwen3NextForCausalLM) carry both: their attention layers' K/V
padded to the capacity, their linear layers' states as they are. Only the
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


class Sampler:
    """A token from the last logits: rlx_mir.sample of one row, its uniform
    number from rlx_mir.random_uniform (seed, step), compiled once.
    Temperature 0 is greedy (the first largest logit).

    `repetition_penalty` (transformers' ``RepetitionPenaltyLogitsProcessor``,
    applied first): the logit of every token already in the sequence is
    divided by it when positive, multiplied when negative. Compiled too: the
    penalized logit is min(x·p, x/p) for p > 1 (max for p < 1), taken (by
    the same min or max against x) where a mask input (0 for the tokens
    seen, +inf or -inf for the others) lets it through, so the arithmetic
    is exactly transformers'."""

    def __init__(self, vocab: int, device: str = "cpu", *, temperature: float = 1.0,
                 top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0, seed: int = 0,
                 repetition_penalty: float = 1.0):
        from rlx import hir, mir
        if not repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0, got {repetition_penalty}")
        self.vocab, self.penalty = vocab, repetition_penalty
        f = hir.Function("sample")
        logits = f.input("logits", (1, vocab))
        step = f.input("step", (), "i64")
        if repetition_penalty != 1.0:
            mask, p = f.input("unseen", (1, vocab)), f.input("penalty", (1,))
            both = mir.min if repetition_penalty > 1 else mir.max
            logits = both(logits, mir.add(both(mir.mul(logits, p), mir.div(logits, p)), mask))
        u = mir.random_uniform(step, seed=seed, shape=[1])
        f.output("id", mir.sample(logits, u, temperature=temperature, top_k=top_k,
                                  top_p=top_p, min_p=min_p))
        module = f.build()
        if device == "cpu":
            self.model = rlx.compile_cpu(module)
        else:
            from rlx import gpu
            self.model = gpu.compile(module, device=device)

    def __call__(self, logits: np.ndarray, step: int, seen: list[int] = ()) -> int:
        inputs = {"logits": np.asarray(logits, np.float32)[None], "step": np.array(step, np.int64)}
        if self.penalty != 1.0:
            mask = np.full((1, self.vocab), np.inf if self.penalty > 1 else -np.inf, np.float32)
            mask[0, np.asarray(list(seen), np.int64)] = 0.0
            inputs["unseen"] = mask
            inputs["penalty"] = np.array([self.penalty], np.float32)
        return int(self.model.run(**inputs)["id"][0])


class Generator:
    """Prefill and decode steps of one checkpoint, compiled on demand."""

    def __init__(self, checkpoint: str | pathlib.Path, device: str = "cpu"):
        checkpoint = pathlib.Path(checkpoint)
        self.device = device
        self.config = json.loads((checkpoint / "config.json").read_text())
        self.prefill = self.module = from_hf_config(self.config, kv_cache=True)
        # Attention models name the history length past_seq: their decode
        # step takes the padding mask so that a history padded to a capacity
        # is one compilation; state-space models (Mamba) carry fixed-size
        # states instead: one decode step serves every token.
        self.has_history = '"past_seq"' in self.module.text()
        if self.has_history:
            self.module = from_hf_config(self.config, kv_cache=True, attention_mask=True)
        self.checkpoint = checkpoint
        self.weights: dict[str, np.ndarray] | None = None
        self.current: tuple[tuple, rlx.CompiledModel] | None = None
        self.compiled = 0
        self.compile_s = 0.0

    @staticmethod
    def capacity(history: int) -> int:
        """The history slots a decode step is compiled for: a power of two,
        at least 32."""
        return max(32, 1 << max(0, history - 1).bit_length())

    def step(self, ids: np.ndarray, past: int, cache: dict[str, np.ndarray] | None):
        """Logits of the last position and the present K/V (a state-space
        model's conv and SSM states), for `ids` [1, S] after `past` cached
        positions (`cache` None: the prefill, on an empty cache of the
        model's own K/V width, or zero states). An attention model's cache
        holds the last `past` positions of each present K/V; they are
        left-padded to the capacity (zeros, masked off)."""
        masked = self.has_history and cache is not None  # a decode step on padded slots
        slots = 0 if cache is None else self.capacity(past)
        dims = {"seq": ids.shape[1]}
        if self.has_history:
            dims["past_seq"] = slots
        if masked:
            dims["total_seq"] = slots + ids.shape[1]
        key = tuple(dims.items())
        if self.current is None or self.current[0] != key:
            self.current = None  # the previous step's model (and packed weights) go first
            t0 = time.perf_counter()
            module = self.module if masked else self.prefill
            if self.device == "cpu":
                model = rlx.compile_cpu(module, dims=dims)
            else:
                from rlx import gpu

                model = gpu.compile(module, device=self.device, dims=dims)
            self.compile_s += time.perf_counter() - t0
            self.compiled += 1
            if self.weights is None:
                # Names and shapes checked against the model's parameters.
                self.weights = rlx.load_weights(self.checkpoint, model)
            if hasattr(model, "hold_weights"):  # the CPU model keeps them: not copied per run
                model.hold_weights(self.weights)
            self.current = (key, model)
        model = self.current[1]
        history = [a for a in model.arguments if a["name"].startswith("past_key_values.")]
        if cache is None:  # an empty history; a state-space model's zero states
            cache = {a["name"].replace("past_key_values", "present"): np.zeros(a["shape"], np.float32)
                     for a in history}
        inputs = {"input_ids": ids}
        if any(a["name"] == "position_ids" for a in model.arguments):
            inputs["position_ids"] = np.arange(past, past + ids.shape[1])
        if masked:
            inputs["attention_mask"] = np.ones((1, slots + ids.shape[1]), np.int64)
            inputs["attention_mask"][:, :slots - past] = 0
        for a in history:  # each layer's past K/V (or conv and SSM states)
            kept = cache[a["name"].replace("past_key_values", "present")]
            if self.has_history and a["name"].endswith((".key", ".value")):
                # an attention layer's last `past` positions, left-padded to
                # the slots (a hybrid model's recurrent layers carry states)
                padded = np.zeros(a["shape"], kept.dtype)
                if past:
                    padded[:, slots - past:] = kept[:, kept.shape[1] - past:]
                kept = padded
            inputs[a["name"]] = kept
        held = hasattr(model, "hold_weights")
        out = model.run(inputs if held else {**self.weights, **inputs})
        present = {k: v for k, v in out.items() if k.startswith("present.")}
        return out["logits"][0, -1], present

    def generate(self, prompt: list[int], new_tokens: int, sampler: Sampler | None = None,
                 stop: tuple[int, ...] = ()) -> list[int]:
        """`new_tokens` ids after `prompt`: greedy, or drawn by `sampler`
        (its step number: the index of the new token; it sees the sequence
        so far for its repetition penalty). Ends early after a token of
        `stop` (included, as transformers' eos_token_id)."""
        def pick(logits, step):
            if sampler is None:
                return int(np.argmax(logits))
            return sampler(logits, step, prompt + out)

        ids = np.asarray([prompt], dtype=np.int64)
        out: list[int] = []
        logits, cache = self.step(ids, 0, None)
        out.append(pick(logits, 0))
        for _ in range(new_tokens - 1):
            if out[-1] in stop:
                break
            past = len(prompt) + len(out) - 1
            logits, cache = self.step(np.asarray([[out[-1]]], dtype=np.int64), past, cache)
            out.append(pick(logits, len(out)))
        return out

    def vocab_size(self) -> int:
        return self.config["vocab_size"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", type=pathlib.Path)
    ap.add_argument("--prompt", required=True, help="comma-separated token ids")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--device", default="cpu", help="cpu (default), emu, cuda or auto")
    ap.add_argument("--temperature", type=float, help="sample (default: greedy)")
    ap.add_argument("--top-k", type=int,
                    help="sample from the K most likely (0: all; default 50 when sampling, "
                         "as transformers' generation config)")
    ap.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass")
    ap.add_argument("--min-p", type=float, default=0.0, help="min-p relative to the top token")
    ap.add_argument("--seed", type=int, default=0, help="the sampler's Philox seed")
    ap.add_argument("--repetition-penalty", type=float, default=1.0,
                    help="transformers' repetition penalty (1: off), greedy or sampled")
    ap.add_argument("--stop", default="", help="comma-separated stop token ids (eos)")
    a = ap.parse_args()
    gen = Generator(a.checkpoint, a.device)
    sampler = None
    sampled = a.temperature is not None or a.top_k is not None or a.top_p < 1 or a.min_p > 0
    if sampled or a.repetition_penalty != 1.0:
        temperature = (1.0 if a.temperature is None else a.temperature) if sampled else 0.0
        sampler = Sampler(gen.vocab_size(), a.device, temperature=temperature,
                          top_k=(50 if a.top_k is None else a.top_k) if sampled else 0,
                          top_p=a.top_p, min_p=a.min_p, seed=a.seed,
                          repetition_penalty=a.repetition_penalty)
    t0 = time.perf_counter()
    stop = tuple(int(t) for t in a.stop.split(",") if t)
    tokens = gen.generate([int(t) for t in a.prompt.split(",")], a.new_tokens, sampler, stop)
    total = time.perf_counter() - t0
    print(",".join(map(str, tokens)))
    print(f"{len(tokens)} tokens in {total:.2f} s ({gen.compile_s:.2f} s compiling "
          f"{gen.compiled} steps)")


if __name__ == "__main__":
    main()
