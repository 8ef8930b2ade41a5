# Optional back ends default to "on if found": AUTO looks for them, ON requires
# them, OFF skips them. The project builds and passes its tests with each absent.
set(BULKGNN_ENABLE_MPI AUTO CACHE STRING "Build the MPI back end (AUTO, ON, OFF)")
set(BULKGNN_ENABLE_COMBBLAS AUTO CACHE STRING "Build the CombBLAS 2D engine (AUTO, ON, OFF)")
set(BULKGNN_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA back end (AUTO, ON, OFF)")
set_property(CACHE BULKGNN_ENABLE_MPI PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE BULKGNN_ENABLE_COMBBLAS PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE BULKGNN_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)
set(BULKGNN_ENABLE_NCCL AUTO CACHE STRING
  "Sum gradients of GPU ranks over NCCL (AUTO, ON, OFF; needs the CUDA back end)")
set_property(CACHE BULKGNN_ENABLE_NCCL PROPERTY STRINGS AUTO ON OFF)

option(BULKGNN_BUILD_TESTS "Build the test suite" ON)
option(BULKGNN_BUILD_BENCHMARKS "Build the benchmarks" ON)
option(BULKGNN_WARNINGS_AS_ERRORS "Treat warnings in bulkgnn code as errors" OFF)
option(BULKGNN_FMT_HEADER_ONLY "Compile fmt into the targets instead of linking libfmt" OFF)

# Unity builds: each target compiles its C++ sources 8 to a translation unit,
# so the heavy headers (GoogleTest, CLI11, fmt, nlohmann-json, oneTBB) are
# parsed once per batch instead of once per file: about half the compile time
# of each of CI's four builds. The price: names internal to a source file
# (anonymous namespace, static) must be unique within its target, which the
# compiler reports as a redefinition. OFF compiles file by file. Sources with
# their own compile options never join a batch.
option(BULKGNN_UNITY_BUILD "Compile each target's C++ sources in batches of 8" ON)
set(CMAKE_UNITY_BUILD ${BULKGNN_UNITY_BUILD})

# Applied to every bulkgnn target through bulkgnn_configure_target().
function(bulkgnn_configure_target target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${BULKGNN_WARNINGS_AS_ERRORS}>>:-Werror>)
endfunction()

# Rebuilds in several worktrees share object files through ccache when it is
# installed; CI's fresh clone compiles without it.
find_program(BULKGNN_CCACHE ccache)
if(BULKGNN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${BULKGNN_CCACHE})
endif()

# Sanitizers for every target of the build (libraries, tools, tests, fuzzers):
# "address,undefined" or "thread". Every report aborts the program, so one
# report fails the test or fuzzer that triggered it. The presets asan, tsan
# and fuzz set this; see CMakePresets.json.
set(BULKGNN_SANITIZE "" CACHE STRING "Sanitizers: address,undefined or thread (empty: none)")
set_property(CACHE BULKGNN_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")
option(BULKGNN_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (needs clang)" OFF)

if(BULKGNN_SANITIZE)
  if(NOT BULKGNN_SANITIZE MATCHES "^(address|undefined|address,undefined|thread)$")
    message(FATAL_ERROR "BULKGNN_SANITIZE=${BULKGNN_SANITIZE}: expected address,undefined or thread")
  endif()
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${BULKGNN_SANITIZE};-fno-sanitize-recover=all;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=${BULKGNN_SANITIZE})
  # Tests whose arithmetic sweeps the release build already runs in full
  # check memory on a smaller sweep here (e.g. tests/kernels/gemm_test.cpp).
  add_compile_definitions(BULKGNN_SANITIZED_BUILD)
  if(BULKGNN_SANITIZE MATCHES "address")
    # Bounds checks in std::vector, std::span and friends: an out-of-range
    # index into memory the vector owns is invisible to AddressSanitizer.
    add_compile_definitions(_GLIBCXX_ASSERTIONS)
  endif()
endif()

if(BULKGNN_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BULKGNN_BUILD_FUZZERS needs clang (libFuzzer); use the fuzz preset")
  endif()
  # Coverage feedback from the library code the fuzzers drive; only the
  # fuzz targets themselves link libFuzzer's main (fuzz/CMakeLists.txt).
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
