#!/usr/bin/env bash
# The sanitizer + fuzzing stage that scripts/test-all.sh runs after the main
# suites: builds build-fuzz/ (ASan + UBSan + assertions + the libFuzzer
# targets; scripts/build-fuzz.sh installs libclang-rt-22-dev when missing),
# runs every rlx-fuzz-* target RLX_CI_FUZZ_SECONDS (default 30) from its
# seeds (scripts/fuzz-ci.sh; one test per target), then lit, the unit tests
# and pytest's RLX_CI_SANITIZE_PYTEST selection against the instrumented
# build (scripts/sanitize.sh). Its last totals line is added to
# test-all.sh's.
#
# pytest selection (RLX_CI_SANITIZE_PYTEST): "all" (the default: test/python,
# 14 min under ASan + UBSan on 2 cores), "quick" (the op-level, diagnostics,
# plan, fusion-regression and GPU emulator files below), "none", or a
# space-separated list of pytest arguments.
#
# CI's budget: the stage fits what is left of RLX_CI_BUDGET_S (default 4500 s,
# 15 min under CI's 90-minute limit) counted from RLX_CI_START (set by
# test-all.sh; default: now). The build gets what is left minus a reserve
# for the fuzzing, lit and unit steps; a build that cannot finish in it, or
# too little time to start one, makes the stage one skipped test with the
# reason (on a cold ccache the two builds do not fit together); pytest runs
# only when its estimate (RLX_CI_SANITIZE_PYTEST_S, default 2400 s: 1700 s measured, plus margin) fits,
# else it is one skipped test.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START=${RLX_CI_START:-$(date +%s)}
BUDGET=${RLX_CI_BUDGET_S:-4500}
RESERVE=600
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
skip_stage() {
  echo "== sanitizer + fuzzing stage skipped: $1"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
}

QUICK_FILES="test/python/test_mir_ops.py test/python/test_hir_ops.py test/python/test_zero_size.py
test/python/test_storage_types.py test/python/test_diagnostics.py test/python/test_plan.py
test/python/test_fusion_regressions.py test/python/test_gpu_emulator.py test/python/test_gpu_gemv.py
test/python/test_gpu_tensor_core.py test/python/test_gpu_runtime.py"
SEL=()
case "${RLX_CI_SANITIZE_PYTEST:-all}" in
  none) SEL=(--no-pytest) ;;
  all) ;;
  quick) for a in $QUICK_FILES; do SEL+=(--pytest "$a"); done ;;
  *) for a in $RLX_CI_SANITIZE_PYTEST; do SEL+=(--pytest "$a"); done ;;
esac

build_time=$(( $(left) - RESERVE ))
if [ "$build_time" -lt 300 ]; then
  skip_stage "$(left) s of CI's ${BUDGET} s budget left, too little for the instrumented build"
fi
echo "== build-fuzz: at most ${build_time} s of CI's budget"
timeout "$build_time" bash "$ROOT/scripts/build-fuzz.sh"
rc=$?
if [ "$rc" = 124 ]; then
  skip_stage "the instrumented build did not finish within the ${build_time} s left of CI's budget (cold ccache?)"
elif [ "$rc" != 0 ]; then
  echo "!! sanitizer build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
PYTEST_S=${RLX_CI_SANITIZE_PYTEST_S:-2400}
if [ "${SEL[0]:-}" != --no-pytest ] && [ $(( $(left) - RESERVE )) -lt "$PYTEST_S" ]; then
  SEL=(--skip-pytest "$(left) s of CI's budget left after the build, under the ${PYTEST_S} s it needs")
fi
exec bash "$ROOT/scripts/sanitize.sh" --no-build --fuzz "${RLX_CI_FUZZ_SECONDS:-30}" "${SEL[@]}" "$@"
