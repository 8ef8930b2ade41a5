#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/partition.hpp"

#include <cstdint>
#include <vector>

namespace bulkgnn::fullbatch::detail {

// The part holding new id v.
[[nodiscard]] int part_of_new_id(const distributed::vertex_partition& partition, vertex_t v);

// The rows of a list of parts laid end to end in list order: how a tile
// numbers its rows and columns, and how a gathered block of H is ordered.
class part_list {
 public:
  part_list(const distributed::vertex_partition& partition, std::vector<int> parts);

  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] const std::vector<int>& parts() const { return parts_; }
  // The position of new id v (of listed part `part`) in the list.
  [[nodiscard]] vertex_t local(vertex_t v, int part) const;
  // Where listed part `part` starts.
  [[nodiscard]] std::int64_t start_of(int part) const;

 private:
  const distributed::vertex_partition* partition_;
  std::vector<int> parts_;
  std::vector<std::int64_t> start_;  // by part number; -1 if not listed
  std::int64_t size_ = 0;
};

// An entry of Â (or of Âᵀ, transposed = 1) on its way to the tiles that hold
// it, in new ids.
struct routed_entry {
  vertex_t row;
  vertex_t col;
  float value;
  std::int32_t transposed;
};

// The tile rows × cols of `entries` (already in local numbering), sorted by
// row, then column, ties kept in arrival order.
[[nodiscard]] csr_matrix tile_from_entries(std::vector<routed_entry> entries, std::int64_t rows,
                                           std::int64_t cols);

}  // namespace bulkgnn::fullbatch::detail
