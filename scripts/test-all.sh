#!/usr/bin/env bash
# Sets up, builds and runs every test suite (lit, unit, pytest) against
# build/, then the sanitizer + fuzzing stage (scripts/ci-sanitize.sh: the
# ASan/UBSan build build-fuzz/, fuzz-ci on every target, lit, unit and a
# pytest selection against it, within what is left of CI's time budget;
# RLX_CI_SANITIZE=0 leaves it out), and prints one line with the totals over
# both as its last line. Exits non-zero when anything failed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# CI's clock: the sanitizer stage fits what is left of RLX_CI_BUDGET_S.
export RLX_CI_START=${RLX_CI_START:-$(date +%s)}
BUILD=${RLX_BUILD_DIR:-$ROOT/build}
# ccache keys relative to the repository (as scripts/setup.sh): the pip-install
# test's build-wheel/ then reuses build/'s objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
bash "$ROOT/scripts/setup.sh"
# The pip-install test (build the package with pip, run examples/python) runs here.
export RLX_TEST_PIP_INSTALL=${RLX_TEST_PIP_INSTALL:-1}
LOGS="$BUILD/test-results"
mkdir -p "$LOGS"
set +e
# --stripped-cpu: the low-precision tests again with code for an AVX2-only
# CPU (x86-64-v3), whatever CPU this machine has.
"$ROOT/.venv/bin/python" "$ROOT/scripts/run-tests.py" --build "$BUILD" \
  --stripped-cpu "${RLX_CI_STRIPPED_CPU:-x86-64-v3}" 2>&1 |
  tee "$LOGS/test-all-main.log"
logs=("$LOGS/test-all-main.log")
if [ "${RLX_CI_SANITIZE:-1}" != 0 ]; then
  echo
  echo "== sanitizer + fuzzing stage: scripts/ci-sanitize.sh"
  start=$(date +%s)
  bash "$ROOT/scripts/ci-sanitize.sh" 2>&1 | tee "$LOGS/test-all-sanitize.log"
  echo "== sanitizer + fuzzing stage: $(( $(date +%s) - start )) s"
  logs+=("$LOGS/test-all-sanitize.log")
fi
echo
echo "== totals over all stages"
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/run-tests.py" --sum "${logs[@]}"
