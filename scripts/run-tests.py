#!/usr/bin/env python3
"""Runs RLX-MLIR's test suites (lit, C++ unit tests, pytest) and prints the
totals over all of them as one line: `N passed, N failed[, N skipped]`.

Each suite writes JUnit XML, which this script sums; a suite that cannot run
at all counts as one failure. Usage: run-tests.py --build <build dir>
"""
import argparse
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count_junit(path):
    """(passed, failed, skipped) from a JUnit XML file."""
    tree = ET.parse(path)
    passed = failed = skipped = 0
    for case in tree.iter("testcase"):
        tags = {child.tag for child in case}
        if "failure" in tags or "error" in tags:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def run_suite(name, cmd, xml, env=None):
    print(f"== {name}: {' '.join(cmd)}", flush=True)
    if os.path.exists(xml):
        os.remove(xml)
    proc = subprocess.run(cmd, env=env)
    if not os.path.exists(xml):
        print(f"!! {name} produced no results (exit {proc.returncode})")
        return 0, 1, 0
    counts = count_junit(xml)
    if proc.returncode != 0 and counts[1] == 0:
        # The runner failed without reporting a failing test: count it.
        counts = (counts[0], 1, counts[2])
    print(f"-- {name}: {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped")
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
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
    add(run_suite("pytest", [sys.executable, "-m", "pytest", "-q",
                             "--junitxml", os.path.join(out, "pytest.xml"),
                             os.path.join(ROOT, "test", "python")],
                  os.path.join(out, "pytest.xml"), env=env))

    line = f"{totals[0]} passed, {totals[1]} failed"
    if totals[2]:
        line += f", {totals[2]} skipped"
    print(line)
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
