#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"

#include <span>
#include <vector>

namespace bulkgnn::sampler {

// Rows of the adjacency matrix A that the sampler asked for. Request i is
// row row_of[i] of view(): either the whole graph in memory (row_of holds the
// requested vertex ids, nothing is copied) or a matrix of fetched rows
// (row_of[i] = i). Views point into heap buffers, so moving this is safe.
struct gathered_rows {
  csr_view rows;  // holds every requested row
  std::span<const vertex_t> row_of;
  bool fetched = false;             // rows were copied (from other ranks)
  csr_matrix fetched_rows;          // owns `rows` when fetched
  std::vector<vertex_t> positions;  // owns `row_of` when fetched
};

// The entries of some rows of A whose columns lie in [first, last), as the
// rank that computes those columns of a split layer-wise hop needs them. Row
// k holds row vertices[k]'s entries in the range, in A's stored order
// (pattern only); degrees[k] is the whole row's length, which the row's
// weight in LADIES' distribution needs. (Layer-wise blocks sort each row by
// column, so pieces of one row need no positions to be put back together.)
struct column_slices {
  csr_matrix rows;
  std::vector<edge_t> degrees;
};

// The rows row_of[k] of `rows`, each restricted to the columns [first, last).
[[nodiscard]] column_slices slice_columns(csr_view rows, std::span<const vertex_t> row_of,
                                          vertex_t first, vertex_t last);

// Where the bulk sampler reads rows of A: the whole graph in this process, or
// a graph sharded over ranks (distributed/), where a call is collective over
// the sampling communicator: every rank calls rows() once per hop, in the same
// order, possibly with no vertices. Fetched rows keep A's stored order, so
// every source samples exactly the same entries.
class row_source {
 public:
  virtual ~row_source() = default;
  [[nodiscard]] virtual vertex_t num_vertices() const = 0;
  [[nodiscard]] virtual bool weighted() const = 0;
  // Every vertex in [0, num_vertices()); repeats allowed.
  [[nodiscard]] virtual gathered_rows rows(std::span<const vertex_t> vertices) = 0;
  // What kernels::sample_rows draws from the rows of `vertices` (row i of the
  // result from vertex i, keyed by `streams`): collective like rows(). This
  // one fetches whole rows and draws here; a sharded source may instead send
  // the keys to the rows' owners, which draw there and return only the drawn
  // entries. Both give the same entries, so digests do not depend on where
  // the draw ran.
  [[nodiscard]] virtual csr_matrix draw_rows(const executor& exec,
                                             std::span<const vertex_t> vertices,
                                             const kernels::row_streams& streams,
                                             const kernels::row_sampling_options& draw);
  // The rows of `vertices` restricted to the columns [first, last), which
  // may differ between ranks: collective like rows(). This one fetches whole
  // rows and cuts them here; a sharded source may cut them at the owners.
  [[nodiscard]] virtual column_slices rows_in_columns(std::span<const vertex_t> vertices,
                                                      vertex_t first, vertex_t last);
  // Whether rows_in_columns moves only the requested columns (the owners cut
  // the rows). On 1.5D a split hop then moves one copy of its frontier's rows
  // over all ranks instead of one per rank; on 2D/3D only the last leg back
  // to the requester is cut.
  [[nodiscard]] virtual bool slices_at_owners() const { return false; }
  // The whole graph when this process holds it, else nullptr.
  [[nodiscard]] virtual const csr_view* whole_graph() const { return nullptr; }
};

// The whole graph in this process: rows are read in place.
class local_rows final : public row_source {
 public:
  explicit local_rows(csr_view graph) : graph_(graph) {}
  [[nodiscard]] vertex_t num_vertices() const override {
    return static_cast<vertex_t>(graph_.rows);
  }
  [[nodiscard]] bool weighted() const override { return graph_.weighted(); }
  [[nodiscard]] gathered_rows rows(std::span<const vertex_t> vertices) override {
    gathered_rows in_place;
    in_place.rows = graph_;
    in_place.row_of = vertices;
    return in_place;
  }
  [[nodiscard]] const csr_view* whole_graph() const override { return &graph_; }

 private:
  csr_view graph_;
};

// Wraps fetched rows (one per request, in request order) as gathered_rows.
[[nodiscard]] gathered_rows wrap_fetched_rows(csr_matrix fetched);

}  // namespace bulkgnn::sampler
