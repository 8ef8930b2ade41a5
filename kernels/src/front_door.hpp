#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "../cuda/kernels.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"

// Argument checks shared by the kernel front doors. Each message names the
// user-facing function and the argument at fault. The checks that take an
// executor first refuse an argument in memory the executor cannot reach;
// they read array contents only where the host can (a device back end
// validates device arrays itself).
namespace bulkgnn::kernels::detail {

void check_space(const executor& exec, memory_space space, std::string_view function,
                 std::string_view argument);

// Memory space, shape, indptr length and array sizes only: O(1), for
// operands as large as the whole graph that a call touches only in part.
void check_csr_sizes(const executor& exec, csr_view m, std::string_view function,
                     std::string_view argument);

// Everything check_csr_sizes does, plus monotone indptr and every column index
// in [0, cols): O(rows + nnz).
void check_csr(const executor& exec, csr_view m, std::string_view function,
               std::string_view argument);

// Memory space, and exactly rows × cols elements (kernels index rows by
// r · cols without bounds checks).
void check_dense(const executor& exec, dense_view<const float> m, std::string_view function,
                 std::string_view argument);

// The output is written while the input is still being read, so the two
// buffers must not share memory.
void check_disjoint(std::span<const float> input, std::span<const float> output,
                    std::string_view function, std::string_view input_name,
                    std::string_view output_name);

void check_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                          std::string_view function, std::string_view argument);

// As check_vertices_below, and no vertex twice (a scatter's targets).
void check_distinct_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                                   std::string_view function, std::string_view argument);

void check_segments(const executor& exec, const segmented_vertices& s, std::string_view function,
                    std::string_view argument);

void check_distinct_within_segments(const segmented_vertices& s, std::string_view function,
                                    std::string_view argument);

// A span carries no memory space, so for a cuda executor this asks the CUDA
// runtime where `data` lives and refuses pageable host memory, which kernels
// cannot reach. Returns whether the host can read the span's contents (for
// the content checks): always for the host back ends, which reach host
// memory only; for cuda, when it is pinned host memory.
bool span_reachable(const executor& exec, const void* data, std::string_view function,
                    std::string_view argument);

// Runs the back end that `exec` names, the cpu one on the executor's
// threads; an operation with no CUDA kernel yet says so.
template <class Reference, class Cpu>
decltype(auto) dispatch(const executor& exec, std::string_view function, Reference&& reference,
                        Cpu&& cpu) {
  switch (exec.kind()) {
    case backend::reference:
      return std::forward<Reference>(reference)();
    case backend::cpu:
      return exec.run(std::forward<Cpu>(cpu));
    case backend::cuda:
      break;
  }
  throw error(fmt::format("{}: the CUDA back end has no kernel for this operation yet", function));
}

template <class Reference, class Cpu, class Cuda>
decltype(auto) dispatch(const executor& exec, std::string_view function, Reference&& reference,
                        Cpu&& cpu, Cuda&& cuda) {
  if (exec.kind() == backend::cuda) {
    const cuda::current_device on(exec);
    return std::forward<Cuda>(cuda)();
  }
  return dispatch(exec, function, std::forward<Reference>(reference), std::forward<Cpu>(cpu));
}

}  // namespace bulkgnn::kernels::detail
