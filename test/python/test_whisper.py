"""WhisperForConditionalGeneration against transformers: a small random-init
checkpoint (tiny-like structure: 80 mels, the conv stem, GELU, pre-norm
layers; 2-s inputs, so 100 positions) through save_pretrained → rlx-gen (one
module: @encoder and @decoder) → rlx-run --entry ... --weights with the whole
checkpoint, on the CPU path and the emulator from one body. The encoder reads
WhisperFeatureExtractor's features of two seeded synthetic signals (a batch
of 2); the decoder reads seeded token ids and transformers' encoder output and
gives the logits (proj_out tied to the embeddings). The Python route
(compile_cpu with an entry, load_weights of the whole checkpoint) on the CPU.
f32, rtol 1e-4 scaled to the output's magnitude."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import rlx

from harness import BUILD, RLX_GEN
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
    return path, {"features": features, "ids": ids, "states": states.numpy(),
                  "logits": logits.numpy()}


def run(tmp_path, model, entry, device, inputs, checkpoint):
    cmd = [str(RLX_RUN), str(model), "--entry", entry, "--device", device, "--weights",
           str(checkpoint / "model.safetensors"), "--output-dir", str(tmp_path / entry)]
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        cmd += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def assert_close(got, ref):
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("device", DEVICES)
def test_encoder_and_decoder_equal_transformers(device, checkpoint, tmp_path):
    path, ref = checkpoint
    model = tmp_path / "whisper.mlir"
    subprocess.run([str(RLX_GEN), str(path / "config.json"), "--batch", "2", "--seq", "6", "-o",
                    str(model)], check=True, timeout=60)
    run(tmp_path, model, "encoder", device, {"input_features": ref["features"]}, path)
    assert_close(np.load(tmp_path / "encoder" / "last_hidden_state.npy"), ref["states"])
    run(tmp_path, model, "decoder", device,
        {"decoder_input_ids": ref["ids"], "position_ids": np.arange(6),
         "encoder_hidden_states": ref["states"]}, path)
    assert_close(np.load(tmp_path / "decoder" / "logits.npy"), ref["logits"])


def test_python_entry_points_read_the_whole_checkpoint(checkpoint, tmp_path):
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
