#!/usr/bin/env python3
"""CPU time of RLX's Whisper encoder against PyTorch eager on the same
whisper-tiny-sized model, interleaved.

    python bench/cpu/bench_whisper.py [--reps 10] [--layers 4]

The model: WhisperConfig with whisper-tiny's sizes (d_model 384, 6 heads,
FFN 1536, 80 mels, 1500 positions; --layers encoder layers), random weights
(seed 0) saved with save_pretrained. RLX: rlx-gen's module (entry
``encoder``) compiled by rlx.compile_cpu with the checkpoint's weights held;
PyTorch: ``model.model.encoder`` in eval mode under ``torch.inference_mode``.
Input: [1, 80, 3000] log-mel features (30 s). RLX's output is checked against
PyTorch's (rtol 1e-4 scaled to the output) before timing. Each repetition runs
both once in turn after a warm-up; the report gives medians and the ratio
RLX / PyTorch. Threads: 2 everywhere. Prints the CPU, the BLAS and the
settings; writes bench/out/whisper.json.
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from machine import cpu_model, interleaved, quiet_threads  # noqa: E402

THREADS = quiet_threads("2")

import numpy as np  # noqa: E402

from bench_cpu import rlx_blas_text  # noqa: E402
from bench_moe import BUILD, ROOT  # noqa: E402
import rlx  # noqa: E402
from rlx.models import from_hf_config  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--layers", type=int, default=4)
    a = ap.parse_args()
    import torch
    import transformers
    torch.set_num_threads(int(THREADS))
    torch.manual_seed(0)
    config = transformers.WhisperConfig(
        vocab_size=51865, num_mel_bins=80, d_model=384, encoder_layers=a.layers,
        encoder_attention_heads=6, encoder_ffn_dim=1536, decoder_layers=1,
        decoder_attention_heads=6, decoder_ffn_dim=1536, max_source_positions=1500)
    model = transformers.WhisperForConditionalGeneration(config).eval()
    features = np.random.default_rng(0).standard_normal((1, 80, 3000)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        t0 = time.perf_counter()
        compiled = rlx.compile_cpu(from_hf_config(pathlib.Path(tmp) / "config.json"),
                                   entry="encoder")
        compile_s = time.perf_counter() - t0
        compiled.load_weights(str(pathlib.Path(tmp) / "model.safetensors"))
    x = torch.from_numpy(features)
    with torch.inference_mode():
        ref = model.model.encoder(x).last_hidden_state.numpy()
    got = compiled.run(input_features=features)["last_hidden_state"]
    err = float(np.abs(got - ref).max() / np.abs(ref).max())
    assert err < 1e-4, f"RLX's encoder differs from PyTorch's: {err}"

    def torch_run():
        with torch.inference_mode():
            model.model.encoder(x)

    fns = {"rlx": lambda: compiled.run(input_features=features), "torch": torch_run}
    times = interleaved(fns, a.reps)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"CPU: {cpu_model()}")
    print(f"threads: {THREADS}; torch {torch.__version__} (eager, inference_mode); "
          f"RLX: rlx.compile_cpu (LLVM -O3, host CPU), {rlx_blas_text(BUILD)}")
    print(f"whisper-tiny-sized encoder, {a.layers} layers, input [1, 80, 3000], "
          f"{a.reps} interleaved repetitions")
    print(f"{'':8}{'median ms':>12}{'min ms':>10}")
    for k, v in times.items():
        print(f"{k:8}{med[k] * 1e3:12.1f}{min(v) * 1e3:10.1f}")
    print(f"RLX / PyTorch: {med['rlx'] / med['torch']:.2f}   rel err {err:.1e}   "
          f"compile {compile_s:.1f} s")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "whisper.json").write_text(json.dumps(
        {"cpu": cpu_model(), "threads": THREADS, "layers": a.layers, "median_s": med,
         "ratio": med["rlx"] / med["torch"], "error": err, "compile_s": compile_s}, indent=1))


if __name__ == "__main__":
    main()
