#!/usr/bin/env bash
# Configures and builds the sanitizer + fuzzing build of RLX-MLIR:
# every RLX library, tool, test and the Python extension with
# -fsanitize=address,undefined (UBSan findings abort) and
# -fsanitize=fuzzer-no-link, assertions on in RLX's code, -O1 with line
# tables, plus the libFuzzer targets of tools/rlx-fuzz. Debian's
# libMLIR.so/libLLVM.so stay uninstrumented.
#
#   scripts/build-fuzz.sh [TARGET...]      (default: everything)
#
# Environment: RLX_FUZZ_BUILD_DIR (default build-fuzz), RLX_JOBS (default 2),
# RLX_SANITIZE (default address,undefined).
# Needs clang-22's sanitizer runtimes (Debian: libclang-rt-22-dev; installed
# here when missing).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
JOBS=${RLX_JOBS:-2}
SANITIZE=${RLX_SANITIZE:-address,undefined}
# ccache's base_dir (test-all.sh sets it for build/ and the pip build) would
# compile with relative paths; the fuzz triage classifies crashes by the
# absolute source paths in their stacks.
unset CCACHE_BASEDIR

if [ ! -f "$(clang++-22 --print-runtime-dir)/libclang_rt.fuzzer-x86_64.a" ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
  echo "== apt-get install libclang-rt-22-dev (sanitizer and libFuzzer runtimes)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libclang-rt-22-dev
fi

PREFIX=$(llvm-config-22 --prefix)
if [ ! -f "$BUILD/build.ninja" ]; then
  PY=()
  if [ -x "$ROOT/.venv/bin/python" ]; then
    PY=(-DPython3_EXECUTABLE="$ROOT/.venv/bin/python" -DPython_EXECUTABLE="$ROOT/.venv/bin/python")
  fi
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_EXTERNAL_LIT="$PREFIX/bin/lit" \
    -DRLX_SANITIZE="$SANITIZE" -DRLX_ENABLE_FUZZERS=ON -DRLX_ENABLE_ASSERTIONS=ON \
    "${PY[@]}"
fi
echo "== building in $BUILD with $JOBS jobs"
if [ $# -gt 0 ]; then
  ninja -C "$BUILD" -j "$JOBS" "$@"
else
  ninja -C "$BUILD" -j "$JOBS"
fi
