#!/usr/bin/env bash
# The main job: set up, build, and compile the bundled example
# (examples/llama-3.2-1b-layer.mlir, one Llama-3.2-1B decoder layer in HIR).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_BUILD_DIR:-$ROOT/build}
bash "$ROOT/scripts/setup.sh"
echo "== rlx-opt examples/llama-3.2-1b-layer.mlir (parse, verify, print)"
"$BUILD/bin/rlx-opt" "$ROOT/examples/llama-3.2-1b-layer.mlir"
