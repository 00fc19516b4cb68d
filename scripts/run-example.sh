#!/usr/bin/env bash
# The main job: set up and build (scripts/setup.sh), then compile and run
# Llama-3.2-1B on the CPU (scripts/main_job.py): the bundled example layer
# (examples/llama-3.2-1b-layer.mlir) and a 2-layer model generated from
# ../shared/models/llama-3.2-1b.json, from HIR through fusion to CPU code,
# with seeded weights, checked against a float64 NumPy reference.
#
# Extra arguments go to main_job.py (--seq N, --seed N, --repeat N).
# Environment: RLX_BUILD_DIR, RLX_SHARED_DIR, OPENBLAS_NUM_THREADS.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/main_job.py" "$@"
