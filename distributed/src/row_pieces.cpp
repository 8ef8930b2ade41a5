#include "row_pieces.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace bulkgnn::distributed::detail {

std::vector<vertex_t> distinct_vertices(std::span<const vertex_t> vertices) {
  std::vector<vertex_t> distinct(vertices.begin(), vertices.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

sampler::gathered_rows rows_for_requests(csr_matrix rows_of_distinct,
                                         const std::vector<vertex_t>& distinct,
                                         std::span<const vertex_t> vertices) {
  std::vector<vertex_t> positions(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i)
    positions[i] = static_cast<vertex_t>(
        std::lower_bound(distinct.begin(), distinct.end(), vertices[i]) - distinct.begin());
  sampler::gathered_rows out;
  out.fetched = true;
  out.fetched_rows = std::move(rows_of_distinct);
  out.rows = out.fetched_rows.view();
  out.positions = std::move(positions);
  out.row_of = out.positions;
  return out;
}

sampler::gathered_rows rows_from_owners(const received_streams& answered,
                                        std::span<const int> owner, std::int64_t num_vertices,
                                        const std::vector<vertex_t>& distinct,
                                        std::span<const vertex_t> vertices) {
  csr_matrix rows_of_distinct;
  rows_of_distinct.cols = num_vertices;
  row_reader from_owners(answered.entries, answered.weights);
  for (const vertex_t v : distinct) from_owners.append_next_row(owner[v], rows_of_distinct);
  return rows_for_requests(std::move(rows_of_distinct), distinct, vertices);
}

draw_requests route_draw_requests(std::span<const vertex_t> vertices,
                                  const kernels::row_streams& streams,
                                  std::span<const std::int32_t> owner, int owners,
                                  const char* grid) {
  BULKGNN_EXPECTS(streams.minibatch_of_row.size() == vertices.size(),
                  "{}: {} minibatch ids for {} rows to draw", grid, streams.minibatch_of_row.size(),
                  vertices.size());
  BULKGNN_EXPECTS(
      streams.key_rows.empty() || std::equal(streams.key_rows.begin(), streams.key_rows.end(),
                                             vertices.begin(), vertices.end()),
      "{}: a draw at the owner keys each row by its vertex", grid);
  draw_requests out;
  out.owner_of.resize(vertices.size());
  std::vector<std::size_t> count(static_cast<std::size_t>(owners), 0);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const vertex_t v = vertices[i];
    BULKGNN_EXPECTS(v >= 0 && static_cast<std::size_t>(v) < owner.size(),
                    "{}: vertex {} outside the graph", grid, v);
    out.owner_of[i] = owner[v];
    ++count[static_cast<std::size_t>(owner[v])];
  }
  out.pairs.resize(static_cast<std::size_t>(owners));
  for (std::size_t o = 0; o < out.pairs.size(); ++o) out.pairs[o].reserve(2 * count[o]);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    auto& to = out.pairs[static_cast<std::size_t>(out.owner_of[i])];
    to.push_back(vertices[i]);
    to.push_back(std::bit_cast<vertex_t>(streams.minibatch_of_row[i]));
  }
  return out;
}

std::vector<vertex_t> requested_vertices(const std::vector<std::vector<vertex_t>>& asked) {
  std::vector<vertex_t> vertices;
  for (const auto& pairs : asked)
    for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) vertices.push_back(pairs[k]);
  return vertices;
}

drawn_for_requesters draw_requested_rows(const executor& exec, csr_view rows,
                                         std::span<const vertex_t> row_of_request,
                                         const std::vector<std::vector<vertex_t>>& asked,
                                         const kernels::row_streams& streams,
                                         const kernels::row_sampling_options& draw) {
  std::vector<vertex_t> keys;
  std::vector<std::uint32_t> minibatches;
  drawn_for_requesters out;
  out.first.push_back(0);
  for (const auto& pairs : asked) {
    for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) {
      keys.push_back(pairs[k]);
      minibatches.push_back(std::bit_cast<std::uint32_t>(pairs[k + 1]));
    }
    out.first.push_back(keys.size());
  }
  const kernels::row_streams here{streams.seed, streams.epoch, streams.layer, minibatches, keys};
  out.drawn = kernels::sample_rows(exec, rows, row_of_request, here, draw);
  return out;
}

