#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
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

// A dense view must be exactly rows × cols: the kernels index rows by
// r · cols without bounds checks.
template <class T>
void check_dense(dense_view<T> m, std::string_view function, std::string_view argument) {
  BULKGNN_EXPECTS(m.rows >= 0 && m.cols >= 0, "{}: {} has negative shape {}x{}", function, argument,
                  m.rows, m.cols);
  BULKGNN_EXPECTS(m.cols == 0 || m.rows <= std::numeric_limits<std::int64_t>::max() / m.cols,
                  "{}: {} shape {}x{} overflows", function, argument, m.rows, m.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(m.data.size()) == m.rows * m.cols,
                  "{}: {} is {}x{} but holds {} elements", function, argument, m.rows, m.cols,
                  m.data.size());
}

// For an output written while an input is still being read: the two buffers
// must not share memory.
void check_disjoint(std::span<const float> input, std::span<const float> output,
                    std::string_view function, std::string_view input_name,
                    std::string_view output_name);

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
