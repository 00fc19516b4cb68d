"""WhisperForConditionalGeneration's encoder against transformers: a small
random-init checkpoint (tiny-like structure: 80 mels, the conv stem, GELU,
pre-norm layers; 2-s inputs, so 100 positions) through save_pretrained →
rlx-gen → rlx-run --weights with the whole checkpoint (the module reads its
`model.encoder.` part), on the CPU path and the emulator from one body. The
input features are WhisperFeatureExtractor's of two seeded synthetic signals
(a batch of 2). f32, rtol 1e-4 scaled to the output's magnitude."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

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
              decoder_start_token_id=1)


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
    with torch.no_grad():
        ref = model.model.encoder(torch.from_numpy(features)).last_hidden_state.numpy()
    return path, features, ref


@pytest.mark.parametrize("device", DEVICES)
def test_encoder_equals_transformers(device, checkpoint, tmp_path):
    path, features, ref = checkpoint
    model = tmp_path / "encoder.mlir"
    subprocess.run([str(RLX_GEN), str(path / "config.json"), "--batch", "2", "-o", str(model)],
                   check=True, timeout=60)
    np.save(tmp_path / "features.npy", features)
    proc = subprocess.run([str(RLX_RUN), str(model), "--device", device, "--weights",
                           str(path / "model.safetensors"), "--input",
                           f"input_features={tmp_path / 'features.npy'}", "--output-dir",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "out" / "last_hidden_state.npy")
    assert got.shape == ref.shape == (2, 100, 64)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
