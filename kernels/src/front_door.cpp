#include "front_door.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace bulkgnn::kernels::detail {

void check_csr_sizes(csr_view m, std::string_view function, std::string_view argument) {
  BULKGNN_EXPECTS(m.rows >= 0 && m.cols >= 0, "{}: {} has negative shape {}x{}", function, argument,
                  m.rows, m.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(m.indptr.size()) == m.rows + 1,
                  "{}: {}.indptr has {} entries, expected rows + 1 = {}", function, argument,
                  m.indptr.size(), m.rows + 1);
  BULKGNN_EXPECTS(static_cast<edge_t>(m.indices.size()) == m.nnz(),
                  "{}: {}.indices has {} entries, indptr spans {}", function, argument,
                  m.indices.size(), m.nnz());
  BULKGNN_EXPECTS(m.values.empty() || m.values.size() == m.indices.size(),
                  "{}: {}.values has {} entries, indices has {}", function, argument,
                  m.values.size(), m.indices.size());
}

void check_csr(csr_view m, std::string_view function, std::string_view argument) {
  check_csr_sizes(m, function, argument);
  const auto problem = find_csr_problem(m);
  BULKGNN_EXPECTS(problem.empty(), "{}: {}: {}", function, argument, problem);
}

void check_vertices_below(std::span<const vertex_t> vertices, std::int64_t bound,
                          std::string_view function, std::string_view argument) {
  for (std::size_t i = 0; i < vertices.size(); ++i)
    BULKGNN_EXPECTS(vertices[i] >= 0 && vertices[i] < bound, "{}: {}[{}] = {} is outside [0, {})",
                    function, argument, i, vertices[i], bound);
}

void check_segments(const segmented_vertices& s, std::string_view function,
                    std::string_view argument) {
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

void check_disjoint(std::span<const float> input, std::span<const float> output,
                    std::string_view function, std::string_view input_name,
                    std::string_view output_name) {
  if (input.empty() || output.empty()) return;
  const std::less<const float*> before;
  const bool disjoint = !before(input.data(), output.data() + output.size()) ||
                        !before(output.data(), input.data() + input.size());
  BULKGNN_EXPECTS(disjoint, "{}: {} and {} overlap", function, input_name, output_name);
}

}  // namespace bulkgnn::kernels::detail
