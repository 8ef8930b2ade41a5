#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

// Which entries of a row stay. Keys sort by destination first, so a row's
// candidates are one short run of its segment's keys, found once per row:
// most rows have none, and keep every entry without a search.
class exclusion_test {
 public:
  exclusion_test(csr_view drawn, const segmented_vertices& frontier, const excluded_edges& excluded)
      : drawn_(drawn), frontier_(frontier), excluded_(excluded) {}

  // The keys of row i's destination in its segment.
  [[nodiscard]] std::span<const std::uint64_t> row_keys(std::int64_t segment,
                                                        std::int64_t row) const {
    const auto first = excluded_.keys.begin() + excluded_.offsets[segment];
    const auto last = excluded_.keys.begin() + excluded_.offsets[segment + 1];
    const vertex_t destination = frontier_.vertices[row];
    const auto begin = std::lower_bound(first, last, edge_key(destination, 0));
    const auto end = std::lower_bound(begin, last, edge_key(destination, 0) + (1ull << 32));
    return {begin, end};
  }

  // Whether the entry at position e (relative to drawn.indptr[0]) of row i,
  // whose destination's keys are `keys`, stays.
  [[nodiscard]] bool keeps(std::span<const std::uint64_t> keys, std::int64_t row,
                           edge_t entry) const {
    return keys.empty() ||
           !std::binary_search(keys.begin(), keys.end(),
                               edge_key(frontier_.vertices[row], drawn_.indices[entry]));
  }

 private:
  csr_view drawn_;
  const segmented_vertices& frontier_;
  const excluded_edges& excluded_;
};

}  // namespace

csr_matrix drop_excluded_edges(csr_view drawn, const segmented_vertices& frontier,
                               const excluded_edges& excluded) {
  const exclusion_test test(drawn, frontier, excluded);
  const auto base = drawn.indptr[0];
  csr_matrix out;
  out.rows = drawn.rows;
  out.cols = drawn.cols;
  out.indptr.assign(static_cast<std::size_t>(drawn.rows) + 1, 0);
  // Pass 1 counts each row's kept entries, pass 2 writes them: rows are
  // independent, so any thread count gives the same matrix.
  const auto each_row = [&](auto&& visit) {
    tbb::parallel_for(std::int64_t{0}, frontier.segments(), [&](std::int64_t j) {
      for (std::int64_t i = frontier.offsets[j]; i < frontier.offsets[j + 1]; ++i) visit(j, i);
    });
  };
  each_row([&](std::int64_t j, std::int64_t i) {
    const auto keys = test.row_keys(j, i);
    edge_t kept = 0;
    for (edge_t e = drawn.indptr[i] - base; e < drawn.indptr[i + 1] - base; ++e)
      kept += test.keeps(keys, i, e) ? 1 : 0;
    out.indptr[static_cast<std::size_t>(i) + 1] = kept;
  });
  std::partial_sum(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.indices.resize(static_cast<std::size_t>(out.indptr.back()));
  if (drawn.weighted()) out.values.resize(out.indices.size());
  each_row([&](std::int64_t j, std::int64_t i) {
    const auto keys = test.row_keys(j, i);
    auto at = out.indptr[static_cast<std::size_t>(i)];
    for (edge_t e = drawn.indptr[i] - base; e < drawn.indptr[i + 1] - base; ++e) {
      if (!test.keeps(keys, i, e)) continue;
      out.indices[static_cast<std::size_t>(at)] = drawn.indices[e];
      if (drawn.weighted()) out.values[static_cast<std::size_t>(at)] = drawn.values[e];
      ++at;
    }
  });
  return out;
}

}  // namespace bulkgnn::kernels::cpu
