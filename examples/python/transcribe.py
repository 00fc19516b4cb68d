#!/usr/bin/env python3
"""Whisper speech recognition with RLX: a 16 kHz mono WAV file to token ids.

    python examples/python/transcribe.py AUDIO.wav --model CHECKPOINT_DIR
                                         [--device cpu|emu|cuda|auto]
                                         [--max-new-tokens 32] [--language en]
                                         [--task transcribe|translate]

CHECKPOINT_DIR is what ``WhisperForConditionalGeneration.save_pretrained``
writes (``config.json``, ``generation_config.json``, ``model.safetensors``),
with the feature extractor's ``preprocessor_config.json`` if it is there
(Whisper's defaults otherwise). The WAV file must be 16-bit PCM, mono, at the
extractor's sampling rate (16 kHz): it is read with the standard library's
``wave`` module, and resampling is out of scope (an error says so).

The pipeline, each part compiled by RLX for ``--device``:

1. the log-mel features (``rlx_hir.log_mel_spectrogram``, transformers'
   ``WhisperFeatureExtractor``: 30 s padded or trimmed);
2. the encoder (``@encoder`` of ``rlx.models.from_hf_config(config,
   kv_cache=True, attention_mask=True)``), which also computes each decoder
   layer's cross-attention keys and values once;
3. greedy decoding as transformers' ``generate`` does for Whisper: the
   prompt is ``decoder_start_token_id``, the config's ``forced_decoder_ids``
   when neither a language nor a task is set, the language token (given,
   the generation config's ``language``, or detected as transformers does:
   the most likely language token after the start token), the task token
   and ``<|notimestamps|>`` (``lang_to_id``, ``task_to_id``,
   ``no_timestamps_token_id``); ``suppress_tokens`` are never picked and
   ``begin_suppress_tokens`` not first; it stops at ``eos_token_id`` (not
   returned, as transformers strips it) or after ``--max-new-tokens``; a
   prompt plus ``--max-new-tokens`` longer than ``max_target_positions`` is
   an error up front. The
   prompt runs once as a prefill, then one ``@decoder`` step per token with
   the self-attention history left-padded to a capacity (a power of two, at
   least 32) and masked, so one compiled step serves many tokens (as
   ``generate.py`` does for the LLMs).

It prints the new token ids (no tokenizer: decode them with
``WhisperTokenizer`` if you have one). Timestamps, beam search, temperature
fallback and long-form (> 30 s) chunking are not implemented.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import time
import wave

import numpy as np

import rlx
from rlx import hir
from rlx.models import from_hf_config


def read_wav(path: str | pathlib.Path, sampling_rate: int) -> np.ndarray:
    """16-bit PCM mono samples as float32 in [-1, 1)."""
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise SystemExit(f"{path}: need 16-bit PCM mono, got {w.getnchannels()} channel(s) "
                             f"of {8 * w.getsampwidth()} bits")
        if w.getframerate() != sampling_rate:
            raise SystemExit(f"{path}: sampled at {w.getframerate()} Hz, the model needs "
                             f"{sampling_rate} Hz (resample it first: not done here)")
        data = w.readframes(w.getnframes())
    return (np.frombuffer(data, "<i2").astype(np.float32) / 32768.0)


class Whisper:
    """One checkpoint's front end, encoder and decoder steps, compiled on
    demand for `device`."""

    def __init__(self, checkpoint: str | pathlib.Path, device: str = "cpu"):
        self.checkpoint = pathlib.Path(checkpoint)
        self.device = device
        read = lambda name: json.loads((self.checkpoint / name).read_text())  # noqa: E731
        self.config = read("config.json")
        gen = self.checkpoint / "generation_config.json"
        self.generation = read("generation_config.json") if gen.exists() else {}
        pre = self.checkpoint / "preprocessor_config.json"
        self.preprocessor = read("preprocessor_config.json") if pre.exists() else {}
        self.module = from_hf_config(self.config, kv_cache=True, attention_mask=True)
        self.weights = rlx.load_weights(self.checkpoint / "model.safetensors")
        self.compiled: dict[tuple, object] = {}
        self.uploaded: set[tuple] = set()  # (model, entry) given the weights
        self.features_module: dict[int, rlx.Module] = {}
        self.compile_s = 0.0

    def _compile(self, module, entry: str, dims: dict[str, int]):
        """The compiled `entry` for `dims` (the GPU path compiles the whole
        module and runs the entry asked for)."""
        key = (id(module), entry if self.device == "cpu" else "", tuple(dims.items()))
        if key not in self.compiled:
            t0 = time.perf_counter()
            if self.device == "cpu":
                model = rlx.compile_cpu(module, entry=entry, dims=dims)
            else:
                from rlx import gpu
                model = gpu.compile(module, device=self.device, dims=dims)
            self.compile_s += time.perf_counter() - t0
            self.compiled[key] = model
        model = self.compiled[key]
        if self.device != "cpu":
            model.entry = entry
        return model

    def _run(self, model, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Runs the compiled entry; the weights go with its first run (a GPU
        model keeps them; a CPU model is given them each time)."""
        key = (id(model), getattr(model, "entry", ""))
        if self.device == "cpu" or key not in self.uploaded:
            names = {a["name"] for a in model.arguments}
            inputs = {**{k: v for k, v in self.weights.items() if k in names}, **inputs}
            self.uploaded.add(key)
        return model.run(inputs)

    def features(self, audio: np.ndarray) -> np.ndarray:
        """[1, n_mels, frames] log-mel features of 1-D `audio`."""
        p = self.preprocessor
        sr = int(p.get("sampling_rate", 16000))
        if audio.size not in self.features_module:
            f = hir.Function("features")
            x = f.input("audio", (1, audio.size))
            f.output("input_features", hir.log_mel_spectrogram(
                x, int(p.get("feature_size", self.config.get("num_mel_bins", 80))),
                n_fft=int(p.get("n_fft", 400)), hop_length=int(p.get("hop_length", 160)),
                sampling_rate=sr, n_samples=int(p.get("chunk_length", 30)) * sr))
            self.features_module[audio.size] = f.build()
        model = self._compile(self.features_module[audio.size], "features", {})
        return self._run(model, {"audio": audio[None].astype(np.float32)})["input_features"]

    def capacity(self, history: int) -> int:
        return max(32, 1 << max(0, history - 1).bit_length())

    def language_id(self, language: str) -> int:
        """A language code (``en``) or token (``<|en|>``) as its id."""
        lang = self.generation.get("lang_to_id") or {}
        key = language.lower() if language.startswith("<|") else f"<|{language.lower()}|>"
        if key not in lang:
            raise SystemExit(f"language {language!r}: {key} is not in the generation config's "
                             f"lang_to_id (give a language code such as en)")
        return int(lang[key])

    def prompt(self, language: str | None, task: str | None,
               detect=None) -> list[int]:
        """transformers' Whisper prompt (_retrieve_init_tokens, without
        timestamps); `detect()` gives the language id when it must be
        detected."""
        g = self.generation
        task = task or g.get("task")
        language = language or g.get("language")
        tokens: list = [int(g.get("decoder_start_token_id",
                                  self.config.get("decoder_start_token_id", 1)))]
        if task is None and language is None:
            forced = g.get("forced_decoder_ids") or self.config.get("forced_decoder_ids")
            if forced and forced[0][0] == 1:
                for position, (index, token) in enumerate(forced, start=1):
                    if index != position:
                        raise SystemExit(f"forced_decoder_ids {forced} do not follow Whisper's "
                                         "prompt pattern")
                    tokens.append(token)
        undefined = len(tokens) <= 1 or tokens[1] is None
        lang_id = None
        if language is not None:
            lang_id = self.language_id(language)
        elif g.get("lang_to_id") and undefined and detect is not None:
            lang_id = detect()
        if lang_id is not None:
            if len(tokens) > 1:
                tokens[1] = lang_id
            else:
                tokens.append(lang_id)
        tasks = g.get("task_to_id") or {}
        if task is not None:
            if task not in tasks:
                raise SystemExit(f"task {task!r} is not in the generation config's task_to_id")
            tokens.append(int(tasks[task]))
        elif language is not None and tasks and not any(t in tokens for t in tasks.values()):
            tokens.append(int(tasks["transcribe"]))
        no_ts = g.get("no_timestamps_token_id")
        if no_ts is not None and tokens[-1] != no_ts:
            tokens.append(int(no_ts))
        return [int(t) for t in tokens if t is not None]

    def generate(self, input_features: np.ndarray, max_new_tokens: int = 32,
                 language: str | None = None, task: str | None = None) -> list[int]:
        """The new token ids for `input_features` [1, n_mels, frames] (the
        prompt's and the end token excluded, as transformers returns them)."""
        g = self.generation
        dec_dims = lambda seq, past: {"seq": seq, "past_seq": past,  # noqa: E731
                                      "total_seq": seq + past}
        # The CPU compiles the entry alone; the GPU path the whole module,
        # whose decoder dims are then bound too (a one-token step's).
        encoder = self._compile(self.module, "encoder",
                                {} if self.device == "cpu" else dec_dims(1, 0))
        cross = self._run(encoder, {"input_features": input_features})
        cross = {k: v for k, v in cross.items() if k.startswith("cross_key_values.")}
        vocab = int(self.config["vocab_size"])
        layers = int(self.config.get("decoder_layers", 4))
        width = int(self.config.get("d_model", 384))

        def decode(ids: list[int], past: int, cache) -> tuple[np.ndarray, dict]:
            """The last position's logits and the presents, after `past`
            positions held in `cache` (None: the prefill)."""
            slots = 0 if cache is None else self.capacity(past)
            step = self._compile(self.module, "decoder", dec_dims(len(ids), slots))
            inputs = {"decoder_input_ids": np.array([ids], np.int64),
                      "position_ids": np.arange(past, past + len(ids)),
                      "attention_mask": np.ones((1, slots + len(ids)), np.int64), **cross}
            inputs["attention_mask"][:, :slots - past] = 0
            for i in range(layers):
                for part in ("key", "value"):
                    padded = np.zeros((1, slots, width), np.float32)
                    if past:
                        padded[:, slots - past:] = cache[f"present.{i}.{part}"][:, -past:]
                    inputs[f"past_key_values.{i}.{part}"] = padded
            out = self._run(step, inputs)
            return out["logits"][0, -1].astype(np.float64), out

        def detect() -> int:
            """transformers' detect_language: the most likely language token
            after the start token."""
            logits, _ = decode(self.prompt(None, None)[:1], 0, None)
            ids = [int(t) for t in g["lang_to_id"].values()]
            return ids[int(np.argmax(logits[ids]))]

        prompt = self.prompt(language, task, detect)
        limit = int(self.config.get("max_target_positions", 448))
        if len(prompt) + max_new_tokens > limit:
            raise SystemExit(f"the prompt ({len(prompt)} tokens) plus max_new_tokens "
                             f"({max_new_tokens}) is more than max_target_positions ({limit})")
        suppress = [t for t in g.get("suppress_tokens") or [] if 0 <= t < vocab]
        begin = [t for t in g.get("begin_suppress_tokens") or [] if 0 <= t < vocab]
        eos = g.get("eos_token_id", self.config.get("eos_token_id"))
        eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        ids, past, cache, new = prompt, 0, None, []
        while len(new) < max_new_tokens:
            logits, out = decode(ids, past, cache)
            logits[suppress] = -np.inf
            if not new:
                logits[begin] = -np.inf
            token = int(np.argmax(logits))
            if token in eos:
                break  # transformers strips the end token
            new.append(token)
            past += len(ids)
            cache = out
            ids = [token]
        return new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("audio", type=pathlib.Path, help="16 kHz mono 16-bit PCM WAV file")
    ap.add_argument("--model", type=pathlib.Path, required=True,
                    help="WhisperForConditionalGeneration checkpoint directory")
    ap.add_argument("--device", default="cpu", help="cpu (default), emu, cuda or auto")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--language", help="e.g. en (needs the generation config's lang_to_id)")
    ap.add_argument("--task", choices=["transcribe", "translate"])
    a = ap.parse_args()
    w = Whisper(a.model, a.device)
    t0 = time.perf_counter()
    audio = read_wav(a.audio, int(w.preprocessor.get("sampling_rate", 16000)))
    tokens = w.generate(w.features(audio), a.max_new_tokens, a.language, a.task)
    print(",".join(map(str, tokens)))
    print(f"{len(tokens)} tokens in {time.perf_counter() - t0:.2f} s "
          f"({w.compile_s:.2f} s compiling)")


if __name__ == "__main__":
    main()
