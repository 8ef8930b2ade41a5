#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/grid.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace bulkgnn::distributed {

// How minibatch sampling lays A over the ranks of the sampling communicator
// (grid_kind, core/grid.hpp), each rank at its rank_grid position:
//  - replicated: every rank holds all of A; sampling needs no communication.
//  - 1.5d: P/c block rows of A, block row i held by the c ranks of grid row i.
//  - 2d: a √P×√P grid of blocks; rows complete along process rows (3d, c = 1).
//  - 2d-summa: the same blocks, rows fetched as S·A by CombBLAS's SUMMA.
//  - 3d: c layers of (P/c) 2D grids, splitting A's rows (the inner dimension):
//    part ℓq + i is held by the ranks of grid row i of layer ℓ.

// Where a sharded grid draws a node-wise sample (a fanout, not whole rows):
// at the row's owner, which receives each frontier row's (vertex, minibatch)
// and returns only the drawn entries, so bytes grow with the fanout; or at
// the requester, which fetches every distinct row of its frontier whole, so
// bytes grow with the degree (fewer only when the fanout nears the degree or
// a bulk's minibatches share most of their frontiers). The drawn entries are
// the same either way.
enum class draw_location { owner, requester };

[[nodiscard]] draw_location parse_draw_location(const std::string& name);
[[nodiscard]] std::string draw_location_name(draw_location where);

// 2d and 2d-summa hold the same blocks. 2d is the layered grid below with one
// layer: a request goes to the rank of the owner's process row in the
// requester's process column, which completes the row from its process row,
// so only requested rows move. 2d-summa multiplies S·A with CombBLAS, whose
// SUMMA broadcasts every block of A along its process column in every call
// (sharded_rows_2d.cpp); it stays for comparison.

// This rank's part of the partition, its rows of A in local_index order with
// A's column ids (A.rows columns): what a rank maps from its shard of a
// partitioned dataset (data::dataset_shard::rows) instead of the whole
// graph. The row source reads them for as long as it lives.
struct part_rows {
  csr_view rows;
  bool weighted = false;  // A's, which a part without entries cannot show
};

// The grid of P ranks for minibatch sampling: option_error naming
// layout_options.grid for a grid it does not run on (1d, sar), and
// rank_grid's errors for a rank count the grid cannot take.
[[nodiscard]] rank_grid minibatch_grid(grid_kind kind, int ranks, int replication);

// Parts of the vertex partition that lays A out on `grid`: 1 replicated,
// one per grid row on 1.5d, one per grid row of each layer on 2d and 3d.
[[nodiscard]] int grid_partition_parts(const rank_grid& grid);

// 1.5D: ranks form c teams of P/c; team member q holds block row q of A (the
// rows of the vertices that the partition gives part q) and every team holds
// all of A. A rank fetches the rows its frontier touches from the members of
// its own team (sparsity-aware: only those rows travel), with one all-to-all
// per call: vertex ids out, rows (length, then columns) back.
class block_row_shards final : public sampler::row_source {
 public:
  // `graph` is read only for this rank's block row, which is copied.
  block_row_shards(const comm::communicator& sampling, csr_view graph,
                   const vertex_partition& partition, int replication,
                   draw_location draw_at = draw_location::owner);
  // The block row is `mine`, read in place.
  block_row_shards(const comm::communicator& sampling, part_rows mine,
                   const vertex_partition& partition, int replication,
                   draw_location draw_at = draw_location::owner);

  [[nodiscard]] vertex_t num_vertices() const override { return num_vertices_; }
  [[nodiscard]] bool weighted() const override { return weighted_; }
  [[nodiscard]] sampler::gathered_rows rows(std::span<const vertex_t> vertices) override;
  // At the owner: one all-to-all of (vertex, minibatch) pairs out and one of
  // drawn rows (length, then columns; weights apart) back.
  [[nodiscard]] csr_matrix draw_rows(const executor& exec, std::span<const vertex_t> vertices,
                                     const kernels::row_streams& streams,
                                     const kernels::row_sampling_options& draw) override;

  // At the owner: the column range goes out with the vertex ids, and only
  // the columns in it come back, with each row's degree.
  [[nodiscard]] sampler::column_slices rows_in_columns(std::span<const vertex_t> vertices,
                                                       vertex_t first, vertex_t last) override;
  // A team of one holds every row, so nothing is saved by cutting them.
  [[nodiscard]] bool slices_at_owners() const override {
    return draw_at_ == draw_location::owner && team_->size() > 1;
  }

  [[nodiscard]] edge_t local_nnz() const { return block_.nnz(); }

 private:
  // The team and the fields both public constructors set (no block yet).
  block_row_shards(const comm::communicator& sampling, const vertex_partition& partition,
                   int replication, draw_location draw_at, vertex_t num_vertices, bool weighted);

