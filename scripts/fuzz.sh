#!/usr/bin/env bash
# Runs one libFuzzer target of tools/rlx-fuzz for a bounded time.
#
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#   TARGET: mlir | json | npy | hfconfig | safetensors | gguf | manifest | gpu-npy | gen-sizes
#
# Builds build-fuzz when needed (scripts/build-fuzz.sh; ninja is a no-op when
# it is up to date), makes the seed corpus once (scripts/fuzz-seeds.py), then
# fuzzes with the target's dictionary into the growing corpus
#   build-fuzz/fuzz/corpus/TARGET   (new inputs; the seeds are read too)
#   build-fuzz/fuzz/crashes/TARGET  (crash-*, timeout-*, oom-*, leak-* files)
# and prints executions, coverage and corpus size, then a triage of the
# crashes (scripts/fuzz-triage.py: grouped by stack, classified RLX/upstream).
#
# Environment:
#   RLX_FUZZ_BUILD_DIR  build directory (default build-fuzz)
#   RLX_FUZZ_JOBS       parallel fuzzing processes (default 1; -fork=N)
#   RLX_FUZZ_FORK=0     one process that stops at the first crash (default:
#                       fork mode, which keeps going past crashes/timeouts/OOMs)
#   RLX_FUZZ_MINIMIZE   seconds to minimize each new crash group (default 60; 0: off)
#   RLX_FUZZ_SKIP       check ids to turn off (see tools/rlx-fuzz/FuzzCommon.h)
#   RLX_FUZZ_STRICT=0   only crashes/sanitizer reports count, no post-condition checks
#   RLX_FUZZ_WORK       where corpus/, crashes/ and logs/ go (default build-fuzz/fuzz;
#                       the seeds stay in build-fuzz/fuzz/seeds)
#   RLX_FUZZ_TRIAGE=0   no triage at the end
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
export RLX_FUZZ_BUILD_DIR=$BUILD
if [ $# -lt 2 ]; then
  echo "usage: $0 TARGET SECONDS [libFuzzer flags...]   (TARGET: mlir json npy hfconfig safetensors gguf manifest gpu-npy gen-sizes)" >&2
  exit 2
fi
TARGET=$1
SECONDS_TO_RUN=$2
shift 2
case "$TARGET" in
  mlir)     MAX_LEN=16384; RSS=4096; TIMEOUT=25 ;;
  json)     MAX_LEN=32768; RSS=2048; TIMEOUT=10 ;;
  npy)      MAX_LEN=1024;  RSS=2048; TIMEOUT=10 ;;
  hfconfig) MAX_LEN=4096;  RSS=2048; TIMEOUT=10 ;;
  safetensors) MAX_LEN=4096; RSS=2048; TIMEOUT=10 ;;
  gguf)     MAX_LEN=8192;  RSS=2048; TIMEOUT=10 ;;
  manifest) MAX_LEN=32768; RSS=2048; TIMEOUT=10 ;;
  gpu-npy)  MAX_LEN=1024;  RSS=2048; TIMEOUT=10 ;;
  gen-sizes) MAX_LEN=128;  RSS=2048; TIMEOUT=10 ;;
  *) echo "unknown target '$TARGET' (mlir json npy hfconfig safetensors gguf manifest gpu-npy gen-sizes)" >&2; exit 2 ;;
esac
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
BIN="$BUILD/bin/rlx-fuzz-$TARGET"
FUZZ=${RLX_FUZZ_WORK:-$BUILD/fuzz}
SEEDS="$BUILD/fuzz/seeds/$TARGET"
CORPUS="$FUZZ/corpus/$TARGET"
CRASHES="$FUZZ/crashes/$TARGET"
LOG="$FUZZ/logs/$TARGET-$(date +%Y%m%d-%H%M%S).log"
mkdir -p "$CORPUS" "$CRASHES" "$FUZZ/logs"

# Build (the seed generator needs the tools too).
bash "$ROOT/scripts/build-fuzz.sh" "rlx-fuzz-$TARGET" rlx-opt rlx-gen rlx-translate rlx-compile >/dev/null
if [ ! -d "$SEEDS" ] || [ -z "$(ls -A "$SEEDS" 2>/dev/null)" ]; then
  echo "== making the $TARGET seed corpus"
  "$PY" "$ROOT/scripts/fuzz-seeds.py" --build "$BUILD" --out "$BUILD/fuzz/seeds" --targets "$TARGET"
fi

SYM=/usr/lib/llvm-22/bin/llvm-symbolizer
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$SYM}
export PATH="$(dirname "$SYM"):$PATH"
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

FLAGS=(-dict="$ROOT/tools/rlx-fuzz/dicts/$TARGET.dict" -max_len=$MAX_LEN -rss_limit_mb=$RSS
       -malloc_limit_mb=$RSS
       -timeout=$TIMEOUT -max_total_time="$SECONDS_TO_RUN" -artifact_prefix="$CRASHES/"
       -print_final_stats=1)
if [ "${RLX_FUZZ_FORK:-1}" != 0 ]; then
  FLAGS+=(-fork="${RLX_FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
before=$(ls "$CRASHES" | wc -l)
echo "== $BIN ${FLAGS[*]} $* $CORPUS $SEEDS  (log: $LOG)"
start=$(date +%s)
set +e
"$BIN" "${FLAGS[@]}" "$@" "$CORPUS" "$SEEDS" >"$LOG" 2>&1
rc=$?
set -e
end=$(date +%s)

# Summary: the last status line has the totals (fork mode: "#N: cov: ...",
# otherwise "#N <event> cov: ..."); final stats when libFuzzer printed them.
last=$(grep -E '^#[0-9]+' "$LOG" | tail -1 || true)
set +o pipefail
execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$LOG" | awk '{s+=$2} END {print s+0}')
if [ "$execs" = 0 ]; then execs=$(echo "$last" | grep -oE '^#[0-9]+' | tr -d '#'); fi
cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
corp=$(echo "$last" | grep -oE 'corp: [0-9]+(/[0-9]+[a-zA-Z]*)?' | awk '{print $2}')
set -o pipefail
after=$(ls "$CRASHES" | wc -l)
echo "== $TARGET: ${execs:-?} executions in $((end - start)) s, cov: ${cov:-?} ft: ${ft:-?}," \
     "corpus: ${corp:-?} ($(ls "$CORPUS" | wc -l) files in $CORPUS), artifacts: $after" \
     "($((after - before)) new) in $CRASHES, libFuzzer exit $rc"
echo "RESULT target=$TARGET execs=${execs:-0} seconds=$((end - start)) cov=${cov:-0} ft=${ft:-0}" \
     "corpus=$(ls "$CORPUS" | wc -l) artifacts=$after new_artifacts=$((after - before))"
if [ "$after" -gt 0 ] && [ "${RLX_FUZZ_TRIAGE:-1}" != 0 ]; then
  "$PY" "$ROOT/scripts/fuzz-triage.py" --build "$BUILD" --target "$TARGET" \
    --minimize "${RLX_FUZZ_MINIMIZE:-60}" --known "$ROOT/tools/rlx-fuzz/known-upstream.txt" \
    "$CRASHES" || true
fi
