# Optional back ends default to "on if found": AUTO looks for them, ON requires
# them, OFF skips them. The project builds and passes its tests with each absent.
set(BULKGNN_ENABLE_MPI AUTO CACHE STRING "Build the MPI back end (AUTO, ON, OFF)")
set(BULKGNN_ENABLE_COMBBLAS AUTO CACHE STRING "Build the CombBLAS 2D engine (AUTO, ON, OFF)")
set(BULKGNN_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA back end (AUTO, ON, OFF)")
set_property(CACHE BULKGNN_ENABLE_MPI PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE BULKGNN_ENABLE_COMBBLAS PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE BULKGNN_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)

option(BULKGNN_BUILD_TESTS "Build the test suite" ON)
option(BULKGNN_BUILD_BENCHMARKS "Build the benchmarks" ON)
option(BULKGNN_WARNINGS_AS_ERRORS "Treat warnings in bulkgnn code as errors" OFF)

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
