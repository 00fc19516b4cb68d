"""WhisperForConditionalGeneration against transformers: a small random-init
checkpoint (tiny-like structure: 80 mels, the conv stem, GELU, pre-norm
layers; 2-s inputs, so 100 positions) through save_pretrained → rlx-gen (one
module: @encoder and @decoder) → rlx-run --entry ... --weights with the whole
checkpoint, on the CPU path and the emulator from one body. The encoder reads
WhisperFeatureExtractor's features of two seeded synthetic signals (a batch
of 2); the decoder reads seeded token ids and transformers' encoder output and
gives the logits (proj_out tied to the embeddings); with --kv-cache, a prefill
and a decode step on the cross-attention K/V the encoder computed once and
the self-attention cache; examples/python/transcribe.py's 32 greedy tokens
from a WAV file against transformers' generate(). The Python route
(compile_cpu with an entry, load_weights of the whole checkpoint) on the CPU.
f32, rtol 1e-4 scaled to the output's magnitude."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import rlx

from harness import BUILD, RLX_GEN, ROOT
from test_quant_int8 import DEVICES
from test_whisper_features import signal

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

RLX_RUN = BUILD / "bin" / "rlx-run"
CONFIG = dict(vocab_size=200, num_mel_bins=80, d_model=64, encoder_layers=2,
              encoder_attention_heads=4, encoder_ffn_dim=128, decoder_layers=2,
              decoder_attention_heads=4, decoder_ffn_dim=128, max_source_positions=100,
              max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
              decoder_start_token_id=1,
              # fc1's activation; the conv stem is GELU whatever this says.
              activation_function="relu")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """The checkpoint and transformers' outputs: the encoder's, the logits of
    the whole sequence, and with its cache a prefill of 4 tokens then one
    decode step."""
    torch.manual_seed(0)
    model = transformers.WhisperForConditionalGeneration(
        transformers.WhisperConfig(**CONFIG)).eval()
    path = tmp_path_factory.mktemp("whisper")
    model.save_pretrained(path)
    fe = transformers.WhisperFeatureExtractor(chunk_length=2)
    audio = [signal(1.5, 16000, 4), signal(2.5, 16000, 5, loudness=0.3)]
    features = fe(audio, sampling_rate=16000, return_tensors="np").input_features
    assert features.shape == (2, 80, 200)
    ids = np.random.default_rng(6).integers(3, CONFIG["vocab_size"], (2, 6))
    ids[:, 0] = CONFIG["decoder_start_token_id"]
    with torch.no_grad():
        states = model.model.encoder(torch.from_numpy(features)).last_hidden_state
        logits = model(encoder_outputs=(states,), decoder_input_ids=torch.from_numpy(ids)).logits
        prefill = model(encoder_outputs=(states,), decoder_input_ids=torch.from_numpy(ids[:, :4]),
                        use_cache=True)
        step = model(encoder_outputs=(states,), decoder_input_ids=torch.from_numpy(ids[:, 4:5]),
                     past_key_values=prefill.past_key_values, use_cache=True)
    return path, {"features": features, "ids": ids, "states": states.numpy(),
                  "logits": logits.numpy(), "prefill": prefill.logits.numpy(),
                  "step": step.logits.numpy()}


def run(tmp_path, model, entry, device, inputs, checkpoint, dims=None, out=None):
    """rlx-run --entry: the outputs by name. `dims` bind the module's dynamic
    dims on the GPU path (it compiles every entry point)."""
    out = tmp_path / (out or entry)
    cmd = [str(RLX_RUN), str(model), "--entry", entry, "--device", device, "--weights",
           str(checkpoint / "model.safetensors"), "--output-dir", str(out)]
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        cmd += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    for name, value in (dims or {}).items():
        if device != "cpu":
            cmd += ["--dims", f"{name}={value}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {p.stem: np.load(p) for p in out.glob("*.npy")}


def assert_close(got, ref):
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("device", DEVICES)
def test_encoder_and_decoder_equal_transformers(device, checkpoint, tmp_path):
    path, ref = checkpoint
    model = tmp_path / "whisper.mlir"
    subprocess.run([str(RLX_GEN), str(path / "config.json"), "--batch", "2", "--seq", "6", "-o",
                    str(model)], check=True, timeout=60)
    enc = run(tmp_path, model, "encoder", device, {"input_features": ref["features"]}, path)
    assert_close(enc["last_hidden_state"], ref["states"])
    dec = run(tmp_path, model, "decoder", device,
              {"decoder_input_ids": ref["ids"], "position_ids": np.arange(6),
               "encoder_hidden_states": ref["states"]}, path)
    assert_close(dec["logits"], ref["logits"])


@pytest.mark.parametrize("device", DEVICES)
def test_cached_prefill_and_decode_step_equal_transformers(device, checkpoint, tmp_path):
    """--kv-cache: the encoder also gives each decoder layer's cross-attention
    keys and values (computed once); the decoder takes them with the past
    self-attention K/V (empty for the prefill) and returns the presents."""
    path, ref = checkpoint
    model = tmp_path / "whisper.mlir"
    subprocess.run([str(RLX_GEN), str(path / "config.json"), "--batch", "2", "--kv-cache", "-o",
                    str(model)], check=True, timeout=60)
    enc = run(tmp_path, model, "encoder", device, {"input_features": ref["features"]}, path,
              dims={"seq": 1, "past_seq": 0})
    assert_close(enc["last_hidden_state"], ref["states"])
    layers, d = CONFIG["decoder_layers"], CONFIG["d_model"]
    inputs = {"decoder_input_ids": ref["ids"][:, :4], "position_ids": np.arange(4)}
    for i in range(layers):
        for part in ("key", "value"):
            inputs[f"past_key_values.{i}.{part}"] = np.zeros((2, 0, d), np.float32)
            inputs[f"cross_key_values.{i}.{part}"] = enc[f"cross_key_values.{i}.{part}"]
    pre = run(tmp_path, model, "decoder", device, inputs, path, dims={"seq": 4, "past_seq": 0},
              out="prefill")
    assert_close(pre["logits"], ref["prefill"])
    inputs.update(decoder_input_ids=ref["ids"][:, 4:5], position_ids=np.array([4]))
    for i in range(layers):
        for part in ("key", "value"):
            assert pre[f"present.{i}.{part}"].shape == (2, 4, d)
            inputs[f"past_key_values.{i}.{part}"] = pre[f"present.{i}.{part}"]
    step = run(tmp_path, model, "decoder", device, inputs, path, dims={"seq": 1, "past_seq": 4},
               out="step")
    assert_close(step["logits"], ref["step"])


def test_python_entry_points_read_the_whole_checkpoint(checkpoint, tmp_path):
    """compile_cpu(entry=...) and rlx.gpu.compile's artifact with its entry
    chosen: load_weights of the whole checkpoint skips the other entry's."""
    path, ref = checkpoint
    model = tmp_path / "whisper.mlir"
    subprocess.run([str(RLX_GEN), str(path / "config.json"), "--batch", "2", "--seq", "6", "-o",
                    str(model)], check=True, timeout=60)
    text = model.read_text()
    encoder = rlx.compile_cpu(rlx.parse(text), entry="encoder")
    encoder.load_weights(str(path / "model.safetensors"))
    assert_close(encoder.run(input_features=ref["features"])["last_hidden_state"], ref["states"])
    decoder = rlx.compile_cpu(rlx.parse(text), entry="decoder")
    weights = rlx.load_weights(path / "model.safetensors", decoder)
    assert "model.encoder.conv1.weight" in decoder.other_parameters
    assert "model.encoder.conv1.weight" not in weights
    got = decoder.run(decoder_input_ids=ref["ids"], position_ids=np.arange(6),
                      encoder_hidden_states=ref["states"], **weights)["logits"]
    assert_close(got, ref["logits"])
    # The GPU path (emulator): one artifact, its entry chosen by name.
    from rlx import gpu
    artifact = gpu.compile(rlx.parse(text), device="emu")
    for entry, inputs, output, expected in [
            ("encoder", {"input_features": ref["features"]}, "last_hidden_state", ref["states"]),
            ("decoder", {"decoder_input_ids": ref["ids"], "position_ids": np.arange(6),
                         "encoder_hidden_states": ref["states"]}, "logits", ref["logits"])]:
        artifact.entry = entry
        weights = rlx.load_weights(path / "model.safetensors", artifact)
        assert_close(artifact.run(**inputs, **weights)[output], expected)


