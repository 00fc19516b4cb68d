"""The arena plan of real models: tight, checked, and every corruption caught.

A small Llama-3.2-1B-shaped layer (and a decode step with a KV cache) goes
from HIR to planned LIR with rlx-opt; the plan must equal the lower bound and
pass rlx-lir-verify-plan. Then the planned IR is corrupted in ways a buggy
planner could produce (two live buffers at one offset, a misaligned offset,
one byte short of the arena) and the checker, or the view verifier, must
reject each with a located error.
"""
import pathlib
import re
import subprocess

import numpy as np
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


ELEMENT_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i8": 1, "i1": 1}


def independent_lower_bound(planned: str, alignment: int) -> int:
    """The schedule's lower bound computed from the planned IR alone, not from
    the planner's numbers: every arena view is a buffer (size from its type,
    rounded up to the alignment), live from the first to the last top-level
    op that touches it or an alias of it; buffers a kernel's in_place entry
    joins are one; the bound is the most bytes live at one op."""
    body = planned.split("func.func @forward(")[1].split("\n  }\n")[0].split("\n")[1:]
    # Top-level op index of every line (nested kernel bodies belong to theirs).
    index, depth, tops = [], 0, -1
    for line in body:
        if depth == 0:
            tops += 1
        index.append(tops)
        depth += line.count("{") - line.count("}")
    views = {}
    for i, line in enumerate(body):
        m = re.match(r"\s*(%\w+) = rlx_lir.view %arg0\[\d+\] : memref<\d+xi8> to memref<([0-9x]+)x(\w+)>", line)
        if m:
            n = int(np.prod([int(d) for d in m.group(2).split("x")])) * ELEMENT_BYTES[m.group(3)]
            views[m.group(1)] = (n + alignment - 1) // alignment * alignment
    owner = {v: v for v in views}  # alias → its view
    live = {v: [None, None] for v in views}
    for i, line in enumerate(body):
        alias = re.match(r"\s*(%\w+) = memref\.(?:subview|expand_shape|collapse_shape|cast) (%\w+)", line)
        if alias and alias.group(2) in owner:
            owner[alias.group(1)] = owner[alias.group(2)]
            continue
        for tok in set(re.findall(r"%\w+", line)):
            if tok in owner and not line.lstrip().startswith(tok + " = rlx_lir.view"):
                lo, hi = live[owner[tok]]
                t = index[i]
                live[owner[tok]] = [t if lo is None else min(lo, t), t if hi is None else max(hi, t)]
    # in_place: output k reuses input in_place[k] (one buffer).
    group = {v: v for v in views}
    def find(v):
        while group[v] != v:
            v = group[v]
        return v
    for i, line in enumerate(body):
        m = re.search(r"rlx_lir.kernel .*ins\(([^:]*) :.*outs\(([^:]*) :.*in_place = array<i64: ([-0-9, ]+)>", line)
        if not m:
            continue
        ins = [x.strip() for x in m.group(1).split(",")]
        outs = [x.strip() for x in m.group(2).split(",")]
        for k, j in enumerate(int(x) for x in m.group(3).split(",")):
            if j >= 0 and ins[j] in owner and outs[k] in owner:
                group[find(owner[outs[k]])] = find(owner[ins[j]])
    buffers = {}
    for v, (lo, hi) in live.items():
        if lo is None:
            continue
        g = find(v)
        b = buffers.setdefault(g, [views[v], lo, hi])
        b[0], b[1], b[2] = max(b[0], views[v]), min(b[1], lo), max(b[2], hi)
    return max((sum(size for size, lo, hi in buffers.values() if lo <= t <= hi)
                for t in range(tops + 1)), default=0)


def test_plan_is_tight_and_checks(planned):
    # The model's function, not @forward_pack_params (whose empty plan this
    # test used to read: 0 == 0 could not fail).
    forward = planned.split("func.func @forward(")[1]
    plan = re.search(r"rlx_lir.plan = \{alignment = (\d+) : i64, arena_bytes = (\d+) : i64, "
                     r"lower_bound_bytes = (\d+) : i64, sum_bytes = (\d+) : i64\}", forward)
    assert plan, forward[:2000]
    alignment, arena, lower, total = map(int, plan.groups())
    assert arena == lower and 0 < arena <= total and alignment == 64
    # The planner's own bound against one computed here from the IR.
    assert independent_lower_bound(planned, alignment) == lower
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


def test_plan_reports_are_valid_json_and_xml(tmp_path):
    """The plan's picture is an SVG a browser renders: valid XML (types like
    memref<...> in titles were unescaped), and the JSON parses."""
    import json
    import xml.dom.minidom
    example = (pathlib.Path(__file__).resolve().parents[2] / "examples" /
               "llama-3.2-1b-layer.mlir").read_text()
    proc = opt(example, "--convert-rlx-hir-to-mir", "--rlx-mir-fuse",
               "--rlx-mir-specialize=dims=seq=8", "--convert-rlx-mir-to-lir",
               "--rlx-lir-bufferize", f"--rlx-lir-plan-buffers=report-dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr
    svg = tmp_path / "llama_decoder_layer.plan.svg"
    doc = xml.dom.minidom.parse(str(svg))
    titles = [t.firstChild.data for t in doc.getElementsByTagName("title")]
    assert titles and all("memref<" in t for t in titles), titles
    plan = json.loads((tmp_path / "llama_decoder_layer.plan.json").read_text())
    assert plan
