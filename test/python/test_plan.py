"""The arena plan of real models: tight, checked, and every corruption caught.

A small Llama-3.2-1B-shaped layer (and a decode step with a KV cache) goes
from HIR to planned LIR with rlx-opt; the plan must equal the lower bound and
pass rlx-lir-verify-plan. Then the planned IR is corrupted in ways a buggy
planner could produce (two live buffers at one offset, a misaligned offset,
one byte short of the arena) and the checker, or the view verifier, must
reject each with a located error.
"""
import re
import subprocess

import pytest

from harness import BUILD, gen_model, shared_dir

SHARED = shared_dir()
RLX_OPT = BUILD / "bin" / "rlx-opt"
PIPELINE = ["--convert-rlx-hir-to-mir", "--rlx-mir-fuse", "--convert-rlx-mir-to-lir",
            "--rlx-lir-bufferize", "--rlx-lir-plan-buffers"]
VIEW = re.compile(r"rlx_lir\.view %arg0\[(\d+)\]")
SMALL = ["--set=hidden_size=128", "--set=num_attention_heads=8", "--set=num_key_value_heads=2",
         "--set=intermediate_size=256"]


def opt(text, *passes):
    return subprocess.run([str(RLX_OPT), "-", *passes], input=text, capture_output=True, text=True)


@pytest.fixture(scope="module", params=["prefill", "decode"])
def planned(request):
    if SHARED is None:
        pytest.skip("../shared/models not found")
    extra = ["--seq", "16"] if request.param == "prefill" else ["--kv-cache", "--seq", "1", "--past", "16"]
    hir = gen_model(SHARED / "models" / "llama-3.2-1b.json", "--layers", "2", *SMALL, *extra)
    proc = opt(hir, *PIPELINE)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_plan_is_tight_and_checks(planned):
    plan = re.search(r"rlx_lir.plan = \{alignment = (\d+) : i64, arena_bytes = (\d+) : i64, "
                     r"lower_bound_bytes = (\d+) : i64, sum_bytes = (\d+) : i64\}", planned)
    assert plan, planned[:2000]
    alignment, arena, lower, total = map(int, plan.groups())
    assert arena == lower and arena <= total and alignment == 64
    assert all(int(o) % 64 == 0 for o in VIEW.findall(planned))
    assert opt(planned, "--rlx-lir-verify-plan").returncode == 0


def corrupt(text, fn):
    """Applies fn(offset, index) -> new offset to every arena view."""
    counter = iter(range(10 ** 6))
    return VIEW.sub(lambda m: f"rlx_lir.view %arg0[{fn(int(m.group(1)), next(counter))}]", text)


@pytest.mark.parametrize("how", ["all_at_zero", "misaligned", "swap_first_two_offsets_to_one"])
def test_corrupted_plans_are_caught(planned, how):
    offsets = [int(o) for o in VIEW.findall(planned)]
    if len(set(offsets)) < 2:
        pytest.skip("every buffer already shares one offset")
    if how == "all_at_zero":
        bad = corrupt(planned, lambda off, i: 0)
        expect = "overlap"
    elif how == "misaligned":
        bad = corrupt(planned, lambda off, i: off + 4 if i == 0 else off)
        expect = "not aligned"
    else:
        distinct = sorted(set(offsets))
        bad = corrupt(planned, lambda off, i: distinct[0] if off == distinct[1] else off)
        expect = "overlap"
    proc = opt(bad, "--rlx-lir-verify-plan")
    assert proc.returncode != 0
    assert re.search(r":\d+:\d+: error: rlx-lir-verify-plan: .*" + expect, proc.stderr), proc.stderr[:2000]


def test_view_past_the_arena_is_rejected(planned):
    offsets = [int(o) for o in VIEW.findall(planned)]
    last = offsets.index(max(offsets))
    bad = corrupt(planned, lambda off, i: off + 64 if i == last else off)
    proc = opt(bad, "--rlx-lir-verify-plan")
    assert proc.returncode != 0
    assert re.search(r":\d+:\d+: error: 'rlx_lir.view' op view \[\d+, \d+\) runs past the end of the "
                     r"\d+-byte arena", proc.stderr), proc.stderr[:2000]
