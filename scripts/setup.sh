#!/usr/bin/env bash
# Sets up a Debian 12 machine for RLX-MLIR and builds it:
#   1. Debian packages: LLVM/MLIR 22, clang-22, cmake, ninja, ccache, gtest,
#      OpenBLAS (the CPU runtime calls its sgemm), Open MPI (mpirun and
#      libmpi for tensor parallelism: rlx-run --tp);
#   2. a Python virtual environment .venv made from the `python3` on PATH,
#      with the packages of python/requirements-dev.txt from PyPI, and,
#      where no CUDA toolkit is installed, ptxas/libdevice from NVIDIA's
#      PyPI wheels (the toolkit found is printed), and cuobjdump + nvdisasm
#      from them wherever missing (CUDA 13 toolkits have neither);
#   3. configure (build/) and build everything with ninja.
# Re-running it is cheap: installed packages are skipped and ccache/ninja
# rebuild only what changed.
#
# Environment: RLX_BUILD_DIR (default build), RLX_JOBS (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RLX_BUILD_DIR:-$ROOT/build}
JOBS=${RLX_JOBS:-2}
# ccache keys on paths relative to the repository, so that other build trees
# at build/'s depth (pip's build-wheel/) reuse build/'s objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi

PKGS="llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 cmake ninja-build
      ccache libgtest-dev libopenblas-dev nlohmann-json3-dev python3 python3-venv
      openmpi-bin libopenmpi3"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "== apt-get install$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

PREFIX=$(llvm-config-22 --prefix)

if [ ! -x "$ROOT/.venv/bin/python" ]; then
  echo "== creating .venv from $(command -v python3) ($(python3 --version))"
  python3 -m venv "$ROOT/.venv"
fi
"$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check \
  -r "$ROOT/python/requirements-dev.txt"

# ptxas (cubins, the kernels' resource reports) and libdevice: the CUDA
# toolkit where one is installed, else NVIDIA's PyPI wheels in .venv (with
# cuobjdump), which the build finds at configure time.
ptxas=$(command -v ptxas || true)
for d in "${RLX_PTXAS:-}" "${CUDA_ROOT:-}/bin/ptxas" "${CUDA_HOME:-}/bin/ptxas" /usr/local/cuda/bin/ptxas; do
  if [ -z "$ptxas" ] && [ -x "$d" ]; then ptxas=$d; fi
done
wheel() { ls "$ROOT"/.venv/lib/python3*/site-packages/nvidia/cu*/bin/ptxas 2>/dev/null | head -1; }
if [ -z "$ptxas" ] && [ -z "$(wheel)" ]; then
  echo "== no CUDA toolkit: ptxas, libdevice and cuobjdump from PyPI into .venv"
  "$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check \
    nvidia-cuda-nvcc==13.5.37 nvidia-nvvm==13.5.37
  rm -f "$BUILD/CMakeCache.txt" "$BUILD/build.ninja"  # configure again: it records ptxas
fi
ptxas=${ptxas:-$(wheel)}
# cuobjdump and the nvdisasm it runs (bench/gpu/sass_stats.py, the SASS
# instruction budgets): CUDA 13 toolkits ship neither.
if ! { command -v cuobjdump && command -v nvdisasm; } >/dev/null 2>&1 &&
   ! [ -x /usr/local/cuda/bin/nvdisasm ] &&
   ! ls "$ROOT"/.venv/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm >/dev/null 2>&1; then
  echo "== cuobjdump and nvdisasm from PyPI into .venv"
  "$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check \
    nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37
fi
echo "== ptxas: $ptxas ($("$ptxas" --version | tail -1))"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_EXTERNAL_LIT="$PREFIX/bin/lit" \
    -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" -DPython_EXECUTABLE="$ROOT/.venv/bin/python"
fi
echo "== building in $BUILD with $JOBS jobs"
cmake --build "$BUILD" -j "$JOBS"
