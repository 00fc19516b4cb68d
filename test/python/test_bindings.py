"""The rlx package: modules, pipelines, the model generator and the CPU JIT from Python.

Runs against the package the CMake build assembles in build/python_packages
(conftest puts it first on sys.path), which is what `pip install ./python`
installs.
"""
import json

import numpy as np
import pytest

import rlx
from harness import ROOT, shared_dir
from rlx.models import from_hf_config

EXAMPLE = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()


def test_parse_print_round_trip_and_bytecode():
    m = rlx.parse(EXAMPLE)
    text = m.text()
    assert "rlx_hir.attention" in text and "llama_decoder_layer" in m.functions()
    assert rlx.parse(text).text() == text
    generic = m.text(generic=True)
    assert '"rlx_hir.attention"' in generic and rlx.parse(generic).text() == text
    data = m.bytecode()
    assert isinstance(data, bytes) and data[:4] == b"ML\xefR"
    assert rlx.load_bytecode(data).text() == text
    m.verify()


def test_parse_errors_are_exceptions_with_located_diagnostics():
    bad = EXAMPLE.replace("kv_heads = 8", "kv_heads = 5")
    with pytest.raises(rlx.RlxError) as e:
        rlx.parse(bad, name="layer.mlir")
    assert "layer.mlir:" in str(e.value) and "divisible by num_kv_heads (5)" in str(e.value)


def test_pipelines_by_text():
    m = rlx.parse(EXAMPLE)
    m.run_pipeline("convert-rlx-hir-to-mir,rlx-mir-fuse")
    text = m.text()
    assert "rlx_hir." not in text and text.count("rlx_mir.fused_matmul") == 4
    m.run_pipeline("builtin.module(rlx-mir-specialize{dims=seq=16},convert-rlx-mir-to-lir,"
                   "rlx-lir-bufferize,rlx-lir-plan-buffers,rlx-lir-verify-plan)")
    assert "rlx_lir.plan" in m.text()
    with pytest.raises(rlx.RlxError, match="bad pass pipeline"):
        m.run_pipeline("no-such-pass")
    dyn = rlx.parse(EXAMPLE)
    with pytest.raises(rlx.RlxError, match="bind the symbolic dims \\(seq\\)"):
        dyn.run_pipeline("convert-rlx-hir-to-mir,convert-rlx-mir-to-lir")


def test_clone_is_independent():
    m = rlx.parse(EXAMPLE)
    c = m.clone()
    c.run_pipeline("convert-rlx-hir-to-mir")
    assert "rlx_hir." in m.text() and "rlx_hir." not in c.text()


@pytest.mark.skipif(shared_dir() is None, reason="../shared/models not found")
def test_from_hf_config_is_the_rlx_gen_generator():
    import subprocess
    from harness import RLX_GEN
    cfg = shared_dir() / "models" / "qwen3-0.6b.json"
    ours = from_hf_config(cfg, num_layers=2, seq=16).text()
    tool = subprocess.run([str(RLX_GEN), str(cfg), "--layers", "2", "--seq", "16"],
                          capture_output=True, text=True, check=True).stdout
    assert rlx.parse(tool).text() == ours
    # A dict works too, with overrides.
    d = json.loads(cfg.read_text())
    small = from_hf_config(d, 1, overrides={"hidden_size": 64, "intermediate_size": 96}, layer_only=True)
    assert "tensor<1x?x64xf32>" in small.text()
    with pytest.raises(rlx.RlxError, match="config.json"):
        from_hf_config({"architectures": ["NoSuchModel"]})


def test_compile_and_run_on_numpy_arrays():
    module = rlx.parse(EXAMPLE.replace("2048", "256").replace("8192", "512").replace("512x", "64x")
                       .replace("x512x", "x64x").replace("heads = 32, kv_heads = 8", "heads = 4, kv_heads = 1"))
    module.verify()
    model = rlx.compile_cpu(module, input_shapes={"hidden_states": (1, 5, 256)})
    names = {a["name"] for a in model.arguments}
    assert {"hidden_states", "position_ids", "self_attn.q_proj.weight"} <= names
    assert model.stats["kernels"] == 6 and model.stats["arena_bytes"] > 0
    rng = np.random.default_rng(0)
    ins = {a["name"]: (np.arange(5) if a["dtype"] == "i64" else rng.standard_normal(a["shape"]) * 0.1)
           .astype(np.int64 if a["dtype"] == "i64" else np.float32) for a in model.arguments}
    out = model.run(ins)
    (y,) = out.values()
    assert y.shape == (1, 5, 256) and y.dtype == np.float32 and np.isfinite(y).all()
    # Same inputs, same outputs (packed weights are reused).
    assert np.array_equal(model(**ins)[next(iter(out))], y)
    with pytest.raises(rlx.RlxError, match="has shape"):
        model.run({**ins, "hidden_states": np.zeros((1, 6, 256), np.float32)})
    with pytest.raises(rlx.RlxError, match="no value for argument"):
        model.run({k: v for k, v in ins.items() if k != "position_ids"})


def test_jit_keeps_llvm_out_of_the_global_scope():
    """After a CPU compile, another LLVM user can still load in the process
    (the JIT loaded upstream's runner utils with global symbols, pulling in
    libMLIR/libLLVM 22: `import triton`, which torch does lazily, crashed)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    code = """
import ctypes, rlx
m = rlx.parse('''func.func @f(%x: tensor<4xf32> {rlx.input = "x"}) -> tensor<4xf32> {
  %y = rlx_mir.add %x, %x : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}''')
rlx.compile_cpu(m)
# No LLVM symbol resolves globally now.
print(hasattr(ctypes.CDLL(None), "LLVMContextCreate"))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False", proc.stdout
    try:
        import triton  # noqa: F401  (torch's; present when torch is installed)
    except ImportError:
        return
    proc = subprocess.run([sys.executable, "-c", code + "\nimport triton\n"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
