"""One definition of "kernel" (mir::isKernelOp): the fusion report, rlx-run,
the Python statistics and the LIR all count the same thing, the
rlx_lir.kernel ops of the planned function. A KV-cache layer reported 8
kernels (concat counted, broadcast not) and had 6."""
import re
import subprocess

import pytest

from harness import BUILD, gen_model, shared_dir

SHARED = shared_dir()
SMALL = ["--set=hidden_size=64", "--set=num_attention_heads=4", "--set=num_key_value_heads=2",
         "--set=intermediate_size=128", "--set=vocab_size=50"]


@pytest.mark.parametrize("extra", [["--seq", "4"], ["--kv-cache", "--seq", "1", "--past", "4"]],
                         ids=["prefill", "kv-cache"])
def test_every_tool_counts_the_lir_kernels(tmp_path, extra):
    if SHARED is None:
        pytest.skip("../shared/models not found")
    hir = gen_model(SHARED / "models" / "llama-3.2-1b.json", "--layers", "1", *SMALL, *extra)
    (tmp_path / "m.mlir").write_text(hir)
    lir = subprocess.run([str(BUILD / "bin" / "rlx-opt"), str(tmp_path / "m.mlir"),
                          "--convert-rlx-hir-to-mir", "--rlx-mir-fuse=report",
                          "--convert-rlx-mir-to-lir"], capture_output=True, text=True)
    assert lir.returncode == 0, lir.stderr
    main = lir.stdout.split("func.func @forward(")[1]
    kernels = main.count("rlx_lir.kernel")
    report = re.search(r"fusion of @forward: .* compute ops \d+ -> (\d+)", lir.stderr)
    assert report and int(report.group(1)) == kernels, lir.stderr
    run = subprocess.run([str(BUILD / "bin" / "rlx-run"), str(tmp_path / "m.mlir")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert re.search(rf"compute ops \(kernels\) \d+ -> {kernels}\n", run.stdout), run.stdout
    import rlx
    model = rlx.compile_cpu(rlx.parse(hir))
    assert model.stats["kernels"] == kernels
    # Concat (the cache append) is not a kernel: its inputs land in its
    # slices, so a decode step has as many kernels as a prefill.
    if "--kv-cache" in extra:
        assert "tensor.insert_slice" in main
        prefill = gen_model(SHARED / "models" / "llama-3.2-1b.json", "--layers", "1", *SMALL,
                            "--seq", "4")
        assert rlx.compile_cpu(rlx.parse(prefill)).stats["kernels"] == kernels
