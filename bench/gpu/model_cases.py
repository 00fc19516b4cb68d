"""The device check's model cases, made here by prepare.py (needs the rlx
package, rlx-gen, torch and transformers; the GPU machine needs none of
them): a small random-init Llama as a user brings it, in two routes.

- ``checkpoint``: the checkpoint ``save_pretrained`` writes, its model built
  by ``rlx-gen`` from the same ``config.json``; the device check reads the
  safetensors file there and gives every tensor by its checkpoint name
  (``rlx-gpu-run --input``; the runtime packs the merged projections).
- ``from_torch``: the same model through ``rlx.export_torch`` (torch-mlir,
  TOSA, weights frozen into the module: constants the artifact carries).

Each writes ``artifacts/NAME.mlir`` (compiled by prepare.py like every case)
and ``artifacts/NAME.data/`` with the inputs and transformers' logits as
the reference (cases.prepared_case reads them).
"""
from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np

SEQ = 9
CONFIG = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
              intermediate_size=96, num_hidden_layers=2, vocab_size=128, max_position_embeddings=64,
              rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False, pad_token_id=0,
              bos_token_id=1, eos_token_id=2)


def _model():
    import torch
    import transformers
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG)).eval()
    with torch.no_grad():  # norms off 1 (a wrong norm would not show with weights of 1)
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.1 * torch.randn_like(p))
    ids = np.random.default_rng(7).integers(0, CONFIG["vocab_size"], (1, SEQ), dtype=np.int64)
    with torch.no_grad():
        logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
    return model, ids, logits


def make(route: str, name: str, artifacts: pathlib.Path, build: pathlib.Path) -> None:
    """Writes artifacts/NAME.mlir and artifacts/NAME.data/ for `route`."""
    model, ids, logits = _model()
    data = artifacts / f"{name}.data"
    data.mkdir(parents=True)
    np.savez(data / "reference.npz", logits=logits)
    if route == "checkpoint":
        model.save_pretrained(data)
        (data / "generation_config.json").unlink(missing_ok=True)
        proc = subprocess.run([str(build / "bin" / "rlx-gen"), str(data / "config.json")],
                              capture_output=True, text=True, check=True)
        text = proc.stdout
        np.savez(data / "inputs.npz", input_ids=ids,
                 position_ids=np.arange(SEQ, dtype=np.int64))
    elif route == "from_torch":
        import sys
        import torch
        sys.path.insert(0, str(build / "python_packages"))
        import rlx
        text, input_names, _ = rlx.export_torch(model, torch.from_numpy(ids), output="tosa",
                                                weights="frozen")
        np.savez(data / "inputs.npz", **{input_names[0]: ids})
        (data / "outputs.json").write_text(json.dumps({"result0": "logits"}))
    else:
        raise ValueError(route)
    (artifacts / f"{name}.mlir").write_text(text)