  std::unique_ptr<comm::communicator> team_;
  const vertex_partition& partition_;
  vertex_t num_vertices_;
  bool weighted_;
  draw_location draw_at_;
  csr_matrix copied_block_;  // empty when the block is read in place
  csr_view block_;           // rows of this rank's part, in local_index order
};

// 3D: P = c·q² ranks in c layers of q×q; sampling rank ℓq² + iq + j is
// (layer ℓ, process row i, process column j). The partition has c·q parts:
// part ℓq + i holds the rows of layer ℓ's process row i, and the columns are
// split into q blocks, block j being the vertices of parts jc .. jc + c - 1.
// Rank (ℓ, i, j) holds block (i, j) of layer ℓ: the rows of part ℓq + i
// restricted to column block j. A call routes each requested row to its
// layer and process row, completes it there from the pieces of the q column
// blocks, and sends it back (see sharded_rows_3d.cpp for the traffic).
class layered_grid_shards final : public sampler::row_source {
 public:
  // `graph` is read only for this rank's rows.
  layered_grid_shards(const comm::communicator& sampling, csr_view graph,
                      const vertex_partition& partition, int layers,
                      draw_location draw_at = draw_location::owner);
  // This rank's rows are those of its column block in `mine` (the rows of
  // part ℓq + i).
  layered_grid_shards(const comm::communicator& sampling, part_rows mine,
                      const vertex_partition& partition, int layers,
                      draw_location draw_at = draw_location::owner);
  ~layered_grid_shards() override;

  [[nodiscard]] vertex_t num_vertices() const override { return num_vertices_; }
  [[nodiscard]] bool weighted() const override { return weighted_; }
  [[nodiscard]] sampler::gathered_rows rows(std::span<const vertex_t> vertices) override;
  // At the owner: (vertex, minibatch) pairs go to the rank completing the
  // row, which completes each requester's distinct rows as rows() does,
  // draws there, and returns only the drawn entries.
  [[nodiscard]] csr_matrix draw_rows(const executor& exec, std::span<const vertex_t> vertices,
                                     const kernels::row_streams& streams,
                                     const kernels::row_sampling_options& draw) override;
  // At the rank completing the rows: each is completed as rows() does, then
  // cut to the requester's column range before it goes back.
  [[nodiscard]] sampler::column_slices rows_in_columns(std::span<const vertex_t> vertices,
                                                       vertex_t first, vertex_t last) override;
  [[nodiscard]] bool slices_at_owners() const override {
    return draw_at_ == draw_location::owner && fiber_->size() > 1;
  }

 private:
  struct local_block;
  // The fiber and process row and the fields both public constructors set
  // (no rows held yet).
  layered_grid_shards(const comm::communicator& sampling, const vertex_partition& partition,
                      int layers, draw_location draw_at, vertex_t num_vertices, bool weighted);
  // Keeps, of each row of this rank's part (row `id` of A's relabelling is
  // row source_row(id) of `source`), the entries in this rank's column block.
  template <class SourceRow>
  void hold_column_block(csr_view source, int layers, SourceRow source_row);
  // Rows `to_complete` (this rank's part) whole, from the pieces of every
  // member of the process row (collective over the process row).
  [[nodiscard]] csr_matrix complete_rows(const std::vector<vertex_t>& to_complete);

  // Ranks with this rank's process column in every layer, ordered by part
  // (ℓq + i): where requests go and complete rows come back from.
  std::unique_ptr<comm::communicator> fiber_;
  // The q ranks of this rank's process row in its layer, by process column.
  std::unique_ptr<comm::communicator> process_row_;
  const vertex_partition& partition_;
  vertex_t num_vertices_;
  bool weighted_;
  draw_location draw_at_;
  std::unique_ptr<local_block> block_;
};

// The row source for `kind` (replicated, 1.5D, 2D or 3D) over the sampling
// communicator; `draw_at` applies to 1.5D, 2D and 3D (2D-SUMMA draws at the
// requester).
[[nodiscard]] std::unique_ptr<sampler::row_source> make_row_source(
    const rank_grid& grid, const comm::communicator& sampling, csr_view graph,
    const vertex_partition& partition, draw_location draw_at = draw_location::owner);

// The same from this rank's part of the partition alone (replicated: the one
// part, the whole graph). 2D-SUMMA, which hands CombBLAS the whole graph, is
// refused.
[[nodiscard]] std::unique_ptr<sampler::row_source> make_row_source(
    const rank_grid& grid, const comm::communicator& sampling, part_rows mine,
    const vertex_partition& partition, draw_location draw_at = draw_location::owner);

// The part whose rows rank `rank` holds (of grid_partition_parts): its grid
// row on 1.5d (0 replicated), ℓq + i at (ℓ, i, j) on 2D and 3D.
[[nodiscard]] int part_of_rank(const rank_grid& grid, int rank);

}  // namespace bulkgnn::distributed