std::vector<piece_stream> drawn_replies(const csr_matrix& drawn,
                                        std::span<const std::size_t> first) {
  std::vector<piece_stream> replies(first.size() - 1);
  for (std::size_t r = 0; r + 1 < first.size(); ++r) {
    const auto begin = drawn.indptr[first[r]], end = drawn.indptr[first[r + 1]];
    auto& out = replies[r].entries;
    out.reserve(first[r + 1] - first[r] + static_cast<std::size_t>(end - begin));
    for (auto row = first[r]; row < first[r + 1]; ++row)
      out.push_back(static_cast<vertex_t>(drawn.indptr[row + 1] - drawn.indptr[row]));
    out.insert(out.end(), drawn.indices.begin() + begin, drawn.indices.begin() + end);
    if (!drawn.values.empty())
      replies[r].weights.assign(drawn.values.begin() + begin, drawn.values.begin() + end);
  }
  return replies;
}

csr_matrix drawn_rows_from_owners(const received_streams& answered,
                                  std::span<const std::int32_t> owner_of,
                                  std::int64_t num_vertices) {
  // Each owner's stream: the lengths of the rows it drew, then their columns.
  const auto owners = answered.entries.size();
  std::vector<std::size_t> rows_from(owners, 0);
  for (const auto o : owner_of) ++rows_from[static_cast<std::size_t>(o)];
  std::vector<std::size_t> length_at(owners, 0), column_at(rows_from), weight_at(owners, 0);

  csr_matrix drawn;
  drawn.rows = static_cast<std::int64_t>(owner_of.size());
  drawn.cols = num_vertices;
  drawn.indptr.resize(owner_of.size() + 1);
  drawn.indptr[0] = 0;
  for (std::size_t i = 0; i < owner_of.size(); ++i) {
    const auto o = static_cast<std::size_t>(owner_of[i]);
    drawn.indptr[i + 1] = drawn.indptr[i] + answered.entries[o][length_at[o]++];
  }
  const auto total = static_cast<std::size_t>(drawn.indptr.back());
  const bool weighted = !answered.weights.empty();
  drawn.indices.resize(total);
  if (weighted) drawn.values.resize(total);
  for (std::size_t i = 0; i < owner_of.size(); ++i) {
    const auto o = static_cast<std::size_t>(owner_of[i]);
    const auto length = static_cast<std::size_t>(drawn.indptr[i + 1] - drawn.indptr[i]);
    const auto out = static_cast<std::ptrdiff_t>(drawn.indptr[i]);
    std::copy_n(answered.entries[o].begin() + static_cast<std::ptrdiff_t>(column_at[o]), length,
                drawn.indices.begin() + out);
    column_at[o] += length;
    if (!weighted) continue;
    std::copy_n(answered.weights[o].begin() + static_cast<std::ptrdiff_t>(weight_at[o]), length,
                drawn.values.begin() + out);
    weight_at[o] += length;
  }
  return drawn;
}

csr_matrix draw_at_owners(comm::communicator& comm, const executor& exec, csr_view rows,
                          std::span<const std::int32_t> owner,
                          std::span<const vertex_t> local_index, std::span<const vertex_t> vertices,
                          const kernels::row_streams& streams,
                          const kernels::row_sampling_options& draw, bool weighted,
                          const char* grid) {
  auto routed = route_draw_requests(vertices, streams, owner, comm.size(), grid);
  const auto asked = exchange_ids(comm, std::move(routed.pairs));
  std::vector<vertex_t> local_rows = requested_vertices(asked);
  for (vertex_t& v : local_rows) v = local_index[static_cast<std::size_t>(v)];
  auto mine = draw_requested_rows(exec, rows, local_rows, asked, streams, draw);
  // A rank alone drew exactly its own requests, in their order.
  if (comm.size() == 1) return std::move(mine.drawn);
  const auto answered = exchange(comm, drawn_replies(mine.drawn, mine.first), weighted);
  return drawn_rows_from_owners(answered, routed.owner_of, rows.cols);
}

