#!/usr/bin/env python3
"""Differential testing of the compiler on random MIR graphs.

    .venv/bin/python scripts/difftest.py                 # seeds 0..999, 2 processes
    .venv/bin/python scripts/difftest.py --start 5000 -n 200 --out /tmp/difftest
    .venv/bin/python scripts/difftest.py --seed 123 -v   # one graph: print it and its findings
    .venv/bin/python scripts/difftest.py --variants fused,unfused,fused-tiles,fused-nolir

Each seed is one graph from test/python/random_graphs.py; the checker
(test/python/differential.py) verifies it with rlx-opt, runs it with rlx-run
fused and with --no-fuse (plus any extra --variants), and compares every run
with the float64 NumPy reference and the fused run with the others. Prints
counts per outcome and per distinct finding (with the first fusion family that
reproduces it, found by running rlx-mir-fuse's families one prefix at a time),
and writes every failing graph (m.mlir, inputs/, expected/, out-*/, report.txt
with the failed comparisons and the exact commands) to --out/seed-N/
(default build/difftest-failures). Exit status 1 when anything failed.

The tools are copied once at the start (--no-snapshot runs build/bin directly),
so a rebuild during a run does not mix compiler versions.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))

import differential as dt  # noqa: E402
import random_graphs as rg  # noqa: E402


def one(job):
    seed, variants, out, motifs, big = job
    try:
        case = rg.generate(seed, motifs=motifs, big=big)
    except Exception as e:  # a generator bug
        import traceback
        return seed, [("generator", "random_graphs", f"{type(e).__name__}: {e}")], 0.0, [], \
            traceback.format_exc()
    res = dt.check(case, variants=variants)
    if res.findings and out:
        dt.save_failure(case, res, pathlib.Path(out) / f"seed-{seed}", variants)
    mot = case.motifs + ([f"culprit={res.culprit.split()[0]}"] if res.culprit else [])
    return seed, [(f.kind, f.where, f.detail) for f in res.findings], res.seconds, mot, None


def snapshot_tools():
    """Copies rlx-run, rlx-opt and librlx_cpu_runtime.so (bin/ + lib/, the layout rlx-run expects)
    once they have not changed for 20 s; points the checker at the copy."""
    import shutil
    import tempfile
    src = dt.BUILD
    files = [src / "bin" / "rlx-run", src / "bin" / "rlx-opt", src / "lib" / "librlx_cpu_runtime.so"]
    for _ in range(90):
        try:
            if all(time.time() - f.stat().st_mtime > 20 for f in files):
                break
        except FileNotFoundError:
            pass
        time.sleep(10)
    d = pathlib.Path(tempfile.mkdtemp(prefix="rlx-difftest-tools-"))
    for f in files:
        (d / f.parent.name).mkdir(exist_ok=True)
        shutil.copy2(f, d / f.parent.name / f.name)
    dt.RLX_RUN, dt.RLX_OPT = d / "bin" / "rlx-run", d / "bin" / "rlx-opt"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(files[0].stat().st_mtime))
    print(f"compiler under test: {src}/bin/rlx-run built {stamp} (private copy in {d})", flush=True)
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("-n", "--count", type=int, default=1000, help="number of graphs")
    ap.add_argument("--seed", type=int, help="run only this seed")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="processes (at most 2)")
    ap.add_argument("--out", default=str(dt.BUILD / "difftest-failures"),
                    help="directory for failing graphs (default: build/difftest-failures)")
    ap.add_argument("--variants", default=",".join(dt.DEFAULT_VARIANTS),
                    help="comma list of " + ", ".join(dt.VARIANTS))
    ap.add_argument("--motifs", help="comma list: only these motifs, in this order")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each graph / finding")
    ap.add_argument("--small", action="store_true", help="small graphs only (what the pytest runs)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run build/bin directly (default: a private copy of rlx-run/rlx-opt and the CPU "
                         "runtime, so that a rebuild during the run does not change the compiler under test)")
    a = ap.parse_args(argv)
    variants = tuple(a.variants.split(","))
    for v in variants:
        if v not in dt.VARIANTS:
            ap.error(f"unknown variant {v}")
    motifs = a.motifs.split(",") if a.motifs else None
    seeds = [a.seed] if a.seed is not None else list(range(a.start, a.start + a.count))
    jobs = min(max(1, a.jobs), 2)
    if a.seed is not None and a.verbose:
        print(rg.generate(a.seed, motifs=motifs, big=False if a.small else None).text)
    snap = None if a.no_snapshot else snapshot_tools()
    t0 = time.monotonic()
    counts = collections.Counter()
    by_key = collections.defaultdict(list)
    motif_fail = collections.Counter()
    work = [(s, variants, a.out, motifs, False if a.small else None) for s in seeds]
    pool = mp.Pool(jobs) if jobs > 1 and len(seeds) > 1 else None
    it = pool.imap_unordered(one, work, chunksize=4) if pool else map(one, work)
    done = 0
    for seed, findings, secs, mot, tb in it:
        done += 1
        if tb:
            print(f"seed {seed}: generator error\n{tb}", file=sys.stderr)
        if not findings:
            counts["pass"] += 1
        else:
            counts["fail"] += 1
            kinds = sorted({k for k, _, _ in findings})
            for k in kinds:
                counts[f"fail:{k}"] += 1
            for m in set(mot):
                if not m.startswith("culprit="):
                    motif_fail[m.split("/")[0]] += 1
            culp = [m for m in mot if m.startswith("culprit=")]
            for k, where, detail in findings:
                first = detail.splitlines()[0] if detail else ""
                # group by kind, place and the message without numbers
                import re
                sig = re.sub(r"[-+]?\d[\d.e+-]*", "#", f"{k} {where}: {first}")[:160]
                if culp:
                    sig += f"  [{culp[0]}]"
                by_key[sig].append(seed)
            if a.verbose:
                print(f"seed {seed} [{' '.join(mot)}]:")
                for k, where, detail in findings:
                    print(f"  [{k}] {where}: {detail[:2000]}")
        if done % 100 == 0:
            print(f"  ... {done}/{len(seeds)} graphs, {counts['fail']} failing, "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
    if pool:
        pool.close()
        pool.join()
    if snap:
        import shutil
        shutil.rmtree(snap, ignore_errors=True)
    elapsed = time.monotonic() - t0
    print(f"\n{len(seeds)} graphs (seeds {seeds[0]}..{seeds[-1]}), variants {', '.join(variants)}, "
          f"{jobs} processes: {counts['pass']} passed, {counts['fail']} failed in {elapsed:.1f} s")
    for k in sorted(c for c in counts if c.startswith("fail:")):
        print(f"  {k[5:]:10s} {counts[k]}")
    if by_key:
        print("\ndistinct findings (signature: count, seeds):")
        for sig, ss in sorted(by_key.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(ss):4d}  {sig}\n        seeds {sorted(ss)[:12]}{' ...' if len(ss) > 12 else ''}")
        print("\nfailing graphs per motif:", dict(motif_fail.most_common()))
        print(f"failing graphs written to {a.out}/seed-N/ (report.txt, m.mlir, inputs/, expected/)")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
