#!/usr/bin/env bash
# The GPU device check: one command on a machine with the CUDA driver, Python,
# numpy and PyTorch (no LLVM/MLIR, no network needed). Run from the bundle that
# `python bench/gpu/prepare.py --build build --out build/device-check` made here:
#
#   bash device-check.sh            # numerics on the GPU + benchmarks; $OUT/device-check.json
#   bash device-check.sh --dry-run  # here / in CI: the same cases under the CPU GPU emulator
#
# From the source tree, `bash bench/gpu/device-check.sh --prepare [--dry-run]`
# builds the bundle first (needs the RLX build).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PYTHON:-python3}
if [ "${1:-}" = "--prepare" ]; then
  shift
  ROOT=$(cd "$HERE/../.." && pwd)
  [ -x "$ROOT/.venv/bin/python" ] && PY="$ROOT/.venv/bin/python"
  "$PY" "$HERE/prepare.py" --build "${RLX_BUILD_DIR:-$ROOT/build}" --out "$ROOT/build/device-check"
  HERE="$ROOT/build/device-check"
fi
OUT=${OUT:-$HERE}
export OUT
exec timeout 560 "$PY" "$HERE/device_check.py" --out "$OUT/device-check.json" "$@"
