# Every dependency comes from a Debian package (scripts/install_deps.sh).
find_package(Threads REQUIRED)
find_package(TBB REQUIRED)
find_package(fmt REQUIRED)
# fmt as every target links it: the shared library, or compiled into each
# target (BULKGNN_FMT_HEADER_ONLY: the Python wheel, which then needs no
# libfmt on the machine it runs on).
add_library(bulkgnn_fmt INTERFACE)
add_library(bulkgnn::fmt ALIAS bulkgnn_fmt)
if(BULKGNN_FMT_HEADER_ONLY)
  target_link_libraries(bulkgnn_fmt INTERFACE fmt::fmt-header-only)
else()
  target_link_libraries(bulkgnn_fmt INTERFACE fmt::fmt)
endif()
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(ZLIB REQUIRED)

# OpenBLAS, the yardstick that benchmarks/trainer/gemm_efficiency measures the
# own GEMM against (the libraries do not link it); libopenblas-dev gives cblas.h.
if(BULKGNN_BUILD_BENCHMARKS)
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS REQUIRED)
  find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas REQUIRED)
  add_library(bulkgnn_openblas INTERFACE)
  add_library(bulkgnn::openblas ALIAS bulkgnn_openblas)
  target_link_libraries(bulkgnn_openblas INTERFACE BLAS::BLAS)
  target_include_directories(bulkgnn_openblas SYSTEM INTERFACE ${CBLAS_INCLUDE_DIR})
endif()

# Random123 is header-only and ships no CMake config.
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
add_library(Random123::Random123 INTERFACE IMPORTED)
target_include_directories(Random123::Random123 SYSTEM INTERFACE ${RANDOM123_INCLUDE_DIR})

if(BULKGNN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(BULKGNN_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

function(bulkgnn_find_optional name enable_var result_var)
  set(${result_var} OFF PARENT_SCOPE)
  if(${enable_var} STREQUAL "OFF")
    return()
  endif()
  set(required "")
  if(${enable_var} STREQUAL "ON")
    set(required REQUIRED)
  endif()
  find_package(${name} ${required} ${ARGN})
  if(${name}_FOUND)
    set(${result_var} ON PARENT_SCOPE)
  endif()
endfunction()

bulkgnn_find_optional(MPI BULKGNN_ENABLE_MPI BULKGNN_HAVE_MPI COMPONENTS CXX)
bulkgnn_find_optional(CombBLAS BULKGNN_ENABLE_COMBBLAS BULKGNN_HAVE_COMBBLAS)
if(NOT BULKGNN_HAVE_MPI)
  set(BULKGNN_HAVE_COMBBLAS OFF)
endif()

set(BULKGNN_HAVE_CUDA OFF)
set(BULKGNN_HAVE_NCCL OFF)
if(NOT BULKGNN_ENABLE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # "native" fails on a machine without a GPU; build for Ampere and Hopper.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 knows no C++20 flag for nvcc (3.26 does); the .cu files
    # include core's C++20 headers, so name it here.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(BULKGNN_HAVE_CUDA ON)
    # NCCL ships no CMake config: its header and library sit in the
    # toolkit's folders (or in NCCL_ROOT), imported by hand.
    if(NOT BULKGNN_ENABLE_NCCL STREQUAL "OFF")
      find_path(BULKGNN_NCCL_INCLUDE_DIR nccl.h
        HINTS ${NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
      find_library(BULKGNN_NCCL_LIBRARY nccl
        HINTS ${NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
        PATH_SUFFIXES lib lib64)
      if(BULKGNN_NCCL_INCLUDE_DIR AND BULKGNN_NCCL_LIBRARY)
        add_library(bulkgnn::nccl UNKNOWN IMPORTED)
        set_target_properties(bulkgnn::nccl PROPERTIES
          IMPORTED_LOCATION ${BULKGNN_NCCL_LIBRARY}
          INTERFACE_INCLUDE_DIRECTORIES ${BULKGNN_NCCL_INCLUDE_DIR})
        set(BULKGNN_HAVE_NCCL ON)
      elseif(BULKGNN_ENABLE_NCCL STREQUAL "ON")
        message(FATAL_ERROR "BULKGNN_ENABLE_NCCL=ON but nccl.h or libnccl was not found")
      endif()
    endif()
  elseif(BULKGNN_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BULKGNN_ENABLE_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