std::vector<std::vector<vertex_t>> route_sliced_requests(std::span<const vertex_t> vertices,
                                                         std::span<const std::int32_t> owner,
                                                         int owners, vertex_t first, vertex_t last,
                                                         const char* grid) {
  std::vector<std::vector<vertex_t>> requests(static_cast<std::size_t>(owners),
                                              std::vector<vertex_t>{first, last});
  for (const vertex_t v : vertices) {
    BULKGNN_EXPECTS(v >= 0 && static_cast<std::size_t>(v) < owner.size(),
                    "{}: vertex {} outside the graph", grid, v);
    requests[static_cast<std::size_t>(owner[v])].push_back(v);
  }
  return requests;
}

std::span<const vertex_t> sliced_request_vertices(const std::vector<vertex_t>& asked) {
  return std::span<const vertex_t>(asked).subspan(2);
}

std::vector<vertex_t> write_sliced_rows(csr_view rows, std::span<const vertex_t> row_of,
                                        const std::vector<vertex_t>& asked, const char* grid) {
  const auto cut = sampler::slice_columns(rows, row_of, asked[0], asked[1]);
  std::vector<vertex_t> out;
  out.reserve(2 * row_of.size() + cut.rows.indices.size());
  for (std::int64_t row = 0; row < cut.rows.rows; ++row) {
    const auto begin = cut.rows.indptr[row], end = cut.rows.indptr[row + 1];
    BULKGNN_EXPECTS(cut.degrees[row] <= std::numeric_limits<vertex_t>::max(),
                    "{}: a row of {} entries is too long to send", grid, cut.degrees[row]);
    out.push_back(static_cast<vertex_t>(end - begin));
    out.push_back(static_cast<vertex_t>(cut.degrees[row]));
    out.insert(out.end(), cut.rows.indices.begin() + begin, cut.rows.indices.begin() + end);
  }
  return out;
}

sampler::column_slices slices_from_owners(const std::vector<std::vector<vertex_t>>& answered,
                                          std::span<const std::int32_t> owner,
                                          std::span<const vertex_t> vertices,
                                          vertex_t num_vertices) {
  sampler::column_slices out;
  out.rows.rows = static_cast<std::int64_t>(vertices.size());
  out.rows.cols = num_vertices;
  out.degrees.reserve(vertices.size());
  std::vector<std::size_t> cursor(answered.size(), 0);
  for (const vertex_t v : vertices) {
    const auto from_owner = static_cast<std::size_t>(owner[v]);
    const auto& from = answered[from_owner];
    auto& at = cursor[from_owner];
    const auto count = static_cast<std::size_t>(from[at]);
    out.degrees.push_back(from[at + 1]);
    out.rows.indices.insert(out.rows.indices.end(), from.begin() + at + 2,
                            from.begin() + at + 2 + count);
    at += 2 + count;
    out.rows.indptr.push_back(static_cast<edge_t>(out.rows.indices.size()));
  }
  return out;
}

piece_reader::piece_reader(const std::vector<std::vector<vertex_t>>& entries,
                           const std::vector<std::vector<float>>& weights)
    : entries_(entries),
      weights_(weights),
      entry_cursor_(entries.size(), 0),
      weight_cursor_(entries.size(), 0) {}

