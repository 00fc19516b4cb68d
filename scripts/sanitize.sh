#!/usr/bin/env bash
# Builds RLX-MLIR with AddressSanitizer + UndefinedBehaviorSanitizer (and
# assertions; scripts/build-fuzz.sh, in build-fuzz/) and runs the test
# suites against that build: lit, the C++ unit tests and pytest
# (RLX_BUILD_DIR=build-fuzz), through scripts/run-tests.py, in the
# environment of scripts/sanitizer-env.sh. A sanitizer report anywhere (also
# in a subprocess whose failure a test tolerated) counts as one more failed
# test. With --fuzz, every rlx-fuzz-* target first runs SECONDS from its
# seeds (scripts/fuzz-ci.sh; one test per target). Prints the wall time of
# each step and ends with the totals line `N passed, N failed[, N skipped]`
# (then a summary line starting with `==`). Exits non-zero when a test failed.
#
#   scripts/sanitize.sh [--clean] [--no-build] [--fuzz SECONDS] [--pytest ARG]... [--no-pytest]
#                       [--skip-pytest REASON]
#
# --pytest replaces pytest's arguments (default: all of test/python);
# --no-pytest runs lit and the unit tests only; --skip-pytest also, and
# counts pytest as one skipped test with REASON;
# scripts/ci-sanitize.sh is what CI runs.
# Environment: RLX_FUZZ_BUILD_DIR (default build-fuzz), RLX_JOBS (default 2).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
export RLX_FUZZ_BUILD_DIR=$BUILD
CLEAN=0
BUILD_IT=1
FUZZ=0
PYTEST=()
while [ $# -gt 0 ]; do
  case "$1" in
    --clean) CLEAN=1 ;;
    --no-build) BUILD_IT=0 ;;
    --fuzz) FUZZ=$2; shift ;;
    --pytest) PYTEST+=(--pytest "$2"); shift ;;
    --no-pytest) PYTEST+=(--no-pytest) ;;
    --skip-pytest) PYTEST+=(--no-pytest --skipped "pytest under the sanitizers=$2"); shift ;;
    *) echo "usage: $0 [--clean] [--no-build] [--fuzz SECONDS] [--pytest ARG]... [--no-pytest]" >&2; exit 2 ;;
  esac
  shift
done
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
OUT="$BUILD/test-results/sanitize.log"

t0=$(date +%s)
if [ "$CLEAN" = 1 ]; then
  rm -rf "$BUILD"
fi
if [ "$BUILD_IT" = 1 ]; then
  if ! bash "$ROOT/scripts/build-fuzz.sh"; then
    echo "!! sanitizer build failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi
t1=$(date +%s)
mkdir -p "$BUILD/test-results"

JUNIT=()
if [ "$FUZZ" != 0 ]; then
  FXML="$BUILD/test-results/fuzz.xml"
  rm -f "$FXML"
  RLX_FUZZ_JUNIT="$FXML" bash "$ROOT/scripts/fuzz-ci.sh" "$FUZZ"
  JUNIT=(--junit "fuzz=$FXML")
fi
t2=$(date +%s)

(
  . "$ROOT/scripts/sanitizer-env.sh"
  "$PY" "$ROOT/scripts/run-tests.py" --build "$BUILD" "${PYTEST[@]}" "${JUNIT[@]}" \
    --sanitizer-logs "$SANITIZER_LOGS"
) 2>&1 | tee "$OUT"
rc=${PIPESTATUS[0]}
t3=$(date +%s)

echo "== sanitizer build: $((t1 - t0)) s, fuzz-ci: $((t2 - t1)) s, suites: $((t3 - t2)) s," \
     "total: $((t3 - t0)) s"
exit "$rc"
