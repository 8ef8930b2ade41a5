#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>

namespace bulkgnn::trainer::detail {

// Elementwise work below this many items runs on the calling thread: on small
// blocks the tasks would cost more than they save.
inline constexpr std::int64_t parallel_items = std::int64_t{1} << 16;

// Calls body(begin, end) on pieces covering [0, count), each worth about
// parallel_items / 2 items when an item costs `items_per_index`, in parallel
// only when the whole is large. Pieces are disjoint, so per-index work gives
// the same result for any thread count.
template <class Body>
void for_pieces(std::int64_t count, std::int64_t items_per_index, Body&& body) {
  const std::int64_t items = count * items_per_index;
  if (items < parallel_items) {
    if (count > 0) body(std::int64_t{0}, count);
    return;
  }
  const std::int64_t grain = std::max<std::int64_t>(1, parallel_items / 2 / items_per_index);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, grain),
                    [&](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); });
}

}  // namespace bulkgnn::trainer::detail
