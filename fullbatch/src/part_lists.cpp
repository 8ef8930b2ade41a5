#include "part_lists.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>

namespace bulkgnn::fullbatch::detail {

int part_of_new_id(const distributed::vertex_partition& partition, vertex_t v) {
  const auto& offsets = partition.part_offsets;
  return static_cast<int>(
             std::upper_bound(offsets.begin(), offsets.end(), static_cast<std::int64_t>(v)) -
             offsets.begin()) -
         1;
}

part_list::part_list(const distributed::vertex_partition& partition, std::vector<int> parts)
    : partition_(&partition), parts_(std::move(parts)), start_(partition.parts, -1) {
  for (const int p : parts_) {
    start_[p] = size_;
    size_ += partition.part_size(p);
  }
}

vertex_t part_list::local(vertex_t v, int part) const {
  BULKGNN_ASSERT(start_[part] >= 0);
  return static_cast<vertex_t>(start_[part] + v - partition_->part_offsets[part]);
}

std::int64_t part_list::start_of(int part) const { return start_[part]; }

csr_matrix tile_from_entries(std::vector<routed_entry> entries, std::int64_t rows,
                             std::int64_t cols) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) {
    return x.row != y.row ? x.row < y.row : x.col < y.col;
  });
  csr_matrix tile;
  tile.rows = rows;
  tile.cols = cols;
  std::vector<edge_t> indptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<vertex_t> indices;
  std::vector<float> values;
  indices.reserve(entries.size());
  values.reserve(entries.size());
  for (const auto& e : entries) {
    ++indptr[static_cast<std::size_t>(e.row) + 1];
    indices.push_back(e.col);
    values.push_back(e.value);
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) indptr[r + 1] += indptr[r];
  tile.indptr = buffer<edge_t>(indptr);
  tile.indices = buffer<vertex_t>(indices);
  tile.values = buffer<float>(values);
  return tile;
}

}  // namespace bulkgnn::fullbatch::detail
