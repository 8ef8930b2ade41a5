#pragma once

#include <fmt/format.h>

#include <span>
#include <string_view>
#include <utility>

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/executor.hpp"

// Argument checks shared by the kernel front doors. Each message names the
// user-facing function and the argument at fault.
namespace bulkgnn::kernels::detail {

// Shape, indptr length and array sizes only: O(1), for operands as large as
// the whole graph that a call touches only in part.
void check_csr_sizes(csr_view m, std::string_view function, std::string_view argument);

// Everything check_csr_sizes does, plus monotone indptr and every column index
// in [0, cols): O(rows + nnz).
void check_csr(csr_view m, std::string_view function, std::string_view argument);

void check_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                          std::string_view function, std::string_view argument);

void check_segments(const segmented_vertices& s, std::string_view function,
                    std::string_view argument);

void check_distinct_within_segments(const segmented_vertices& s, std::string_view function,
                                    std::string_view argument);

// Runs the back end that `exec` names; there is no CUDA back end in this build.
template <class Reference, class Cpu>
decltype(auto) dispatch(const executor& exec, std::string_view function, Reference&& reference,
                        Cpu&& cpu) {
  switch (exec.kind) {
    case backend::reference:
      return std::forward<Reference>(reference)();
    case backend::cpu:
      return std::forward<Cpu>(cpu)();
    case backend::cuda:
      break;
  }
  throw error(fmt::format("{}: the CUDA backend is not compiled into this build", function));
}

}  // namespace bulkgnn::kernels::detail
