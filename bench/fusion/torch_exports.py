#!/usr/bin/env python3
"""Kernel counts of real torch-mlir exports: the HF layers of
test/python/test_torch_export.py (built there from small configs) and a
whole 2-layer LlamaForCausalLM, exported by rlx.export_torch in every form
(TOSA / linalg × eager / sdpa × weights frozen / as arguments), then
rlx-import-to-mir and rlx-mir-fuse{report}: compute ops after fusion.

    .venv/bin/python bench/fusion/torch_exports.py   # needs a build and torch-mlir
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))
import conftest  # noqa: E402,F401  (puts build/python_packages on the path)
import rlx  # noqa: E402
import test_torch_export as t  # noqa: E402


def main():
    rows = ["| HF module | " + " | ".join(f"{o} {a} {w}" for o in t.OUTPUTS for a in t.ATTNS
                                         for w in t.WEIGHTS) + " | own HIR |",
            "|---|" + "---|" * (len(t.OUTPUTS) * len(t.ATTNS) * len(t.WEIGHTS) + 1)]
    for layer in t.LAYERS:
        counts = []
        for o in t.OUTPUTS:
            for a in t.ATTNS:
                module, args = t.build(layer, a)
                for w in t.WEIGHTS:
                    text, _, _ = rlx.export_torch(module, *args, output=o, weights=w)
                    counts.append(str(t.kernels_after_fusion(text)))
        rows.append(f"| {layer} | " + " | ".join(counts) + f" | {t.OWN_HIR_KERNELS[layer]} |")
    model = t.llama_for_causal_lm(tie=False)
    ids = t.torch.randint(0, 64, (1, t.S), generator=t.torch.Generator().manual_seed(1))
    for o in t.OUTPUTS:
        text, _, _ = rlx.export_torch(model, ids, output=o)
        print(f"2-layer LlamaForCausalLM, {o}, weights as arguments: "
              f"{t.kernels_after_fusion(text)} kernels")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
