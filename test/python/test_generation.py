"""Generation with the KV-cache decode step (examples/python/generate.py):
greedy against transformers' generate(do_sample=False), token for token, and
sampled against transformers' model and logits warpers.

A small random-init LlamaForCausalLM (seeded weights as in test_hf_models.py)
is saved with save_pretrained; the example's Generator builds the model from
its config.json, binds the checkpoint by name (rlx.load_weights), prefills
the prompt once and then runs one decode step per token on the present K/V
of the step before. The 32 tokens must be the ones transformers generates,
and the prefill logits must match its logits element-wise: on the CPU path
and on the GPU path's emulator (every step a GPU artifact). The decode step
runs on a history left-padded to a capacity under transformers' padding
mask (rlx-gen --attention-mask), so the 32 tokens take three compilations;
a left-padded prompt through the mask gives the unpadded logits.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from harness import ROOT, gen_model
from test_checkpoints import logits_with_weights

torch = pytest.importorskip("torch")
import test_hf_models as hfm  # noqa: E402

spec = importlib.util.spec_from_file_location("generate", ROOT / "examples" / "python" / "generate.py")
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

NEW_TOKENS = 32


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("name", [n for n in ("llama-3.2-1b", "qwen3-0.6b") if n in
                                  {c.name for c in hfm.CASES}])
def test_greedy_generation_matches_transformers(name, device, tmp_path):
    case = next(c for c in hfm.CASES if c.name == name)
    hf = hfm.HFModel(case)
    model = hf.models["sdpa"]
    model.save_pretrained(tmp_path)
    prompt = hfm.token_ids(7, seed=3)
    with torch.no_grad():
        want = model.generate(torch.from_numpy(prompt), max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                              do_sample=False, pad_token_id=0, eos_token_id=None)
        want_logits = model(input_ids=torch.from_numpy(prompt)).logits[0, -1].numpy()
    want = want[0, prompt.shape[1]:].tolist()
    gen = generate.Generator(tmp_path, device)
    # The prefill's last logits first (a wrong step would show here before a token flips).
    logits, _ = gen.step(prompt, 0, None)
    hfm.close(logits, want_logits, f"{name} {device} prefill logits")
    got = gen.generate(prompt[0].tolist(), NEW_TOKENS)
    assert got == want, f"RLX {got}\nHF  {want}"
    assert len(set(want)) > 1, "a constant sequence would not test the decode steps"
    # The prefill (run twice, compiled once) and decode steps for 32 and 64 slots.
    assert gen.compiled == 3 and [generate.Generator.capacity(n) for n in (7, 32, 33, 38)] == \
        [32, 32, 64, 64], gen.compiled


@pytest.mark.parametrize("device", ["cpu", "emu"])
@pytest.mark.parametrize("name", [n for n in ("llama-3.2-1b", "gpt2") if n in
                                  {c.name for c in hfm.CASES}])
def test_left_padded_prompt_gives_the_unpadded_logits(name, device, tmp_path):
    """rlx-gen --attention-mask, rlx-run --weights: a prompt left-padded by
    three tokens (mask 0, any ids and positions) gives, at its real
    positions, transformers' logits of the prompt alone; the same input with
    the padding attended (mask all ones) does not."""
    case = next(c for c in hfm.CASES if c.name == name)
    model = hfm.HFModel(case).models["eager"]
    model.save_pretrained(tmp_path / "ckpt")
    ids = hfm.token_ids(hfm.PREFILL, seed=6)
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    pad = 3
    padded = np.concatenate([np.full((1, pad), 5, np.int64), ids], axis=1)
    np.save(tmp_path / "pos.npy", np.concatenate([np.zeros(pad, np.int64), np.arange(ids.shape[1])]))
    text = gen_model(case.config, *case.sets(), "--attention-mask")
    assert "attention_mask" in text
    got = {}
    for masked in (True, False):
        mask = np.ones(padded.shape, np.int64)
        mask[:, :pad] = 0 if masked else 1
        out = tmp_path / str(masked)
        out.mkdir()
        np.save(out / "mask.npy", mask)
        proc = logits_with_weights(text, tmp_path / "ckpt", padded, out,
                                   ("--device", device, "--input", f"position_ids={tmp_path / 'pos.npy'}",
                                    "--input", f"attention_mask={out / 'mask.npy'}"), positions=False)
        assert proc.returncode == 0, proc.stderr
        got[masked] = np.load(out / "out" / "logits.npy")[:, pad:]
    hfm.close(got[True], want, f"{name} {device} left-padded")
    assert np.abs(got[False] - want).max() > 1e-2 * np.abs(want).max(), "the mask changed nothing"


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_sampled_generation_matches_transformers(device, tmp_path):
    """Sampling (temperature, top-k, top-p) with the compiled Philox numbers:
    each token is the one transformers' model and warpers give for the
    sequence so far, drawn by the inverse CDF with the same numbers."""
    from test_sampling import inverse_cdf, uniform_ref, warped_probs
    case = next(c for c in hfm.CASES if c.name == "llama-3.2-1b")
    model = hfm.HFModel(case).models["sdpa"]
    model.save_pretrained(tmp_path)
    prompt = hfm.token_ids(5, seed=4)[0].tolist()
    settings = dict(temperature=0.8, top_k=20, top_p=0.9, min_p=0.0)
    seed, new_tokens = 11, 8
    gen = generate.Generator(tmp_path, device)
    sampler = generate.Sampler(gen.vocab_size(), device, seed=seed, **settings)
    got = gen.generate(prompt, new_tokens, sampler)
    want, greedy, seq = [], [], list(prompt)
    with torch.no_grad():
        for step in range(new_tokens):
            logits = model(input_ids=torch.tensor([seq])).logits[0, -1].numpy()[None]
            probs = warped_probs(logits, *settings.values())
            u = uniform_ref(seed, step, 1)
            want.append(int(inverse_cdf(logits, probs, u)[0]))
            greedy.append(int(np.argmax(logits)))
            seq.append(want[-1])
            # RLX's logits differ from these by ~1e-6: no draw may sit that
            # close to a step of the CDF (else the test would be luck).
            p = probs[0][np.argsort(-logits[0], kind="stable")]
            cdf = np.cumsum(p) / p.sum()
            assert np.min(np.abs(cdf - u[0])) > 1e-4, f"step {step} is a borderline draw"
    assert got == want, f"RLX {got}\nHF  {want}"
    assert got != greedy, "sampling that only ever took the arg-max would not test it"


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_repetition_penalty_and_stop_tokens_match_transformers(device, tmp_path):
    """Greedy generation with transformers' repetition penalty (the
    sampler's compiled penalty, temperature 0) gives generate()'s tokens;
    a stop token ends generation after it, as eos_token_id does."""
    case = next(c for c in hfm.CASES if c.name == "llama-3.2-1b")
    model = hfm.HFModel(case).models["sdpa"]
    model.save_pretrained(tmp_path)
    prompt = hfm.token_ids(6, seed=5)
    gen = generate.Generator(tmp_path, device)
    sampler = generate.Sampler(gen.vocab_size(), device, temperature=0.0,
                               repetition_penalty=1.5)
    with torch.no_grad():
        want = model.generate(torch.from_numpy(prompt), max_new_tokens=12, min_new_tokens=12,
                              do_sample=False, repetition_penalty=1.5, pad_token_id=0,
                              eos_token_id=None)[0, prompt.shape[1]:].tolist()
        plain = model.generate(torch.from_numpy(prompt), max_new_tokens=12, min_new_tokens=12,
                               do_sample=False, pad_token_id=0,
                               eos_token_id=None)[0, prompt.shape[1]:].tolist()
    assert want != plain, "a penalty that changes nothing would not test it"
    got = gen.generate(prompt[0].tolist(), 12, sampler)
    assert got == want, f"RLX {got}\nHF  {want}"
    # Stop at the first token that did not occur before it in the output.
    stop = next(t for i, t in enumerate(want) if i >= 3 and t not in want[:i])
    with torch.no_grad():
        want_stop = model.generate(torch.from_numpy(prompt), max_new_tokens=12,
                                   do_sample=False, repetition_penalty=1.5, pad_token_id=0,
                                   eos_token_id=stop)[0, prompt.shape[1]:].tolist()
    got_stop = gen.generate(prompt[0].tolist(), 12, sampler, stop=(stop,))
    assert got_stop == want_stop == want[:want.index(stop) + 1]
