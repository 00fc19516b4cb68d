"""Whisper's log-mel front end (rlx_hir.log_mel_spectrogram) against
transformers' WhisperFeatureExtractor on seeded synthetic signals (tones plus
noise), through the user's routes on the CPU path and the emulator from one
body: preprocessor_config.json → rlx-gen → rlx-run for 5 s (zero-padded to
30 s) and 31 s (trimmed), and the Python HIR builder on a batch whose items
differ in loudness (the dynamic-range clamp is per item) with another
extractor config. Tolerance: the issue's f32 1e-4, scaled to the features'
magnitude."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import rlx
from harness import BUILD, RLX_GEN
from rlx import hir
from test_quant_int8 import DEVICES, compile_for

transformers = pytest.importorskip("transformers")

RLX_RUN = BUILD / "bin" / "rlx-run"


def signal(seconds, sr, seed, loudness=1.0):
    """Three tones plus white noise, f32."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    tones = [(0.5, 440.0), (0.25, 1234.5), (0.1, 0.45 * sr)]
    x = sum(a * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) for a, f in tones)
    return (loudness * (x + 0.02 * rng.standard_normal(t.size))).astype(np.float32)


def assert_features(got, ref):
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("device", DEVICES)
def test_rlx_gen_front_end_equals_whisper_feature_extractor(device, tmp_path):
    fe = transformers.WhisperFeatureExtractor()
    fe.save_pretrained(tmp_path)
    for seconds, seed in [(5, 0), (31, 1)]:
        x = signal(seconds, 16000, seed)
        model = tmp_path / f"fe{seconds}.mlir"
        subprocess.run([str(RLX_GEN), str(tmp_path / "preprocessor_config.json"), "--seq",
                        str(x.size), "-o", str(model)], check=True, timeout=60)
        np.save(tmp_path / "audio.npy", x[None])
        out = tmp_path / f"out{seconds}"
        proc = subprocess.run([str(RLX_RUN), str(model), "--device", device, "--input",
                               f"audio={tmp_path / 'audio.npy'}", "--output-dir", str(out)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        ref = fe(x, sampling_rate=16000, return_tensors="np").input_features
        assert ref.shape == (1, 80, 3000)
        assert_features(np.load(out / "input_features.npy"), ref)


@pytest.mark.parametrize("device", DEVICES)
def test_builder_batch_clamps_each_item(device):
    """8 kHz, n_fft 256, hop 128, 40 mels, 2-s chunks: two 1.5-s signals 40 dB
    apart, so one shared maximum would clamp the quiet one."""
    sr, n = 8000, 16000
    fe = transformers.WhisperFeatureExtractor(feature_size=40, sampling_rate=sr, hop_length=128,
                                              chunk_length=2, n_fft=256)
    x = np.stack([signal(1.5, sr, 2), signal(1.5, sr, 3, loudness=0.01)])
    f = hir.Function("features")
    audio = f.input("audio", x.shape)
    f.output("input_features", hir.log_mel_spectrogram(audio, 40, n_fft=256, hop_length=128,
                                                       sampling_rate=sr, n_samples=n))
    compiled = compile_for(device, f.text())
    got = compiled(audio=x)
    got = got["input_features"] if isinstance(got, dict) else got
    ref = fe(list(x), sampling_rate=sr, return_tensors="np").input_features
    assert ref.shape == (2, 40, n // 128)
    assert_features(np.asarray(got), ref)
    # The quiet item keeps its own range (a shared maximum would raise its floor).
    assert got[1].min() < got[0].max() - 2


def test_rlx_gen_rejects_what_it_cannot_compile(tmp_path):
    fe = transformers.WhisperFeatureExtractor(dither=1e-4)
    fe.save_pretrained(tmp_path)
    proc = subprocess.run([str(RLX_GEN), str(tmp_path / "preprocessor_config.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "preprocessor_config.json: error: 'dither' must be 0.0" in proc.stderr
    (tmp_path / "preprocessor_config.json").write_text(
        '{"feature_extractor_type": "ASTFeatureExtractor"}')
    proc = subprocess.run([str(RLX_GEN), str(tmp_path / "preprocessor_config.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "feature_extractor_type 'ASTFeatureExtractor' is not supported" in proc.stderr
    proc = subprocess.run([str(RLX_GEN), str(tmp_path / "preprocessor_config.json"), "--layers",
                           "2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "--layers does not apply to a feature extractor's config" in proc.stderr


def test_builder_errors_point_at_the_line():
    f = hir.Function("bad")
    audio = f.input("audio", (1, 100))
    with pytest.raises(rlx.RlxError, match="reflect padding of n_fft/2 = 200"):
        hir.log_mel_spectrogram(audio, n_samples=None)
