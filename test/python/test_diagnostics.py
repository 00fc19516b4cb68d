"""Bad input is a located diagnostic and a non-zero exit, never a crash.

Every case of the invalid.mlir files is fed to rlx-opt on its own (without
-verify-diagnostics): the process must exit with status 1, print
`<file>:<line>:<col>: error:` and never a stack dump. On top of that, the
bundled example is mutated in ways a user gets wrong (heads not divisible by
kv heads, eps <= 0, wrong hidden size, unknown enum values, mismatched
dtypes) and each mutation must be rejected the same way.
"""
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVALID = sorted((ROOT / "test" / "Dialect").glob("*/invalid.mlir"))
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)


def cases():
    for path in INVALID:
        chunks = path.read_text().split("// -----")
        for i, chunk in enumerate(chunks):
            if "expected-error" in chunk:
                yield pytest.param(chunk, id=f"{path.parent.name}-{i}")


def run_opt(rlx_opt, text):
    return subprocess.run([rlx_opt, "-", "-o", "/dev/null"], input=text,
                          capture_output=True, text=True, timeout=60)


def assert_clean_failure(proc):
    assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}"
    assert LOCATED.search(proc.stderr), proc.stderr
    assert "Stack dump" not in proc.stderr and "PLEASE submit" not in proc.stderr


@pytest.mark.parametrize("text", list(cases()))
def test_invalid_case_is_a_located_error(rlx_opt, text):
    assert_clean_failure(run_opt(rlx_opt, text))


EXAMPLE = (ROOT / "examples" / "llama-3.2-1b-layer.mlir").read_text()

# name -> (list of (old, new) replacements, expected message)
MUTATIONS = {
    "kv_heads_not_divisor": ([("kv_heads = 8", "kv_heads = 7")],
                             "must be divisible by num_kv_heads"),
    "eps_zero": ([("eps = 1.0e-05", "eps = 0.0")], "eps must be a finite value > 0"),
    "head_dim_wrong": ([("head_dim = 64 causal", "head_dim = 128 causal")],
                       "query hidden size 2048 != 32 heads x 128 head_dim"),
    "unknown_enum": ([("rope_type = llama3", "rope_type = longrope")],
                     "expected one of [none, llama3, linear, yarn] for RoPE frequency scaling, got: longrope"),
    "dtype_mismatch": ([("%input_norm: tensor<2048xf32>", "%input_norm: tensor<2048xbf16>"),
                        ("%input_norm eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xf32>",
                         "%input_norm eps = 1.0e-05 : tensor<1x?x2048xf32>, tensor<2048xbf16>")],
                       "element type mismatch: input is f32 but weight is bf16"),
    "wrong_rank": ([("%k_proj: tensor<512x2048xf32>", "%k_proj: tensor<512xf32>"),
                    ("%k_proj : tensor<1x?x2048xf32>, tensor<512x2048xf32>",
                     "%k_proj : tensor<1x?x2048xf32>, tensor<512xf32>")],
                   "weight must be rank 2"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutated_example_is_rejected(rlx_opt, name):
    edits, message = MUTATIONS[name]
    text = EXAMPLE
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    proc = run_opt(rlx_opt, text)
    assert_clean_failure(proc)
    assert message in proc.stderr


def test_example_is_valid(rlx_opt):
    proc = run_opt(rlx_opt, EXAMPLE)
    assert proc.returncode == 0, proc.stderr
