#!/usr/bin/env bash
# The sanitizer + fuzzing stage (scripts/test-all.sh runs it after the main
# suites with RLX_CI_SANITIZE=1; off by default until a whole run is timed): builds build-fuzz/ (ASan + UBSan
# + assertions + the libFuzzer targets; scripts/build-fuzz.sh installs
# libclang-rt-22-dev when missing), runs every rlx-fuzz-* target
# RLX_CI_FUZZ_SECONDS (default 30) from its seeds (scripts/fuzz-ci.sh; one
# test per target), then lit and the unit tests against the instrumented
# build (scripts/sanitize.sh). pytest under the sanitizers runs here only
# with RLX_CI_SANITIZE_PYTEST set: "all" (test/python) or a space-separated
# list of pytest arguments (e.g. "test/python/test_mir_ops.py"); it is off
# by default until the full sanitizer pytest run is clean and measured
# (scripts/sanitize.sh runs all of it). Its last totals line is added to
# test-all.sh's.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SEL=()
case "${RLX_CI_SANITIZE_PYTEST:-}" in
  "") SEL=(--no-pytest) ;;
  all) ;;
  *) for a in $RLX_CI_SANITIZE_PYTEST; do SEL+=(--pytest "$a"); done ;;
esac
exec bash "$ROOT/scripts/sanitize.sh" --fuzz "${RLX_CI_FUZZ_SECONDS:-30}" "${SEL[@]}" "$@"
