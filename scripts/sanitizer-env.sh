# Sourced by scripts/sanitize.sh and scripts/ci-sanitize.sh: the environment
# in which the test suites run against the ASan/UBSan build $BUILD
# (scripts/build-fuzz.sh). Sets SANITIZER_LOGS (emptied here).
#
#   * every RLX tool, the unit tests, librlx_cpu_runtime.so, libRLXPlugin.so
#     and the Python extension link the shared ASan runtime (-shared-libsan);
#     uninstrumented hosts (python, lit, mlir-opt-22, mlir-runner-22) get it
#     with LD_PRELOAD, so there is one runtime per process;
#   * ASAN_OPTIONS: detect_leaks=0 (tools exit without freeing; python
#     leaks by design), allow_user_poisoning=0 (LLVM's BumpPtrAllocator
#     poisons slabs in instrumented header code that uninstrumented
#     libMLIR.so then allocates from: false use-after-poison),
#     abort_on_error=1 (a report is a crash, even under `not`), and
#     log_path: reports also land in $BUILD/sanitizer-logs, which
#     scripts/run-tests.py --sanitizer-logs counts as one more test;
#     detect_stack_use_after_return=0: the GPU emulator runs every GPU
#     thread on a fiber of its own, and ASan's fake stacks then grow without
#     bound (13 GB for one attention test, killed by the OOM killer); stack
#     use-after-scope and every heap check stay on;
#   * UBSan findings abort (-fno-sanitize-recover=undefined);
#   * CFLAGS/CXXFLAGS/LDFLAGS carry the sanitizer flags into the projects the
#     tests configure against this build (examples/consumer, through
#     find_package(RLX): they link its instrumented static libraries), and
#     CC/CXX name the compiler those flags are for (clang-22: -shared-libsan;
#     README's custom-op commands configure with the default compiler);
#   * RLX_TEST_PIP_INSTALL=0: test_pip_install.py builds an uninstrumented
#     package with pip (a Release build of its own) and is reported as skipped
#     with that reason: that is the normal suite's job, not this one's.
RLX_ASAN_RT=$(clang++-22 -print-file-name=libclang_rt.asan-x86_64.so)
SANITIZER_LOGS="$BUILD/sanitizer-logs"
rm -rf "$SANITIZER_LOGS"
mkdir -p "$SANITIZER_LOGS"
RLX_SYMBOLIZER=/usr/lib/llvm-22/bin/llvm-symbolizer
export LD_PRELOAD="$RLX_ASAN_RT"
export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0:detect_stack_use_after_return=0:abort_on_error=1:log_path=$SANITIZER_LOGS/asan:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$SANITIZER_LOGS/ubsan:log_exe_name=1"
export ASAN_SYMBOLIZER_PATH=$RLX_SYMBOLIZER
export UBSAN_SYMBOLIZER_PATH=$RLX_SYMBOLIZER
export RLX_TEST_PIP_INSTALL=0
# test/python/conftest.py leaves the torch-mlir export tests out under the sanitizers.
export RLX_UNDER_SANITIZERS=1
RLX_SAN_FLAGS=$(grep -E '^RLX_SANITIZE:' "$BUILD/CMakeCache.txt" | cut -d= -f2)
export CC=clang-22 CXX=clang++-22
export CFLAGS="-fsanitize=$RLX_SAN_FLAGS" CXXFLAGS="-fsanitize=$RLX_SAN_FLAGS"
export LDFLAGS="-fsanitize=$RLX_SAN_FLAGS -shared-libsan -Wl,-rpath,$(dirname "$RLX_ASAN_RT")"
