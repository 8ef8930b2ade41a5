#include "bulkgnn/kernels/exclude_edges.hpp"

#include <algorithm>

#include "../cpu/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

void excluded_edges::push_segment(std::vector<std::uint64_t> segment_keys) {
  std::ranges::sort(segment_keys);
  // std::unique, not ranges::unique: clang cannot use libstdc++ 12's subrange.
  segment_keys.erase(std::unique(segment_keys.begin(), segment_keys.end()), segment_keys.end());
  keys.insert(keys.end(), segment_keys.begin(), segment_keys.end());
  offsets.push_back(static_cast<std::int64_t>(keys.size()));
}

csr_matrix drop_excluded_edges(const executor& exec, csr_view drawn,
                               const segmented_vertices& frontier, const excluded_edges& excluded) {
  constexpr std::string_view function = "drop_excluded_edges";
  detail::check_csr(exec, drawn, function, "drawn");
  detail::check_segments(exec, frontier, function, "frontier");
  BULKGNN_EXPECTS(drawn.rows == static_cast<std::int64_t>(frontier.vertices.size()),
                  "{}: drawn has {} rows but the frontier has {} vertices", function, drawn.rows,
                  frontier.vertices.size());
  BULKGNN_EXPECTS(excluded.segments() == frontier.segments(),
                  "{}: {} segments of excluded edges for a frontier of {} segments", function,
                  excluded.segments(), frontier.segments());
  BULKGNN_EXPECTS(excluded.offsets.front() == 0 &&
                      excluded.offsets.back() == static_cast<std::int64_t>(excluded.keys.size()),
                  "{}: the excluded keys' offsets do not span them", function);
  for (std::int64_t j = 0; j < excluded.segments(); ++j) {
    BULKGNN_EXPECTS(excluded.offsets[j] <= excluded.offsets[j + 1],
                    "{}: the excluded keys' offsets decrease at segment {}", function, j);
    BULKGNN_EXPECTS(std::is_sorted(excluded.keys.begin() + excluded.offsets[j],
                                   excluded.keys.begin() + excluded.offsets[j + 1]),
                    "{}: segment {}'s excluded keys are not sorted (push_segment sorts them)",
                    function, j);
  }
  return detail::dispatch(
      exec, function, [&] { return reference::drop_excluded_edges(drawn, frontier, excluded); },
      [&] { return cpu::drop_excluded_edges(drawn, frontier, excluded); });
}

}  // namespace bulkgnn::kernels
