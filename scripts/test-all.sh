#!/usr/bin/env bash
# Sets up, builds and runs every test suite (lit, unit, pytest), then prints
# one line with the totals. Exits non-zero when anything failed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_BUILD_DIR:-$ROOT/build}
bash "$ROOT/scripts/setup.sh"
# The pip-install test (build the package with pip, run examples/python) runs here.
export RLX_TEST_PIP_INSTALL=${RLX_TEST_PIP_INSTALL:-1}
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/run-tests.py" --build "$BUILD"
