#!/usr/bin/env bash
# Sets up, builds and runs every test suite (lit, unit, pytest), then prints
# one line with the totals. Exits non-zero when anything failed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_BUILD_DIR:-$ROOT/build}
bash "$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/run-tests.py" --build "$BUILD"
