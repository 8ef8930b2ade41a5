#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/communicator.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace bulkgnn::distributed {

// How the adjacency matrix is laid out over the ranks of the sampling
// communicator.
enum class grid_kind {
  replicated,      // every rank holds all of A; sampling needs no communication
  one_and_half_d,  // P/c block rows of A, each held by c ranks
  two_d,           // a √P×√P grid of blocks (CombBLAS)
  three_d,         // c layers of (P/c) 2D grids, splitting A's rows (the inner dimension)
};

[[nodiscard]] grid_kind parse_grid_kind(const std::string& name);
[[nodiscard]] std::string grid_kind_name(grid_kind kind);

// Throws option_error if P ranks cannot form `kind` with replication c.
void validate_grid(grid_kind kind, int ranks, int replication);

// 1.5D: ranks form c teams of P/c; team member q holds block row q of A (the
// rows of the vertices that the partition gives part q) and every team holds
// all of A. A rank fetches the rows its frontier touches from the members of
// its own team (sparsity-aware: only those rows travel), with one all-to-all
// per call: vertex ids out, rows (length, then columns) back.
class block_row_shards final : public sampler::row_source {
 public:
  // `graph` is read only for this rank's block row.
  block_row_shards(const communicator& sampling, csr_view graph, const vertex_partition& partition,
                   int replication);

  [[nodiscard]] vertex_t num_vertices() const override { return num_vertices_; }
  [[nodiscard]] bool weighted() const override { return weighted_; }
  [[nodiscard]] sampler::gathered_rows rows(std::span<const vertex_t> vertices) override;

  [[nodiscard]] edge_t local_nnz() const { return block_.nnz(); }

 private:
  communicator team_;
  const vertex_partition& partition_;
  vertex_t num_vertices_;
  bool weighted_;
  csr_matrix block_;  // rows of this rank's part, in local_index order
};

// The row source for `kind` (replicated, 1.5D, 2D or 3D) over the sampling
// communicator.
[[nodiscard]] std::unique_ptr<sampler::row_source> make_row_source(
    grid_kind kind, const communicator& sampling, csr_view graph, const vertex_partition& partition,
    int replication);

}  // namespace bulkgnn::distributed
