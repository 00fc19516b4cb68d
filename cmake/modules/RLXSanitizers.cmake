# Sanitizer, assertion and fuzzing instrumentation for RLX's own code.
#
#   RLX_SANITIZE=address,undefined   clang's -fsanitize= list for every RLX
#                                    library, tool, test and the Python module
#   RLX_ENABLE_FUZZERS=ON            also -fsanitize=fuzzer-no-link everywhere
#                                    and the libFuzzer targets of tools/rlx-fuzz
#   RLX_ENABLE_ASSERTIONS=ON         assert() and llvm_unreachable in RLX's code
#                                    (and in the MLIR/LLVM header code it
#                                    instantiates, e.g. cast<>) in a Release build
#
# Upstream's libMLIR.so/libLLVM.so stay as Debian built them (uninstrumented,
# no assertions). Every process uses the shared sanitizer runtime
# (-shared-libsan), so instrumented tools, the instrumented Python extension
# and librlx_cpu_runtime.so loaded by upstream's mlir-runner all share one
# runtime: run uninstrumented hosts (python, mlir-opt-22, mlir-runner-22) with
# LD_PRELOAD=$(clang++-22 -print-file-name=libclang_rt.asan-x86_64.so), as
# scripts/sanitize.sh does. Clang only.

set(RLX_SANITIZE "" CACHE STRING
    "Sanitizers for RLX's code, as clang's -fsanitize= list (e.g. address,undefined)")
option(RLX_ENABLE_FUZZERS "Build the libFuzzer targets (tools/rlx-fuzz); clang only" OFF)
option(RLX_ENABLE_ASSERTIONS "Enable assertions in RLX's code in any build type" OFF)

string(TOUPPER "${CMAKE_BUILD_TYPE}" RLX_BUILD_TYPE_UPPER)
if(RLX_ENABLE_ASSERTIONS AND NOT RLX_BUILD_TYPE_UPPER STREQUAL "DEBUG")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-UNDEBUG> $<$<COMPILE_LANGUAGE:C>:-UNDEBUG>)
endif()

if(NOT RLX_SANITIZE AND NOT RLX_ENABLE_FUZZERS)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "RLX_SANITIZE / RLX_ENABLE_FUZZERS need clang (e.g. clang++-22)")
endif()

add_compile_options(-fno-omit-frame-pointer)
if(RLX_SANITIZE)
  message(STATUS "RLX sanitizers: ${RLX_SANITIZE}")
  add_compile_options(-fsanitize=${RLX_SANITIZE})
  if(RLX_SANITIZE MATCHES "undefined")
    # UBSan findings abort (like ASan's). vptr needs RTTI, which LLVM code has
    # not (the Python module has it, over RTTI-less MLIR classes).
    add_compile_options(-fno-sanitize-recover=undefined -fno-sanitize=vptr)
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} --print-runtime-dir
                  OUTPUT_VARIABLE RLX_SANITIZER_RUNTIME_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
  add_link_options(-fsanitize=${RLX_SANITIZE} -shared-libsan
                   "-Wl,-rpath,${RLX_SANITIZER_RUNTIME_DIR}")
endif()
if(RLX_ENABLE_FUZZERS)
  message(STATUS "RLX fuzzers: on (RLX code built with -fsanitize=fuzzer-no-link)")
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
