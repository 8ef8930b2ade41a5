#pragma once

// Helpers shared by the sharded row sources: distinct requests, the wire
// format of row pieces, and assembly of rows in A's stored order.

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::distributed::detail {

// The requested vertices, sorted, without repeats.
[[nodiscard]] std::vector<vertex_t> distinct_vertices(std::span<const vertex_t> vertices);

// Request i of `vertices` answered by the row of its id in `distinct` (the
// sorted distinct ids, row k of `rows_of_distinct` being the row of
// distinct[k]).
[[nodiscard]] sampler::gathered_rows rows_for_requests(csr_matrix rows_of_distinct,
                                                       const std::vector<vertex_t>& distinct,
                                                       std::span<const vertex_t> vertices);

// Pieces of rows of A, one piece per row and column block, as sent to whoever
// completes the rows: per piece its entry count, then (column, slot) pairs,
// where slot is the entry's position within A's row, so that the pieces of a
// row can be put back in A's stored order whatever that order is. Weights
// travel in their own stream (a float per entry) when A is weighted.
struct piece_stream {
  std::vector<vertex_t> entries;
  std::vector<float> weights;
};

// What every rank sent in one exchange of streams, by source.
struct received_streams {
  std::vector<std::vector<vertex_t>> entries;
  std::vector<std::vector<float>> weights;  // empty when A is unweighted
};

// Sends out[d] to rank d of `comm` (collective): the entries, then the
// weights when A is weighted. This rank's own part is moved, not copied.
[[nodiscard]] received_streams exchange(comm::communicator& comm, std::vector<piece_stream> out,
                                        bool weighted);
// The same for one stream of ids.
[[nodiscard]] std::vector<std::vector<vertex_t>> exchange_ids(
    comm::communicator& comm, std::vector<std::vector<vertex_t>> out);

// Reads the pieces that q sources sent, in the order they were written;
// `weights` is empty when A is unweighted.
class piece_reader {
 public:
  piece_reader(const std::vector<std::vector<vertex_t>>& entries,
               const std::vector<std::vector<float>>& weights);
  // Appends to `rows` the row made of the next piece of every source.
  void append_next_row(csr_matrix& rows);

 private:
  const std::vector<std::vector<vertex_t>>& entries_;
  const std::vector<std::vector<float>>& weights_;
  std::vector<std::size_t> entry_cursor_;
  std::vector<std::size_t> weight_cursor_;
};

// Whole rows, as sent back to the rank that asked: per row its length, then
// its columns (original ids, in A's stored order); weights apart.
void write_row(csr_view rows, std::int64_t row, piece_stream& out);

// Reads whole rows from several sources, each in the order it wrote them.
class row_reader {
 public:
  row_reader(const std::vector<std::vector<vertex_t>>& entries,
             const std::vector<std::vector<float>>& weights);
  // Appends to `rows` the next row that `source` sent.
  void append_next_row(int source, csr_matrix& rows);

 private:
  const std::vector<std::vector<vertex_t>>& entries_;
  const std::vector<std::vector<float>>& weights_;
  std::vector<std::size_t> entry_cursor_;
  std::vector<std::size_t> weight_cursor_;
};

// The answers to `vertices` from their owners: whole rows (write_row) that
// rank owner[v] sent for each of the sorted `distinct` ids, in that order.
[[nodiscard]] sampler::gathered_rows rows_from_owners(const received_streams& answered,
                                                      std::span<const int> owner,
                                                      std::int64_t num_vertices,
                                                      const std::vector<vertex_t>& distinct,
                                                      std::span<const vertex_t> vertices);

// Draws at the owner. Each frontier row travels as its vertex and its
// minibatch id: with the seed, epoch and hop, which every rank shares in a
// collective call, they key the row's random stream (streams.key_rows must
// be empty or equal to `vertices`). pairs[owner[v]] gets the pairs of the
// rows of v, in request order. `grid` names the grid in errors.
struct draw_requests {
  std::vector<std::vector<vertex_t>> pairs;  // by owner
  std::vector<std::int32_t> owner_of;        // by request
};
[[nodiscard]] draw_requests route_draw_requests(std::span<const vertex_t> vertices,
                                                const kernels::row_streams& streams,
                                                std::span<const std::int32_t> owner, int owners,
                                                const char* grid);

// The vertex of each request that requesters asked this rank for (asked[r]:
// requester r's pairs), all requesters in order.
[[nodiscard]] std::vector<vertex_t> requested_vertices(
    const std::vector<std::vector<vertex_t>>& asked);

// Those draws, made in one call: request k draws from row row_of_request[k]
// of `rows`, keyed by its vertex and minibatch; requester r's drawn rows are
// [first[r], first[r + 1]).
struct drawn_for_requesters {
  csr_matrix drawn;
  std::vector<std::size_t> first;
};
[[nodiscard]] drawn_for_requesters draw_requested_rows(
    const executor& exec, csr_view rows, std::span<const vertex_t> row_of_request,
    const std::vector<std::vector<vertex_t>>& asked, const kernels::row_streams& streams,
    const kernels::row_sampling_options& draw);

// Drawn rows back to their requesters: rows [first[r], first[r + 1]) of
// `drawn` to requester r, as their lengths, then their columns; weights
// apart. Sizes and bytes are those of write_row, in two block copies.
[[nodiscard]] std::vector<piece_stream> drawn_replies(const csr_matrix& drawn,
                                                      std::span<const std::size_t> first);

// Row i is the drawn row that rank owner_of[i] sent for request i
// (drawn_replies); every owner answered its requests in the order they were
// sent.
[[nodiscard]] csr_matrix drawn_rows_from_owners(const received_streams& answered,
                                                std::span<const std::int32_t> owner_of,
                                                std::int64_t num_vertices);

// The whole round trip of draws at the owners over `comm`, whose rank r
// holds the rows of part r whole: row local_index[v] of `rows` is row v of A.
// Collective; `grid` names the grid in errors.
[[nodiscard]] csr_matrix draw_at_owners(comm::communicator& comm, const executor& exec,
                                        csr_view rows, std::span<const std::int32_t> owner,
                                        std::span<const vertex_t> local_index,
                                        std::span<const vertex_t> vertices,
                                        const kernels::row_streams& streams,
                                        const kernels::row_sampling_options& draw, bool weighted,
                                        const char* grid);

// Rows cut to a column range at their owners (row_source::rows_in_columns).
// A requester sends each owner its range, then the vertices it wants there,
// in request order (route_sliced_requests); the owner answers each with its
// entry count in the range and its whole degree, then the columns in the
// range (write_sliced_rows); slices_from_owners reads the answers back in
// request order.
[[nodiscard]] std::vector<std::vector<vertex_t>> route_sliced_requests(
    std::span<const vertex_t> vertices, std::span<const std::int32_t> owner, int owners,
    vertex_t first, vertex_t last, const char* grid);
// The vertices one requester asked for (without its range).
[[nodiscard]] std::span<const vertex_t> sliced_request_vertices(const std::vector<vertex_t>& asked);
// Rows row_of[k] of `rows` cut to the range that `asked` names.
[[nodiscard]] std::vector<vertex_t> write_sliced_rows(csr_view rows,
                                                      std::span<const vertex_t> row_of,
                                                      const std::vector<vertex_t>& asked,
                                                      const char* grid);
[[nodiscard]] sampler::column_slices slices_from_owners(
    const std::vector<std::vector<vertex_t>>& answered, std::span<const std::int32_t> owner,
    std::span<const vertex_t> vertices, vertex_t num_vertices);

// Rows held by a rank, restricted to its column block: columns (original
// ids), slots, and weights (empty if A is unweighted), in CSR layout.
struct row_block {
  std::vector<edge_t> indptr{0};
  std::vector<vertex_t> columns;
  std::vector<std::int32_t> slots;
  std::vector<float> weights;

  // Appends the entries of `row` of `graph` whose column `keep` accepts.
  template <class Keep>
  void push_row(csr_view graph, std::int64_t row, Keep keep) {
    const auto row_columns = graph.row(row);
    for (std::size_t slot = 0; slot < row_columns.size(); ++slot) {
      if (!keep(row_columns[slot])) continue;
      columns.push_back(row_columns[slot]);
      slots.push_back(static_cast<std::int32_t>(slot));
      if (graph.weighted()) weights.push_back(graph.row_values(row)[slot]);
    }
    indptr.push_back(static_cast<edge_t>(columns.size()));
  }
  // Writes local row `row` as one piece.
  void write_piece(std::int64_t row, piece_stream& out) const;
};

}  // namespace bulkgnn::distributed::detail
