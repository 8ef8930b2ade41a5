#include "front_door.hpp"

#include "../cuda/kernels.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

namespace bulkgnn::kernels::detail {

void check_space(const executor& exec, memory_space space, std::string_view function,
                 std::string_view argument) {
  BULKGNN_EXPECTS(exec.can_access(space),
                  "{}: {} is in {} memory, which the {} executor cannot access", function, argument,
                  memory_space_name(space), backend_name(exec.kind()));
}

bool span_reachable(const executor& exec, const void* data, std::string_view function,
                    std::string_view argument) {
  if (exec.kind() != backend::cuda || data == nullptr) return true;
  const memory_space space = cuda::space_of(data);
  check_space(exec, space, function, argument);
  return host_accessible(space);
}

void check_csr_sizes(const executor& exec, csr_view m, std::string_view function,
                     std::string_view argument) {
  check_space(exec, m.space, function, argument);
  BULKGNN_EXPECTS(m.rows >= 0 && m.cols >= 0, "{}: {} has negative shape {}x{}", function, argument,
                  m.rows, m.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(m.indptr.size()) == m.rows + 1,
                  "{}: {}.indptr has {} entries, expected rows + 1 = {}", function, argument,
                  m.indptr.size(), m.rows + 1);
  if (!host_accessible(m.space)) return;
  BULKGNN_EXPECTS(static_cast<edge_t>(m.indices.size()) == m.nnz(),
                  "{}: {}.indices has {} entries, indptr spans {}", function, argument,
                  m.indices.size(), m.nnz());
  BULKGNN_EXPECTS(m.values.empty() || m.values.size() == m.indices.size(),
                  "{}: {}.values has {} entries, indices has {}", function, argument,
                  m.values.size(), m.indices.size());
}

void check_csr(const executor& exec, csr_view m, std::string_view function,
               std::string_view argument) {
  check_csr_sizes(exec, m, function, argument);
  if (!host_accessible(m.space)) return;
  const auto problem = find_csr_problem(m);
  BULKGNN_EXPECTS(problem.empty(), "{}: {}: {}", function, argument, problem);
}

void check_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                          std::string_view function, std::string_view argument) {
  for (std::size_t i = 0; i < vertices.size(); ++i)
    BULKGNN_EXPECTS(vertices[i] >= 0 && vertices[i] < bound, "{}: {}[{}] = {} is outside [0, {})",
                    function, argument, i, vertices[i], bound);
}

void check_distinct_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                                   std::string_view function, std::string_view argument) {
  check_vertices_below(vertices, bound, function, argument);
  std::vector<bool> seen(static_cast<std::size_t>(bound), false);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    BULKGNN_EXPECTS(!seen[static_cast<std::size_t>(vertices[i])], "{}: {}[{}] = {} appears twice",
                    function, argument, i, vertices[i]);
    seen[static_cast<std::size_t>(vertices[i])] = true;
  }
}

void check_dense(const executor& exec, dense_view<const float> m, std::string_view function,
                 std::string_view argument) {
  check_space(exec, m.space, function, argument);
  BULKGNN_EXPECTS(m.rows >= 0 && m.cols >= 0, "{}: {} has negative shape {}x{}", function, argument,
                  m.rows, m.cols);
  BULKGNN_EXPECTS(m.cols == 0 || m.rows <= std::numeric_limits<std::int64_t>::max() / m.cols,
                  "{}: {} shape {}x{} overflows", function, argument, m.rows, m.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(m.data.size()) == m.rows * m.cols,
                  "{}: {} is {}x{} but holds {} elements", function, argument, m.rows, m.cols,
                  m.data.size());
}

void check_disjoint(std::span<const float> input, std::span<const float> output,
                    std::string_view function, std::string_view input_name,
                    std::string_view output_name) {
  if (input.empty() || output.empty()) return;
  const std::less<const float*> before;
  const bool disjoint = !before(input.data(), output.data() + output.size()) ||
                        !before(output.data(), input.data() + input.size());
  BULKGNN_EXPECTS(disjoint, "{}: {} and {} overlap", function, input_name, output_name);
}

void check_segments(const executor& exec, const segmented_vertices& s, std::string_view function,
                    std::string_view argument) {
  check_space(exec, s.vertices.space(), function, argument);
  // A device reads the offsets through UVA; the host reads them here.
  check_space(exec, s.offsets.space(), function, fmt::format("{}.offsets", argument));
  BULKGNN_EXPECTS(host_accessible(s.offsets.space()),
                  "{}: {}.offsets must be in host-readable memory (pinned for a cuda executor)",
                  function, argument);
  BULKGNN_EXPECTS(!s.offsets.empty() && s.offsets.front() == 0, "{}: {}.offsets must start with 0",
                  function, argument);
  BULKGNN_EXPECTS(std::is_sorted(s.offsets.begin(), s.offsets.end()),
                  "{}: {}.offsets must not decrease", function, argument);
  BULKGNN_EXPECTS(s.offsets.back() == static_cast<std::int64_t>(s.vertices.size()),
                  "{}: {}.offsets ends at {} but there are {} vertices", function, argument,
                  s.offsets.back(), s.vertices.size());
}

void check_distinct_within_segments(const segmented_vertices& s, std::string_view function,
                                    std::string_view argument) {
  std::vector<vertex_t> sorted;
  for (std::int64_t j = 0; j < s.segments(); ++j) {
    const auto segment = s.segment(j);
    sorted.assign(segment.begin(), segment.end());
    std::sort(sorted.begin(), sorted.end());
    const auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
    BULKGNN_EXPECTS(repeat == sorted.end(), "{}: {} repeats vertex {} in segment {}", function,
                    argument, repeat == sorted.end() ? 0 : *repeat, j);
  }
}

}  // namespace bulkgnn::kernels::detail
