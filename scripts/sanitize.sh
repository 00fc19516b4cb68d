#!/usr/bin/env bash
# Builds RLX-MLIR with AddressSanitizer + UndefinedBehaviorSanitizer (and
# assertions; scripts/build-fuzz.sh, in build-fuzz/) and runs every test
# suite against that build: lit, the C++ unit tests and pytest
# (RLX_BUILD_DIR=build-fuzz), through scripts/run-tests.py. Prints the
# totals, every sanitizer report found, and the wall time of the build and
# of the suites. Exits non-zero when a test failed or a sanitizer reported.
#
#   scripts/sanitize.sh [--clean] [--no-build] [pytest/lit are not filtered]
#
# How the processes are set up:
#   * every RLX tool, the unit tests, librlx_cpu_runtime.so, libRLXPlugin.so
#     and the Python extension link the shared ASan runtime (-shared-libsan);
#     uninstrumented hosts (python, lit, mlir-opt-22, mlir-runner-22) get it
#     with LD_PRELOAD, so there is one runtime per process;
#   * ASAN_OPTIONS: detect_leaks=0 (tools exit without freeing; python
#     leaks by design), allow_user_poisoning=0 (LLVM's BumpPtrAllocator
#     poisons slabs in instrumented header code that uninstrumented
#     libMLIR.so then allocates from: false use-after-poison),
#     abort_on_error=1 (a report is a crash, even under `not`), and
#     log_path: reports also land in BUILD/sanitizer-logs, collected here;
#   * UBSan findings abort (-fno-sanitize-recover=undefined);
#   * CFLAGS/CXXFLAGS/LDFLAGS carry the sanitizer flags into the projects the
#     tests configure against this build (examples/consumer).
#
# Environment: RLX_FUZZ_BUILD_DIR (default build-fuzz), RLX_JOBS (default 2).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
export RLX_FUZZ_BUILD_DIR=$BUILD
CLEAN=0
BUILD_IT=1
for a in "$@"; do
  case "$a" in
    --clean) CLEAN=1 ;;
    --no-build) BUILD_IT=0 ;;
    *) echo "usage: $0 [--clean] [--no-build]" >&2; exit 2 ;;
  esac
done

t0=$(date +%s)
if [ "$CLEAN" = 1 ]; then
  rm -rf "$BUILD"
fi
if [ "$BUILD_IT" = 1 ]; then
  bash "$ROOT/scripts/build-fuzz.sh" || { echo "!! sanitizer build failed"; exit 1; }
fi
t1=$(date +%s)

RT=$(clang++-22 -print-file-name=libclang_rt.asan-x86_64.so)
LOGS="$BUILD/sanitizer-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
SYM=/usr/lib/llvm-22/bin/llvm-symbolizer
export LD_PRELOAD="$RT"
export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0:abort_on_error=1:log_path=$LOGS/asan:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$LOGS/ubsan:log_exe_name=1"
export ASAN_SYMBOLIZER_PATH=$SYM
export UBSAN_SYMBOLIZER_PATH=$SYM
# The pip-install test builds an uninstrumented package: not this suite's job.
export RLX_TEST_PIP_INSTALL=0
# Projects the tests configure against this build (examples/consumer, through
# find_package(RLX)) link its instrumented static libraries: same flags.
SAN=$(grep -E '^RLX_SANITIZE:' "$BUILD/CMakeCache.txt" | cut -d= -f2)
export CFLAGS="-fsanitize=$SAN" CXXFLAGS="-fsanitize=$SAN"
export LDFLAGS="-fsanitize=$SAN -shared-libsan -Wl,-rpath,$(dirname "$RT")"
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
OUT="$BUILD/test-results/sanitize.log"
mkdir -p "$(dirname "$OUT")"
"$PY" "$ROOT/scripts/run-tests.py" --build "$BUILD" 2>&1 | tee "$OUT"
rc=${PIPESTATUS[0]}
t2=$(date +%s)
unset LD_PRELOAD

echo
echo "== sanitizer reports (from $LOGS)"
nrep=0
for f in "$LOGS"/*; do
  [ -f "$f" ] || continue
  nrep=$((nrep + 1))
  echo "-- $(basename "$f")"
  grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" || true
  grep -m4 -E '^\s+#[0-9]+ .* in ' "$f" | grep -vE '__sanitizer|__asan|__ubsan|abort|raise' | head -3 || true
done
[ "$nrep" = 0 ] && echo "none"
echo
echo "== $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT" | tail -1)" \
     "| sanitizer reports: $nrep | build: $((t1 - t0)) s, suites: $((t2 - t1)) s, total: $((t2 - t0)) s"
if [ "$rc" != 0 ] || [ "$nrep" != 0 ]; then
  exit 1
fi
