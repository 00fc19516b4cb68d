"""Differential test: random MIR graphs, fused vs unfused vs a float64 NumPy reference.

Each seed is one graph from random_graphs.generate (small sizes); the checker
(differential.check) verifies it with rlx-opt, compiles and runs it with
rlx-run with and without --no-fuse, and compares both with the reference
(per-element atol from the propagated error bound, rtol 1e-4) and with each
other. The graphs are checked two at a time (two processes) in a session
fixture; each seed is one test.

Seeds: RLX_DIFFTEST_SEEDS="start:stop" (default 0:160, sized to CI's budget; scripts/difftest.py runs 1000). A failing seed's
graph, inputs and report are written to RLX_DIFFTEST_OUT (default
build/difftest-failures/seed-N/); reproduce one with
`.venv/bin/python scripts/difftest.py --seed N -v --small`.

KNOWN_BUGS lists open compiler bugs found by this test (see the report in
docs/difftest.md); a seed whose every finding is one of them is an xfail
naming the bug, so that a new finding stands out. Remove an entry when its
bug is fixed (the seeds then pass).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import pathlib
import re

import pytest

import differential as dt
import random_graphs as rg

_range = os.environ.get("RLX_DIFFTEST_SEEDS", "0:160").split(":")
SEEDS = list(range(int(_range[0]), int(_range[1])))
OUT = pathlib.Path(os.environ.get("RLX_DIFFTEST_OUT", dt.BUILD / "difftest-failures"))

# (bug id, finding kind, regex on the finding's text, generator tag required or None)
KNOWN_BUGS: list = [
    # (name, kind, stderr pattern, tag): none open. DT-1 .. DT-7 are fixed and
    # kept as regression tests in test_fusion_regressions.py.
]


def _check(seed):
    case = rg.generate(seed, big=False)
    res = dt.check(case)
    if res.findings:
        dt.save_failure(case, res, OUT / f"seed-{seed}")
    tags = set(case.tags)
    if res.culprit:
        tags.add("culprit:" + res.culprit.split()[0])
    return seed, [(f.kind, f.where, f.detail) for f in res.findings], sorted(tags)


@pytest.fixture(scope="session")
def outcomes():
    if not dt.RLX_RUN.exists():
        pytest.fail(f"{dt.RLX_RUN} is missing: build the project first")
    for s in SEEDS:  # reports of an earlier session
        old = OUT / f"seed-{s}"
        if old.is_dir():
            import shutil
            shutil.rmtree(old, ignore_errors=True)
    with mp.get_context("fork").Pool(2) as pool:
        return {s: (f, t) for s, f, t in pool.imap_unordered(_check, SEEDS, chunksize=4)}


def _known(kind, detail, tags):
    for name, k, pattern, tag in KNOWN_BUGS:
        if k == kind and re.search(pattern, detail) and (tag is None or tag in tags):
            return name
    return None


@pytest.mark.parametrize("seed", SEEDS)
def test_random_graph(outcomes, seed):
    findings, tags = outcomes[seed]
    if not findings:
        return
    text = "\n".join(f"[{k}] {w}: {d[:1500]}" for k, w, d in findings)
    known = [_known(k, d, tags) for k, _, d in findings]
    if all(known):
        pytest.xfail("known compiler bug: " + "; ".join(sorted(set(known))))
    pytest.fail(f"seed {seed} (graph and report in {OUT / f'seed-{seed}'}):\n{text}", pytrace=False)
