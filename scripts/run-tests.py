#!/usr/bin/env python3
"""Runs RLX-MLIR's test suites (lit, C++ unit tests, pytest) and prints the
totals over all of them as one line: `N passed, N failed[, N skipped]`.

Each suite writes JUnit XML, which this script sums; a suite that cannot run
at all counts as one failure.

  run-tests.py --build <build dir> [--pytest ARG]... [--no-pytest] [--jobs N] [--junit NAME=XML]...
               [--sanitizer-logs DIR]
  run-tests.py --sum LOG...

--pytest replaces the pytest arguments (default: all of test/python; paths
relative to the checkout); --jobs spreads the test files over N pytest-xdist
workers (default: the cores, at most 4); --stripped-cpu CPU runs the low-precision (bf16,
f16, f8, NVFP4) op and layer tests once more as on an AVX2-only machine: the
CPU path's code compiled for CPU (RLX_CPU=CPU, e.g. x86-64-v3: AVX2, no
AVX-512 or BF16/FP16 extensions) and oneDNN held to AVX2
(ONEDNN_MAX_CPU_ISA=AVX2, so the runtime chooses its GEMMs as there), so
that what fails only on less capable CPUs fails on any CI machine (x86-64
hosts only); --junit adds the results of a suite run elsewhere
(e.g. scripts/fuzz-ci.sh's); --sanitizer-logs counts one more test, passed
when DIR holds no sanitizer report (ASan/UBSan log_path files) and failed,
with each report's first lines printed, when it does. --sum prints the sum of
the totals lines (the last one of each LOG; a LOG without one counts as one
failure).
"""
import argparse
import glob
import os
import platform
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count_junit(path, failures=None):
    """(passed, failed, skipped) from a JUnit XML file; each failed case's
    name and message appended to `failures` when given."""
    tree = ET.parse(path)
    passed = failed = skipped = 0
    for case in tree.iter("testcase"):
        tags = {child.tag for child in case}
        if "failure" in tags or "error" in tags:
            failed += 1
            if failures is not None:
                why = next(c for c in case if c.tag in ("failure", "error"))
                message = " ".join((why.get("message") or why.text or "").split())
                failures.append(f"{case.get('classname', '')}::{case.get('name', '')}: "
                                f"{message[:300]}")
        elif "skipped" in tags:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


# The op and layer tests whose code takes the paths a CPU without AVX-512,
# AVX512-BF16 or AVX512-FP16 takes (compiler-rt calls for conversions, other
# vector widths): run again under --stripped-cpu.
STRIPPED_SELECTION = ["test/python/test_mir_ops.py", "test/python/test_hir_ops.py",
                      "test/python/test_autodiff.py", "test/python/test_storage_types.py",
                      "test/python/test_nvfp4.py", "test/python/test_models.py",
                      "test/python/test_rlx_run_inputs.py", "test/python/test_checkpoints.py",
                      "-k", "bf16 or f16 or f8 or e4m3 or nvfp4 or fp8 or float or dtype"]


def run_suite(name, cmd, xml, env=None):
    print(f"== {name}: {' '.join(cmd)}", flush=True)
    if os.path.exists(xml):
        os.remove(xml)
    proc = subprocess.run(cmd, env=env)
    if not os.path.exists(xml):
        print(f"!! {name} produced no results (exit {proc.returncode})")
        return 0, 1, 0
    failures = []
    counts = count_junit(xml, failures)
    if proc.returncode != 0 and counts[1] == 0:
        # The runner failed without reporting a failing test: count it.
        counts = (counts[0], 1, counts[2])
        failures.append(f"{name}: exit {proc.returncode} without a failing test")
    for f in failures:  # repeated by --sum at the very end of CI's output
        print(f"{FAILED_PREFIX}{f}")
    print(f"-- {name}: {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped")
    return counts


FAILED_PREFIX = "!! FAILED "


TOTALS = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")


def totals_line(totals):
    line = f"{totals[0]} passed, {totals[1]} failed"
    if totals[2]:
        line += f", {totals[2]} skipped"
    return line


def sum_logs(logs):
    """Sums the last totals line of each log; prints one line per log."""
    totals = [0, 0, 0]
    failed = []
    for log in logs:
        found = None
        try:
            with open(log, errors="replace") as f:
                for line in f:
                    if line.startswith(FAILED_PREFIX):
                        failed.append(line.rstrip())
                    m = TOTALS.match(line.strip())
                    if m:
                        found = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
        except OSError:
            pass
        if found is None:
            print(f"-- {log}: no totals line (counted as 1 failure)")
            found = [0, 1, 0]
        else:
            print(f"-- {log}: {totals_line(found)}")
        for i in range(3):
            totals[i] += found[i]
    for line in failed:  # which tests failed, where a reader of the tail sees them
        print(line)
    return totals


