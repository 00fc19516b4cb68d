#!/usr/bin/env bash
# The fuzzing check for CI: runs every rlx-fuzz-* target for a bounded time
# (default 60 s each; scripts/fuzz.sh) from its seed corpus and fails when a
# crash is found whose signature is not in tools/rlx-fuzz/known-upstream.txt
# (crashes inside upstream MLIR/LLVM that RLX cannot prevent). Crashes in
# RLX code and RLX post-condition checks always fail.
#
#   scripts/fuzz-ci.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 60 npy json hfconfig mlir safetensors gguf manifest gpu-npy gen-sizes)
#
# Each run starts from an empty corpus in build-fuzz/fuzz-ci (plus the seeds,
# made once in build-fuzz/fuzz/seeds), so runs are comparable; crashes land
# in build-fuzz/fuzz-ci/crashes/<target>, grouped and minimized reproducers
# in build-fuzz/fuzz-ci/triage/<target>.
# Environment: RLX_FUZZ_BUILD_DIR (default build-fuzz), RLX_FUZZ_MINIMIZE
# (seconds per crash group, default 30), RLX_FUZZ_JUNIT (also write the
# result as JUnit XML to this file: one test per target, failed when the
# target found a crash outside the known list or did not run; CI's totals
# count it, see scripts/ci-sanitize.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
export RLX_FUZZ_BUILD_DIR=$BUILD
SECS=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(npy json hfconfig mlir safetensors gguf manifest gpu-npy gen-sizes)
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
KNOWN="$ROOT/tools/rlx-fuzz/known-upstream.txt"
CI="$BUILD/fuzz-ci"
rm -rf "$CI"
mkdir -p "$CI"

failed=0
summary=()
cases=()
for t in "${TARGETS[@]}"; do
  start=$(date +%s)
  tfailed=""
  line=$(RLX_FUZZ_WORK="$CI" RLX_FUZZ_TRIAGE=0 bash "$ROOT/scripts/fuzz.sh" "$t" "$SECS" |
         tee /dev/stderr | grep '^RESULT' || echo "RESULT target=$t (fuzz.sh failed)")
  summary+=("$line")
  case "$line" in *"fuzz.sh failed"*) tfailed="fuzz.sh failed (no result)" ;; esac
  if [ -n "$(ls -A "$CI/crashes/$t" 2>/dev/null)" ]; then
    if ! "$PY" "$ROOT/scripts/fuzz-triage.py" --build "$BUILD" --target "$t" --out "$CI/triage" \
         --minimize "${RLX_FUZZ_MINIMIZE:-30}" --known "$KNOWN" "$CI/crashes/$t" |
         tee "$CI/triage-$t.txt"; then
      # The new groups' signatures and top frames go into the failure, so
      # that the end of CI's output names them.
      new=$(grep -A3 '^\[NEW\]' "$CI/triage-$t.txt" | tr '\n|' '  ' | cut -c1-600)
      tfailed="crashes outside the known-upstream list (reproducers in $CI/triage/$t): $new"
    fi
  fi
  [ -n "$tfailed" ] && failed=1
  cases+=("$t|$(( $(date +%s) - start ))|$tfailed|$line")
done
if [ -n "${RLX_FUZZ_JUNIT:-}" ]; then
  mkdir -p "$(dirname "$RLX_FUZZ_JUNIT")"
  "$PY" - "$RLX_FUZZ_JUNIT" "${cases[@]}" <<'PYEOF'
import sys
from xml.sax.saxutils import escape, quoteattr
out, cases = sys.argv[1], sys.argv[2:]
rows = []
for c in cases:
    target, secs, failure, result = c.split("|", 3)
    body = f"<system-out>{escape(result)}</system-out>"
    if failure:
        body = f"<failure message={quoteattr(failure)}/>" + body
    rows.append(f'<testcase classname="fuzz" name="rlx-fuzz-{target}" time="{secs}">{body}</testcase>')
nfail = sum(1 for c in cases if c.split("|", 3)[2])
with open(out, "w") as f:
    f.write(f'<?xml version="1.0"?>\n<testsuite name="fuzz-ci" tests="{len(cases)}" '
            f'failures="{nfail}">\n' + "\n".join(rows) + "\n</testsuite>\n")
PYEOF
fi
echo
echo "== fuzz-ci: $SECS s per target"
printf '   %s\n' "${summary[@]}"
if [ "$failed" != 0 ]; then
  echo "== FAILED: crashes outside $KNOWN ([NEW] groups above; reproducers in $CI/triage)"
  exit 1
fi
echo "== OK: no crash outside the known-upstream list"