def load_transcribe():
    """examples/python/transcribe.py as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "transcribe", ROOT / "examples" / "python" / "transcribe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    """A checkpoint whose greedy tokens vary (init_std 0.2), with Whisper's
    begin_suppress_tokens (220 is in its vocabulary) and one suppressed
    token, the extractor's config for 2-s chunks, a 1.5-s WAV file of a tone
    plus noise, and transformers' generate() of 32 tokens."""
    import wave
    torch.manual_seed(1)
    config = dict(CONFIG, vocab_size=300, init_std=0.2, suppress_tokens=[29])
    model = transformers.WhisperForConditionalGeneration(
        transformers.WhisperConfig(**config)).eval()
    path = tmp_path_factory.mktemp("speech")
    model.save_pretrained(path)
    fe = transformers.WhisperFeatureExtractor(chunk_length=2)
    fe.save_pretrained(path)
    pcm = np.clip(np.round(signal(1.5, 16000, 7) * 32768), -32768, 32767).astype("<i2")
    with wave.open(str(path / "speech.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())
    features = fe(pcm.astype(np.float32) / 32768, sampling_rate=16000,
                  return_tensors="pt").input_features
    with torch.no_grad():
        tokens = model.generate(features, max_new_tokens=32)[0].tolist()
    assert len(tokens) == 32 and len(set(tokens)) > 1 and 29 not in tokens
    return path, tokens


@pytest.mark.parametrize("device", DEVICES)
def test_transcribe_greedy_tokens_equal_generate(device, speech):
    """examples/python/transcribe.py: the WAV file → RLX's log-mel features →
    encoder (with the cross-attention K/V) → prefill and masked decode steps
    on a padded history: the 32 tokens of transformers' generate()."""
    path, ref = speech
    transcribe = load_transcribe()
    w = transcribe.Whisper(path, device)
    audio = transcribe.read_wav(path / "speech.wav", 16000)
    assert w.generate(w.features(audio), 32) == ref


@pytest.mark.parametrize("device", DEVICES)
def test_transcribe_prompt_language_and_eos_as_generate(device, speech, tmp_path):
    """A multilingual generation config (lang_to_id, task_to_id,
    no_timestamps_token_id, forced_decoder_ids with the language left to
    detection) and an end token that the greedy output reaches: the language
    detected, given, and a translate task, each as generate() (which strips
    the end token)."""
    import shutil
    path, ref = speech
    for name in ("config.json", "model.safetensors", "preprocessor_config.json", "speech.wav"):
        shutil.copy(path / name, tmp_path / name)
    eos = ref[5]  # a token the greedy output reaches
    generation = {"decoder_start_token_id": 1, "eos_token_id": eos, "pad_token_id": 0,
                  "suppress_tokens": [29], "begin_suppress_tokens": [220],
                  "lang_to_id": {"<|en|>": 250, "<|fr|>": 251, "<|de|>": 252},
                  "task_to_id": {"transcribe": 260, "translate": 261},
                  "no_timestamps_token_id": 262, "is_multilingual": True,
                  "forced_decoder_ids": [[1, None], [2, 260]], "max_length": 64}
    (tmp_path / "generation_config.json").write_text(json.dumps(generation))
    model = transformers.WhisperForConditionalGeneration.from_pretrained(tmp_path).eval()
    fe = transformers.WhisperFeatureExtractor.from_pretrained(tmp_path)
    transcribe = load_transcribe()
    w = transcribe.Whisper(tmp_path, device)
    audio = transcribe.read_wav(tmp_path / "speech.wav", 16000)
    features = w.features(audio)
    hf_features = fe(audio, sampling_rate=16000, return_tensors="pt").input_features
    for kwargs in ({}, {"language": "fr"}, {"task": "translate"}):
        with torch.no_grad():
            expected = model.generate(hf_features, max_new_tokens=16, **kwargs)[0].tolist()
        assert w.generate(features, 16, **kwargs) == expected, kwargs
    with pytest.raises(SystemExit, match="more than max_target_positions"):
        w.generate(features, 100)