void piece_reader::append_next_row(csr_matrix& rows) {
  const bool weighted = !weights_.empty();
  std::size_t length = 0;
  for (std::size_t s = 0; s < entries_.size(); ++s)
    length += static_cast<std::size_t>(entries_[s][entry_cursor_[s]]);
  const auto begin = rows.indices.size();
  rows.indices.resize(begin + length);
  if (weighted) rows.values.resize(begin + length);
  for (std::size_t s = 0; s < entries_.size(); ++s) {
    const auto& stream = entries_[s];
    auto& at = entry_cursor_[s];
    const auto count = static_cast<std::size_t>(stream[at++]);
    for (std::size_t e = 0; e < count; ++e, at += 2) {
      const auto slot = begin + static_cast<std::size_t>(stream[at + 1]);
      rows.indices[slot] = stream[at];
      if (weighted) rows.values[slot] = weights_[s][weight_cursor_[s]++];
    }
  }
  rows.indptr.push_back(static_cast<edge_t>(rows.indices.size()));
  ++rows.rows;
}

void write_row(csr_view rows, std::int64_t row, piece_stream& out) {
  const auto columns = rows.row(row);
  out.entries.push_back(static_cast<vertex_t>(columns.size()));
  out.entries.insert(out.entries.end(), columns.begin(), columns.end());
  if (rows.weighted()) {
    const auto values = rows.row_values(row);
    out.weights.insert(out.weights.end(), values.begin(), values.end());
  }
}

row_reader::row_reader(const std::vector<std::vector<vertex_t>>& entries,
                       const std::vector<std::vector<float>>& weights)
    : entries_(entries),
      weights_(weights),
      entry_cursor_(entries.size(), 0),
      weight_cursor_(entries.size(), 0) {}

void row_reader::append_next_row(int source, csr_matrix& rows) {
  const auto& stream = entries_[source];
  auto& at = entry_cursor_[source];
  const auto length = static_cast<std::size_t>(stream[at]);
  const auto begin = stream.begin() + static_cast<std::ptrdiff_t>(at + 1);
  rows.indices.insert(rows.indices.end(), begin, begin + static_cast<std::ptrdiff_t>(length));
  at += 1 + length;
  if (!weights_.empty()) {
    const auto values =
        weights_[source].begin() + static_cast<std::ptrdiff_t>(weight_cursor_[source]);
    rows.values.insert(rows.values.end(), values, values + static_cast<std::ptrdiff_t>(length));
    weight_cursor_[source] += length;
  }
  rows.indptr.push_back(static_cast<edge_t>(rows.indices.size()));
  ++rows.rows;
}

void row_block::write_piece(std::int64_t row, piece_stream& out) const {
  const auto begin = indptr[row], end = indptr[row + 1];
  out.entries.push_back(static_cast<vertex_t>(end - begin));
  for (auto e = begin; e < end; ++e) {
    out.entries.push_back(columns[e]);
    out.entries.push_back(slots[e]);
  }
  if (!weights.empty())
    out.weights.insert(out.weights.end(), weights.begin() + begin, weights.begin() + end);
}

received_streams exchange(comm::communicator& comm, std::vector<piece_stream> out, bool weighted) {
  // This rank's own part stays here: moved, not copied through the wire.
  const auto me = static_cast<std::size_t>(comm.rank());
  piece_stream own = std::move(out[me]);
  out[me] = {};
  std::vector<std::vector<vertex_t>> entries(out.size());
  std::vector<std::vector<float>> weights(out.size());
  for (std::size_t d = 0; d < out.size(); ++d) {
    entries[d] = std::move(out[d].entries);
    weights[d] = std::move(out[d].weights);
  }
  received_streams received;
  received.entries = comm.all_to_all(entries);
  received.entries[me] = std::move(own.entries);
  if (weighted) {
    received.weights = comm.all_to_all(weights);
    received.weights[me] = std::move(own.weights);
  }
  return received;
}

std::vector<std::vector<vertex_t>> exchange_ids(comm::communicator& comm,
                                                std::vector<std::vector<vertex_t>> out) {
  const auto me = static_cast<std::size_t>(comm.rank());
  std::vector<vertex_t> own = std::move(out[me]);
  out[me] = {};
  auto received = comm.all_to_all(out);
  received[me] = std::move(own);
  return received;
}

}  // namespace bulkgnn::distributed::detail