def sanitizer_reports(logs):
    """(passed, failed, skipped) for 'no sanitizer report in logs'."""
    files = sorted(f for f in glob.glob(os.path.join(logs, "*")) if os.path.isfile(f))
    print(f"== sanitizer reports in {logs}: {len(files) or 'none'}")
    for path in files:
        print(f"-- {os.path.basename(path)}")
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
        first = [l for l in lines if re.search(
            r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:", l)][:1]
        frames = [l for l in lines if re.match(r"^\s+#\d+ .* in ", l)
                  and not re.search(r"__sanitizer|__asan|__ubsan|abort|raise", l)][:3]
        for l in first + frames:
            print("   " + l.strip())
    return (0, 1, 0) if files else (1, 0, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--pytest", action="append", default=None,
                    help="pytest argument (repeatable; default: test/python)")
    ap.add_argument("--no-pytest", action="store_true", help="lit and unit tests only")
    ap.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4),
                    help="pytest worker processes (pytest-xdist, one test file per worker "
                         "at a time; default: the cores, at most 4; 1: in this process)")
    ap.add_argument("--stripped-cpu", default="", metavar="CPU",
                    help="also run the low-precision tests with RLX_CPU=CPU (x86-64 only)")
    ap.add_argument("--junit", action="append", default=[],
                    help="NAME=XML: results of a suite run elsewhere")
    ap.add_argument("--sanitizer-logs", default=None)
    ap.add_argument("--sum", nargs="+", default=None, metavar="LOG")
    ap.add_argument("--skipped", action="append", default=[], metavar="NAME=REASON",
                    help="a suite that did not run: counted as one skipped test")
    args = ap.parse_args()
    if args.sum:
        totals = sum_logs(args.sum)
        print(totals_line(totals))
        return 1 if totals[1] else 0
    build = os.path.abspath(args.build)
    out = os.path.join(build, "test-results")
    os.makedirs(out, exist_ok=True)

    lit = None
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("LLVM_EXTERNAL_LIT:"):
                lit = line.split("=", 1)[1].strip()
    totals = [0, 0, 0]

    def add(counts):
        for i in range(3):
            totals[i] += counts[i]

    add(run_suite("lit", [lit, "-sv", "--xunit-xml-output",
                          os.path.join(out, "lit.xml"), os.path.join(build, "test")],
                  os.path.join(out, "lit.xml")))
    unit = os.path.join(build, "unittests", "RLXUnitTests")
    add(run_suite("unit", [unit, "--gtest_output=xml:" + os.path.join(out, "unit.xml")],
                  os.path.join(out, "unit.xml")))
    env = dict(os.environ)
    env["RLX_BUILD_DIR"] = build
    def rooted(selection):
        # Paths are relative to the checkout; other arguments (-k EXPR, ...) pass through.
        return [os.path.join(ROOT, a) if not os.path.isabs(a) and
                os.path.exists(os.path.join(ROOT, a.split("::")[0])) else a for a in selection]

    selection = rooted(args.pytest or [os.path.join("test", "python")])
    # Test files spread over worker processes (2 cores: the suite in about
    # half the time); a file's tests stay together (--dist loadfile), so a
    # module-scoped fixture is built once.
    try:
        import xdist  # noqa: F401
        workers = ["-n", str(args.jobs), "--dist", "loadfile"] if args.jobs > 1 else []
    except ImportError:
        workers = []
    # -rs: every skipped test is listed with its reason.
    if not args.no_pytest:
        add(run_suite("pytest", [sys.executable, "-m", "pytest", "-q", "-rs", *workers,
                                 "--junitxml", os.path.join(out, "pytest.xml")] + selection,
                      os.path.join(out, "pytest.xml"), env=env))
    if args.stripped_cpu and not args.no_pytest:
        name = f"pytest (RLX_CPU={args.stripped_cpu})"
        if platform.machine() not in ("x86_64", "AMD64"):
            print(f"-- {name}: skipped (not an x86-64 host)")
            add((0, 0, 1))
        else:
            xml = os.path.join(out, "pytest-stripped-cpu.xml")
            add(run_suite(name, [sys.executable, "-m", "pytest", "-q", "-rs", "--junitxml", xml]
                          + rooted(STRIPPED_SELECTION),
                          xml, env=dict(env, RLX_CPU=args.stripped_cpu,
                                        ONEDNN_MAX_CPU_ISA="AVX2")))
    for spec in args.junit:
        name, _, xml = spec.partition("=")
        if not os.path.exists(xml):
            print(f"!! {name} produced no results ({xml})")
            add((0, 1, 0))
            continue
        failures = []
        counts = count_junit(xml, failures)
        for f in failures:
            print(f"{FAILED_PREFIX}{f}")
        print(f"-- {name}: {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped")
        add(counts)
    if args.sanitizer_logs:
        add(sanitizer_reports(args.sanitizer_logs))
    for spec in args.skipped:
        name, _, reason = spec.partition("=")
        print(f"-- {name}: skipped ({reason})")
        add((0, 0, 1))

    print(totals_line(totals))
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
